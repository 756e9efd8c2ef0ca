import { assert, layer } from "@effect/vitest"
import { Context, Effect } from "effect"
import { RequestLog } from "../../src/Intake/RequestLog.ts"
import { postLead } from "../support/Client.ts"
import { layerTestConfig } from "../support/Database.ts"
import { makePostgresHarness } from "./Harness.ts"

/** A partner's form that sends nine digits: the lead docs/contract.md#11-rejected-leads-are-kept-for-rescue saves. */
const nineDigits = '{ "nombre": "Rosa Kept Body", "telefono": "551234567" }'

const setUp = Effect.gen(function* () {
  const harness = yield* makePostgresHarness
  const log = Context.get(harness.context as unknown as Context.Context<RequestLog>, RequestLog)
  const keptOf = (requestId: string) =>
    Effect.gen(function* () {
      yield* log.flush
      const rows = yield* harness.sql<{ kept_body: string | null }>`
        SELECT kept_body FROM request_log WHERE request_id = ${requestId}`.pipe(Effect.orDie)
      assert.strictEqual(rows.length, 1, `one request-log row for ${requestId}`)
      return rows[0]!.kept_body
    })
  return { ...harness, keptOf }
})

layer(layerTestConfig)("rejected bodies kept for rescue (postgres)", (it) => {
  it.effect("a 400 and a 422 keep the body exactly as received; nothing else keeps one", () =>
    Effect.gen(function* () {
      const { handler, fixture, keptOf } = yield* setUp
      const key = fixture.key
      const rejected = yield* postLead(handler, undefined, { key, raw: nineDigits })
      assert.strictEqual(rejected.status, 400)
      assert.strictEqual(rejected.body.error.field, "telefono")
      assert.strictEqual(yield* keptOf(rejected.body.request_id), nineDigits)

      const retired = JSON.stringify({
        nombre: "Rosa",
        telefono: "5512345678",
        propiedad: { codigo: "OLD-0001" }
      })
      const unknownProperty = yield* postLead(handler, undefined, { key, raw: retired })
      assert.strictEqual(unknownProperty.status, 422)
      assert.strictEqual(yield* keptOf(unknownProperty.body.request_id), retired)

      const notJson = '{"nombre": "Rosa", '
      const broken = yield* postLead(handler, undefined, { key, raw: notJson })
      assert.strictEqual(broken.status, 400)
      assert.strictEqual(yield* keptOf(broken.body.request_id), notJson)

      const refusals = [
        yield* postLead(handler, undefined, { raw: nineDigits }),
        yield* postLead(handler, undefined, { key: `${fixture.prefix}_wrong`, raw: nineDigits }),
        yield* postLead(handler, undefined, {
          key,
          raw: nineDigits,
          headers: { "content-type": "text/plain" }
        }),
        yield* postLead(handler, undefined, { key, raw: `{"nombre":"${"x".repeat(70_000)}"}` }),
        yield* postLead(handler, undefined, {
          key,
          raw: nineDigits,
          headers: { "x-service-dry-run": "true" }
        }),
        yield* postLead(handler, { nombre: "Rosa", telefono: "5512345678" }, { key })
      ]
      assert.deepStrictEqual(
        refusals.map((answer) => answer.status),
        [401, 401, 415, 413, 400, 201]
      )
      for (const answer of refusals) {
        const requestId = answer.body?.request_id ?? answer.headers.get("x-request-id")
        assert.isNull(yield* keptOf(requestId), `nothing kept for a ${answer.status}`)
      }
    })
  )

  it.effect("a 429 keeps nothing", () =>
    Effect.gen(function* () {
      const { handler, fixture, keptOf, sql } = yield* setUp
      yield* sql`UPDATE origins SET rate_limit = 1 WHERE id = ${fixture.originId}`.pipe(Effect.orDie)
      yield* postLead(handler, { nombre: "Rosa", telefono: "5512345678" }, { key: fixture.key })
      const limited = yield* postLead(handler, undefined, { key: fixture.key, raw: nineDigits })
      assert.strictEqual(limited.status, 429)
      assert.isNull(yield* keptOf(limited.body.request_id))
    })
  )
})
