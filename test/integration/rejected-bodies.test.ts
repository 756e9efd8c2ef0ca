import { assert, layer } from "@effect/vitest"
import { Context, Effect, Exit, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { decodeLeadBody } from "../../src/Api/LeadBody.ts"
import { RequestLog } from "../../src/Intake/RequestLog.ts"
import { type Rescued, type RescueFailure, Rescues } from "../../src/Intake/Rescue.ts"
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
      // A request whose key names no origin is logged unattributed, where nothing is ever kept.
      const rows = yield* harness.sql<{ kept_body: string | null }>`
        SELECT kept_body FROM logged_requests WHERE request_id = ${requestId}
        UNION ALL SELECT NULL FROM unattributed_requests WHERE request_id = ${requestId}`.pipe(Effect.orDie)
      assert.strictEqual(rows.length, 1, `one request-log row for ${requestId}`)
      return rows[0]!.kept_body
    })
  const rescues = yield* Layer.build(Rescues.layer).pipe(
    Effect.provide(
      Layer.mergeAll(
        Layer.succeedContext(harness.context),
        Layer.succeed(SqlClient.SqlClient, harness.sql),
        layerTestConfig
      )
    ),
    Effect.map((context) => Context.get(context, Rescues))
  )
  const rowOf = (requestId: string) =>
    harness.sql<{ kept: boolean; rescued_lead_id: string | null }>`
      SELECT kept_body IS NOT NULL AS kept, rescued_lead_id FROM logged_requests WHERE request_id = ${requestId}`.pipe(
      Effect.map((rows) => rows[0]),
      Effect.orDie
    )
  const leadsOf = (telefono: string) =>
    harness.sql<{ id: string; origin_id: string; livemode: boolean }>`
      SELECT id, origin_id, livemode FROM leads WHERE telefono = ${telefono}`.pipe(Effect.orDie)
  /** What the CLI and the console do: decode the corrected body as the endpoint does, then rescue. */
  const rescue = (
    requestId: string,
    body: string
  ): Effect.Effect<
    Rescued,
    RescueFailure | { readonly _tag: "Refused"; readonly code: string; readonly field: string }
  > => {
    const decoded = decodeLeadBody(body)
    return decoded._tag === "Invalid"
      ? Effect.fail({ _tag: "Refused", code: "validation_error", field: decoded.field })
      : rescues.rescue(requestId, decoded.lead)
  }
  return { ...harness, keptOf, rescues: { show: rescues.show, rescue }, rowOf, leadsOf, flush: log.flush }
})

