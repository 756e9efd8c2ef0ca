import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Option, type Scope } from "effect"
import { TestClock } from "effect/testing"
import { isLeadWriteEvent, type LeadWriteEvent, type WebhookEvent } from "../../src/Domain/WebhookPayload.ts"
import { IdempotencyStore, type Reservation } from "../../src/Intake/IdempotencyStore.ts"
import { LeadRepository } from "../../src/Intake/LeadRepository.ts"
import { RequestLog } from "../../src/Intake/RequestLog.ts"
import { erasedDeliveryError, PersonalData } from "../../src/PersonalData/PersonalData.ts"
import { WebhookConfig } from "../../src/Platform/Config.ts"
import { WebhookDeliveries } from "../../src/Webhooks/Deliveries.ts"
import { WebhookEndpoints } from "../../src/Webhooks/Endpoints.ts"
import { type Fixture, layerPostgresServices, seed } from "../support/Client.ts"
import { expectFailure, leadWrite, type Services, setClock } from "./Suite.ts"

const leadEventOf = (event: WebhookEvent): LeadWriteEvent => {
  if (!isLeadWriteEvent(event)) throw new Error(`expected a lead write event, got ${event.type}`)
  return event
}

type All = Services | PersonalData | WebhookEndpoints | WebhookDeliveries

const webhookConfig = Layer.succeed(WebhookConfig, {
  allowPrivate: true,
  timeoutMillis: 1000,
  retrySchedule: [1000],
  retentionDays: 30,
  concurrency: 4,
  concurrencyPerEndpoint: 2,
  pollIntervalMillis: 1000,
  workerInServe: false,
  disableAfterMillis: 5 * 86_400_000
})

/** The behaviour suite, on PostgreSQL: personal data and webhooks have no in-memory fake to drift from it. */
const variants: ReadonlyArray<readonly [string, Layer.Layer<All>]> = [
  [
    "postgres",
    Layer.mergeAll(PersonalData.layer, WebhookEndpoints.layer, WebhookDeliveries.layer).pipe(
      Layer.provideMerge(layerPostgresServices),
      Layer.provide(webhookConfig)
    )
  ]
]

const iso = (millis: number) => new Date(millis).toISOString()
const fingerprint = "f".repeat(64)

const person = {
  nombre: "Evangelina Ruelas Toscano",
  telefono: "+52 55 3141 5926",
  email: "evangelina.rt@correo.mx",
  mensaje: "Busco casa con jardín cerca del parque",
  extras: [["presupuesto", "cuatro millones"]] as ReadonlyArray<readonly [string, string]>
}

/** A created lead (with a stored reply and a logged request) enriched once with a second note. */
const createdAndEnriched = (fixture: Fixture) =>
  Effect.gen(function* () {
    const leads = yield* LeadRepository
    const idempotency = yield* IdempotencyStore
    const log = yield* RequestLog
    const createdAt = yield* setClock("2026-09-01T10:00:00.000Z")
    const slot = {
      organizationId: fixture.organizationId,
      originId: fixture.originId,
      livemode: true,
      key: "partner-order-77"
    }
    const reservation = yield* idempotency.reserve(slot, fingerprint)
    assert.strictEqual(reservation._tag, "Reserved")
    const token = (reservation as Extract<Reservation, { _tag: "Reserved" }>).token
    const write = leadWrite(fixture, person, {
      propertyId: fixture.propertyId,
      idempotency: { key: slot.key, token }
    })
    const created = yield* leads.createOrEnrich(write)
    yield* log.record({
      requestId: write.requestId,
      at: createdAt,
      originId: fixture.originId,
      keyPrefix: fixture.prefix,
      status: 201,
      outcome: "created",
      leadId: created.leadId,
      idempotencyKey: slot.key,
      durationMs: 20,
      livemode: true
    })
    // Written off the caller's path: flushed before the clock jumps, which would time the write out.
    yield* log.list({ originId: fixture.originId }, 1)
    yield* TestClock.adjust("1 hour")
    const enrich = leadWrite(fixture, {
      nombre: "Eva R.",
      telefono: "55-3141-5926",
      mensaje: "También me interesa rentar"
    })
    yield* leads.createOrEnrich(enrich)
    yield* log.record({
      requestId: enrich.requestId,
      at: createdAt + 3_600_000,
      originId: fixture.originId,
      keyPrefix: fixture.prefix,
      status: 200,
      outcome: "enriched",
      leadId: created.leadId,
      idempotencyKey: null,
      durationMs: 15,
      livemode: true
    })
    yield* log.list({ originId: fixture.originId }, 1)
    return { leadId: created.leadId, createdAt, slot, writes: [write, enrich] }
  })

