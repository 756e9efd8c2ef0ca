import { Context, Effect } from "effect"
import { HttpEffect, HttpServerResponse } from "effect/http"
import { type ErrorCode, errorCatalog, errorClasses } from "../Api.ts"

/** What the request log needs to know about a `POST /v1/leads` request, filled in as it runs. */
export interface JournalEntry {
  keyPrefix: string | null
  originId: string | null
  outcome: string | null
  leadId: string | null
  idempotencyKey: string | null
}

export interface RequestContextShape {
  readonly requestId: string
  readonly docsUrl: string
  readonly startedAt: number
  readonly journal: JournalEntry
}

/** Set by the global middleware for every request; the default only serves code run outside one. */
export const RequestContext = Context.Reference<RequestContextShape>("lead-intake/RequestContext", {
  defaultValue: () => ({
    requestId: "none",
    docsUrl: "",
    startedAt: 0,
    journal: { keyPrefix: null, originId: null, outcome: null, leadId: null, idempotencyKey: null }
  })
})

export const envelope = (context: RequestContextShape, code: ErrorCode, message: string, field?: string) => ({
  error: {
    code,
    message,
    ...(field === undefined ? {} : { field }),
    docs_url: `${context.docsUrl}#${code}`
  },
  request_id: context.requestId
})

/** An error response built outside HttpApi's typed errors (routing, defects, body limits). */
export const errorResponse = (
  context: RequestContextShape,
  code: ErrorCode,
  message: string,
  headers?: Record<string, string>
) =>
  HttpServerResponse.jsonUnsafe(envelope(context, code, message), {
    status: errorCatalog[code].status,
    ...(headers === undefined ? {} : { headers })
  })

/** Sets headers on whatever response this request ends with, error responses included. */
export const setResponseHeaders = (headers: Record<string, string>) =>
  HttpEffect.appendPreResponseHandler((_, response) =>
    Effect.succeed(HttpServerResponse.setHeaders(response, headers))
  )

/** Fails with the contract's error for `code`, in the envelope, with this request's id. */
export const fail = <const Code extends ErrorCode>(
  code: Code,
  message: string,
  options?: { readonly field?: string; readonly headers?: Record<string, string> }
) =>
  Effect.gen(function* () {
    const context = yield* RequestContext
    if (options?.headers !== undefined) yield* setResponseHeaders(options.headers)
    const ErrorClass = errorClasses[code] as unknown as new (
      fields: ReturnType<typeof envelope>
    ) => InstanceType<(typeof errorClasses)[Code]>
    return yield* Effect.fail(new ErrorClass(envelope(context, code, message, options?.field)))
  })
