import { createServer } from "node:http"
import type { SpanProcessor } from "@opentelemetry/sdk-trace-base"
import {
  Cause,
  Config,
  Duration,
  Effect,
  Formatter,
  Layer,
  Logger,
  Metric,
  Option,
  Record,
  References,
  Schedule,
  Schema
} from "effect"
import { FetchHttpClient } from "effect/http"
import { OtlpMetrics, OtlpSerialization, PrometheusMetrics } from "effect/observability"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../Config.ts"
import { logListening } from "../Listening.ts"
import { applicationName } from "../Sql/Sql.ts"
import * as Metrics from "./Metrics.ts"
import { RequestLine } from "./Request.ts"

/**
 * Where telemetry goes, from the standard OpenTelemetry variables: traces and metrics are exported
 * over OTLP/HTTP only when an endpoint is set (and the signal's exporter is not `none`).
 */
export interface TelemetrySettings {
  readonly traces: Option.Option<string>
  readonly metrics: Option.Option<string>
  readonly metricsHeaders: Readonly<Record<string, string>>
  readonly metricsInterval: Duration.Duration
}

const EndpointUrl = Schema.String.check(
  Schema.makeFilter((raw: string) => {
    if (raw.trim() === "") return true
    const url = URL.parse(raw.trim())
    return (
      (url !== null && (url.protocol === "http:" || url.protocol === "https:")) ||
      "Expected an absolute http(s) URL"
    )
  })
)

/** An unset or empty variable means no endpoint, as the OpenTelemetry specification says. */
const endpoint = (name: string) =>
  Config.schema(EndpointUrl, name).pipe(
    Config.withDefault(""),
    Config.map((raw) => (raw.trim() === "" ? Option.none<string>() : Option.some(raw.trim())))
  )

const otlpUrl = (signal: "traces" | "metrics") => {
  const upper = signal.toUpperCase()
  return Config.all({
    disabled: Config.Boolean("OTEL_SDK_DISABLED").pipe(Config.withDefault(false)),
    exporter: Config.String(`OTEL_${upper}_EXPORTER`).pipe(Config.withDefault("otlp")),
    specific: endpoint(`OTEL_EXPORTER_OTLP_${upper}_ENDPOINT`),
    base: endpoint("OTEL_EXPORTER_OTLP_ENDPOINT")
  }).pipe(
    Config.map(({ disabled, exporter, specific, base }) => {
      const exporters = exporter.split(",").map((name) => name.trim().toLowerCase())
      if (disabled || !exporters.includes("otlp")) return Option.none<string>()
      if (Option.isSome(specific)) return specific
      return Option.map(base, (url) => `${url.replace(/\/+$/, "")}/v1/${signal}`)
    })
  )
}

/** `key=value,key=value`, values percent-decoded; the trace exporter reads the same variables itself. */
const headers = (name: string) => Config.Record(Schema.String, Schema.StringFromUriComponent, name)

export const telemetrySettings: Config.Config<TelemetrySettings> = Config.all({
  traces: otlpUrl("traces"),
  metrics: otlpUrl("metrics"),
  metricsHeaders: headers("OTEL_EXPORTER_OTLP_METRICS_HEADERS").pipe(
    Config.orElse(() => headers("OTEL_EXPORTER_OTLP_HEADERS")),
    Config.withDefault({})
  ),
  metricsInterval: Config.Int("OTEL_METRIC_EXPORT_INTERVAL").pipe(
    Config.withDefault(60_000),
    Config.map(Duration.millis)
  )
})

const tracerModule = Effect.promise(() => import("./Tracer.ts"))

/**
 * Effect spans (server span per request, `Effect.fn` steps, SQL statements) into OpenTelemetry
 * through `processor`; see `Tracer.ts`.
 */
export const layerTracer = (processor: SpanProcessor) =>
  Layer.unwrap(Effect.map(tracerModule, (module) => module.layerTracer(processor)))

/** OTLP/HTTP export when configured; otherwise the tracer is off and spans cost nothing. */
export const layerTracing = Layer.unwrap(
  Effect.map(telemetrySettings, (settings) =>
    Option.match(settings.traces, {
      onNone: () => Layer.succeed(References.TracerEnabled, false),
      onSome: (url) => Layer.unwrap(Effect.map(tracerModule, (module) => module.layerOtlpTracer(url)))
    })
  )
)