/** A rescue's failure, as its tag and (for a refusal) its code and field. */
const failureOf = <A>(exit: Exit.Exit<A, { readonly _tag: string }>) => {
  if (Exit.isSuccess(exit)) return "succeeded"
  const error = exit.cause.reasons.find((reason) => reason._tag === "Fail")
  if (error === undefined || error._tag !== "Fail") return "died"
  const failure = error.error as { _tag: string; code?: string; field?: string; reason?: string }
  if (failure._tag === "UnknownProperty") return `property_not_found ${failure.field}`
  return failure._tag === "Refused" ? `${failure.code} ${failure.field}` : `${failure._tag} ${failure.reason}`
}

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
      const { handler, fixture, keptOf, setRateLimit } = yield* setUp
      yield* setRateLimit(fixture.originId, 1)
      yield* postLead(handler, { nombre: "Rosa", telefono: "5512345678" }, { key: fixture.key })
      const limited = yield* postLead(handler, undefined, { key: fixture.key, raw: nineDigits })
      assert.strictEqual(limited.status, 429)
      assert.isNull(yield* keptOf(limited.body.request_id))
    })
  )

  it.effect(
    "a rescue writes the corrected body as POST /v1/leads would, once; a wrong one changes nothing",
    () =>
      Effect.gen(function* () {
        const { handler, fixture, rescues, rowOf, leadsOf, count, sql, flush } = yield* setUp
        const rejected = yield* postLead(handler, undefined, { key: fixture.key, raw: nineDigits })
        const requestId: string = rejected.body.request_id
        yield* flush
        const shown = yield* rescues.show(requestId)
        assert.strictEqual(shown.body, nineDigits)
        assert.strictEqual(shown.origin_id, fixture.originId)
        assert.isNull(shown.rescued_lead_id)

        const stillWrong = yield* Effect.exit(rescues.rescue(requestId, nineDigits))
        assert.strictEqual(failureOf(stillWrong), "validation_error telefono")
        const unknownField = yield* Effect.exit(
          rescues.rescue(requestId, '{"nombre":"Rosa","fono":"5512345678"}')
        )
        assert.strictEqual(failureOf(unknownField), "validation_error fono")
        const retired = JSON.stringify({
          nombre: "Rosa",
          telefono: "5512345670",
          propiedad: { codigo: "OLD-0001" }
        })
        assert.strictEqual(
          failureOf(yield* Effect.exit(rescues.rescue(requestId, retired))),
          "property_not_found propiedad"
        )
        assert.deepStrictEqual(
          yield* rowOf(requestId),
          { kept: true, rescued_lead_id: null },
          "nothing changed"
        )
        assert.lengthOf(yield* leadsOf("5512345670"), 0)

        const corrected = '{ "nombre": "Rosa Kept Body", "telefono": "5512345670", "mensaje": "rescatado" }'
        const rescued = yield* rescues.rescue(requestId, corrected)
        assert.strictEqual(rescued.organizationId, fixture.organizationId)
        assert.strictEqual(rescued.answer.status, "created")
        assert.strictEqual(rescued.answer.request_id, requestId)
        assert.strictEqual(rescued.answer.lead_url, `https://crm.test/leads/${rescued.answer.lead_id}`)
        const [lead] = yield* leadsOf("5512345670")
        assert.deepStrictEqual(lead, {
          id: rescued.answer.lead_id,
          origin_id: fixture.originId,
          livemode: true
        })
        assert.deepStrictEqual(yield* rowOf(requestId), { kept: false, rescued_lead_id: lead!.id })
        // What a created lead sets off: its note, its first-contact task (assigned by the rule), its event.
        const leadId = lead!.id
        assert.strictEqual(
          yield* count(sql`SELECT count(*)::int AS n FROM lead_notes WHERE lead_id = ${leadId}`),
          1
        )
        assert.strictEqual(
          yield* count(
            sql`SELECT count(*)::int AS n FROM lead_tasks WHERE lead_id = ${leadId} AND assignee_id IS NOT NULL`
          ),
          1
        )
        assert.strictEqual(
          yield* count(
            sql`SELECT count(*)::int AS n FROM outbox_events WHERE lead_id = ${leadId} AND type = 'lead.created'`
          ),
          1
        )

        const again = yield* Effect.exit(rescues.rescue(requestId, corrected))
        assert.strictEqual(failureOf(again), "NotRescuable already_rescued")
        const created = yield* postLead(
          handler,
          { nombre: "Rosa", telefono: "5512345671" },
          { key: fixture.key }
        )
        yield* flush
        const nothingKept = yield* Effect.exit(rescues.rescue(created.body.request_id, corrected))
        assert.strictEqual(failureOf(nothingKept), "NotRescuable nothing_kept")
      })
  )

  it.effect("two rescues of one request at once: exactly one writes, the other is told it was rescued", () =>
    Effect.gen(function* () {
      const { handler, fixture, rescues, rowOf, leadsOf, flush } = yield* setUp
      const requestIds: Array<string> = []
      for (let i = 0; i < 3; i++) {
        const rejected = yield* postLead(handler, undefined, { key: fixture.key, raw: nineDigits })
        requestIds.push(rejected.body.request_id)
      }
      yield* flush
      for (const [i, requestId] of requestIds.entries()) {
        const telefono = `551234568${i}`
        const body = JSON.stringify({ nombre: "Rosa", telefono })
        const exits = yield* Effect.all(
          [rescues.rescue(requestId, body), rescues.rescue(requestId, body)].map(Effect.exit),
          {
            concurrency: "unbounded"
          }
        )
        assert.deepStrictEqual(
          exits.map(failureOf).sort(),
          ["NotRescuable already_rescued", "succeeded"],
          `round ${i}`
        )
        const leads = yield* leadsOf(telefono)
        assert.lengthOf(leads, 1)
        assert.deepStrictEqual(yield* rowOf(requestId), { kept: false, rescued_lead_id: leads[0]!.id })
      }
    })
  )

  it.effect("a 422 rescued onto an existing lead enriches it with the corrected property", () =>
    Effect.gen(function* () {
      const { handler, fixture, rescues, leadsOf, sql, flush } = yield* setUp
      yield* postLead(handler, { nombre: "Rosa", telefono: "5512345690" }, { key: fixture.key })
      const retired = JSON.stringify({
        nombre: "Rosa",
        telefono: "5512345690",
        propiedad: { codigo: "OLD-0001" }
      })
      const refused = yield* postLead(handler, undefined, { key: fixture.key, raw: retired })
      assert.strictEqual(refused.status, 422)
      yield* flush
      const enriched = yield* rescues.rescue(
        refused.body.request_id,
        JSON.stringify({ nombre: "Rosa", telefono: "5512345690", propiedad: { codigo: "ABC-1234" } })
      )
      assert.strictEqual(enriched.answer.status, "enriched")
      const [lead] = yield* leadsOf("5512345690")
      assert.strictEqual(enriched.answer.lead_id, lead!.id)
      const [property] = yield* sql<{
        property_id: string
      }>`SELECT property_id FROM leads WHERE id = ${lead!.id}`
      assert.strictEqual(property!.property_id, fixture.propertyId)
    })
  )
})
