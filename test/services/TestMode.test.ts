import { assert } from "@effect/vitest"
import { Effect, Option } from "effect"
import { KeyStore } from "../../src/Accounts/KeyStore.ts"
import { parseApiKey } from "../../src/Domain/ApiKey.ts"
import { phoneMatchKey } from "../../src/Domain/Phone.ts"
import { IdempotencyStore, type Reservation } from "../../src/Intake/IdempotencyStore.ts"
import { LeadRepository } from "../../src/Intake/LeadRepository.ts"
import { RateLimiter } from "../../src/Intake/RateLimiter.ts"
import { seed } from "../support/Client.ts"
import { acrossLayers, expectFailure, leadWrite, setClock } from "./Suite.ts"

const fingerprint = "f".repeat(64)

const tokenOf = (reservation: Reservation) => {
  const token = reservation._tag === "Reserved" ? reservation.token : ""
  assert.isString(token)
  assert.deepStrictEqual(reservation, { _tag: "Reserved", token })
  return token
}

/**
 * docs/contract.md#10-test-mode across the four request-path services, on both stores: a test key beside the live
 * key, and test data that never meets live data.
 */
acrossLayers("Test mode", (it) => {
  it.effect(
    "a test key is issued, rotated and revoked apart from the live key, and names a test caller",
    () =>
      Effect.gen(function* () {
        const keys = yield* KeyStore
        const fixture = yield* seed()
        const first = yield* keys.rotate(fixture.originId, "test")
        assert.match(first.key, /^lk_test_[0-9A-Za-z]{8}_[0-9A-Za-z]{38}$/)
        assert.deepStrictEqual(first, { key: first.key, prefix: parseApiKey(first.key)?.prefix })

        const caller = yield* keys.authenticate(first.key)
        const liveCaller = yield* keys.authenticate(fixture.key)
        assert.isTrue(liveCaller.livemode, "the live key still works")
        assert.strictEqual(liveCaller.originId, fixture.originId)
        assert.notStrictEqual(caller.keyId, liveCaller.keyId)
        assert.deepStrictEqual(
          { ...caller, keyId: "" },
          { ...liveCaller, keyId: "", prefix: first.prefix, livemode: false }
        )
        assert.deepStrictEqual(
          (yield* keys.listOrigins(fixture.organizationId)).map((o) => [o.prefix, o.revoked, o.test_prefix]),
          [[fixture.prefix, false, first.prefix]]
        )

        // A new test key revokes the previous test key at that instant, and nothing else.
        const second = yield* keys.rotate(fixture.originId, "test")
        const refused = yield* expectFailure(keys.authenticate(first.key))
        assert.deepStrictEqual(
          [refused._tag, "reason" in refused && refused.reason],
          ["KeyRejected", "revoked"]
        )
        assert.isFalse((yield* keys.authenticate(second.key)).livemode)
        assert.isTrue((yield* keys.authenticate(fixture.key)).livemode)

        // Rotating or revoking the live key leaves the test key alone, and the reverse.
        const live = yield* keys.rotate(fixture.originId)
        assert.isFalse((yield* keys.authenticate(second.key)).livemode)
        const revoked = yield* keys.revoke(fixture.originId, "test")
        assert.deepStrictEqual(revoked, { prefix: second.prefix, revokedAt: revoked.revokedAt })
        assert.isTrue(revoked.revokedAt instanceof Date)
        assert.isTrue((yield* keys.authenticate(live.key)).livemode)
        assert.strictEqual((yield* expectFailure(keys.authenticate(second.key)))._tag, "KeyRejected")
        assert.deepStrictEqual(
          (yield* keys.listOrigins(fixture.organizationId)).map((o) => [o.prefix, o.revoked, o.test_prefix]),
          [[live.prefix, false, null]]
        )
        const again = yield* expectFailure(keys.revoke(fixture.originId, "test"))
        assert.strictEqual(again._tag, "Rejected")
        assert.strictEqual("reason" in again ? again.reason : "", "the origin has no active test key")
      })
  )

  it.effect("a test key counts in its own window with the origin's limit", () =>
    Effect.gen(function* () {
      const keys = yield* KeyStore
      const limiter = yield* RateLimiter
      const fixture = yield* seed({ rateLimit: 2 })
      const test = yield* keys.rotate(fixture.originId, "test")
      yield* setClock("2026-05-04T09:30:15.000Z")
      const admit = (key: string) =>
        keys.authenticate(key).pipe(
          Effect.flatMap((caller) => limiter.consume(caller)),
          Effect.map((window) => window.remaining),
          Effect.catchTag("RateLimitExceeded", () => Effect.succeed("refused" as const))
        )
      assert.deepStrictEqual(
        [yield* admit(fixture.key), yield* admit(fixture.key), yield* admit(fixture.key)],
        [1, 0, "refused"]
      )
      assert.deepStrictEqual(
        [yield* admit(test.key), yield* admit(test.key), yield* admit(test.key)],
        [1, 0, "refused"],
        "the live window's count is not the test key's"
      )
    })
  )

  it.effect("the same Idempotency-Key is a different key in each mode", () =>
    Effect.gen(function* () {
      const store = yield* IdempotencyStore
      const { organizationId, originId } = yield* seed()
      const live = { organizationId, originId, livemode: true, key: "order-7" }
      const test = { organizationId, originId, livemode: false, key: "order-7" }
      const liveToken = tokenOf(yield* store.reserve(live, fingerprint))
      const testToken = tokenOf(yield* store.reserve(test, fingerprint))
      assert.deepStrictEqual(yield* store.reserve(test, fingerprint), { _tag: "InProgress" })
      yield* store.settle(test, liveToken, 0)
      assert.deepStrictEqual(
        yield* store.reserve(test, fingerprint),
        { _tag: "InProgress" },
        "the live reservation's token does not release the test key"
      )
      yield* store.settle(test, testToken, 0)
      tokenOf(yield* store.reserve(test, fingerprint))
      assert.deepStrictEqual(yield* store.reserve(live, fingerprint), { _tag: "InProgress" })
    })
  )

  it.effect("a test lead never meets a live one, is never assigned and sets off no task", () =>
    Effect.gen(function* () {
      const leads = yield* LeadRepository
      const fixture = yield* seed()
      const phone = { nombre: "Ana", telefono: "+52 55 7000 0001" }
      const live = yield* leads.createOrEnrich(leadWrite(fixture, phone))
      assert.strictEqual(live.outcome, "created")
      assert.isNotNull(live.assigneeId)

      const test = yield* leads.createOrEnrich(leadWrite(fixture, phone, { livemode: false }))
      assert.strictEqual(test.outcome, "created", "the live lead with this phone is not a test match")
      assert.notStrictEqual(test.leadId, live.leadId)
      assert.isNull(test.assigneeId)
      const enriched = yield* leads.createOrEnrich(
        leadWrite(fixture, { ...phone, email: "ana@example.com" }, { livemode: false })
      )
      assert.deepStrictEqual([enriched.outcome, enriched.leadId], ["enriched", test.leadId])

      const shown = yield* leads.show(test.leadId)
      assert.isFalse(shown.livemode)
      assert.isNull(shown.assignee_id)
      assert.deepStrictEqual(shown.tasks, [])
      assert.deepStrictEqual(
        shown.events.map((event) => event.type),
        ["lead.created", "lead.enriched"]
      )
      assert.isNull((yield* leads.show(live.leadId)).email, "the live lead was not enriched")

      const key = phoneMatchKey(phone.telefono, "MX")
      assert.deepStrictEqual(
        yield* leads.findMatch(fixture.organizationId, true, key),
        Option.some(live.leadId)
      )
      assert.deepStrictEqual(
        yield* leads.findMatch(fixture.organizationId, false, key),
        Option.some(test.leadId)
      )
      assert.deepStrictEqual(
        (yield* leads.list(fixture.organizationId, 10)).map((lead) => lead.id),
        [live.leadId]
      )
      assert.deepStrictEqual(
        (yield* leads.list(fixture.organizationId, 10, false)).map((lead) => lead.id),
        [test.leadId]
      )
    })
  )

  it.effect("purging test data removes the test leads with what hangs on them, and nothing live", () =>
    Effect.gen(function* () {
      const leads = yield* LeadRepository
      const idempotency = yield* IdempotencyStore
      const fixture = yield* seed()
      const other = yield* seed()
      const live = yield* leads.createOrEnrich(
        leadWrite(fixture, { nombre: "Viva", telefono: "55 7000 0002" })
      )
      const slot = {
        organizationId: fixture.organizationId,
        originId: fixture.originId,
        livemode: false,
        key: "purge-1"
      }
      const token = tokenOf(yield* idempotency.reserve(slot, fingerprint))
      yield* leads.createOrEnrich(
        leadWrite(
          fixture,
          { nombre: "Prueba", telefono: "55 7000 0002", mensaje: "una nota" },
          { livemode: false, idempotency: { key: slot.key, token } }
        )
      )
      yield* leads.createOrEnrich(leadWrite(fixture, { nombre: "Prueba 2" }, { livemode: false }))
      const elsewhere = yield* leads.createOrEnrich(leadWrite(other, { nombre: "Otra" }, { livemode: false }))
      assert.strictEqual((yield* idempotency.reserve(slot, fingerprint))._tag, "Replay")

      assert.strictEqual(yield* leads.purgeTest(fixture.organizationId), 2)
      assert.deepStrictEqual(yield* leads.list(fixture.organizationId, 10, false), [])
      assert.deepStrictEqual(
        (yield* leads.list(fixture.organizationId, 10)).map((lead) => lead.id),
        [live.leadId]
      )
      assert.strictEqual((yield* leads.show(live.leadId)).tasks.length, 1, "the live lead keeps its task")
      assert.strictEqual(
        (yield* idempotency.reserve(slot, fingerprint))._tag,
        "Reserved",
        "the test key's idempotency record went with its lead"
      )
      assert.strictEqual((yield* leads.show(elsewhere.leadId)).livemode, false, "another organization's stay")
      assert.strictEqual(yield* leads.purgeTest(fixture.organizationId), 0)
    })
  )
})
