import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { layerMemoryServices, layerPostgresServices, makeHarness, postLead, seed } from "../support/Client.ts"

for (const [name, services] of [
  ["memory", layerMemoryServices],
  ["postgres", layerPostgresServices]
] as const) {
  describe(`create then enrich (${name})`, () => {
    it.effect("creates a lead, then enriches it by the same phone in another format", () =>
      Effect.gen(function* () {
        const { handler, context } = yield* makeHarness(
          services as Layer.Layer<Layer.Success<typeof layerMemoryServices>>
        )
        const fixture = yield* seed().pipe(Effect.provide(Layer.succeedContext(context)))
        const created = yield* postLead(
          handler,
          { nombre: "Ana", telefono: "+52 55 1234 5678" },
          { key: fixture.key }
        )
        assert.strictEqual(created.status, 201)
        assert.strictEqual(created.body.status, "created")
        const enriched = yield* postLead(
          handler,
          { nombre: "Ana B", telefono: "55-1234-5678", mensaje: "hola" },
          { key: fixture.key }
        )
        assert.strictEqual(enriched.status, 200)
        assert.strictEqual(enriched.body.lead_id, created.body.lead_id)
        assert.strictEqual(enriched.body.matched_on, "telefono")
        assert.strictEqual(enriched.headers.get("x-request-id"), enriched.body.request_id)
      }).pipe(Effect.scoped)
    )
  })
}
