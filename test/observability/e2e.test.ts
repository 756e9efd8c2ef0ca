import { randomBytes } from "node:crypto"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { attributesOf, type Collector, startCollector } from "../../scripts/collector.ts"
import { layerServices } from "../../src/Intake/Services.ts"
import { freePort, freshDatabaseEnv, postLead, type RunningServer, startServer } from "../e2e/Processes.ts"
import { seed } from "../support/Client.ts"

const eventually = async <A>(read: () => A, done: (value: A) => boolean, what: string): Promise<A> => {
  const deadline = Date.now() + 10_000
  while (true) {
    const value = read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const person = {
  nombre: "Eulalia Brisgüete",
  telefono: "+52 33 4567 8901",
  email: "eulalia.b@buzon-privado.mx",
  mensaje: "Llámenme después de las seis"
}

describe("a real server process exporting to a local OTLP/HTTP receiver", () => {
  let collector: Collector | undefined
  let server: RunningServer | undefined

  afterAll(async () => {
    await server?.stop("SIGKILL")
    await collector?.close()
  })

  it("continues the caller's trace, serves /metrics on METRICS_PORT, logs JSON and flushes on SIGTERM", async () => {
    collector = await startCollector({ port: 0 })
    const database = await freshDatabaseEnv()
    const [port, metricsPort] = [await freePort(), await freePort()]
    server = await startServer(port, {
      env: {
        ...database,
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_SERVICE_NAME: "lead-intake-e2e",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=test",
        OTEL_BSP_SCHEDULE_DELAY: "100",
        OTEL_METRIC_EXPORT_INTERVAL: "500",
        METRICS_PORT: String(metricsPort)
      }
    })
    const fixture = await Effect.runPromise(
      seed().pipe(
        Effect.provide(
          layerServices.pipe(
            Layer.provideMerge(PgClient.layer({ url: Redacted.make(database.DATABASE_URL!) }))
          )
        )
      )
    )

    const traceId = randomBytes(16).toString("hex")
    const callerSpanId = randomBytes(8).toString("hex")
    const created = await postLead(server.baseUrl, person, {
      key: fixture.key,
      headers: { traceparent: `00-${traceId}-${callerSpanId}-01` }
    })
    expect(created.status).toBe(201)

    const spans = await eventually(
      () => collector!.spans.filter((span) => span.traceId === traceId),
      (found) => found.some((span) => span.name === "POST /v1/leads"),
      "the request's server span"
    )
    const root = spans.find((span) => span.name === "POST /v1/leads")!
    expect(root.parentSpanId).toBe(callerSpanId)
    expect(root.service).toBe("lead-intake-e2e")
    const rootAttributes = attributesOf(root.attributes)
    expect(rootAttributes["request.id"]).toBe(created.body.request_id)
    expect(rootAttributes["http.route"]).toBe("/v1/leads")
    expect(rootAttributes["http.response.status_code"]).toBe(201)
    expect(rootAttributes["request.outcome"]).toBe("created")
    const names = new Set(spans.map((span) => span.name))
    for (const step of [
      "KeyStore.authenticate",
      "RateLimiter.consume",
      "LeadRepository.createOrEnrich",
      "RequestLog.record"
    ]) {
      expect(names, step).toContain(step)
    }
    const statements = spans.filter((span) => attributesOf(span.attributes)["db.query.text"] !== undefined)
    expect(statements.length).toBeGreaterThan(0)
    expect(new Set(statements.map((span) => span.name))).toEqual(
      new Set([database.DATABASE_URL!.split("/").pop()])
    )

    const scrape = await fetch(`http://127.0.0.1:${metricsPort}/metrics`)
    expect(scrape.status).toBe(200)
    const text = await scrape.text()
    expect(text).toMatch(
      /^lead_intake_http_requests_total\{method="POST",route="\/v1\/leads",status="201",outcome="created"\} 1$/m
    )
    expect(text).toMatch(/^lead_intake_db_pool_connections_max 16$/m)
    expect((await fetch(`http://127.0.0.1:${metricsPort}/v1`)).status).toBe(404)
    expect((await fetch(`${server.baseUrl}/metrics`)).status).toBe(404)

    const finished = await server.stop("SIGTERM")
    expect(finished.code, finished.stderr).toBe(0)
    const lines = finished.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line))
    const messages = lines.map((line) => line.msg)
    expect(messages).toContain("listening")
    expect(messages.slice(-2)).toEqual(["stopping", "stopped"])
    const requestLine = lines.find((line) => line.request_id === created.body.request_id)
    expect(requestLine).toMatchObject({
      level: "info",
      request_id: created.body.request_id,
      trace_id: traceId,
      key_prefix: fixture.prefix,
      route: "/v1/leads",
      status: 201,
      outcome: "created"
    })
    expect(collector.metricNames).toContain("lead_intake_http_requests_total")

    const everything = [...collector.bodies, finished.stdout, text].join("\n").toLowerCase()
    for (const secret of [...Object.values(person), "3345678901", fixture.key, fixture.key.slice(17)]) {
      expect(everything, secret).not.toContain(secret.toLowerCase())
    }
  }, 60_000)
})
