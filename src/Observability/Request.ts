import { Cause, Clock, Effect, Metric, Option, Tracer } from "effect"
import { HttpEffect, type HttpServerRequest, type HttpServerResponse, HttpTraceContext } from "effect/http"
import { errorCatalog } from "../Api.ts"
import type { RequestContextShape } from "../Http/RequestContext.ts"
import * as Metrics from "./Metrics.ts"

const methods = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT"])

const utf8 = new TextDecoder()

/** The span the request runs in, if traced; unlike `Effect.currentSpan` it builds no error (and stack) when not. */
const activeSpan = Effect.map(
  Effect.serviceOption(Tracer.ParentSpan),
  Option.filter((span): span is Tracer.Span => span._tag === "Span")
)

/** The envelope's code of an error response; every error this service sends is in the envelope. */
const errorCodeOf = (response: HttpServerResponse.HttpServerResponse): string | undefined => {
  if (response.status < 400 || response.body._tag !== "Uint8Array") return undefined
  try {
    const code: unknown = JSON.parse(utf8.decode(response.body.body))?.error?.code
    return typeof code === "string" && code in errorCatalog ? code : undefined
  } catch {
    return undefined
  }
}

const callerTraceId = (request: HttpServerRequest.HttpServerRequest) =>
  Option.match(HttpTraceContext.fromHeaders(request.headers), {
    onNone: () => ({}),
    onSome: (parent) => ({ trace_id: parent.traceId })
  })

const finish = Effect.fnUntraced(function* (
  request: HttpServerRequest.HttpServerRequest,
  context: RequestContextShape,
  route: string | null,
  response: HttpServerResponse.HttpServerResponse
) {
  const durationMs = performance.now() - context.startedAt
  const { journal } = context
  const code = errorCodeOf(response)
  const outcome = response.status >= 400 ? (code ?? "error") : (journal.outcome ?? "ok")
  const labels = {
    method: methods.has(request.method) ? request.method : "other",
    route: route ?? "unmatched",
    status: String(response.status)
  }
  yield* Metric.update(Metric.withAttributes(Metrics.requests, { ...labels, outcome }), 1)
  yield* Metric.update(Metric.withAttributes(Metrics.requestDuration, labels), durationMs / 1000)
  if (outcome === "rate_limited") yield* Metric.update(Metrics.rateLimited, 1)
  if (outcome === "replay") yield* Metric.update(Metrics.replays, 1)
  if (outcome === "idempotency_conflict" || outcome === "idempotency_in_progress") {
    const reason = outcome === "idempotency_conflict" ? "conflict" : "in_progress"
    yield* Metric.update(Metric.withAttributes(Metrics.idempotencyConflicts, { reason }), 1)
  }

  yield* Effect.annotateCurrentSpan({
    "request.outcome": outcome,
    ...(code === undefined ? {} : { "error.code": code }),
    ...(journal.keyPrefix === null ? {} : { "key.prefix": journal.keyPrefix }),
    ...(journal.originId === null ? {} : { "origin.id": journal.originId }),
    ...(journal.leadId === null ? {} : { "lead.id": journal.leadId })
  })

  const traced = yield* activeSpan
  const line = {
    request_id: context.requestId,
    ...(Option.isNone(traced) ? callerTraceId(request) : {}),
    method: request.method,
    route: labels.route,
    status: response.status,
    outcome,
    duration_ms: Math.round(durationMs * 10) / 10,
    ...(journal.keyPrefix === null ? {} : { key_prefix: journal.keyPrefix }),
    ...(journal.originId === null ? {} : { origin_id: journal.originId }),
    ...(journal.leadId === null ? {} : { lead_id: journal.leadId })
  }
  const log = response.status >= 500 ? Effect.logError : Effect.logInfo
  yield* log("request").pipe(Effect.annotateLogs(line))
})

/**
 * Metrics, span attributes and the log line of one request, taken from whatever response it ends
 * with (404s, typed errors and the last-resort 500 included). `route` is the contract's path, or
 * null when the path is not one.
 */
export const observeRequest = (
  request: HttpServerRequest.HttpServerRequest,
  context: RequestContextShape,
  route: string | null
) =>
  Effect.andThen(
    Effect.annotateCurrentSpan("request.id", context.requestId),
    HttpEffect.appendPreResponseHandler((_, response) =>
      Effect.as(finish(request, context, route, response), response)
    )
  )

/** A defect on the request's span, as OpenTelemetry records exceptions, and in the log; never in the response. */
export const reportDefect = (cause: Cause.Cause<unknown>) =>
  Effect.gen(function* () {
    const span = yield* activeSpan
    if (Option.isSome(span)) {
      const now = yield* Clock.currentTimeNanos
      for (const error of Cause.prettyErrors(cause)) {
        span.value.event("exception", now, {
          "exception.type": error.name,
          "exception.message": error.message,
          "exception.stacktrace": error.stack ?? ""
        })
      }
    }
    yield* Effect.logError("request failed with a defect", cause)
  })
