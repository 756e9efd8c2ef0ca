import { assert, describe, it } from "@effect/vitest"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { ConfigProvider, Effect, Layer, Option, References } from "effect"
import {
  layerTracer,
  layerTracing,
  telemetrySettings
} from "../../src/Platform/Observability/Observability.ts"

const settingsFrom = (env: Record<string, string>) =>
  telemetrySettings.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env }))))

describe("telemetry settings from the OpenTelemetry variables", () => {
  it.effect("nothing is exported when no endpoint is set", () =>
    Effect.gen(function* () {
      const settings = yield* settingsFrom({ OTEL_SERVICE_NAME: "x", OTEL_EXPORTER_OTLP_ENDPOINT: " " })
      assert.isTrue(Option.isNone(settings.traces))
      assert.isTrue(Option.isNone(settings.metrics))
    })
  )

  it.effect("the base endpoint gets the signal's path; a signal endpoint is used as given", () =>
    Effect.gen(function* () {
      const base = yield* settingsFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" })
      assert.deepStrictEqual(base.traces, Option.some("http://collector:4318/v1/traces"))
      assert.deepStrictEqual(base.metrics, Option.some("http://collector:4318/v1/metrics"))
      const specific = yield* settingsFrom({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://tempo.example/otlp/v1/traces"
      })
      assert.deepStrictEqual(specific.traces, Option.some("https://tempo.example/otlp/v1/traces"))
      assert.deepStrictEqual(specific.metrics, Option.some("http://collector:4318/v1/metrics"))
    })
  )

  it.effect("metric export headers come from the signal's variable, else the general one", () =>
    Effect.gen(function* () {
      const general = yield* settingsFrom({
        OTEL_EXPORTER_OTLP_ENDPOINT: "https://otlp.example",
        OTEL_EXPORTER_OTLP_HEADERS: "authorization=Basic%20abc,x-scope-orgid=acme"
      })
      assert.deepStrictEqual(general.metricsHeaders, { authorization: "Basic abc", "x-scope-orgid": "acme" })
      const specific = yield* settingsFrom({
        OTEL_EXPORTER_OTLP_HEADERS: "x-scope-orgid=acme",
        OTEL_EXPORTER_OTLP_METRICS_HEADERS: "x-scope-orgid=metrics"
      })
      assert.deepStrictEqual(specific.metricsHeaders, { "x-scope-orgid": "metrics" })
    })
  )

  it.effect("an exporter set to none, or the SDK disabled, turns the signal off", () =>
    Effect.gen(function* () {
      const noMetrics = yield* settingsFrom({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_METRICS_EXPORTER: "none"
      })
      assert.isTrue(Option.isSome(noMetrics.traces))
      assert.isTrue(Option.isNone(noMetrics.metrics))
      const disabled = yield* settingsFrom({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_SDK_DISABLED: "true"
      })
      assert.isTrue(Option.isNone(disabled.traces))
    })
  )

  it.effect("a malformed endpoint is a configuration error naming the variable", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(settingsFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }))
      assert.include(String(error), "OTEL_EXPORTER_OTLP_ENDPOINT")
    })
  )

  it.effect("without an endpoint the tracer is off, so spans cost nothing", () =>
    Effect.gen(function* () {
      const enabled = yield* Effect.gen(function* () {
        return yield* References.TracerEnabled
      }).pipe(
        Effect.provide(
          layerTracing.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: {} }))))
        )
      )
      assert.isFalse(enabled)
    })
  )

  it.effect("OTEL_TRACES_SAMPLER and its argument decide what is recorded", () =>
    Effect.gen(function* () {
      const traced = (sampler: Record<string, string>) =>
        Effect.gen(function* () {
          const exporter = new InMemorySpanExporter()
          const saved = { ...process.env }
          Object.assign(process.env, sampler)
          return yield* Effect.void.pipe(
            Effect.withSpan("Probe.step"),
            Effect.map(() => exporter.getFinishedSpans().length),
            Effect.provide(layerTracer(new SimpleSpanProcessor(exporter))),
            Effect.ensuring(
              Effect.sync(() => {
                for (const name of Object.keys(sampler)) delete process.env[name]
                Object.assign(process.env, saved)
              })
            )
          )
        })
      assert.strictEqual(yield* traced({}), 1)
      assert.strictEqual(
        yield* traced({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "0" }),
        0
      )
      assert.strictEqual(yield* traced({ OTEL_TRACES_SAMPLER: "always_off" }), 0)
    })
  )
})
