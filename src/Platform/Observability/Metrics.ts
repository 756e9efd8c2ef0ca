import { Metric } from "effect"

/**
 * Every metric the service records. Names follow Prometheus conventions so the OTLP series and the
 * `/metrics` text carry the same names; labels only ever hold values from small closed sets.
 */
const requestsOptions = {
  description: "HTTP requests answered, by method, route, status and outcome",
  incremental: true
}

const requestDurationOptions = {
  description: "Time from receiving a request to its response, by method, route and status",
  boundaries: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
}

export const requests = Metric.counter("lead_intake_http_requests_total", requestsOptions)

export const requestDuration = Metric.histogram(
  "lead_intake_http_request_duration_seconds",
  requestDurationOptions
)

/** The request counter and duration histogram of one label set. */
export interface RequestSeries {
  readonly requests: Metric.Counter<number>
  readonly duration: Metric.Histogram<number>
}

const madeSeries = new Map<string, RequestSeries>()

/**
 * The series of one label set, made once: `Metric.withAttributes` on every request merges the
 * attributes and re-serialises the series key each time. Same series (same names and labels).
 * Labels come from small closed sets, so the cache stays small.
 */
export const requestSeries = (
  method: string,
  route: string,
  status: string,
  outcome: string
): RequestSeries => {
  const key = `${method}\u0000${route}\u0000${status}\u0000${outcome}`
  let series = madeSeries.get(key)
  if (series === undefined) {
    series = {
      requests: Metric.counter("lead_intake_http_requests_total", {
        ...requestsOptions,
        attributes: { method, route, status, outcome }
      }),
      duration: Metric.histogram("lead_intake_http_request_duration_seconds", {
        ...requestDurationOptions,
        attributes: { method, route, status }
      })
    }
    madeSeries.set(key, series)
  }
  return series
}

export const rateLimited = Metric.counter("lead_intake_rate_limited_total", {
  description: "Requests refused with 429 because the key's window was full",
  incremental: true
})

export const replays = Metric.counter("lead_intake_idempotent_replays_total", {
  description: "Requests answered with a stored response for the same Idempotency-Key",
  incremental: true
})

export const idempotencyConflicts = Metric.counter("lead_intake_idempotency_conflicts_total", {
  description:
    "Requests refused with 409: the key was used with another body (conflict) or is still running (in_progress)",
  incremental: true
})

export const poolInUse = Metric.gauge("lead_intake_db_pool_connections_in_use", {
  description: "This instance's PostgreSQL connections running a statement or holding a transaction"
})

export const poolOpen = Metric.gauge("lead_intake_db_pool_connections_open", {
  description: "This instance's open PostgreSQL connections"
})

export const poolMax = Metric.gauge("lead_intake_db_pool_connections_max", {
  description: "The most PostgreSQL connections this instance opens (DATABASE_POOL_SIZE)"
})
