import { assert, layer } from "@effect/vitest"
import { Effect, Metric } from "effect"
import { PrometheusMetrics } from "effect/observability"
import { layerPostgresServices, seed } from "../support/Client.ts"
import { Observed, post, requestTree, withServices } from "./support.ts"

const person = {
  nombre: "Zoraida Quintanilla Vex",
  telefono: "+52 55 8765 4321",
  email: "zoraida.qv@correo-privado.mx",
  mensaje: "Quiero visitar el departamento azul el martes por la tarde",
  extras: { presupuesto: "siete millones y medio", recamaras: 3 },
  propiedad: { codigo: "ABC-1234" }
}

/** Every spelling of the personal data and secrets that must never leave the process. */
const forbidden = (keys: ReadonlyArray<string>) => [
  person.nombre,
  "Quintanilla",
  person.telefono,
  "525587654321",
  "5587654321",
  "55 8765",
  "8765 4321",
  person.email,
  "zoraida.qv",
  person.mensaje,
  "departamento azul",
  person.extras.presupuesto,
  ...keys,
  ...keys.map((key) => key.slice(17))
]

const exportedBytes = Effect.gen(function* () {
  const { spans, rawLog } = yield* Observed
  const exportedSpans = spans().map((span) =>
    JSON.stringify({
      name: span.name,
      kind: span.kind,
      traceId: span.spanContext().traceId,
      attributes: span.attributes,
      events: span.events,
      links: span.links,
      status: span.status,
      resource: span.resource.attributes,
      scope: span.instrumentationScope
    })
  )
  const prometheus = yield* PrometheusMetrics.format()
  const snapshot = JSON.stringify(yield* Metric.snapshot)
  return { spans: exportedSpans.join("\n"), log: rawLog(), metrics: `${prometheus}\n${snapshot}` }
})

layer(Observed.layer(layerPostgresServices), { excludeTestServices: true })(
  "nothing sensitive leaves the process",
  (it) => {
    it.effect("the whole request mix: no secret or personal data in any span, metric or log line", () =>
      Effect.gen(function* () {
        const { fixture } = yield* Observed
        const limited = yield* withServices(seed({ rateLimit: 1 }))
        const wrongKey = `${fixture.prefix}_Q7hN2kLp9XwZ4vBm6TcR8yJd3FsGa1Ue0Ab12Z`

        const created = yield* post(person, { headers: { "idempotency-key": "privacy-1" } })
        assert.strictEqual(created.status, 201, created.text)
        const enriched = yield* post({ ...person, nombre: "Zoraida Q. Vex", telefono: "55-8765-4321" })
        assert.strictEqual(enriched.status, 200, enriched.text)
        const replay = yield* post(person, { headers: { "idempotency-key": "privacy-1" } })
        assert.strictEqual(replay.status, 201, replay.text)
        assert.strictEqual(replay.body.replay, true)
        const conflict = yield* post(
          { ...person, mensaje: "otro" },
          { headers: { "idempotency-key": "privacy-1" } }
        )
        assert.strictEqual(conflict.status, 409, conflict.text)
        const invalid = yield* post({ ...person, email: "zoraida.qv@correo-privado" })
        assert.strictEqual(invalid.status, 400, invalid.text)
        const unknownField = yield* post({ ...person, whatsapp: person.telefono })
        assert.strictEqual(unknownField.status, 400, unknownField.text)
        const unauthorized = yield* post(person, { key: wrongKey })
        assert.strictEqual(unauthorized.status, 401, unauthorized.text)
        const noProperty = yield* post({ ...person, propiedad: { codigo: "ZZZ-9999" } })
        assert.strictEqual(noProperty.status, 422, noProperty.text)
        const dryRun = yield* post(person, { headers: { "x-service-dry-run": "true" } })
        assert.strictEqual(dryRun.status, 200, dryRun.text)
        assert.strictEqual(dryRun.body.resolved.email, person.email, "the data did reach the service")
        yield* post(person, { key: limited.key })
        const limitedResponse = yield* post(person, { key: limited.key })
        assert.strictEqual(limitedResponse.status, 429, limitedResponse.text)

        const responses = [created, enriched, replay, conflict, invalid, unknownField, unauthorized]
        for (const response of [...responses, noProperty, dryRun, limitedResponse]) {
          yield* requestTree(response.body.request_id)
        }

        const exported = yield* exportedBytes
        assert.include(exported.spans, fixture.prefix, "the key prefix is traced")
        assert.include(exported.spans, "KeyStore.authenticate")
        assert.include(exported.log, created.body.request_id)
        assert.include(exported.metrics, "lead_intake_http_requests_total")
        for (const [where, bytes] of Object.entries(exported)) {
          for (const secret of forbidden([fixture.key, limited.key, wrongKey])) {
            assert.notInclude(
              bytes.toLowerCase(),
              secret.toLowerCase(),
              `${where} must not contain "${secret}"`
            )
          }
        }
      })
    )
  }
)
