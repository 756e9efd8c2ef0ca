import { Cause, Clock, Context, Effect, Metric, Option, Tracer } from "effect"
import { type HttpServerRequest, HttpTraceContext } from "effect/http"
import * as Metrics from "./Metrics.ts"

/** How a request ended: its error's code (`failed`), or what it did (`created`, `ok`, ...). */
export type Outcome = string

/** The origin a request's key named, known once the key was looked up (refused keys included). */
export interface Attribution {
  readonly keyPrefix: string | null
  readonly originId: string | null
}

export const unattributed: Attribution = { keyPrefix: null, originId: null }

/** What the request log, the metrics, the span and the log line say about one finished request. */
export interface RequestReport {
  readonly requestId: string
  readonly startedAt: number
  /** The contract's path, or null when the path is not one. */
  readonly route: string | null
  readonly status: number
  readonly outcome: Outcome
  /** The outcome is the code of the error the request was answered with. */
  readonly failed: boolean
  readonly attribution: Attribution
  readonly leadId: string | null
}

const methods = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT"])

/** The span the request runs in, if traced; unlike `Effect.currentSpan` it builds no error (and stack) when not. */
const activeSpan = Effect.map(
  Effect.serviceOption(Tracer.ParentSpan),
  Option.filter((span): span is Tracer.Span => span._tag === "Span")
)

/** What the log line and metrics read of the request itself. */
export type ObservedRequest = Pick<HttpServerRequest.HttpServerRequest, "method" | "headers">

const callerTraceId = (request: ObservedRequest) =>
  Option.match(HttpTraceContext.fromHeaders(request.headers), {
    onNone: () => ({}),
    onSome: (parent) => ({ trace_id: parent.traceId })
  })

/**
 * Metrics, span attributes and the log line of one finished request, whatever it ended with
 * (404s, typed errors and the last-resort 500 included).
 */
export const observeRequest = (request: ObservedRequest, report: RequestReport) =>
  Effect.withFiber((fiber) => {
    const durationMs = performance.now() - report.startedAt
    const { outcome, attribution, leadId } = report
    const context = fiber.context as Context.Context<never>
    const labels = {
      method: methods.has(request.method) ? request.method : "other",
      route: report.route ?? "unmatched",
      status: String(report.status)
    }
    // Updated in place, in this fiber: one `Metric.update` effect per series was a fiber step each.
    Metrics.requestsWith({ ...labels, outcome }).updateUnsafe(1, context)
    Metrics.requestDurationWith(labels).updateUnsafe(durationMs / 1000, context)
    if (outcome === "rate_limited") Metrics.rateLimited.updateUnsafe(1, context)
    if (outcome === "replay") Metrics.replays.updateUnsafe(1, context)
    if (outcome === "idempotency_conflict" || outcome === "idempotency_in_progress") {
      const reason = outcome === "idempotency_conflict" ? "conflict" : "in_progress"
      Metric.withAttributes(Metrics.idempotencyConflicts, { reason }).updateUnsafe(1, context)
    }
    const span = Context.getOption(context, Tracer.ParentSpan).pipe(
      Option.filter((parent): parent is Tracer.Span => parent._tag === "Span")
    )
    if (Option.isSome(span)) {
      const attributes: Record<string, unknown> = {
        "request.id": report.requestId,
        "request.outcome": outcome,
        ...(report.failed ? { "error.code": outcome } : {}),
        ...(attribution.keyPrefix === null ? {} : { "key.prefix": attribution.keyPrefix }),
        ...(attribution.originId === null ? {} : { "origin.id": attribution.originId }),
        ...(leadId === null ? {} : { "lead.id": leadId })
      }
      for (const key in attributes) span.value.attribute(key, attributes[key])
    }
    const line = {
      request_id: report.requestId,
      ...(Option.isNone(span) ? callerTraceId(request) : {}),
      method: request.method,
      route: labels.route,
      status: report.status,
      outcome,
      duration_ms: Math.round(durationMs * 10) / 10,
      ...(attribution.keyPrefix === null ? {} : { key_prefix: attribution.keyPrefix }),
      ...(attribution.originId === null ? {} : { origin_id: attribution.originId }),
      ...(leadId === null ? {} : { lead_id: leadId })
    }
    const log = report.status >= 500 ? Effect.logError : Effect.logInfo
    return log("request").pipe(Effect.annotateLogs(line))
  })

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
