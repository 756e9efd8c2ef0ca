import { Context, Effect } from "effect"
import { type ErrorCode, makeWireError } from "../../Api/Api.ts"
import { type Attribution, type Outcome, unattributed } from "../../Platform/Observability/Request.ts"

/**
 * One request as the steps that answer it learn it: its id, when it started, and what it settled on,
 * each part written once by the one step that knows it (the attribution by the key check, the
 * response headers by the rate limit and the reply, the outcome by the reply or the failure). The
 * routing middleware reads it when the response is out: the request log, the metrics, the log line,
 * and the headers it adds to the response, error responses included. A plain record rather than a
 * `Ref` per part: one fiber writes it, in order.
 */
export interface RequestContextShape {
  readonly requestId: string
  readonly docsUrl: string
  readonly startedAt: number
  attribution: Attribution
  outcome: Outcome | null
  leadId: string | null
  headers: Readonly<Record<string, string>>
}

export const makeRequestContext = (docsUrl: string): RequestContextShape => ({
  requestId: crypto.randomUUID(),
  docsUrl,
  startedAt: performance.now(),
  attribution: unattributed,
  outcome: null,
  leadId: null,
  headers: {}
})

/** Set by the routing middleware for every request; the default only serves code run outside one. */
export const RequestContext = Context.Reference<RequestContextShape>("lead-intake/RequestContext", {
  defaultValue: () => makeRequestContext("")
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

/** Fails the request with the contract's error for `code`, which is then its outcome. */
export const fail = <const Code extends ErrorCode>(code: Code, message: string, field?: string) =>
  Effect.flatMap(Effect.service(RequestContext), (context) => {
    context.outcome = code
    return Effect.fail(wireError(context, code, message, field))
  })

/** Adds headers to whatever response this request ends with. */
export const addResponseHeaders = (
  context: RequestContextShape,
  headers: Readonly<Record<string, string>>
) => {
  context.headers = { ...context.headers, ...headers }
}
