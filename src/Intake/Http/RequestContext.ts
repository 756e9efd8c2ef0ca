import { Context, Effect, Ref } from "effect"
import { HttpEffect, HttpServerResponse } from "effect/http"
import { type ErrorCode, errorCatalog, errorHeaders, makeWireError, type WireError } from "../../Api/Api.ts"
import { type Attribution, type Outcome, unattributed } from "../../Platform/Observability/Request.ts"

/**
 * What a request settled on, each part written by the one step that knows it: the attribution by
 * the key check, the outcome by the reply or, on failure, by the journal.
 */
export interface RequestFacts {
  readonly attribution: Attribution
  readonly outcome: Outcome | null
  readonly leadId: string | null
}

export interface RequestContextShape {
  readonly requestId: string
  readonly docsUrl: string
  readonly startedAt: number
  readonly facts: Ref.Ref<RequestFacts>
}

export const unsettled: RequestFacts = { attribution: unattributed, outcome: null, leadId: null }

/** Set by the global middleware for every request; the default only serves code run outside one. */
export const RequestContext = Context.Reference<RequestContextShape>("lead-intake/RequestContext", {
  defaultValue: () => ({ requestId: "none", docsUrl: "", startedAt: 0, facts: Ref.makeUnsafe(unsettled) })
})

/** The wire error for `code`, in the envelope, with this request's id. */
export const wireError = <const Code extends ErrorCode>(
  context: Pick<RequestContextShape, "requestId" | "docsUrl">,
  code: Code,
  message: string,
  field?: string
) =>
  makeWireError({
    error: {
      code,
      message,
      ...(field === undefined ? {} : { field }),
      docs_url: `${context.docsUrl}#${code}`
    },
    request_id: context.requestId
  })

/** Fails with the contract's error for `code`: the only way a step of the request path fails. */
export const fail = <const Code extends ErrorCode>(code: Code, message: string, field?: string) =>
  Effect.flatMap(Effect.service(RequestContext), (context) =>
    Effect.fail(wireError(context, code, message, field))
  )

/** The response for a wire error answered outside HttpApi (404, 405, the last-resort 500). */
export const errorResponse = (error: WireError, headers?: Readonly<Record<string, string>>) =>
  HttpServerResponse.jsonUnsafe(
    { error: error.error, request_id: error.request_id },
    {
      status: errorCatalog[error.error.code].status,
      headers: { ...errorHeaders(error.error.code), ...headers }
    }
  )

/** Sets headers on whatever response this request ends with, error responses included. */
export const setResponseHeaders = (headers: Readonly<Record<string, string>>) =>
  HttpEffect.appendPreResponseHandler((_, response) =>
    Effect.succeed(HttpServerResponse.setHeaders(response, headers))
  )

export const attribute = (attribution: Attribution) =>
  Effect.flatMap(Effect.service(RequestContext), (context) =>
    Ref.update(context.facts, (facts) => ({ ...facts, attribution }))
  )

export const settle = (outcome: Outcome, leadId: string | null) =>
  Effect.flatMap(Effect.service(RequestContext), (context) =>
    Ref.update(context.facts, (facts) => ({ ...facts, outcome, leadId }))
  )