const suite = (it: {
  readonly effect: <A, E>(name: string, self: () => Effect.Effect<A, E, All | Scope.Scope>) => void
}) => {
  it.effect("exports the lead's fields, notes, tasks, events, logged requests and stored replies", () =>
    Effect.gen(function* () {
      const personalData = yield* PersonalData
      const fixture = yield* seed()
      const { leadId, createdAt, slot, writes } = yield* createdAndEnriched(fixture)

      const document = yield* personalData.export(leadId)
      assert.deepStrictEqual(document.lead, {
        id: leadId,
        organization_id: fixture.organizationId,
        origin_id: fixture.originId,
        origin: document.lead.origin,
        nombre: person.nombre,
        telefono: person.telefono,
        phone_key: "+525531415926",
        email: person.email,
        property: { id: fixture.propertyId, codigo: "ABC-1234", external_code: "EXT-1" },
        assignee_id: fixture.agentIds[0]!,
        created_at: iso(createdAt),
        erased_at: null
      })
      assert.deepStrictEqual(document.notes, [
        {
          body: `${person.mensaje}\npresupuesto: cuatro millones`,
          request_id: writes[0]!.requestId,
          created_at: iso(createdAt)
        },
        {
          body: "También me interesa rentar",
          request_id: writes[1]!.requestId,
          created_at: iso(createdAt + 3_600_000)
        }
      ])
      assert.deepStrictEqual(
        document.tasks.map((task) => task.kind),
        ["first_contact"]
      )
      assert.deepStrictEqual(
        document.events.map((event) => [event.type, (event.payload as { lead_id: string }).lead_id]),
        [
          ["lead.created", leadId],
          ["lead.enriched", leadId]
        ]
      )
      assert.deepStrictEqual(
        document.requests.map((row) => [row.request_id, row.outcome, row.key_prefix]),
        [
          [writes[0]!.requestId, "created", fixture.prefix],
          [writes[1]!.requestId, "enriched", fixture.prefix]
        ]
      )
      assert.deepStrictEqual(document.idempotent_replies, [
        {
          origin_id: fixture.originId,
          idempotency_key: slot.key,
          status: 201,
          reply: { lead_id: leadId, status: "created" },
          completed_at: iso(createdAt)
        }
      ])
      assert.strictEqual(document.erasure, null)
      assert.notInclude(JSON.stringify(document), fixture.key, "never a secret")
    })
  )

  it.effect("finds a lead by its phone in any spelling, within the organization", () =>
    Effect.gen(function* () {
      const personalData = yield* PersonalData
      const fixture = yield* seed()
      const other = yield* seed()
      const { leadId } = yield* createdAndEnriched(fixture)
      for (const spelling of ["5531415926", "+52 1 55 3141 5926", "(55) 3141-5926", "044 55 3141 5926"]) {
        assert.strictEqual(yield* personalData.findByPhone(fixture.organizationId, spelling), leadId)
      }
      const elsewhere = yield* expectFailure(personalData.findByPhone(other.organizationId, "5531415926"))
      assert.strictEqual(elsewhere._tag, "UnknownEntity")
      const unknownOrg = yield* expectFailure(personalData.findByPhone(crypto.randomUUID(), "5531415926"))
      assert.include(unknownOrg.message, "unknown organization")
      const malformed = yield* expectFailure(personalData.findByPhone(fixture.organizationId, "55-31"))
      assert.strictEqual(malformed._tag, "Rejected")
    })
  )

  it.effect("erase leaves a tombstone, removes notes, scrubs replies, keeps the request log, audits", () =>
    Effect.gen(function* () {
      const personalData = yield* PersonalData
      const leads = yield* LeadRepository
      const idempotency = yield* IdempotencyStore
      const fixture = yield* seed()
      const { leadId, createdAt, slot } = yield* createdAndEnriched(fixture)
      const erasedAt = yield* setClock("2026-09-01T12:30:00.000Z")

      const erased = yield* personalData.erase({
        leadId,
        reason: "ARCO cancellation, ticket 4411",
        actor: "maria"
      })
      assert.deepStrictEqual(erased, { id: leadId, erased_at: iso(erasedAt), already_erased: false })

      const document = yield* personalData.export(leadId)
      assert.deepStrictEqual(document.lead, {
        id: leadId,
        organization_id: fixture.organizationId,
        origin_id: fixture.originId,
        origin: document.lead.origin,
        nombre: null,
        telefono: null,
        phone_key: null,
        email: null,
        property: null,
        assignee_id: null,
        created_at: iso(createdAt),
        erased_at: iso(erasedAt)
      })
      assert.deepStrictEqual(document.notes, [])
      assert.strictEqual(document.requests.length, 2, "the request log holds nothing personal and stays")
      assert.deepStrictEqual(
        document.events.map((event) => [event.type, (event.payload as { erased?: boolean }).erased]),
        [
          ["lead.created", true],
          ["lead.enriched", true],
          ["lead.erased", true]
        ]
      )
      assert.deepStrictEqual(document.erasure, {
        lead_id: leadId,
        organization_id: fixture.organizationId,
        erased_at: iso(erasedAt),
        erased_by: "maria",
        reason: "ARCO cancellation, ticket 4411",
        removed: document.erasure!.removed
      })
      assert.strictEqual(document.erasure!.removed.lead_notes, 2)
      assert.strictEqual(document.erasure!.removed.idempotency_keys, 1)

      const shown = yield* leads.show(leadId)
      assert.deepStrictEqual([shown.nombre, shown.telefono, shown.email, shown.notes], [null, null, null, []])
      assert.deepStrictEqual(yield* idempotency.reserve(slot, fingerprint), {
        _tag: "Replay",
        response: { lead_id: leadId, status: "created" }
      })
      assert.deepStrictEqual(
        (yield* personalData.erasures(fixture.organizationId, 10)).map((row) => row.lead_id),
        [leadId]
      )
      assert.isTrue(Option.isSome(yield* personalData.erasure(leadId)))
    })
  )

  it.effect(
    "exports the webhook deliveries; erase fails the pending ones, in flight too, and scrubs their event",
    () =>
      Effect.gen(function* () {
        const personalData = yield* PersonalData
        const endpoints = yield* WebhookEndpoints
        const deliveries = yield* WebhookDeliveries
        const fixture = yield* seed()
        const { endpoint, secret } = yield* endpoints.add({
          organizationId: fixture.organizationId,
          url: "http://127.0.0.1:9/hooks/leads",
          events: ["lead.created", "lead.enriched"]
        })
        const { leadId, createdAt } = yield* createdAndEnriched(fixture)
        const [inFlight] = yield* deliveries.claim({
          limit: 1,
          perEndpoint: 1,
          excludeEndpoints: [],
          leaseMillis: 60_000
        })
        assert.strictEqual(leadEventOf(inFlight!.event).lead.nombre, person.nombre)

        const before = yield* personalData.export(leadId)
        assert.deepStrictEqual(
          before.webhook_deliveries.map((d) => [
            d.endpoint_id,
            d.url,
            d.event_id,
            d.type,
            d.state,
            d.attempts
          ]),
          [
            [endpoint.id, endpoint.url, inFlight!.event.eventId, "lead.created", "pending", 1],
            [endpoint.id, endpoint.url, before.webhook_deliveries[1]!.event_id, "lead.enriched", "pending", 0]
          ]
        )
        assert.deepStrictEqual(
          before.webhook_deliveries.map((d) => [d.created_at, d.last_status, d.delivered_at]),
          [
            [iso(createdAt), null, null],
            [iso(createdAt + 3_600_000), null, null]
          ]
        )
        assert.notInclude(JSON.stringify(before), secret, "never a secret")

        const erased = yield* personalData.erase({ leadId, reason: "ARCO cancellation", actor: "maria" })
        const after = yield* personalData.export(leadId)
        assert.deepStrictEqual(
          after.webhook_deliveries.map((d) => [d.event_id, d.state, d.last_error, d.next_attempt_at]),
          before.webhook_deliveries.map((d) => [d.event_id, "failed", erasedDeliveryError, null])
        )
        assert.strictEqual(after.erasure!.removed.webhook_deliveries, 2)
        assert.deepStrictEqual(
          (yield* deliveries.list(endpoint.id, 10)).map((d) => d.state),
          ["failed", "failed"],
          "`webhook deliveries` still says pending, delivered or failed"
        )

        let sent = false
        const guarded = yield* deliveries.guard(inFlight!, () => Effect.sync(() => (sent = true)))
        assert.isTrue(Option.isNone(guarded) && !sent, "the claim taken before the erasure sends nothing")
        assert.deepStrictEqual(
          yield* deliveries.claim({ limit: 10, perEndpoint: 10, excludeEndpoints: [], leaseMillis: 60_000 }),
          []
        )

        // An operator's resend afterwards sends the tombstone, not the person.
        yield* deliveries.resend(endpoint.id, inFlight!.event.eventId)
        const [again] = yield* deliveries.claim({
          limit: 10,
          perEndpoint: 10,
          excludeEndpoints: [],
          leaseMillis: 60_000
        })
        const resent = yield* deliveries.guard(again!, (event) => Effect.succeed(event))
        assert.isTrue(Option.isSome(resent))
        for (const event of [again!.event, Option.getOrThrow(resent)]) {
          assert.deepStrictEqual(leadEventOf(event).lead, {
            nombre: null,
            telefono: null,
            email: null,
            property_id: null,
            assignee_id: null
          })
          assert.strictEqual(leadEventOf(event).leadId, erased.id)
        }
      })
  )

  it.effect("erasing twice changes nothing and says so; one audit row", () =>
    Effect.gen(function* () {
      const personalData = yield* PersonalData
      const fixture = yield* seed()
      const { leadId } = yield* createdAndEnriched(fixture)
      const first = yield* personalData.erase({ leadId, reason: "requested by the person", actor: "maria" })
      yield* TestClock.adjust("1 day")
      const second = yield* personalData.erase({ leadId, reason: "again", actor: "jorge" })
      assert.deepStrictEqual(second, { ...first, already_erased: true })
      const trail = yield* personalData.erasures(fixture.organizationId, 10)
      assert.deepStrictEqual(
        trail.map((row) => [row.erased_by, row.reason]),
        [["maria", "requested by the person"]]
      )
    })
  )

  it.effect("after erasure the same phone creates a new lead", () =>
    Effect.gen(function* () {
      const personalData = yield* PersonalData
      const leads = yield* LeadRepository
      const fixture = yield* seed()
      const { leadId } = yield* createdAndEnriched(fixture)
      yield* personalData.erase({ leadId, reason: "requested", actor: "maria" })
      const again = yield* leads.createOrEnrich(
        leadWrite(fixture, { nombre: "Evangelina", telefono: "5531415926" })
      )
      assert.strictEqual(again.outcome, "created")
      assert.notStrictEqual(again.leadId, leadId)
      assert.strictEqual(
        yield* personalData.findByPhone(fixture.organizationId, person.telefono),
        again.leadId
      )
    })
  )

  it.effect("refuses a reason that repeats the person's data, an empty reason and an unknown lead", () =>
    Effect.gen(function* () {
      const personalData = yield* PersonalData
      const fixture = yield* seed()
      const { leadId } = yield* createdAndEnriched(fixture)
      for (const reason of [
        `request from ${person.nombre.toUpperCase()}`,
        "pedido de evangelina  ruelas,toscano",
        `mail from ${person.email}`,
        "called from 55 3141 5926",
        "   "
      ]) {
        const refused = yield* expectFailure(personalData.erase({ leadId, reason, actor: "maria" }))
        assert.strictEqual(refused._tag, "Rejected", reason)
      }
      const tooLong = yield* expectFailure(
        personalData.erase({ leadId, reason: "x".repeat(501), actor: "maria" })
      )
      assert.strictEqual(tooLong._tag, "Rejected")
      assert.strictEqual(
        (yield* personalData.export(leadId)).lead.nombre,
        person.nombre,
        "nothing was erased"
      )
      const unknown = yield* expectFailure(
        personalData.erase({ leadId: crypto.randomUUID(), reason: "requested", actor: "maria" })
      )
      assert.strictEqual(unknown._tag, "UnknownEntity")
      const unknownExport = yield* expectFailure(personalData.export(crypto.randomUUID()))
      assert.strictEqual(unknownExport._tag, "UnknownEntity")

      // Whole words: a name inside longer words is not the name.
      const ana = yield* (yield* LeadRepository).createOrEnrich(
        leadWrite(fixture, { nombre: "Ana Paz", telefono: "55 1000 2000" })
      )
      const erased = yield* personalData.erase({
        leadId: ana.leadId,
        reason: "forwarded by Mariana Pazos (legal)",
        actor: "maria"
      })
      assert.isFalse(erased.already_erased)
    })
  )
}

for (const [variant, services] of variants) {
  layer(services, { excludeTestServices: true })(`PersonalData (${variant})`, (it) =>
    suite({
      effect: (name, self) =>
        it.effect(name, () => Effect.suspend(self).pipe(Effect.provide(TestClock.layer())))
    })
  )
}
