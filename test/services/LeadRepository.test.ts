import { assert } from "@effect/vitest"
import { Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import { KeyStore } from "../../src/Accounts/KeyStore.ts"
import { CaptureRules } from "../../src/Intake/CaptureRules.ts"
import { IdempotencyStore } from "../../src/Intake/IdempotencyStore.ts"
import { firstContactMillis, type KeyedLeadWrite, LeadRepository } from "../../src/Intake/LeadRepository.ts"
import { PropertyCatalog } from "../../src/Intake/PropertyCatalog.ts"
import { seed } from "../support/Client.ts"
import { acrossLayers, expectFailure, leadWrite, setClock } from "./Suite.ts"

const at = (millis: number) => new Date(millis)

const assignees = (writes: ReadonlyArray<{ readonly assigneeId: string | null }>) =>
  writes.map((written) => written.assigneeId)

acrossLayers("LeadRepository", (it) => {
  it.effect("creates a lead with its note, first-contact task and lead.created event", () =>
    Effect.gen(function* () {
      const leads = yield* LeadRepository
      const fixture = yield* seed()
      const now = yield* setClock("2026-07-01T15:00:00.000Z")

      const written = yield* leads.createOrEnrich(
        leadWrite(
          fixture,
          {
            nombre: "Ana Pérez",
            telefono: "+52 55 1234 5678",
            email: "ana@example.com",
            mensaje: "Me interesa el depa",
            extras: [
              ["presupuesto", "2500000"],
              ["contado", "true"]
            ]
          },
          { propertyId: fixture.propertyId }
        )
      )
      assert.deepStrictEqual(written, {
        leadId: written.leadId,
        outcome: "created",
        assigneeId: fixture.agentIds[0]!,
        filled: ["email", "property"]
      })

      const origin = (yield* (yield* KeyStore).listOrigins(fixture.organizationId))[0]!
      assert.deepStrictEqual(yield* leads.show(written.leadId), {
        id: written.leadId,
        organization_id: fixture.organizationId,
        origin: origin.label,
        nombre: "Ana Pérez",
        telefono: "+52 55 1234 5678",
        email: "ana@example.com",
        property_id: fixture.propertyId,
        property_codigo: "ABC-1234",
        assignee_id: fixture.agentIds[0]!,
        assignee_name: "Ana",
        created_at: at(now),
        livemode: true,
        notes: [{ body: "Me interesa el depa\npresupuesto: 2500000\ncontado: true", created_at: at(now) }],
        tasks: [
          {
            kind: "first_contact",
            assignee_id: fixture.agentIds[0]!,
            assignee_name: "Ana",
            due_at: at(now + firstContactMillis)
          }
        ],
        events: [{ type: "lead.created", created_at: at(now) }]
      })
    })
  )

  it.effect("enriches the lead with the same phone key: fills empty fields only, never reassigns", () =>
    Effect.gen(function* () {
      const leads = yield* LeadRepository
      const fixture = yield* seed()
      const createdAt = yield* setClock("2026-07-01T16:00:00.000Z")
      const created = yield* leads.createOrEnrich(
        leadWrite(fixture, { nombre: "Luis", telefono: "55-2222-3333" })
      )

      yield* TestClock.adjust("5 minutes")
      const enriched = yield* leads.createOrEnrich(
        leadWrite(
          fixture,
          {
            nombre: "Luis Otro",
            telefono: "(55) 2222 3333",
            email: "luis@example.com",
            mensaje: "¿Sigue disponible?"
          },
          { propertyId: fixture.propertyId }
        )
      )
      assert.deepStrictEqual(enriched, {
        leadId: created.leadId,
        outcome: "enriched",
        assigneeId: fixture.agentIds[0]!,
        filled: ["email", "property"]
      })

      const origin = (yield* (yield* KeyStore).listOrigins(fixture.organizationId))[0]!
      assert.deepStrictEqual(yield* leads.show(created.leadId), {
        id: created.leadId,
        organization_id: fixture.organizationId,
        origin: origin.label,
        nombre: "Luis",
        telefono: "55-2222-3333",
        email: "luis@example.com",
        property_id: fixture.propertyId,
        property_codigo: "ABC-1234",
        assignee_id: fixture.agentIds[0]!,
        assignee_name: "Ana",
        created_at: at(createdAt),
        livemode: true,
        notes: [{ body: "¿Sigue disponible?", created_at: at(createdAt + 300_000) }],
        tasks: [
          {
            kind: "first_contact",
            assignee_id: fixture.agentIds[0]!,
            assignee_name: "Ana",
            due_at: at(createdAt + firstContactMillis)
          }
        ],
        events: [
          { type: "lead.created", created_at: at(createdAt) },
          { type: "lead.enriched", created_at: at(createdAt + 300_000) }
        ]
      })
    })
  )

  it.effect("never overwrites an e-mail or property the lead already has", () =>
    Effect.gen(function* () {
      const leads = yield* LeadRepository
      const catalog = yield* PropertyCatalog
      const fixture = yield* seed()
      const other = yield* catalog.add({
        organizationId: fixture.organizationId,
        codigo: "XYZ-0002",
        externalCode: null,
        archived: false
      })
      const created = yield* leads.createOrEnrich(
        leadWrite(
          fixture,
          { nombre: "Eva", telefono: "55 4444 5555", email: "eva@example.com" },
          { propertyId: fixture.propertyId }
        )
      )
      yield* leads.createOrEnrich(
        leadWrite(
          fixture,
          { nombre: "Eva", telefono: "5544445555", email: "otra@example.com" },
          { propertyId: other.id }
        )
      )
      const detail = yield* leads.show(created.leadId)
      assert.deepStrictEqual([detail.email, detail.property_id], ["eva@example.com", fixture.propertyId])
      assert.deepStrictEqual(detail.notes, [])
    })
  )

  it.effect("does not spend a round-robin turn on an enrichment", () =>
    Effect.gen(function* () {
      const leads = yield* LeadRepository
      const fixture = yield* seed()
      const [ana, luis] = fixture.agentIds
      const first = yield* leads.createOrEnrich(
        leadWrite(fixture, { nombre: "Uno", telefono: "55 1000 0001" })
      )
      const again = yield* leads.createOrEnrich(
        leadWrite(fixture, { nombre: "Uno", telefono: "55 1000 0001" })
      )
      const second = yield* leads.createOrEnrich(
        leadWrite(fixture, { nombre: "Dos", telefono: "55 1000 0002" })
      )
      assert.deepStrictEqual(assignees([first, again, second]), [ana!, ana!, luis!])
    })
  )

  it.effect("builds the note from mensaje and extras, and writes none when both are empty", () =>
    Effect.gen(function* () {
      const leads = yield* LeadRepository
      const fixture = yield* seed()
      const onlyExtras = yield* leads.createOrEnrich(
        leadWrite(fixture, {
          nombre: "Extras",
          telefono: "55 6000 0001",
          extras: [
            ["canal", "facebook"],
            ["recámaras", "3"]
          ]
        })
      )
      const nothing = yield* leads.createOrEnrich(
        leadWrite(fixture, { nombre: "Nada", telefono: "55 6000 0002" })
      )
      assert.deepStrictEqual(
        (yield* leads.show(onlyExtras.leadId)).notes.map((note) => note.body),
        ["canal: facebook\nrecámaras: 3"]
      )
      assert.deepStrictEqual((yield* leads.show(nothing.leadId)).notes, [])
    })
  )

  it.effect("always creates a lead without a phone", () =>
    Effect.gen(function* () {
      const leads = yield* LeadRepository
      const fixture = yield* seed()
      const first = yield* leads.createOrEnrich(leadWrite(fixture, { nombre: "Sin teléfono" }))
      const second = yield* leads.createOrEnrich(leadWrite(fixture, { nombre: "Sin teléfono" }))
      assert.deepStrictEqual([first.outcome, second.outcome], ["created", "created"])
      assert.notStrictEqual(first.leadId, second.leadId)
      for (const written of [first, second]) {
        const detail = yield* leads.show(written.leadId)
        assert.deepStrictEqual([detail.telefono, detail.tasks.length, detail.events.length], [null, 1, 1])
      }
    })
  )

  it.effect("matches phones per organization", () =>
    Effect.gen(function* () {
      const leads = yield* LeadRepository
      const first = yield* seed()
      const second = yield* seed()
      const a = yield* leads.createOrEnrich(leadWrite(first, { nombre: "A", telefono: "55 7000 0001" }))
      const b = yield* leads.createOrEnrich(leadWrite(second, { nombre: "B", telefono: "55 7000 0001" }))
      assert.deepStrictEqual([a.outcome, b.outcome], ["created", "created"])
      assert.notStrictEqual(a.leadId, b.leadId)
    })
  )

  it.effect("assigns every lead to the agent of a fixed-agent rule", () =>
    Effect.gen(function* () {
      const leads = yield* LeadRepository
      const rules = yield* CaptureRules
      const fixture = yield* seed({ roundRobin: false })
      const luis = fixture.agentIds[1]!
      yield* rules.addRule({
        organizationId: fixture.organizationId,
        originId: null,
        propertyId: null,
        agentIds: [luis],
        roundRobin: false,
        priority: 100
      })
      const written = yield* Effect.forEach(["55 8000 0001", "55 8000 0002", "55 8000 0003"], (telefono) =>
        leads.createOrEnrich(leadWrite(fixture, { nombre: "Fijo", telefono }))
      )
      assert.deepStrictEqual(assignees(written), [luis, luis, luis])
      const detail = yield* leads.show(written[0]!.leadId)
      assert.deepStrictEqual(detail.tasks[0]?.assignee_id, luis)
    })
  )

  it.effect("alternates the agents of a round-robin rule", () =>
    Effect.gen(function* () {
      const leads = yield* LeadRepository
      const fixture = yield* seed()
      const [ana, luis] = fixture.agentIds
      const written = yield* Effect.forEach(
        ["55 8100 0001", "55 8100 0002", "55 8100 0003", null],
        (telefono) => leads.createOrEnrich(leadWrite(fixture, { nombre: "Turno", telefono }))
      )
      assert.deepStrictEqual(assignees(written), [ana!, luis!, ana!, luis!])
    })
  )

  it.effect("applies the first matching rule by priority, matching on origin and on property", () =>
    Effect.gen(function* () {
      const leads = yield* LeadRepository
      const rules = yield* CaptureRules
      const keys = yield* KeyStore
      const fixture = yield* seed({ roundRobin: false })
      const organizationId = fixture.organizationId
      const [ana, luis] = fixture.agentIds
      const eva = (yield* rules.addAgent({ organizationId, name: "Eva" })).id
      const chatbot = yield* keys.createOrigin({ organizationId, label: "chatbot", rateLimit: 60 })
      const rule = (priority: number, agentId: string, match: { originId?: string; propertyId?: string }) =>
        rules.addRule({
          organizationId,
          originId: match.originId ?? null,
          propertyId: match.propertyId ?? null,
          agentIds: [agentId],
          roundRobin: false,
          priority
        })
      yield* rule(30, ana!, {})
      yield* rule(20, luis!, { propertyId: fixture.propertyId })
      yield* rule(10, eva, { originId: chatbot.id })
      yield* rule(10, ana!, { originId: chatbot.id })

      const plain = yield* leads.createOrEnrich(leadWrite(fixture, { nombre: "Web" }))
      const forProperty = yield* leads.createOrEnrich(
        leadWrite(fixture, { nombre: "Web" }, { propertyId: fixture.propertyId })
      )
      const fromChatbot = yield* leads.createOrEnrich(
        leadWrite(
          { organizationId, originId: chatbot.id },
          { nombre: "Bot" },
          { propertyId: fixture.propertyId }
        )
      )
      assert.deepStrictEqual(assignees([plain, forProperty, fromChatbot]), [ana!, luis!, eva])
    })
  )

  it.effect("leaves the lead unassigned when no rule matches", () =>
    Effect.gen(function* () {
      const leads = yield* LeadRepository
      const rules = yield* CaptureRules
      const fixture = yield* seed({ roundRobin: false })
      yield* rules.addRule({
        organizationId: fixture.organizationId,
        originId: null,
        propertyId: fixture.propertyId,
        agentIds: [fixture.agentIds[0]!],
        roundRobin: false,
        priority: 1
      })
      const written = yield* leads.createOrEnrich(
        leadWrite(fixture, { nombre: "Nadie", telefono: "55 9000 0001" })
      )
      assert.isNull(written.assigneeId)
      const detail = yield* leads.show(written.leadId)
      assert.deepStrictEqual(
        [detail.assignee_id, detail.tasks.map((task) => [task.kind, task.assignee_id])],
        [null, [["first_contact", null]]]
      )
    })
  )

  it.effect("resolves the property the request names, and writes nothing when none is active", () =>
    Effect.gen(function* () {
      const leads = yield* LeadRepository
      const fixture = yield* seed()
      const other = yield* seed()
      const byCodigo = yield* leads.createOrEnrich(
        leadWrite(fixture, {
          nombre: "Por código",
          telefono: "55 9200 0001",
          propiedad: { by: "codigo", value: "ABC-1234" }
        })
      )
      const byExternalCode = yield* leads.createOrEnrich(
        leadWrite(fixture, {
          nombre: "Por clave externa",
          telefono: "55 9200 0002",
          propiedad: { by: "external_code", value: "EXT-1" }
        })
      )
      for (const written of [byCodigo, byExternalCode]) {
        assert.deepStrictEqual(written.filled, ["property"])
        assert.strictEqual((yield* leads.show(written.leadId)).property_id, fixture.propertyId)
      }

      for (const propiedad of [
        { by: "codigo", value: "ABC-9999" },
        { by: "codigo", value: "OLD-0001" },
        { by: "id", value: fixture.archivedPropertyId },
        { by: "id", value: other.propertyId },
        { by: "external_code", value: "ABC-1234" }
      ] as const) {
        const refused = yield* expectFailure(
          leads.createOrEnrich(
            leadWrite(fixture, { nombre: "Sin propiedad", telefono: "55 9200 0003", propiedad })
          )
        )
        assert.strictEqual(refused._tag, "UnknownProperty", propiedad.value)
      }
      // Enriching is refused the same way: the lead the phone names is left as it was.
      const refused = yield* expectFailure(
        leads.createOrEnrich(
          leadWrite(fixture, {
            nombre: "Por código",
            telefono: "55 9200 0001",
            email: "nuevo@example.com",
            propiedad: { by: "codigo", value: "OLD-0001" }
          })
        )
      )
      assert.strictEqual(refused._tag, "UnknownProperty")
      assert.deepStrictEqual(
        (yield* leads.list(fixture.organizationId, 10)).map((lead) => [lead.nombre, lead.email]).sort(),
        [
          ["Por clave externa", null],
          ["Por código", null]
        ]
      )
      const unwritten = leadWrite(fixture, { nombre: "Sin propiedad", telefono: "55 9200 0003" }).phoneKey!
      assert.isTrue(Option.isNone(yield* leads.findMatch(fixture.organizationId, true, unwritten)))
    })
  )

  it.effect("a keyed write reserves its key and writes; a spent or running key writes nothing", () =>
    Effect.gen(function* () {
      const leads = yield* LeadRepository
      const idempotency = yield* IdempotencyStore
      const fixture = yield* seed()
      const keyed = (
        key: string,
        input: Parameters<typeof leadWrite>[1],
        fingerprint = "f-1",
        livemode = true
      ): KeyedLeadWrite => {
        const idempotency = { key, token: crypto.randomUUID() }
        return { ...leadWrite(fixture, input, { idempotency, livemode }), idempotency, fingerprint }
      }
      const slot = (key: string, livemode = true) => ({
        organizationId: fixture.organizationId,
        originId: fixture.originId,
        livemode,
        key
      })
      const leadCount = Effect.map(leads.list(fixture.organizationId, 100), (all) => all.length)

      const first = keyed("k-1", { nombre: "Ana", telefono: "55 9300 0001" })
      const written = yield* leads.createOrEnrichKeyed(first)
      assert.strictEqual(written._tag, "Written")
      if (written._tag !== "Written") return
      assert.strictEqual(written.written.outcome, "created")
      const response = { lead_id: written.written.leadId, status: "created" } as const
      // The key was completed in the write's own transaction, by the write's own reservation.
      assert.deepStrictEqual(yield* idempotency.settle(slot("k-1"), first.idempotency.token, 0), {
        _tag: "Committed",
        response
      })

      // A spent key replays (same fingerprint) or conflicts (another), and writes nothing.
      const again = yield* leads.createOrEnrichKeyed(
        keyed("k-1", { nombre: "Otra", telefono: "55 9300 0009" })
      )
      assert.deepStrictEqual(again, { _tag: "Replay", response })
      const conflict = yield* leads.createOrEnrichKeyed(
        keyed("k-1", { nombre: "Otra", telefono: "55 9300 0009" }, "f-2")
      )
      assert.deepStrictEqual(conflict, { _tag: "Conflict" })
      assert.strictEqual(yield* leadCount, 1)

      // A key whose first use still runs is in progress.
      const running = yield* idempotency.reserve(slot("k-2"), "f-1")
      assert.strictEqual(running._tag, "Reserved")
      const waiting = yield* leads.createOrEnrichKeyed(
        keyed("k-2", { nombre: "Beto", telefono: "55 9300 0002" })
      )
      assert.deepStrictEqual(waiting, { _tag: "InProgress" })
      assert.strictEqual(yield* leadCount, 1)

      // A write that fails leaves nothing: no lead, and its key free for the retry.
      const refused = yield* expectFailure(
        leads.createOrEnrichKeyed(
          keyed("k-3", {
            nombre: "Caro",
            telefono: "55 9300 0003",
            propiedad: { by: "codigo", value: "NO-0000" }
          })
        )
      )
      assert.strictEqual(refused._tag, "UnknownProperty")
      assert.strictEqual((yield* idempotency.reserve(slot("k-3"), "f-1"))._tag, "Reserved")
      assert.strictEqual(yield* leadCount, 1)

      // A test key's keys are its own: the live key's spent k-1 is free in test mode.
      const test = yield* leads.createOrEnrichKeyed(
        keyed("k-1", { nombre: "Prueba", telefono: "55 9300 0004" }, "f-1", false)
      )
      assert.strictEqual(test._tag, "Written")
      assert.deepStrictEqual(
        yield* leads.createOrEnrichKeyed(keyed("k-1", { nombre: "Ana", telefono: "55 9300 0001" })),
        {
          _tag: "Replay",
          response
        }
      )
    })
  )

  it.effect("one lead when keyed writes with the same key race; the others replay or find it running", () =>
    Effect.gen(function* () {
      const leads = yield* LeadRepository
      const fixture = yield* seed()
      const results = yield* Effect.forEach(
        Array.from({ length: 10 }, (_, i) => i),
        (i) => {
          const idempotency = { key: "race-1", token: crypto.randomUUID() }
          return leads.createOrEnrichKeyed({
            ...leadWrite(fixture, { nombre: `Carrera ${i}`, telefono: "55 9400 0001" }, { idempotency }),
            idempotency,
            fingerprint: "same"
          })
        },
        { concurrency: "unbounded" }
      )
      const written = results.filter((result) => result._tag === "Written")
      assert.strictEqual(written.length, 1)
      assert.isTrue(results.every((result) => ["Written", "Replay", "InProgress"].includes(result._tag)))
      const all = yield* leads.list(fixture.organizationId, 10)
      assert.strictEqual(all.length, 1)
      const [winner] = written
      assert.strictEqual(winner?._tag === "Written" ? winner.written.leadId : undefined, all[0]!.id)
    })
  )

  it.effect("finds the lead an organization has for a phone key", () =>
    Effect.gen(function* () {
      const leads = yield* LeadRepository
      const fixture = yield* seed()
      const other = yield* seed()
      const write = leadWrite(fixture, { nombre: "Match", telefono: "+52 1 55 9100 0001" })
      assert.isTrue(Option.isNone(yield* leads.findMatch(fixture.organizationId, true, write.phoneKey!)))
      const written = yield* leads.createOrEnrich(write)
      const sameNumber = leadWrite(fixture, { nombre: "Match", telefono: "55 9100 0001" }).phoneKey!
      assert.deepStrictEqual(
        yield* leads.findMatch(fixture.organizationId, true, sameNumber),
        Option.some(written.leadId)
      )
      assert.isTrue(Option.isNone(yield* leads.findMatch(other.organizationId, true, sameNumber)))
    })
  )

  it.effect("creates one lead, and spends one round-robin turn, when writes with the same phone race", () =>
    Effect.gen(function* () {
      const leads = yield* LeadRepository
      const fixture = yield* seed()
      const written = yield* Effect.forEach(
        Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? "55 9200 0001" : "+52 (55) 9200-0001")),
        (telefono) =>
          leads.createOrEnrich(leadWrite(fixture, { nombre: "Carrera", telefono, mensaje: "hola" })),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(written.filter((w) => w.outcome === "created").length, 1)
      assert.strictEqual(new Set(written.map((w) => w.leadId)).size, 1)
      const detail = yield* leads.show(written[0]!.leadId)
      assert.deepStrictEqual(
        [
          detail.tasks.length,
          detail.notes.length,
          detail.events.filter((e) => e.type === "lead.enriched").length
        ],
        [1, 12, 11]
      )
      const next = yield* leads.createOrEnrich(
        leadWrite(fixture, { nombre: "Siguiente", telefono: "55 9200 0002" })
      )
      assert.deepStrictEqual(assignees([written[0]!, next]), fixture.agentIds)
    })
  )

  it.effect("lists an organization's leads newest first, up to the limit", () =>
    Effect.gen(function* () {
      const leads = yield* LeadRepository
      const keys = yield* KeyStore
      const fixture = yield* seed()
      const other = yield* seed()
      const start = yield* setClock("2026-07-02T08:00:00.000Z")
      const names = ["Primero", "Segundo", "Tercero"]
      const written = []
      for (const [i, nombre] of names.entries()) {
        written.push(
          yield* leads.createOrEnrich(
            leadWrite(fixture, { nombre, telefono: `55 9300 000${i}`, email: `${i}@example.com` })
          )
        )
        yield* TestClock.adjust("1 minute")
      }
      yield* leads.createOrEnrich(leadWrite(other, { nombre: "Ajeno" }))
      const label = (yield* keys.listOrigins(fixture.organizationId))[0]!.label

      assert.deepStrictEqual(yield* leads.list(fixture.organizationId, 2), [
        {
          id: written[2]!.leadId,
          nombre: "Tercero",
          telefono: "55 9300 0002",
          email: "2@example.com",
          origin: label,
          created_at: at(start + 120_000)
        },
        {
          id: written[1]!.leadId,
          nombre: "Segundo",
          telefono: "55 9300 0001",
          email: "1@example.com",
          origin: label,
          created_at: at(start + 60_000)
        }
      ])
      assert.deepStrictEqual(
        (yield* leads.list(fixture.organizationId, 10)).map((lead) => lead.nombre),
        ["Tercero", "Segundo", "Primero"]
      )
    })
  )

  it.effect("answers UnknownEntity for an unknown lead or organization", () =>
    Effect.gen(function* () {
      const leads = yield* LeadRepository
      const missing = crypto.randomUUID()
      const shown = yield* expectFailure(leads.show(missing))
      const listed = yield* expectFailure(leads.list(missing, 10))
      assert.deepStrictEqual([shown._tag, shown.entity, shown.id], ["UnknownEntity", "lead", missing])
      assert.deepStrictEqual(
        [listed._tag, listed.entity, listed.id],
        ["UnknownEntity", "organization", missing]
      )
    })
  )
})
