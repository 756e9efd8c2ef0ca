import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { layerServicesMemory } from "../../src/Intake/Services.ts"
import { makeHarness, seed } from "../support/Client.ts"

// CONTRIBUTING.md shows this test: the app over the in-memory layers; makeHarness(layerPostgresServices) is the same on PostgreSQL.
it.effect("creates a lead through the whole router on the in-memory services", () =>
  Effect.gen(function* () {
    const { handler, context } = yield* makeHarness(layerServicesMemory)
    const { key } = yield* seed().pipe(Effect.provideContext(context))
    const body = JSON.stringify({ nombre: "Ana López", telefono: "55 1234 5678" })
    const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" }
    const request = new Request("http://127.0.0.1/v1/leads", { method: "POST", headers, body })
    const response = yield* Effect.promise(() => handler(request))
    assert.strictEqual(response.status, 201)
    assert.deepInclude(yield* Effect.promise(() => response.json() as Promise<object>), { status: "created" })
  })
)
