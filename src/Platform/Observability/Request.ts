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
  readonly method: string
  readonly headers: ObservedRequest["headers"]
  readonly report: RequestReport
  readonly durationMs: number
  /** The request ran in a span: its line takes no trace id from the caller's headers. */
  readonly traced: boolean
  /**
   * The span its line names: the request's, when the tracer was on for it. The line is written by
   * another fiber, so the span is named here, where the logger would have found it.
   */
  readonly span: Tracer.Span | undefined
}

/** The log line of one finished request, its fields set one by one in the order they are written. */
const lineOf = ({ method, headers, report, durationMs, traced, span }: Finished) => {
  const fields: Record<string, string | number> = { request_id: report.requestId }
  if (!traced) {
    const parent = HttpTraceContext.fromHeaders(headers)
    if (Option.isSome(parent)) fields.trace_id = parent.value.traceId
  }
  fields.method = method
  fields.route = report.route ?? "unmatched"
  fields.status = report.status
  fields.outcome = report.outcome
  fields.duration_ms = Math.round(durationMs * 10) / 10
  const { keyPrefix, originId } = report.attribution
  if (keyPrefix !== null) fields.key_prefix = keyPrefix
  if (originId !== null) fields.origin_id = originId
  if (report.leadId !== null) fields.lead_id = report.leadId
  if (span !== undefined) {
    fields.trace_id = span.traceId
    fields.span_id = span.spanId
  }
  return new RequestLine(fields)
}

/** The metrics and the log line of the requests finished since the last turn, in the recorder's fiber. */
const record = (finished: ReadonlyArray<Finished>) =>
  Effect.withFiber((fiber) => {
    const context = fiber.context as Context.Context<never>
    for (const { method, report, durationMs } of finished) {
      const { outcome } = report
      const series = Metrics.requestSeries(
        methods.has(method) ? method : "other",
        report.route ?? "unmatched",
        String(report.status),
        outcome
      )
      series.requests.updateUnsafe(1, context)
      series.duration.updateUnsafe(durationMs / 1000, context)
      if (outcome === "rate_limited") Metrics.rateLimited.updateUnsafe(1, context)
      if (outcome === "replay") Metrics.replays.updateUnsafe(1, context)
      if (outcome === "idempotency_conflict" || outcome === "idempotency_in_progress") {
        const reason = outcome === "idempotency_conflict" ? "conflict" : "in_progress"
        Metric.withAttributes(Metrics.idempotencyConflicts, { reason }).updateUnsafe(1, context)
      }
    }
    return Effect.forEach(
      finished,
      (request) => {
        const line = lineOf(request)
        return request.report.status >= 500 ? Effect.logError(line) : Effect.logInfo(line)
      },
      { discard: true }
    )
  })

/**
 * Observes finished requests: whatever a request ended with (404s, typed errors and the last-resort
 * 500 included), its span gets its attributes on the request's own fiber, and its metrics and log
 * line are recorded by one fiber of the observer's own, for all the requests finished in the same
 * turn of the event loop. Off the request's path they cost a fraction of what they cost on it
 * (docs/performance.md#findings, "The request's log line and metrics"). What is still pending when the
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
      const span = spanIn(fiber.context as Context.Context<never>)
      if (Option.isSome(span)) {
        const { attribution, leadId, outcome } = report
        const traced = span.value
        traced.attribute("request.id", report.requestId)
        traced.attribute("request.outcome", outcome)
        if (report.failed) traced.attribute("error.code", outcome)
        if (attribution.keyPrefix !== null) traced.attribute("key.prefix", attribution.keyPrefix)
        if (attribution.originId !== null) traced.attribute("origin.id", attribution.originId)
        if (leadId !== null) traced.attribute("lead.id", leadId)
      }
      Queue.offerUnsafe(pending, {
        method: request.method,
        headers: request.headers,
        report,
        durationMs,
        traced: Option.isSome(span),
        span: fiber.cache.tracerEnabled ? Option.getOrUndefined(span) : undefined
      })
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
