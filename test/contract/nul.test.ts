import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { layerMemoryServices, layerPostgresServices, makeHarness, postLead, seed } from "../support/Client.ts"

const cases: ReadonlyArray<readonly [field: string, body: Record<string, unknown>]> = [
  ["nombre", { nombre: "Ana\u0000López" }],
  ["email", { nombre: "Ana", email: "ana\u0000@example.com" }],
  ["mensaje", { nombre: "Ana", mensaje: "hola\u0000" }],
  ["propiedad", { nombre: "Ana", propiedad: { external_code: "EXT\u0000-1" } }],
  ["extras.utm\u0000", { nombre: "Ana", extras: { "utm\u0000": "x" } }],
  ["extras.utm", { nombre: "Ana", extras: { utm: "camp\u0000aña" } }]
]

for (const [name, services] of [
  ["memory", layerMemoryServices],
  ["postgres", layerPostgresServices]
] as const) {
  describe(`NUL characters (${name})`, () => {
    it.effect("are refused with 400 on the field that holds them (PostgreSQL text cannot store U+0000)", () =>
      Effect.gen(function* () {
        const { handler, context } = yield* makeHarness(
          services as Layer.Layer<Layer.Success<typeof layerMemoryServices>>
        )
        const fixture = yield* seed().pipe(Effect.provide(Layer.succeedContext(context)))
        for (const [field, body] of cases) {
          const response = yield* postLead(handler, body, { key: fixture.key })
          assert.strictEqual(response.status, 400, field)
          assert.strictEqual(response.body.error.code, "validation_error")
          assert.strictEqual(response.body.error.field, field)
        }
      }).pipe(Effect.scoped)
    )
  })
}
