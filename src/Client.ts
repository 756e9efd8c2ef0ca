import { Redacted } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { Api } from "./Api/Api.ts"

/**
 * A typed client for TypeScript callers, derived from the same `HttpApi` the server implements:
 * payloads, headers, success bodies and every error are the contract's own schemas.
 * Published as `lead-intake/client`.
 */

export {
  Api,
  DryRunResult,
  IdempotencyConflict,
  IdempotencyInProgress,
  InternalError,
  InvalidKey,
  LeadCreated,
  LeadEnriched,
  PayloadTooLarge,
  PropertyNotFound,
  RateLimited,
  TemporarilyUnavailable,
  UnsupportedMediaType,
  ValidationError
} from "./Api/Api.ts"
export { LeadRequest } from "./Api/LeadRequest.ts"

export interface ClientOptions {
  /** Where the API answers, e.g. `https://leads.example.com` (no `/v1`). */
  readonly baseUrl: string
  /** The origin's API key (`lk_live_…`), sent as `Authorization: Bearer`. */
  readonly apiKey?: string | Redacted.Redacted<string> | undefined
}

/** Builds the client; needs an `HttpClient` (`layerFetch` uses the platform's `fetch`). */
export const makeClient = (options: ClientOptions) => {
  const apiKey = options.apiKey
  return HttpApiClient.make(Api, {
    baseUrl: options.baseUrl,
    transformClient:
      apiKey === undefined
        ? undefined
        : HttpClient.mapRequest(
            HttpClientRequest.bearerToken(Redacted.isRedacted(apiKey) ? Redacted.value(apiKey) : apiKey)
          )
  })
}

/** The `HttpClient` on the global `fetch` (Node 18+, Deno, Bun, browsers' server-side runtimes). */
export const layerFetch = FetchHttpClient.layer
