import { once } from "node:events"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { assert, it } from "@effect/vitest"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Layer, Logger, Metric, References } from "effect"
import { LeadRepository } from "../../src/Intake/LeadRepository.ts"
import { layerServices } from "../../src/Intake/Services.ts"
import { WebhookConfig } from "../../src/Platform/Config.ts"
import { layerTracer, makeJsonLogger } from "../../src/Platform/Observability/Observability.ts"
import { WebhookDeliveries } from "../../src/Webhooks/Deliveries.ts"
import { WebhookEndpoints } from "../../src/Webhooks/Endpoints.ts"
import * as WebhookMetrics from "../../src/Webhooks/Metrics.ts"
import { WebhookSender } from "../../src/Webhooks/Sender.ts"
import { WebhookWorker } from "../../src/Webhooks/Worker.ts"
import { leadWrite } from "../services/Suite.ts"
import { seed } from "../support/Client.ts"
import { layerFreshDatabase, layerTestConfig } from "../support/Database.ts"

const count = (outcome: string) =>
  Effect.map(Metric.value(Metric.withAttributes(WebhookMetrics.attempts, { outcome })), (state) =>
    Number((state as { count?: number }).count ?? 0)
  )

it.live("a span, a log line and metrics per attempt, never the secret, the body or the lead", () =>
  Effect.gen(function* () {
    const server = createServer((request, response) => {
      request.resume()
      request.on("end", () => response.writeHead(request.url === "/fail" ? 500 : 200).end())
    })
    server.listen(0, "127.0.0.1")
    yield* Effect.promise(() => once(server, "listening"))
    yield* Effect.addFinalizer(() => Effect.sync(() => server.close()))
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

    const exporter = new InMemorySpanExporter()
    const lines: Array<string> = []
    const context = yield* Layer.build(
      Layer.mergeAll(WebhookWorker.layerWorker, WebhookEndpoints.layer, layerServices).pipe(
        Layer.provideMerge(WebhookDeliveries.layer),
        Layer.provide(WebhookSender.layer),
        Layer.provideMerge(
          Layer.succeed(WebhookConfig, {
            allowPrivate: true,
            timeoutMillis: 1000,
            retrySchedule: [60_000],
            retentionDays: 30,
            concurrency: 4,
            concurrencyPerEndpoint: 2,
            pollIntervalMillis: 200,
            workerInServe: true,
            disableAfterMillis: 5 * 86_400_000
          })
        ),
        Layer.provideMerge(layerTestConfig),
        Layer.provideMerge(layerFreshDatabase),
        Layer.provideMerge(layerTracer(new SimpleSpanProcessor(exporter))),
        Layer.provideMerge(Logger.layer([makeJsonLogger((line) => lines.push(line))])),
        Layer.provideMerge(Layer.succeed(References.MinimumLogLevel, "Info"))
      )
    )
    const provide = Effect.provide(Layer.succeedContext(context))

    const before = { delivered: yield* count("delivered"), failed: yield* count("http_error") }
    const fixture = yield* seed().pipe(provide)
    const add = (url: string) =>
      WebhookEndpoints.use((endpoints) =>
        endpoints.add({ organizationId: fixture.organizationId, url, events: ["lead.created"] })
      ).pipe(provide)
    const ok = yield* add(`${base}/ok`)
    const failing = yield* add(`${base}/fail`)
    const lead = { nombre: "Zacarías Privado", telefono: "+52 55 9876 5432", email: "zacarias@secreto.mx" }
    yield* LeadRepository.use((leads) => leads.createOrEnrich(leadWrite(fixture, lead))).pipe(provide)

    const attempts = () => exporter.getFinishedSpans().filter((span) => span.name === "WebhookWorker.attempt")
    for (let i = 0; i < 100 && attempts().length < 2; i++) yield* Effect.sleep("100 millis")
    assert.strictEqual(attempts().length, 2)

    const byEndpoint = new Map(
      attempts().map((span) => [span.attributes["webhook.endpoint_id"], span.attributes])
    )
    assert.deepInclude(byEndpoint.get(ok.endpoint.id), {
      "webhook.event_type": "lead.created",
      "webhook.attempt": 1,
      "webhook.outcome": "delivered",
      "http.response.status_code": 200
    })
    assert.deepInclude(byEndpoint.get(failing.endpoint.id), {
      "webhook.attempt": 1,
      "webhook.outcome": "http_error",
      "http.response.status_code": 500
    })

    const attemptLines = lines
      .map((line) => JSON.parse(line))
      .filter((line) => line.msg === "webhook attempt")
    assert.strictEqual(attemptLines.length, 2)
    assert.strictEqual(yield* count("delivered"), before.delivered + 1)
    assert.strictEqual(yield* count("http_error"), before.failed + 1)

    const exported = JSON.stringify(
      exporter
        .getFinishedSpans()
        .map((span) => ({ name: span.name, attributes: span.attributes, events: span.events }))
    )
    for (const secret of [
      ok.secret,
      failing.secret,
      ok.secret.slice(6),
      lead.nombre,
      lead.telefono,
      lead.email
    ]) {
      assert.notInclude(exported, secret)
      assert.notInclude(lines.join("\n"), secret)
    }
  })
)
