import { assert } from "@effect/vitest"
import { Effect, Option } from "effect"
import type { CallerShape } from "../../src/Api.ts"
import type { LeadInput } from "../../src/Domain/LeadRequest.ts"
import { IdempotencyStore } from "../../src/IdempotencyStore.ts"
import { type Accepted, type Idempotency, LeadIntake } from "../../src/LeadIntake.ts"
import { LeadRepository } from "../../src/LeadRepository.ts"
import { type Fixture, seed } from "../support/Client.ts"
import { acrossLayers, expectFailure, leadInput, setClock } from "./Suite.ts"

const callerOf = (fixture: Fixture): CallerShape => ({
  keyId: "key",
  prefix: fixture.prefix,
  originId: fixture.originId,
  originLabel: "web",
  organizationId: fixture.organizationId,
  country: "MX",
  rateLimit: 1000
})

const inputOf = leadInput

/** Contract order 9-11 as the handler runs them: idempotency, then property, then the write. */
const submit = (fixture: Fixture, input: LeadInput, idempotency: Idempotency | null = null) =>
  Effect.flatMap(LeadIntake, (intake) =>
    intake.accept({ caller: callerOf(fixture), input, requestId: crypto.randomUUID(), idempotency })
  )

const summary = (accepted: Accepted) => [accepted.leadId, accepted.outcome, accepted.replay] as const

acrossLayers("LeadIntake", (it) => {
  it.effect("creates, then enriches the lead with the same phone, filling only what was empty", () =>
    Effect.gen(function* () {
      const fixture = yield* seed()
      yield* setClock("2026-08-01T10:00:00.000Z")
      const created = yield* submit(fixture, inputOf({ nombre: "Ana", telefono: "55 1234 0001" }))
      assert.deepStrictEqual([created.outcome, created.replay, created.filled], ["created", false, []])
      assert.include(fixture.agentIds, created.assigneeId)

      const enriched = yield* submit(
        fixture,
        inputOf({
          nombre: "Ana",
          telefono: "+52 55 1234 0001",
          email: "ana@example.com",
          propiedad: { by: "codigo", value: "ABC-1234" }
        })
      )
      assert.deepStrictEqual(summary(enriched), [created.leadId, "enriched", false])
      assert.deepStrictEqual(enriched.filled, ["email", "property"])
      assert.strictEqual(enriched.assigneeId, created.assigneeId)
    })
  )

  it.effect("answers a repeat of a completed key with the first answer, and refuses another body", () =>
    Effect.gen(function* () {
      const fixture = yield* seed()
      const input = inputOf({ nombre: "Luis", telefono: "55 1234 0002" })
      const key = { key: "intake-1", fingerprint: "a".repeat(64) }
      const first = yield* submit(fixture, input, key)
      const again = yield* submit(fixture, input, key)
      assert.deepStrictEqual(summary(again), [first.leadId, "created", true])

      const other = yield* expectFailure(submit(fixture, input, { ...key, fingerprint: "b".repeat(64) }))
      assert.strictEqual(other._tag, "IdempotencyKeyReused")
      const leads = yield* LeadRepository
      assert.strictEqual((yield* leads.list(fixture.organizationId, 10)).length, 1)
    })
  )

  it.effect("refuses a key whose first request is still running", () =>
    Effect.gen(function* () {
      const fixture = yield* seed()
      const key = { key: "intake-busy", fingerprint: "c".repeat(64) }
      const store = yield* IdempotencyStore
      const held = yield* store.reserve({ originId: fixture.originId, key: key.key }, key.fingerprint)
      assert.strictEqual(held._tag, "Reserved")
      const busy = yield* expectFailure(submit(fixture, inputOf({ nombre: "Eva" }), key))
      assert.strictEqual(busy._tag, "IdempotencyKeyBusy")
    })
  )

  it.effect("an unknown or archived property fails before any write and frees the key", () =>
    Effect.gen(function* () {
      const fixture = yield* seed()
      const key = { key: "intake-property", fingerprint: "d".repeat(64) }
      for (const propiedad of [
        { by: "codigo", value: "ZZZ-9999" },
        { by: "id", value: fixture.archivedPropertyId }
      ] as const) {
        const failure = yield* expectFailure(
          submit(fixture, inputOf({ nombre: "Sin", telefono: "55 1234 0003", propiedad }), key)
        )
        assert.strictEqual(failure._tag, "UnknownProperty")
      }
      const leads = yield* LeadRepository
      assert.deepStrictEqual(yield* leads.list(fixture.organizationId, 10), [])

      const written = yield* submit(fixture, inputOf({ nombre: "Con", telefono: "55 1234 0003" }), key)
      assert.deepStrictEqual([written.outcome, written.replay], ["created", false])
    })
  )

  it.effect("a dry run resolves the property and finds the match, and writes nothing", () =>
    Effect.gen(function* () {
      const fixture = yield* seed()
      const caller = callerOf(fixture)
      const preview = (input: LeadInput) =>
        Effect.gen(function* () {
          const intake = yield* LeadIntake
          return yield* intake.preview(caller, input)
        })
      const input = inputOf({
        nombre: "Pía",
        telefono: "55 1234 0004",
        propiedad: { by: "external_code", value: "EXT-1" }
      })
      assert.deepStrictEqual(yield* preview(input), { propertyId: fixture.propertyId, match: Option.none() })
      const leads = yield* LeadRepository
      assert.deepStrictEqual(yield* leads.list(fixture.organizationId, 10), [])

      const created = yield* submit(fixture, inputOf({ nombre: "Pía", telefono: "5512340004" }))
      assert.deepStrictEqual(yield* preview(input), {
        propertyId: fixture.propertyId,
        match: Option.some(created.leadId)
      })
      const missing = yield* expectFailure(
        preview(inputOf({ nombre: "Pía", propiedad: { by: "codigo", value: "NOP-0000" } }))
      )
      assert.strictEqual(missing._tag, "UnknownProperty")
    })
  )
})