const layerOtlpMetrics = Layer.unwrap(
  Effect.gen(function* () {
    const settings = yield* telemetrySettings
    if (Option.isNone(settings.metrics)) return Layer.empty
    const attributes = yield* Effect.flatMap(tracerModule, (module) => module.resourceAttributes)
    return OtlpMetrics.layer({
      url: settings.metrics.value,
      headers: settings.metricsHeaders,
      resource: { attributes },
      exportInterval: settings.metricsInterval
    }).pipe(Layer.provide(OtlpSerialization.layerJson), Layer.provide(FetchHttpClient.layer))
  })
)

/**
 * `GET /metrics` in the Prometheus text format on `METRICS_PORT`, apart from the public listener
 * (which serves only the contract's routes).
 */
const layerPrometheus = Layer.unwrap(
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (Option.isNone(config.metricsPort)) return Layer.empty
    const port = config.metricsPort.value
    return Layer.effectDiscard(
      Effect.gen(function* () {
        const context = yield* Effect.context<never>()
        const server = createServer((request, response) => {
          if (request.url !== "/metrics" || (request.method !== "GET" && request.method !== "HEAD")) {
            response
              .writeHead(404, { "content-type": "text/plain" })
              .end("Only GET /metrics is served here\n")
            return
          }
          response
            .writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" })
            .end(request.method === "HEAD" ? undefined : PrometheusMetrics.formatUnsafe(context))
        })
        yield* Effect.acquireRelease(
          Effect.callback<void>((resume) => {
            server.once("error", (error) =>
              resume(Effect.die(new Error(`METRICS_PORT ${port}: ${error.message}`)))
            )
            server.listen(port, config.metricsHost, () => {
              resume(Effect.void)
            })
          }),
          () =>
            Effect.callback<void>((resume) => {
              server.close(() => resume(Effect.void))
            })
        )
        const host = config.metricsHost.includes(":") ? `[${config.metricsHost}]` : config.metricsHost
        yield* logListening("metrics", `http://${host}:${port}/metrics`)
      })
    )
  })
)

const poolSampleEvery = Duration.seconds(5)

/**
 * Samples this instance's connections from `pg_stat_activity` (the pool keeps no count of its own),
 * only while metrics go somewhere. A sample that cannot get a connection in time means the pool is full.
 */
const decodePoolRow = Schema.decodeUnknownEffect(
  Schema.Struct({ open: Schema.Number, in_use: Schema.Number })
)

export const layerPoolMetrics = Layer.effectDiscard(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const settings = yield* telemetrySettings
    if (Option.isNone(config.metricsPort) && Option.isNone(settings.metrics)) return
    const sql = yield* SqlClient.SqlClient
    yield* Metric.update(Metrics.poolMax, config.databasePoolSize)
    const sample = sql`
      SELECT count(*)::int AS open,
             (count(*) FILTER (WHERE state <> 'idle' AND pid <> pg_backend_pid()))::int AS in_use
      FROM pg_stat_activity WHERE application_name = ${applicationName}`.pipe(
      Effect.flatMap(([row]) => decodePoolRow(row)),
      Effect.flatMap((row) =>
        Effect.andThen(
          Metric.update(Metrics.poolOpen, row.open),
          Metric.update(Metrics.poolInUse, row.in_use)
        )
      ),
      Effect.timeoutOrElse({
        duration: Duration.seconds(1),
        orElse: () => Metric.update(Metrics.poolInUse, config.databasePoolSize)
      }),
      Effect.ignore
    )
    yield* sample.pipe(
      Effect.repeat(Schedule.spaced(poolSampleEvery)),
      Effect.withTracerEnabled(false),
      Effect.forkScoped
    )
  })
)

const reserved = new Set(["time", "level", "msg", "span_id", "error"])

/**
 * Strings, numbers, booleans and nulls only (every request line): plain `JSON.stringify` writes
 * them exactly as `Formatter.formatJson` would, at a fraction of its per-key replacer's cost.
 * Anything else (objects, redactable values, bigints) still goes through `formatJson`.
 */
const isFlat = (record: Record<string, unknown>) => {
  for (const key in record) {
    const value = record[key]
    const type = typeof value
    if (
      value !== null &&
      type !== "string" &&
      type !== "boolean" &&
      (type !== "number" || !Number.isFinite(value))
    )
      return false
  }
  return true
}

/**
 * One JSON object per line: `time`, `level`, `msg`, a request's fields when the message is its
 * `RequestLine` (then `msg` is `request`), the log annotations, `trace_id`/`span_id` when the line is
 * written inside a traced span, and `error` (the pretty cause) when there is one.
 */
