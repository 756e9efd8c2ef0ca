import { assert, layer } from "@effect/vitest"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Layer, Logger, Metric, References } from "effect"
import { PrometheusMetrics } from "effect/observability"
import { LeadRepository } from "../../src/Intake/LeadRepository.ts"
import { PersonalData } from "../../src/PersonalData/PersonalData.ts"
import { layerTracer, makeJsonLogger } from "../../src/Platform/Observability/Observability.ts"
import { leadWrite } from "../services/Suite.ts"
import { layerPostgresServices, seed } from "../support/Client.ts"

const person = {
  nombre: "Leocadia Irigoyen Bastida",
  telefono: "+52 55 2718 2818",
  email: "leocadia.ib@correo-personal.mx",
  mensaje: "Necesito mudarme antes de diciembre con mi madre",
  extras: [["ocupacion", "cirujana dentista"]] as ReadonlyArray<readonly [string, string]>
}

const forbidden = [
  person.nombre,
  "Irigoyen",
  person.telefono,
  "5527182818",
  "27182818",
  "2718 2818",
  person.email,
  "leocadia.ib",
  person.mensaje,
  "antes de diciembre",
  "cirujana dentista"
]

const services = PersonalData.layer.pipe(Layer.provideMerge(layerPostgresServices))

layer(services, { excludeTestServices: true })(
  "nothing personal in the signals of an export or an erasure",
  (it) => {
    it.effect("spans, log lines and metrics of findByPhone, export and erase carry ids only", () =>
      Effect.gen(function* () {
        const fixture = yield* seed()
        const leads = yield* LeadRepository
        const personalData = yield* PersonalData
        const written = yield* leads.createOrEnrich(
          leadWrite(fixture, person, { propertyId: fixture.propertyId })
        )

        const exporter = new InMemorySpanExporter()
        const lines: Array<string> = []
        // Built in the test's scope: closing it would shut the exporter down, which forgets its spans.
        const observed = yield* Layer.build(
          Layer.mergeAll(
            layerTracer(new SimpleSpanProcessor(exporter)),
            Logger.layer([makeJsonLogger((line) => lines.push(line))]),
            Layer.succeed(References.MinimumLogLevel, "All")
          )
        )
        const document = yield* Effect.gen(function* () {
          const found = yield* personalData.findByPhone(fixture.organizationId, "55 2718 2818")
          assert.strictEqual(found, written.leadId)
          const document = yield* personalData.export(found)
          yield* personalData.erase({ leadId: found, reason: "ARCO request, folio 9", actor: "dpo" })
          yield* personalData.erase({ leadId: found, reason: "ARCO request, folio 9", actor: "dpo" })
          yield* personalData.export(found)
          return document
        }).pipe(Effect.provideContext(observed))
        assert.strictEqual(document.lead.nombre, person.nombre, "the data did go through the traced code")

        const spans = exporter.getFinishedSpans()
        const names = spans.map((span) => span.name)
        for (const name of ["PersonalData.findByPhone", "PersonalData.export", "PersonalData.erase"]) {
          assert.include(names, name)
        }
        const erase = spans.find((span) => span.name === "PersonalData.erase")!
        assert.strictEqual(erase.attributes["lead.id"], written.leadId)
        assert.isTrue(
          spans.some((span) => span.attributes["db.query.text"] !== undefined),
          "SQL statements are traced (as text, without their parameters)"
        )
        const erasedLine = lines.map((line) => JSON.parse(line)).find((line) => line.msg === "lead erased")
        assert.strictEqual(erasedLine?.lead_id, written.leadId)

        const exported = {
          spans: spans
            .map((span) =>
              JSON.stringify({
                name: span.name,
                attributes: span.attributes,
                events: span.events,
                links: span.links,
                status: span.status,
                resource: span.resource.attributes
              })
            )
            .join("\n"),
          log: lines.join(""),
          metrics: `${yield* PrometheusMetrics.format()}\n${JSON.stringify(yield* Metric.snapshot)}`
        }
        for (const [where, bytes] of Object.entries(exported)) {
          for (const secret of forbidden) {
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
