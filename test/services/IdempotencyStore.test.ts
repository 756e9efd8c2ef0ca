import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { IdempotencyStore, type Reservation } from "../../src/Intake/IdempotencyStore.ts"
import { LeadRepository } from "../../src/Intake/LeadRepository.ts"
import { seed } from "../support/Client.ts"
import { acrossLayers, leadWrite, setClock } from "./Suite.ts"

const fingerprint = "a".repeat(64)
const otherFingerprint = "b".repeat(64)

const reservedToken = (reservation: Reservation) => {
  const token = (reservation as Extract<Reservation, { _tag: "Reserved" }>).token
  assert.isString(token)
  assert.deepStrictEqual(reservation, { _tag: "Reserved", token })
  return token
}

acrossLayers("IdempotencyStore", (it) => {
  it.effect("reserves a new key once; while it runs every other attempt is in progress", () =>
    Effect.gen(function* () {
      const store = yield* IdempotencyStore
      const { organizationId, originId } = yield* seed()
      const slot = { organizationId, originId, livemode: true, key: "order-1" }

      const token = reservedToken(yield* store.reserve(slot, fingerprint))
      assert.isString(token)
      assert.deepStrictEqual(yield* store.reserve(slot, fingerprint), { _tag: "InProgress" })
      assert.deepStrictEqual(yield* store.reserve(slot, otherFingerprint), { _tag: "InProgress" })
    })
  )

  it.effect("frees a reservation whose 30 s lease ran out, with a new token", () =>
    Effect.gen(function* () {
      const store = yield* IdempotencyStore
      const { organizationId, originId } = yield* seed()
      const slot = { organizationId, originId, livemode: true, key: "order-2" }
      yield* setClock("2026-06-01T08:00:00.000Z")

      const first = reservedToken(yield* store.reserve(slot, fingerprint))
      yield* TestClock.adjust("29999 millis")
      assert.deepStrictEqual(yield* store.reserve(slot, fingerprint), { _tag: "InProgress" })
      yield* TestClock.adjust("1 millis")
      const second = reservedToken(yield* store.reserve(slot, otherFingerprint))
      assert.notStrictEqual(second, first)
      assert.deepStrictEqual(yield* store.reserve(slot, otherFingerprint), { _tag: "InProgress" })
    })
  )

  it.effect("keeps keys per origin", () =>
    Effect.gen(function* () {
      const store = yield* IdempotencyStore
      const first = yield* seed()
      const second = yield* seed()
      reservedToken(
        yield* store.reserve(
          { organizationId: first.organizationId, originId: first.originId, livemode: true, key: "shared" },
          fingerprint
        )
      )
      reservedToken(
        yield* store.reserve(
          { organizationId: second.organizationId, originId: second.originId, livemode: true, key: "shared" },
          fingerprint
        )
      )
    })
  )

  it.effect(
    "remembers the response stored by the lead write: replay for the same body, conflict for another",
    () =>
      Effect.gen(function* () {
        const store = yield* IdempotencyStore
        const leads = yield* LeadRepository
        const fixture = yield* seed()
        const slot = {
          organizationId: fixture.organizationId,
          originId: fixture.originId,
          livemode: true,
          key: "order-3"
        }
        yield* setClock("2026-06-01T09:00:00.000Z")

        const token = reservedToken(yield* store.reserve(slot, fingerprint))
        const written = yield* leads.createOrEnrich(
          leadWrite(
            fixture,
            { nombre: "Ana", telefono: "55 1111 2222" },
            { idempotency: { key: slot.key, token } }
          )
        )
        assert.strictEqual(written.outcome, "created")

        const expected: Reservation = {
          _tag: "Replay",
          response: { lead_id: written.leadId, status: "created" }
        }
        assert.deepStrictEqual(yield* store.reserve(slot, fingerprint), expected)
        assert.deepStrictEqual(yield* store.reserve(slot, otherFingerprint), { _tag: "Conflict" })

        // Settling the spent token late changes nothing: the key stays spent.
        yield* store.settle(slot, token, 0)
        assert.deepStrictEqual(yield* store.reserve(slot, fingerprint), expected)
      })
  )

  it.effect("remembers an enrichment as 200 enriched", () =>
    Effect.gen(function* () {
      const store = yield* IdempotencyStore
      const leads = yield* LeadRepository
      const fixture = yield* seed()
      const slot = {
        organizationId: fixture.organizationId,
        originId: fixture.originId,
        livemode: true,
        key: "order-4"
      }
      const created = yield* leads.createOrEnrich(
        leadWrite(fixture, { nombre: "Ana", telefono: "55 3333 4444" })
      )

      const token = reservedToken(yield* store.reserve(slot, fingerprint))
      yield* leads.createOrEnrich(
        leadWrite(
          fixture,
          { nombre: "Ana", telefono: "+52 55 3333 4444", mensaje: "otra vez" },
          { idempotency: { key: slot.key, token } }
        )
      )
      assert.deepStrictEqual(yield* store.reserve(slot, fingerprint), {
        _tag: "Replay",
        response: { lead_id: created.leadId, status: "enriched" }
      })
    })
  )

  it.effect("forgets a completed key 24 h after completion", () =>
    Effect.gen(function* () {
      const store = yield* IdempotencyStore
      const leads = yield* LeadRepository
      const fixture = yield* seed()
      const slot = {
        organizationId: fixture.organizationId,
        originId: fixture.originId,
        livemode: true,
        key: "order-5"
      }
      yield* setClock("2026-06-01T10:00:00.000Z")

      const token = reservedToken(yield* store.reserve(slot, fingerprint))
      yield* TestClock.adjust("10 seconds")
      const written = yield* leads.createOrEnrich(
        leadWrite(
          fixture,
          { nombre: "Luis", telefono: "55 5555 6666" },
          { idempotency: { key: slot.key, token } }
        )
      )

      yield* TestClock.adjust("86399999 millis")
      assert.deepStrictEqual(yield* store.reserve(slot, otherFingerprint), { _tag: "Conflict" })
      assert.deepStrictEqual(yield* store.reserve(slot, fingerprint), {
        _tag: "Replay",
        response: { lead_id: written.leadId, status: "created" }
      })
      yield* TestClock.adjust("1 millis")
      reservedToken(yield* store.reserve(slot, otherFingerprint))
      assert.deepStrictEqual(yield* store.reserve(slot, otherFingerprint), { _tag: "InProgress" })
    })
  )

  it.effect("frees a reservation only with its own token", () =>
    Effect.gen(function* () {
      const store = yield* IdempotencyStore
      const { organizationId, originId } = yield* seed()
      const slot = { organizationId, originId, livemode: true, key: "order-6" }

      const token = reservedToken(yield* store.reserve(slot, fingerprint))
      yield* store.settle(slot, crypto.randomUUID(), 0)
      assert.deepStrictEqual(yield* store.reserve(slot, fingerprint), { _tag: "InProgress" })

      yield* store.settle(slot, token, 0)
      reservedToken(yield* store.reserve(slot, otherFingerprint))
    })
  )

  it.effect("a write whose lease was taken over writes nothing and leaves the new reservation running", () =>
    Effect.gen(function* () {
      const store = yield* IdempotencyStore
      const leads = yield* LeadRepository
      const fixture = yield* seed()
      const slot = {
        organizationId: fixture.organizationId,
        originId: fixture.originId,
        livemode: true,
        key: "order-7"
      }
      yield* setClock("2026-06-01T11:00:00.000Z")

      const stale = reservedToken(yield* store.reserve(slot, fingerprint))
      yield* TestClock.adjust("31 seconds")
      const current = reservedToken(yield* store.reserve(slot, fingerprint))
      const late = yield* Effect.exit(
        leads.createOrEnrich(
          leadWrite(
            fixture,
            { nombre: "Tardío", telefono: "55 7777 8888" },
            { idempotency: { key: slot.key, token: stale } }
          )
        )
      )
      assert.isTrue(late._tag === "Failure")
      assert.deepStrictEqual(yield* leads.list(fixture.organizationId, 10), [])
      assert.deepStrictEqual(yield* store.reserve(slot, fingerprint), { _tag: "InProgress" })

      const written = yield* leads.createOrEnrich(
        leadWrite(
          fixture,
          { nombre: "Tardío", telefono: "55 7777 8888" },
          { idempotency: { key: slot.key, token: current } }
        )
      )
      assert.strictEqual(written.outcome, "created")
      assert.deepStrictEqual(yield* store.reserve(slot, fingerprint), {
        _tag: "Replay",
        response: { lead_id: written.leadId, status: written.outcome }
      })
    })
  )

  it.effect("settles a write whose answer was lost: committed, its stored answer; the key stays spent", () =>
    Effect.gen(function* () {
      const store = yield* IdempotencyStore
      const leads = yield* LeadRepository
      const fixture = yield* seed()
      const slot = {
        organizationId: fixture.organizationId,
        originId: fixture.originId,
        livemode: true,
        key: "lost-1"
      }
      const token = reservedToken(yield* store.reserve(slot, fingerprint))
      const written = yield* leads.createOrEnrich(
        leadWrite(
          fixture,
          { nombre: "Ana", telefono: "55 5555 1111" },
          { idempotency: { key: slot.key, token } }
        )
      )
      const response = { lead_id: written.leadId, status: "created" } as const
      assert.deepStrictEqual(yield* store.settle(slot, token, 0), { _tag: "Committed", response })
      assert.deepStrictEqual(yield* store.reserve(slot, fingerprint), { _tag: "Replay", response })
      // Another request's lost answer on the same key is not this completion: nothing of its own was written.
      assert.deepStrictEqual(yield* store.settle(slot, crypto.randomUUID(), 0), { _tag: "Released" })
      assert.deepStrictEqual(yield* store.reserve(slot, fingerprint), { _tag: "Replay", response })
    })
  )

  it.effect("settles a write that never committed: released, and the write can no longer commit", () =>
    Effect.gen(function* () {
      const store = yield* IdempotencyStore
      const leads = yield* LeadRepository
      const fixture = yield* seed()
      const slot = {
        organizationId: fixture.organizationId,
        originId: fixture.originId,
        livemode: true,
        key: "lost-2"
      }
      const token = reservedToken(yield* store.reserve(slot, fingerprint))
      assert.deepStrictEqual(yield* store.settle(slot, token, 0), { _tag: "Released" })
      assert.deepStrictEqual(yield* store.settle(slot, token, 0), { _tag: "Released" })
      // The write arriving late (it was still on its way) finds its reservation gone and writes nothing.
      const late = yield* Effect.exit(
        leads.createOrEnrich(
          leadWrite(
            fixture,
            { nombre: "Ana", telefono: "55 5555 2222" },
            { idempotency: { key: slot.key, token } }
          )
        )
      )
      assert.isTrue(late._tag === "Failure")
      assert.deepStrictEqual(yield* leads.list(fixture.organizationId, 10), [])
      const retry = reservedToken(yield* store.reserve(slot, fingerprint))
      assert.notStrictEqual(retry, token)
    })
  )
})
