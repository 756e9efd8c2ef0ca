import { assert, layer } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { KeyStore } from "../../src/Accounts/KeyStore.ts"
import { apiKeyChecksum } from "../../src/Domain/ApiKey.ts"
import { IdempotencyStore } from "../../src/Intake/IdempotencyStore.ts"
import { LeadRepository } from "../../src/Intake/LeadRepository.ts"
import { type Fixture, layerMemoryServices, layerPostgresServices, seed } from "../support/Client.ts"
import { assertError, Contract, type Sent, type Services, send, withServices } from "./harness.ts"

/** `POST /v1/leads` as the origin of `fixture`. */
const postAs = (fixture: Fixture, body: unknown, headers?: Record<string, string>) =>
  send({
    headers: { authorization: `Bearer ${fixture.key}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body)
  })

const seedWith = (options?: Parameters<typeof seed>[0]) => withServices(seed(options))

/** Windows are Unix minutes on the live clock: a test that counts them starts well inside one. */
const insideOneMinute = Effect.suspend(() => {
  const intoMinute = Date.now() % 60_000
  return intoMinute < 50_000 ? Effect.void : Effect.sleep(`${60_000 - intoMinute + 100} millis`)
})

const leadsOf = (fixture: Fixture) =>
  withServices(Effect.flatMap(LeadRepository, (leads) => leads.list(fixture.organizationId, 50)))

const leadOf = (id: string) => withServices(Effect.flatMap(LeadRepository, (leads) => leads.show(id)))

/** What a write answered: its status and outcome (`replay` marked), or its error code. */
const verdict = (response: Sent) =>
  response.status >= 400
    ? `${response.status} ${response.body.error.code}`
    : `${response.status} ${response.body.status}${response.body.replay === true ? " replay" : ""}`

/**
 * docs/contract.md#3-order-of-checks steps 2-3 and 8-11 through the router, on both stores: the handler's steps in
 * order (key, window, dry run, Idempotency-Key, property, write) and what each leaves behind.
 */
const suite: Parameters<ReturnType<typeof layer<Contract, never>>>[1] = (it) => {
  it.effect("creates, then enriches the lead with the same phone, filling only what was empty", () =>
    Effect.gen(function* () {
      const fixture = yield* seedWith()
      const created = yield* postAs(fixture, { nombre: "Ana", telefono: "55 1234 0001" })
      assert.strictEqual(verdict(created), "201 created")
      const enriched = yield* postAs(fixture, {
        nombre: "Ana María",
        telefono: "+52 55 1234 0001",
        email: "ANA@Example.com",
        propiedad: { codigo: "abc-1234" }
      })
      assert.strictEqual(verdict(enriched), "200 enriched")
      assert.strictEqual(enriched.body.lead_id, created.body.lead_id)
      assert.strictEqual(enriched.body.matched_on, "telefono")
      const lead = yield* leadOf(created.body.lead_id)
      assert.deepStrictEqual(
        [lead.nombre, lead.email, lead.property_id],
        ["Ana", "ana@example.com", fixture.propertyId]
      )
      assert.include(fixture.agentIds, lead.assignee_id)
    })
  )

  it.effect("replays a completed Idempotency-Key with the first answer, and refuses another body", () =>
    Effect.gen(function* () {
      const fixture = yield* seedWith()
      const body = { nombre: "Luis", telefono: "55 1234 0002" }
      const headers = { "idempotency-key": "intake-1" }
      const first = yield* postAs(fixture, body, headers)
      const again = yield* postAs(fixture, { telefono: "55 1234 0002", nombre: "Luis" }, headers)
      assert.deepStrictEqual([verdict(first), verdict(again)], ["201 created", "201 created replay"])
      assert.strictEqual(again.body.lead_id, first.body.lead_id)
      assert.strictEqual(again.headers.get("idempotent-replayed"), "true")
      assert.notStrictEqual(again.body.request_id, first.body.request_id)
      assertError(yield* postAs(fixture, { ...body, email: "l@x.co" }, headers), 409, "idempotency_conflict")
      assert.lengthOf(yield* leadsOf(fixture), 1)
    })
  )

  it.effect("answers 409 in progress, with Retry-After, while the key's first request runs", () =>
    Effect.gen(function* () {
      const fixture = yield* seedWith()
      const held = yield* withServices(
        Effect.flatMap(IdempotencyStore, (store) =>
          store.reserve(
            {
              organizationId: fixture.organizationId,
              originId: fixture.originId,
              livemode: true,
              key: "intake-busy"
            },
            "c".repeat(64)
          )
        )
      )
      assert.strictEqual(held._tag, "Reserved")
      const busy = yield* postAs(fixture, { nombre: "Eva" }, { "idempotency-key": "intake-busy" })
      assertError(busy, 409, "idempotency_in_progress")
      assert.strictEqual(busy.headers.get("retry-after"), "1")
      assert.lengthOf(yield* leadsOf(fixture), 0)
    })
  )

  it.effect("an unknown or archived property answers 422, writes nothing and frees the key", () =>
    Effect.gen(function* () {
      const fixture = yield* seedWith()
      const headers = { "idempotency-key": "intake-property" }
      for (const propiedad of [{ codigo: "ZZZ-9999" }, { id: fixture.archivedPropertyId }]) {
        const missing = yield* postAs(
          fixture,
          { nombre: "Sin", telefono: "55 1234 0003", propiedad },
          headers
        )
        assertError(missing, 422, "property_not_found", "propiedad")
      }
      assert.lengthOf(yield* leadsOf(fixture), 0)
      const corrected = yield* postAs(fixture, { nombre: "Con", telefono: "55 1234 0003" }, headers)
      assert.strictEqual(verdict(corrected), "201 created")
    })
  )

  it.effect("a dry run resolves the property and finds the match, and writes nothing", () =>
    Effect.gen(function* () {
      const fixture = yield* seedWith()
      const body = { nombre: "Pía", telefono: "55 1234 0004", propiedad: { external_code: "EXT-1" } }
      const dryRun = { "x-service-dry-run": "true", "idempotency-key": "ignored in a dry run" }
      const before = yield* postAs(fixture, body, dryRun)
      assert.deepStrictEqual(
        [before.status, before.body.would, before.body.would_match, before.body.resolved.development_id],
        [200, "create", null, fixture.propertyId]
      )
      assert.lengthOf(yield* leadsOf(fixture), 0)
      const created = yield* postAs(fixture, { nombre: "Pía", telefono: "5512340004" })
      const after = yield* postAs(fixture, body, dryRun)
      assert.deepStrictEqual(
        [after.body.would, after.body.would_match],
        ["enrich", { lead_id: created.body.lead_id, matched_on: "telefono" }]
      )
      assertError(
        yield* postAs(fixture, { nombre: "Pía", propiedad: { codigo: "NOP-0000" } }, dryRun),
        422,
        "property_not_found",
        "propiedad"
      )
    })
  )

  it.effect("every answer past the key takes one unit of the window; past the limit nothing runs", () =>
    Effect.gen(function* () {
      const fixture = yield* seedWith({ rateLimit: 6 })
      yield* insideOneMinute
      const ana = { nombre: "Ana", telefono: "55 1234 0101" }
      const enrich = { ...ana, email: "ana@example.com" }
      const answers: Array<Sent> = []
      for (const [body, headers] of [
        [ana, {}],
        [enrich, { "idempotency-key": "admit-1" }],
        [enrich, { "idempotency-key": "admit-1" }],
        [ana, { "idempotency-key": "admit-1" }],
        [{ nombre: "Sin", telefono: "55 1234 0102", propiedad: { codigo: "ZZZ-9999" } }, {}],
        [{ nombre: "Eva", telefono: "55 1234 0103" }, { "x-service-dry-run": "true" }],
        [{ nombre: "Leo", telefono: "55 1234 0104" }, {}]
      ] as const) {
        answers.push(yield* postAs(fixture, body, headers))
      }
      assert.deepStrictEqual(answers.map(verdict), [
        "201 created",
        "200 enriched",
        "200 enriched replay",
        "409 idempotency_conflict",
        "422 property_not_found",
        "200 dry_run",
        "429 rate_limited"
      ])
      assert.deepStrictEqual(
        answers.map((answer) => answer.headers.get("x-ratelimit-remaining")),
        ["5", "4", "3", "2", "1", "0", "0"]
      )
      assert.isAtLeast(Number(answers[6]!.headers.get("retry-after")), 1)
      const names = (yield* leadsOf(fixture)).map((lead) => lead.nombre).sort()
      assert.deepStrictEqual(names, ["Ana"])
    })
  )

  it.effect("a refused key (unknown, mistaken, malformed, revoked) counts nothing and writes nothing", () =>
    Effect.gen(function* () {
      const fixture = yield* seedWith({ rateLimit: 10 })
      yield* insideOneMinute
      const otherBody = `${fixture.prefix}_${"s".repeat(32)}`
      const wrongSecret = otherBody + apiKeyChecksum(otherBody)
      const as = (token: string, nombre: string) =>
        send({
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({ nombre, telefono: `55 1234 02${String(nombre.length).padStart(2, "0")}` })
        })
      assertError(yield* as(wrongSecret, "Antes"), 401, "invalid_key")
      assert.strictEqual(
        (yield* postAs(fixture, { nombre: "Primero" })).headers.get("x-ratelimit-remaining"),
        "9"
      )
      assertError(yield* as("lk_live_not-a-key", "Malformado"), 401, "invalid_key")
      assert.strictEqual(
        (yield* postAs(fixture, { nombre: "Segundo" })).headers.get("x-ratelimit-remaining"),
        "8"
      )
      yield* withServices(Effect.flatMap(KeyStore, (keys) => keys.revoke(fixture.originId)))
      const revoked = yield* postAs(fixture, { nombre: "Revocado" })
      assertError(revoked, 401, "invalid_key")
      assert.isNull(revoked.headers.get("x-ratelimit-remaining"))
      const names = (yield* leadsOf(fixture)).map((lead) => lead.nombre).sort()
      assert.deepStrictEqual(names, ["Primero", "Segundo"])
    })
  )

  it.effect("concurrent writes: never more than the limit admitted, and exactly those written", () =>
    Effect.gen(function* () {
      const fixture = yield* seedWith({ rateLimit: 12 })
      yield* insideOneMinute
      const answers = yield* Effect.forEach(
        Array.from({ length: 30 }, (_, i) => i + 1),
        (i) => postAs(fixture, { nombre: `N${i}`, telefono: `55 1234 ${String(1300 + i)}` }),
        { concurrency: 15 }
      )
      const admitted = answers.filter((answer) => answer.status !== 429)
      assert.lengthOf(admitted, 12)
      assert.isTrue(admitted.every((answer) => verdict(answer) === "201 created"))
      assert.deepStrictEqual(
        admitted.map((answer) => Number(answer.headers.get("x-ratelimit-remaining"))).sort((a, b) => a - b),
        Array.from({ length: 12 }, (_, i) => i)
      )
      assert.lengthOf(yield* leadsOf(fixture), 12)
    })
  )
}

layer(Contract.layer(layerMemoryServices), { excludeTestServices: true })(
  "POST /v1/leads steps 8-11 (memory)",
  suite
)
layer(Contract.layer(layerPostgresServices as Layer.Layer<Services>), {
  timeout: "60 seconds",
  excludeTestServices: true
})("POST /v1/leads steps 8-11 (postgres)", suite)
