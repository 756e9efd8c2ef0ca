import { assert } from "@effect/vitest"
import { Effect, Exit, Option } from "effect"
import { KeyStore } from "../../src/Accounts/KeyStore.ts"
import type { CallerShape } from "../../src/Api/Api.ts"
import { apiKeyChecksum } from "../../src/Domain/ApiKey.ts"
import { IdempotencyStore } from "../../src/Intake/IdempotencyStore.ts"
import type { LeadInput } from "../../src/Intake/LeadInput.ts"
import {
  type Accepted,
  type AdmittedWrite,
  type Idempotency,
  LeadIntake
} from "../../src/Intake/LeadIntake.ts"
import { LeadRepository } from "../../src/Intake/LeadRepository.ts"
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

/** Contract order 2-3 and 9-11 as the admission runs them for a write that passed every local check. */
const admitAndSubmit = (token: string, input: LeadInput, idempotency: Idempotency | null = null) =>
  Effect.flatMap(LeadIntake, (intake) =>
    intake.admitAndAccept(token, { input, requestId: crypto.randomUUID(), idempotency })
  )

/** What steps 9-11 answered: the write's summary, the failure's tag, or `over` when the window refused. */
const verdict = ({ accepted }: AdmittedWrite) =>
  accepted === undefined
    ? "over"
    : Exit.match(accepted, {
        onSuccess: (written) => `${written.outcome}${written.replay ? " replay" : ""}`,
        onFailure: (cause) =>
          String(cause.reasons.map((reason) => ("error" in reason ? reason.error._tag : reason._tag)))
      })

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

  it.effect(
    "admits and writes in one call: every answer of steps 9-11 takes one unit, past the limit nothing runs",
    () =>
      Effect.gen(function* () {
        const fixture = yield* seed({ rateLimit: 6 })
        yield* setClock("2026-08-01T10:00:10.000Z")
        const leads = yield* LeadRepository
        const input = inputOf({ nombre: "Ana", telefono: "55 1234 0101" })
        const key = { key: "admit-1", fingerprint: "e".repeat(64) }
        const answers: Array<AdmittedWrite> = []
        for (const [body, idempotency] of [
          [input, null],
          [inputOf({ nombre: "Ana", telefono: "+52 55 1234 0101", email: "ana@example.com" }), key],
          [inputOf({ nombre: "Ana", telefono: "+52 55 1234 0101", email: "ana@example.com" }), key],
          [input, { ...key, fingerprint: "f".repeat(64) }],
          [
            inputOf({
              nombre: "Sin",
              telefono: "55 1234 0102",
              propiedad: { by: "codigo", value: "ZZZ-9999" }
            }),
            null
          ],
          [inputOf({ nombre: "Eva", telefono: "55 1234 0103" }), null],
          [inputOf({ nombre: "Leo", telefono: "55 1234 0104" }), null]
        ] as const) {
          answers.push(yield* admitAndSubmit(fixture.key, body, idempotency))
        }
        assert.deepStrictEqual(answers.map(verdict), [
          "created",
          "enriched",
          "enriched replay",
          "IdempotencyKeyReused",
          "UnknownProperty",
          "created",
          "over"
        ])
        assert.deepStrictEqual(
          answers.map(({ window }) => [window.allowed, window.remaining]),
          [
            [true, 5],
            [true, 4],
            [true, 3],
            [true, 2],
            [true, 1],
            [true, 0],
            [false, 0]
          ]
        )
        for (const { caller } of answers) {
          assert.deepStrictEqual(
            [caller.originId, caller.organizationId, caller.prefix, caller.country],
            [fixture.originId, fixture.organizationId, fixture.prefix, "MX"]
          )
        }
        const names = (yield* leads.list(fixture.organizationId, 10)).map((lead) => lead.nombre).sort()
        assert.deepStrictEqual(names, ["Ana", "Eva"])

        yield* setClock("2026-08-01T10:01:00.000Z")
        const nextMinute = yield* admitAndSubmit(
          fixture.key,
          inputOf({ nombre: "Leo", telefono: "55 1234 0104" })
        )
        assert.deepStrictEqual([verdict(nextMinute), nextMinute.window.remaining], ["created", 5])
      })
  )

  it.effect(
    "refuses an unknown, mistaken or revoked key before and after its first write, counting and writing nothing",
    () =>
      Effect.gen(function* () {
        const fixture = yield* seed({ rateLimit: 10 })
        const leads = yield* LeadRepository
        const otherBody = `${fixture.prefix}_${"s".repeat(32)}`
        const wrongSecret = otherBody + apiKeyChecksum(otherBody)
        const input = (nombre: string, phone: string) => inputOf({ nombre, telefono: `55 1234 ${phone}` })
        const refusal = (token: string, nombre: string) =>
          Effect.map(expectFailure(admitAndSubmit(token, input(nombre, "0201"))), (error) =>
            error._tag === "KeyRejected" ? error.reason : error._tag
          )
        assert.strictEqual(yield* refusal(wrongSecret, "Antes"), "unknown")
        const first = yield* admitAndSubmit(fixture.key, input("Primero", "0202"))
        assert.deepStrictEqual([verdict(first), first.window.remaining], ["created", 9])
        assert.strictEqual(yield* refusal(wrongSecret, "Después"), "unknown")
        assert.strictEqual(yield* refusal("lk_live_not-a-key", "Malformado"), "malformed")
        const second = yield* admitAndSubmit(fixture.key, input("Segundo", "0203"))
        assert.deepStrictEqual([verdict(second), second.window.remaining], ["created", 8])

        yield* (yield* KeyStore).revoke(fixture.originId)
        assert.strictEqual(yield* refusal(fixture.key, "Revocado"), "revoked")
        const names = (yield* leads.list(fixture.organizationId, 10)).map((lead) => lead.nombre).sort()
        assert.deepStrictEqual(names, ["Primero", "Segundo"])
      })
  )

  it.effect("never admits more than the limit under concurrent writes, and writes exactly those", () =>
    Effect.gen(function* () {
      const fixture = yield* seed({ rateLimit: 12 })
      yield* setClock("2026-08-01T11:00:05.000Z")
      const leads = yield* LeadRepository
      const warm = yield* admitAndSubmit(fixture.key, inputOf({ nombre: "Uno", telefono: "55 1234 0300" }))
      assert.strictEqual(verdict(warm), "created")
      const answers = yield* Effect.forEach(
        Array.from({ length: 30 }, (_, i) => i + 1),
        (i) =>
          admitAndSubmit(fixture.key, inputOf({ nombre: `N${i}`, telefono: `55 1234 ${String(300 + i)}` })),
        { concurrency: 15 }
      )
      const admitted = answers.filter(({ window }) => window.allowed)
      assert.strictEqual(admitted.length, 11)
      assert.deepStrictEqual(
        admitted.map(verdict),
        Array.from({ length: 11 }, () => "created")
      )
      assert.deepStrictEqual(
        admitted.map(({ window }) => window.remaining).sort((a, b) => a - b),
        Array.from({ length: 11 }, (_, i) => i)
      )
      assert.isTrue(
        answers.filter(({ window }) => !window.allowed).every((answer) => verdict(answer) === "over")
      )
      assert.strictEqual((yield* leads.list(fixture.organizationId, 100)).length, 12)
    })
  )
})
