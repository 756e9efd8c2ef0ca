import { Cause, Clock, Context, Effect, Metric, Option, Queue, Tracer } from "effect"
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
const spanIn = (context: Context.Context<never>) =>
  Context.getOption(context, Tracer.ParentSpan).pipe(
    Option.filter((span): span is Tracer.Span => span._tag === "Span")
  )

const activeSpan = Effect.withFiber((fiber) =>
  Effect.succeed(spanIn(fiber.context as Context.Context<never>))
)

/** What the log line and metrics read of the request itself. */
export type ObservedRequest = Pick<HttpServerRequest.HttpServerRequest, "method" | "headers">

const callerTraceId = (request: ObservedRequest) =>
  Option.match(HttpTraceContext.fromHeaders(request.headers), {
    onNone: () => ({}),
    onSome: (parent) => ({ trace_id: parent.traceId })
  })

/**
 * The log line of one finished request, given to the logger as its message: the JSON logger writes
 * its fields at the top level of the line (`makeJsonLogger`).
 */
export class RequestLine {
  readonly fields: Readonly<Record<string, string | number>>
  constructor(fields: Readonly<Record<string, string | number>>) {
    this.fields = fields
  }
}

/** What the metrics and the log line need of one finished request, taken while it ran. */
interface Finished {
  readonly labels: Readonly<Record<"method" | "route" | "status", string>>
  readonly outcome: Outcome
  readonly status: number
  readonly durationMs: number
  readonly line: RequestLine
}

/** The metrics and the log line of the requests finished since the last turn, in the recorder's fiber. */
const record = (finished: ReadonlyArray<Finished>) =>
  Effect.withFiber((fiber) => {
    const context = fiber.context as Context.Context<never>
    for (const { labels, outcome, durationMs } of finished) {
      Metrics.requestsWith({ ...labels, outcome }).updateUnsafe(1, context)
      Metrics.requestDurationWith(labels).updateUnsafe(durationMs / 1000, context)
      if (outcome === "rate_limited") Metrics.rateLimited.updateUnsafe(1, context)
      if (outcome === "replay") Metrics.replays.updateUnsafe(1, context)
      if (outcome === "idempotency_conflict" || outcome === "idempotency_in_progress") {
        const reason = outcome === "idempotency_conflict" ? "conflict" : "in_progress"
        Metric.withAttributes(Metrics.idempotencyConflicts, { reason }).updateUnsafe(1, context)
      }
    }
    return Effect.forEach(
      finished,
      ({ status, line }) => (status >= 500 ? Effect.logError(line) : Effect.logInfo(line)),
      { discard: true }
    )
  })

/**
 * Observes finished requests: whatever a request ended with (404s, typed errors and the last-resort
 * 500 included), its span gets its attributes on the request's own fiber, and its metrics and log
 * line are recorded by one fiber of the observer's own, for all the requests finished in the same
 * turn of the event loop. Off the request's path they cost a fraction of what they cost on it
 * (CONTRIBUTING.md#findings, "The request's log line and metrics"). What is still pending when the
 * observer's scope closes is recorded then.
 */
export const makeRequestObserver = Effect.gen(function* () {
  const pending = yield* Queue.unbounded<Finished>()
  yield* Queue.takeAll(pending).pipe(
    Effect.flatMap((finished) => Effect.uninterruptible(record(finished))),
    Effect.forever,
    // Its lines name the span of the request they describe (in the line), never one of its own.
    Effect.withTracerEnabled(false),
    Effect.forkScoped
  )
  yield* Effect.addFinalizer(() => Effect.flatMap(Queue.clear(pending), record))

  return (request: ObservedRequest, report: RequestReport) =>
    Effect.withFiber((fiber) => {
      const durationMs = performance.now() - report.startedAt
      const { outcome, attribution, leadId } = report
      const span = spanIn(fiber.context as Context.Context<never>)
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
      const labels = {
        method: methods.has(request.method) ? request.method : "other",
        route: report.route ?? "unmatched",
        status: String(report.status)
      }
      const line = new RequestLine({
        request_id: report.requestId,
        ...(Option.isNone(span) ? callerTraceId(request) : {}),
        method: request.method,
        route: labels.route,
        status: report.status,
        outcome,
        duration_ms: Math.round(durationMs * 10) / 10,
        ...(attribution.keyPrefix === null ? {} : { key_prefix: attribution.keyPrefix }),
        ...(attribution.originId === null ? {} : { origin_id: attribution.originId }),
        ...(leadId === null ? {} : { lead_id: leadId }),
        // Written by another fiber: the request's span is named here, where the logger would find it.
        ...(Option.isSome(span) && fiber.cache.tracerEnabled
          ? { trace_id: span.value.traceId, span_id: span.value.spanId }
          : {})
      })
      Queue.offerUnsafe(pending, { labels, outcome, status: report.status, durationMs, line })
      return Effect.void
    })
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