export const makeJsonLogger = (write: (line: string) => void) => {
  // Lines written in the same millisecond share their `time`.
  let lastMillis = Number.NaN
  let lastTime = ""
  const timeOf = (date: Date) => {
    const millis = date.getTime()
    if (millis !== lastMillis) {
      lastMillis = millis
      lastTime = date.toISOString()
    }
    return lastTime
  }
  return Logger.make(({ message, logLevel, cause, fiber, date }) => {
    // The span a line written inside a traced span names.
    const span = fiber.cache.tracerEnabled && fiber.cache.span?._tag === "Span" ? fiber.cache.span : undefined
    // A request's line alone, outside a span and without annotations (every request's line): its
    // fields are already flat, so they are written as they are, with no record built around them.
    // The same line as the generic path writes (test/observability/logs.test.ts).
    const alone = Array.isArray(message) && message.length === 1 ? message[0] : undefined
    if (
      alone instanceof RequestLine &&
      cause.reasons.length === 0 &&
      span === undefined &&
      Record.isEmptyRecord(fiber.getRef(References.CurrentLogAnnotations))
    ) {
      const fields = JSON.stringify(alone.fields).slice(1)
      const level = logLevel.toLowerCase()
      write(
        `{"time":"${timeOf(date)}","level":"${level}","msg":"request"${fields === "}" ? "" : ","}${fields}\n`
      )
      return
    }
    // One pass over the message and the annotations: this runs for every request line.
    let msg: string | undefined
    let request: RequestLine | undefined
    let details: Array<unknown> | undefined
    for (const part of Array.isArray(message) ? message : [message]) {
      if (typeof part === "string") msg = msg === undefined ? part : `${msg} ${part}`
      else if (part instanceof RequestLine && request === undefined) request = part
      else if (details === undefined) details = [part]
      else details.push(part)
    }
    const record: Record<string, unknown> = {
      time: timeOf(date),
      level: logLevel.toLowerCase(),
      msg: msg ?? (request === undefined ? "" : "request")
    }
    if (request !== undefined) {
      const fields = request.fields
      for (const key in fields) record[key] = fields[key]
    }
    const annotations = fiber.getRef(References.CurrentLogAnnotations)
    for (const key in annotations) {
      if (!reserved.has(key)) record[key] = annotations[key]
    }
    if (span !== undefined) {
      record.trace_id = span.traceId
      record.span_id = span.spanId
    }
    if (details !== undefined) record.details = details
    if (cause.reasons.length > 0) record.error = Cause.pretty(cause)
    write(`${isFlat(record) ? JSON.stringify(record) : Formatter.formatJson(record)}\n`)
  })
}

/**
 * Lines written to `write` together, once per turn of the event loop (or every 64 KiB): stdout on a
 * file or a pipe is written synchronously, and one system call per request line is a measurable
 * share of the server's CPU under load (docs/performance.md#findings). Whatever is pending is
 * written when the process exits.
 */
export const makeBatchedWriter = (write: (chunk: string) => void) => {
  let pending = ""
  let scheduled = false
  const flush = () => {
    scheduled = false
    if (pending === "") return
    const chunk = pending
    pending = ""
    write(chunk)
  }
  return {
    write: (line: string) => {
      pending += line
      if (pending.length >= 65_536) flush()
      else if (!scheduled) {
        scheduled = true
        setImmediate(flush)
      }
    },
    flush
  }
}

/** Batched stdout lines, flushed when the layer is released and at exit, whichever comes first. */
const stdoutLogger = Effect.acquireRelease(
  Effect.sync(() => {
    const writer = makeBatchedWriter((chunk) => process.stdout.write(chunk))
    process.once("exit", writer.flush)
    return writer
  }),
  (writer) => Effect.sync(writer.flush)
).pipe(Effect.map((writer) => makeJsonLogger(writer.write)))

/** The JSON logger on stdout, at `LOG_LEVEL`. */
export const layerLogger = Layer.mergeAll(
  Logger.layer([stdoutLogger]),
  Layer.effect(
    References.MinimumLogLevel,
    AppConfig.useSync((config) => config.logLevel)
  )
)

/** Logged last, once everything the layer was provided to has been released. */
const layerStopped = Layer.effectDiscard(Effect.addFinalizer(() => Effect.logInfo("stopped")))

/**
 * Logs, traces and metrics for the server: provide it under everything else so every layer and
 * request is covered. Needs `AppConfig`; `layerPoolMetrics` goes where the `SqlClient` is.
 */
export const layer = Layer.mergeAll(layerTracing, layerOtlpMetrics, layerPrometheus).pipe(
  Layer.provideMerge(layerStopped),
  Layer.provideMerge(layerLogger)
)
