import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import * as OtelTracer from "@effect/opentelemetry/OtelTracer"
import * as Resource from "@effect/opentelemetry/Resource"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { resourceFromAttributes } from "@opentelemetry/resources"
import { BatchSpanProcessor, type SpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Layer } from "effect"
import { HttpMiddleware, UrlParams } from "effect/http"
import packageJson from "../../../package.json" with { type: "json" }
import { instanceId } from "../Sql/Sql.ts"

// Loaded only when traces or OTLP metrics are configured: the OpenTelemetry SDK is memory a server
// without them never uses.

/** `service.name` defaults to lead-intake; `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` win. */
export const layerResource = Layer.effect(
  Resource.Resource,
  Effect.gen(function* () {
    const fromEnvironment = yield* Resource.Resource
    return resourceFromAttributes({
      "service.name": "lead-intake",
      "service.version": packageJson.version,
      "service.instance.id": instanceId
    }).merge(fromEnvironment)
  })
).pipe(Layer.provide(Resource.layerFromEnv()))

const pathOf = (url: string) => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}

/**
 * Effect spans (server span per request, `Effect.fn` steps, SQL statements) into OpenTelemetry
 * through `processor`. The server span is named `METHOD /path`; which paths are traced at all is
 * the listener's to say (`HttpMiddleware.TracerDisabledWhen`, see `Intake/Http/App.ts`). Query
 * string values are never recorded: the API takes none, so whatever a client puts there is not
 * ours to keep.
 */
export const layerTracer = (processor: SpanProcessor) =>
  Layer.mergeAll(
    OtelTracer.layer.pipe(
      Layer.provide(NodeSdk.layerTracerProvider(processor)),
      Layer.provide(layerResource)
    ),
    Layer.succeed(HttpMiddleware.SpanNameGenerator, (request) => `${request.method} ${pathOf(request.url)}`),
    Layer.succeed(UrlParams.CurrentRedactedNames, [/(?:)/])
  )

/** Spans exported over OTLP/HTTP to `url`, in batches. */
export const layerOtlpTracer = (url: string) =>
  layerTracer(new BatchSpanProcessor(new OTLPTraceExporter({ url })))

/** The resource's attributes, for the OTLP metrics exporter. */
export const resourceAttributes = Effect.map(
  Effect.provide(Effect.service(Resource.Resource), layerResource),
  (resource) => resource.attributes
)
