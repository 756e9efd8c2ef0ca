import { assert, layer } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { KeyStore } from "../../src/Accounts/KeyStore.ts"
import { RequestLog } from "../../src/Intake/RequestLog.ts"
import { type Fixture, layerMemoryServices, layerPostgresServices, seed } from "../support/Client.ts"
import { assertError, Contract, type Services, send, withServices } from "./harness.ts"

const postWith = (key: string, body: unknown, headers?: Record<string, string>) =>
  send({
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body)
  })

/** An organization whose origin has a test key beside its live key. */
const seedWithTestKey = (options?: Parameters<typeof seed>[0]) =>
  withServices(
    Effect.gen(function* () {
      const fixture: Fixture = yield* seed(options)
      const test = yield* (yield* KeyStore).rotate(fixture.originId, "test")
      return { ...fixture, testKey: test.key, testPrefix: test.prefix }
    })
  )

/** Windows are Unix minutes on the live clock: a test that counts them starts well inside one. */
const insideOneMinute = Effect.suspend(() => {
  const intoMinute = Date.now() % 60_000
  return intoMinute < 50_000 ? Effect.void : Effect.sleep(`${60_000 - intoMinute + 100} millis`)
})

/** A test key's requests through the router (docs/contract.md#10-test-mode): the whole contract, on test data. */
const suite: Parameters<ReturnType<typeof layer<Contract, never>>>[1] = (it) => {
  it.effect("answers a test key exactly as a live key, and its dry run matches test leads only", () =>
    Effect.gen(function* () {
      const fixture = yield* seedWithTestKey()
      const body = { nombre: "Ana", telefono: "55 4100 0001" }
      const live = yield* postWith(fixture.key, body)
      assert.strictEqual(live.status, 201)

      const dry = yield* postWith(fixture.testKey, body, { "x-service-dry-run": "true" })
      assert.deepStrictEqual([dry.status, dry.body.would, dry.body.would_match], [200, "create", null])

      const test = yield* postWith(fixture.testKey, body)
      assert.strictEqual(test.status, 201)
      assert.deepStrictEqual(Object.keys(test.body).sort(), Object.keys(live.body).sort())
      assert.deepStrictEqual(
        [...test.headers.keys()].filter((name) => name !== "date").sort(),
        [...live.headers.keys()].filter((name) => name !== "date").sort(),
        "the same headers"
      )
      assert.notStrictEqual(test.body.lead_id, live.body.lead_id)

      const dryAgain = yield* postWith(fixture.testKey, body, { "x-service-dry-run": "true" })
      assert.deepStrictEqual(dryAgain.body.would_match, {
        lead_id: test.body.lead_id,
        matched_on: "telefono"
      })
      const enriched = yield* postWith(fixture.key, { ...body, email: "ana@example.com" })
      assert.deepStrictEqual([enriched.status, enriched.body.lead_id], [200, live.body.lead_id])

      const logged = yield* withServices(
        Effect.flatMap(RequestLog, (log) => log.list({ originId: fixture.originId }, 10))
      )
      assert.deepStrictEqual(
        logged.map((row) => [row.keyPrefix, row.outcome, row.livemode]),
        [
          [fixture.prefix, "enriched", true],
          [fixture.testPrefix, "dry_run", false],
          [fixture.testPrefix, "created", false],
          [fixture.testPrefix, "dry_run", false],
          [fixture.prefix, "created", true]
        ]
      )
    })
  )

  it.effect("a test key has its own window with the origin's limit, and refuses past it with 429", () =>
    Effect.gen(function* () {
      const fixture = yield* seedWithTestKey({ rateLimit: 2 })
      yield* insideOneMinute
      const statuses = (key: string) =>
        Effect.forEach([1, 2, 3], (i) =>
          postWith(key, { nombre: `N${i}` }, { "x-service-dry-run": "true" }).pipe(
            Effect.map((answer) => `${answer.status} ${answer.headers.get("x-ratelimit-remaining")}`)
          )
        )
      assert.deepStrictEqual(yield* statuses(fixture.key), ["200 1", "200 0", "429 0"])
      assert.deepStrictEqual(yield* statuses(fixture.testKey), ["200 1", "200 0", "429 0"])
      const refused = yield* postWith(fixture.testKey, { nombre: "Otra" })
      assertError(refused, 429, "rate_limited")
      assert.isNotNull(refused.headers.get("retry-after"))
    })
  )

  it.effect("a revoked test key is refused like a revoked live key, and the live key keeps working", () =>
    Effect.gen(function* () {
      const fixture = yield* seedWithTestKey()
      yield* withServices(Effect.flatMap(KeyStore, (keys) => keys.revoke(fixture.originId, "test")))
      assertError(yield* postWith(fixture.testKey, { nombre: "Nadie" }), 401, "invalid_key")
      assert.strictEqual((yield* postWith(fixture.key, { nombre: "Alguien" })).status, 201)
    })
  )
}

layer(Contract.layer(layerMemoryServices), { excludeTestServices: true })("test-mode keys (memory)", suite)
layer(Contract.layer(layerPostgresServices as Layer.Layer<Services>), {
  timeout: "60 seconds",
  excludeTestServices: true
})("test-mode keys (postgres)", suite)
