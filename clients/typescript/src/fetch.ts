import createClient, { type Client, type ClientOptions } from "openapi-fetch"
import type { components, paths } from "./openapi-types.ts"

/**
 * The plain client for projects that do not use Effect: openapi-fetch over the types that
 * openapi-typescript generated from the service's openapi.json.
 */

export type { components, paths }

export type LeadRequest = components["schemas"]["LeadRequest"]

export type LeadIntakeClient = Client<paths>

export interface LeadIntakeClientOptions {
  /** Where the API answers, e.g. `https://leads.example.com` (no `/v1`). */
  readonly baseUrl: string
  /** The origin's API key (`lk_live_…`), sent as `Authorization: Bearer`. */
  readonly apiKey?: string | undefined
  /** Another `fetch`, e.g. one with a proxy or a timeout. */
  readonly fetch?: ClientOptions["fetch"]
}

export const createLeadIntakeClient = (options: LeadIntakeClientOptions): LeadIntakeClient =>
  createClient<paths>({
    baseUrl: options.baseUrl,
    ...(options.apiKey === undefined ? {} : { headers: { authorization: `Bearer ${options.apiKey}` } }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch })
  })
