// What a span costs when tracing is off, in isolation: the same work through Effect.fn (a span per
// call), Effect.fnUntraced and a plain Effect.gen, with References.TracerEnabled false (what the
// server runs without OTEL_EXPORTER_OTLP_ENDPOINT), then with the OpenTelemetry tracer installed
// but the SDK's default no-op processor. Usage: node scripts/tracer-overhead.ts [iterations]
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import * as OtelTracer from "@effect/opentelemetry/OtelTracer"
import * as Resource from "@effect/opentelemetry/Resource"
import type { ExportResult } from "@opentelemetry/core"
import { SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Layer, References } from "effect"

const iterations = Number(process.argv[2] ?? 200_000)
const depth = 8

const traced = Effect.fn("step")(function* (n: number) {
  return n + 1
})
const untraced = Effect.fnUntraced(function* (n: number) {
  return n + 1
})
const plain = (n: number) =>
  Effect.gen(function* () {
    return n + 1
  })

/** One "request": `depth` nested steps, as a handler calling services calling SQL. */
const request = (step: (n: number) => Effect.Effect<number>) =>
  Effect.gen(function* () {
    let n = 0
    for (let i = 0; i < depth; i++) n = yield* step(n)
    return n
  })

const time = async (
  label: string,
  step: (n: number) => Effect.Effect<number>,
  layer: Layer.Layer<never>,
  stackTraceLimit = Error.stackTraceLimit
) => {
  const previousLimit = Error.stackTraceLimit
  Error.stackTraceLimit = stackTraceLimit
  const program = Effect.gen(function* () {
    for (let i = 0; i < iterations; i++) yield* request(step)
  }).pipe(Effect.provide(layer))
  await Effect.runPromise(program) // warm-up
  const started = performance.now()
  await Effect.runPromise(program)
  const micros = ((performance.now() - started) * 1000) / iterations
  Error.stackTraceLimit = previousLimit
  return { label, micros: Math.round(micros * 100) / 100 }
}

const off = Layer.succeed(References.TracerEnabled, false)
const exporter = {
  export: (_: unknown, done: (result: ExportResult) => void) => done({ code: 0 }),
  shutdown: async () => {}
}
const otel = OtelTracer.layer.pipe(
  Layer.provide(NodeSdk.layerTracerProvider(new SimpleSpanProcessor(exporter))),
  Layer.provide(Resource.layer({ serviceName: "overhead" }))
)

const rows = [
  await time("Effect.fn, tracer off", traced, off),
  await time("Effect.fnUntraced, tracer off", untraced, off),
  await time("Effect.gen, tracer off", plain, off),
  await time("Effect.fn, tracer off, Error.stackTraceLimit = 0", traced, off, 0),
  await time("Effect.fn, Effect's native tracer", traced, Layer.empty),
  await time("Effect.fn, OpenTelemetry (exporting nowhere)", traced, otel)
]
process.stdout.write(`${iterations} requests of ${depth} nested steps; µs per request\n`)
for (const row of rows) process.stdout.write(`${String(row.micros).padStart(8)}  ${row.label}\n`)
