import { assert, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { KeyStore } from "../../src/Accounts/KeyStore.ts"
import { Organizations } from "../../src/Accounts/Organizations.ts"
import { deleteRule, listAgents, listRules } from "../../src/Console/Capture/Queries.ts"
import { findProperty, listProperties } from "../../src/Console/Catalog/Queries.ts"
import { findLead, listLeads } from "../../src/Console/Leads/Queries.ts"
import type { Operator } from "../../src/Console/Operators.ts"
import { organizationFor, organizationsFor, owns } from "../../src/Console/Organizations.ts"
import { overviewOf } from "../../src/Console/Overview/Queries.ts"
import { findRequest, listRequests } from "../../src/Console/Requests/Queries.ts"
import { CaptureRules } from "../../src/Intake/CaptureRules.ts"
import { LeadRepository } from "../../src/Intake/LeadRepository.ts"
import { PropertyCatalog } from "../../src/Intake/PropertyCatalog.ts"
import { RequestLog } from "../../src/Intake/RequestLog.ts"
import type { RequestLogRow } from "../../src/Platform/MemoryStore.ts"
import { layerPostgresServices } from "../support/Client.ts"
import { leadWrite, setClock } from "./Suite.ts"

/** The console slices' reads, on PostgreSQL: they have no in-memory twin to drift from. */
const variants = [["postgres", layerPostgresServices]] as const

const queries = {
  organizationsFor,
  organizationFor,
  owns,
  origins: (organizationId: string) =>
    Effect.flatMap(KeyStore, (keys) => Effect.orDie(keys.listOrigins(organizationId))),
  requests: listRequests,
  request: findRequest,
  leads: listLeads,
  lead: findLead,
  properties: listProperties,
  property: findProperty,
  agents: listAgents,
  rules: listRules,
  deleteRule,
  overview: overviewOf
}

const platform: Operator = {
  id: crypto.randomUUID(),
  email: "root@example.com",
  role: "admin",
  organizationId: null
}
const operatorOf = (organizationId: string): Operator => ({
  id: crypto.randomUUID(),
  email: "ops@example.com",
  role: "viewer",
  organizationId
})

const row = (overrides: Partial<RequestLogRow> & { readonly at: number }): RequestLogRow => ({
  requestId: crypto.randomUUID(),
  originId: null,
  keyPrefix: null,
  livemode: true,
  status: 201,
  outcome: "created",
  leadId: null,
  idempotencyKey: null,
  durationMs: 3,
  ...overrides
})

/** An organization with an origin (and key), two agents, a rule, a property. */
const organization = (name: string) =>
  Effect.gen(function* () {
    const organizations = yield* Organizations
    const keys = yield* KeyStore
    const rules = yield* CaptureRules
    const catalog = yield* PropertyCatalog
    const created = yield* organizations.create({ name, country: "MX" })
    const origin = yield* keys.createOrigin({ organizationId: created.id, label: "Web", rateLimit: 60 })
    const ana = yield* rules.addAgent({ organizationId: created.id, name: "Ana" })
    const beto = yield* rules.addAgent({ organizationId: created.id, name: "Beto" })
    const rule = yield* rules.addRule({
      organizationId: created.id,
      originId: null,
      propertyId: null,
      agentIds: [beto.id, ana.id],
      roundRobin: true,
      priority: 100
    })
    const property = yield* catalog.add({
      organizationId: created.id,
      codigo: "ABC-1234",
      externalCode: "TORRE-7",
      archived: false
    })
    return { id: created.id, name, origin, ana, beto, rule, property }
  }).pipe(Effect.orDie)

/** Requests answered are queued for the log; listing waits for them to be written. */
const flushLog = Effect.flatMap(Effect.service(RequestLog), (log) => log.flush)

for (const [variant, services] of variants) {
  layer(services, { excludeTestServices: true })(`console reads (${variant})`, (it) => {
    const test = <A, E, R>(name: string, self: () => Effect.Effect<A, E, R>) =>
      it.effect(
        name,
        () => Effect.suspend(self).pipe(Effect.provide(TestClock.layer())) as Effect.Effect<A, E>
      )

    test("organizations: an operator sees its own, a platform administrator every one by name or the one asked for", () =>
      Effect.gen(function* () {
        const zeta = yield* organization(`Zeta ${crypto.randomUUID()}`)
        const alfa = yield* organization(`Alfa ${crypto.randomUUID()}`)
        assert.deepStrictEqual(yield* queries.organizationsFor(operatorOf(zeta.id)), [
          { id: zeta.id, name: zeta.name, country: "MX" }
        ])
        const all = (yield* queries.organizationsFor(platform)).map((o) => o.id)
        assert.isTrue(all.indexOf(alfa.id) >= 0 && all.indexOf(alfa.id) < all.indexOf(zeta.id))
        assert.deepStrictEqual(
          Option.map(yield* queries.organizationFor(operatorOf(zeta.id), alfa.id), (o) => o.id),
          Option.some(zeta.id)
        )
        assert.deepStrictEqual(
          Option.map(yield* queries.organizationFor(platform, alfa.id), (o) => o.id),
          Option.some(alfa.id)
        )
        assert.isTrue(Option.isNone(yield* queries.organizationFor(platform, "not-a-uuid")))
        assert.isTrue(Option.isNone(yield* queries.organizationFor(platform, crypto.randomUUID())))
      }))

    test("owns: each entity of the organization, never another organization's or a malformed id", () =>
      Effect.gen(function* () {
        const mine = yield* organization("Mine")
        const theirs = yield* organization("Theirs")
        const lead = yield* Effect.flatMap(Effect.service(LeadRepository), (leads) =>
          leads.createOrEnrich(
            leadWrite(
              { organizationId: mine.id, originId: mine.origin.id },
              { nombre: "Ana", telefono: "5512345678" }
            )
          )
        ).pipe(Effect.orDie)
        const ids = {
          origin: mine.origin.id,
          property: mine.property.id,
          agent: mine.ana.id,
          rule: mine.rule.id,
          lead: lead.leadId
        } as const
        for (const [entity, id] of Object.entries(ids) as Array<[keyof typeof ids, string]>) {
          assert.isTrue(yield* queries.owns(mine.id, entity, id), entity)
          assert.isFalse(yield* queries.owns(theirs.id, entity, id), entity)
          assert.isFalse(yield* queries.owns(mine.id, entity, "not-a-uuid"), entity)
        }
      }))

    test("origins: the latest live key's prefix, revoked state, last live use and live requests in the last 24 h; the test key's prefix", () =>
      Effect.gen(function* () {
        const log = yield* RequestLog
        const keys = yield* KeyStore
        const now = yield* setClock("2026-11-23T12:00:00.000Z")
        const org = yield* organization("Origins")
        yield* log.record(row({ at: now - 2 * 86_400_000, originId: org.origin.id }))
        yield* log.record(row({ at: now - 60_000, originId: org.origin.id }))
        yield* log.record(
          row({ at: now - 30_000, originId: org.origin.id, status: 422, outcome: "validation_error" })
        )
        yield* log.record(row({ at: now - 10_000, originId: org.origin.id, livemode: false }))
        yield* flushLog
        const [listed] = yield* queries.origins(org.id)
        assert.deepStrictEqual(listed, {
          id: org.origin.id,
          label: "Web",
          prefix: org.origin.prefix,
          created_at: listed!.created_at,
          last_used_at: new Date(now - 30_000).toISOString(),
          requests_24h: 2,
          rate_limit: 60,
          revoked: false,
          test_prefix: null
        })
        yield* TestClock.adjust("1 second")
        const test = yield* keys.rotate(org.origin.id, "test").pipe(Effect.orDie)
        const withTest = (yield* queries.origins(org.id))[0]!
        assert.match(test.prefix, /^lk_test_/)
        assert.strictEqual(withTest.test_prefix, test.prefix)
        assert.strictEqual(
          withTest.prefix,
          org.origin.prefix,
          "the newest key is a test key: the live one is shown"
        )
        assert.isFalse(withTest.revoked)
        yield* keys.revoke(org.origin.id).pipe(Effect.orDie)
        const liveRevoked = (yield* queries.origins(org.id))[0]!
        assert.isTrue(liveRevoked.revoked)
        assert.strictEqual(liveRevoked.test_prefix, test.prefix)
        yield* TestClock.adjust("1 second")
        const rotated = yield* keys.rotate(org.origin.id).pipe(Effect.orDie)
        const after = (yield* queries.origins(org.id))[0]!
        assert.strictEqual(after.prefix, rotated.prefix)
        assert.isFalse(after.revoked)
        yield* keys.revoke(org.origin.id, "test").pipe(Effect.orDie)
        assert.isNull((yield* queries.origins(org.id))[0]!.test_prefix)
      }))

    test("requests: scoped by organization, origin or unattributed; every filter; a cursor walks all pages once", () =>
      Effect.gen(function* () {
        const log = yield* RequestLog
        const base = Date.parse("2026-11-20T10:00:00.000Z")
        const org = yield* organization("Requests")
        const other = yield* organization("Others")
        const rows = [
          row({ at: base, originId: org.origin.id, idempotencyKey: "k-1" }),
          row({ at: base + 1000, originId: org.origin.id, status: 422, outcome: "validation_error" }),
          row({ at: base + 1000, originId: org.origin.id, status: 200, outcome: "enriched" }),
          row({ at: base + 2000, originId: org.origin.id, status: 500, outcome: "internal_error" }),
          row({ at: base + 3000, originId: other.origin.id })
        ]
        for (const entry of rows) yield* log.record(entry)
        yield* flushLog
        const scope = { _tag: "organization", organizationId: org.id } as const
        const ids = (page: { readonly items: ReadonlyArray<{ readonly request_id: string }> }) =>
          page.items.map((item) => item.request_id)
        const all = yield* queries.requests(scope, {}, { limit: 50 })
        assert.deepStrictEqual(
          ids(all),
          [rows[3]!, rows[2]!, rows[1]!, rows[0]!].map((r) => r.requestId)
        )
        assert.strictEqual(all.items[0]!.origin_label, "Web")
        assert.isNull(all.next_cursor)

        const seen: Array<string> = []
        let cursor: string | undefined
        do {
          const page = yield* queries.requests(scope, {}, { cursor, limit: 1 })
          seen.push(...ids(page))
          cursor = page.next_cursor ?? undefined
        } while (cursor !== undefined)
        assert.deepStrictEqual(seen, ids(all))

        assert.deepStrictEqual(ids(yield* queries.requests(scope, { statusClass: "4xx" }, { limit: 50 })), [
          rows[1]!.requestId
        ])
        assert.deepStrictEqual(
          ids(yield* queries.requests(scope, { outcome: "internal_error" }, { limit: 50 })),
          [rows[3]!.requestId]
        )
        assert.deepStrictEqual(
          ids(
            yield* queries.requests(
              scope,
              { from: new Date(base + 1000), to: new Date(base + 2000) },
              { limit: 50 }
            )
          ).sort(),
          [rows[1]!.requestId, rows[2]!.requestId].sort()
        )
        assert.deepStrictEqual(
          ids(yield* queries.requests(scope, { idempotencyKey: "k-1" }, { limit: 50 })),
          [rows[0]!.requestId]
        )
        assert.deepStrictEqual(
          ids(yield* queries.requests(scope, { requestId: rows[4]!.requestId }, { limit: 50 })),
          []
        )
        assert.deepStrictEqual(
          ids(yield* queries.requests({ _tag: "origin", originId: other.origin.id }, {}, { limit: 50 })),
          [rows[4]!.requestId]
        )
        assert.isTrue(Option.isSome(yield* queries.request(org.id, rows[0]!.requestId, false)))
        assert.isTrue(Option.isNone(yield* queries.request(org.id, rows[4]!.requestId, true)))

        const stray = row({ at: base + 4000, status: 401, outcome: "invalid_key" })
        yield* log.record(stray)
        yield* flushLog
        assert.include(
          ids(yield* queries.requests({ _tag: "unattributed" }, {}, { limit: 200 })),
          stray.requestId
        )
        assert.isTrue(Option.isNone(yield* queries.request(org.id, stray.requestId, false)))
        assert.isTrue(Option.isSome(yield* queries.request(org.id, stray.requestId, true)))
      }))

    test("leads: search by phone in any spelling, name or e-mail; newest first with a cursor; a lead's page", () =>
      Effect.gen(function* () {
        const leads = yield* LeadRepository
        const org = yield* organization("Leads")
        const other = yield* organization("Other leads")
        const target = { organizationId: org.id, originId: org.origin.id }
        yield* setClock("2026-11-21T09:00:00.000Z")
        const first = yield* leads
          .createOrEnrich(
            leadWrite(
              target,
              { nombre: "Lucía Pérez", telefono: "+52 55 1234 5678", email: "lucia@example.com" },
              { propertyId: org.property.id }
            )
          )
          .pipe(Effect.orDie)
        yield* setClock("2026-11-21T10:00:00.000Z")
        const second = yield* leads
          .createOrEnrich(leadWrite(target, { nombre: "Mario", telefono: "33 9876 5432" }))
          .pipe(Effect.orDie)
        yield* leads
          .createOrEnrich(
            leadWrite(
              { organizationId: other.id, originId: other.origin.id },
              { nombre: "Lucía", telefono: "5512345678" }
            )
          )
          .pipe(Effect.orDie)
        const orgRow = { id: org.id, name: org.name, country: "MX" }
        const ids = (page: { readonly items: ReadonlyArray<{ readonly id: string }> }) =>
          page.items.map((l) => l.id)

        assert.deepStrictEqual(ids(yield* queries.leads(orgRow, "", { limit: 50 })), [
          second.leadId,
          first.leadId
        ])
        assert.deepStrictEqual(ids(yield* queries.leads(orgRow, "55-1234-5678", { limit: 50 })), [
          first.leadId
        ])
        assert.deepStrictEqual(ids(yield* queries.leads(orgRow, "lucía", { limit: 50 })), [first.leadId])
        assert.deepStrictEqual(ids(yield* queries.leads(orgRow, "LUCIA@example", { limit: 50 })), [
          first.leadId
        ])
        assert.deepStrictEqual(ids(yield* queries.leads(orgRow, "nobody", { limit: 50 })), [])
        const page1 = yield* queries.leads(orgRow, "", { limit: 1 })
        assert.deepStrictEqual(ids(page1), [second.leadId])
        const page2 = yield* queries.leads(orgRow, "", { cursor: page1.next_cursor!, limit: 1 })
        assert.deepStrictEqual(ids(page2), [first.leadId])
        assert.isNull(page2.next_cursor)

        const detail = Option.getOrThrow(yield* queries.lead(org.id, first.leadId))
        assert.strictEqual(detail.nombre, "Lucía Pérez")
        assert.strictEqual(detail.email, "lucia@example.com")
        assert.deepStrictEqual(detail.origin, { id: org.origin.id, label: "Web" })
        assert.deepStrictEqual(detail.property, { id: org.property.id, codigo: "ABC-1234" })
        assert.isNotNull(detail.assignee)
        assert.include(["Ana", "Beto"], detail.assignee!.name)
        assert.isNull(detail.erased_at)
        assert.strictEqual(detail.created_at, "2026-11-21T09:00:00.000Z")
        assert.deepStrictEqual(
          detail.events.map((e) => e.type),
          ["lead.created"]
        )
        assert.isTrue(Option.isNone(yield* queries.lead(other.id, first.leadId)))
        assert.isTrue(Option.isNone(yield* queries.lead(org.id, "nope")))
      }))

    test("catalog and capture: properties by codigo or external code, restore; agents by name; rules in order; delete a rule", () =>
      Effect.gen(function* () {
        const catalog = yield* PropertyCatalog
        const rules = yield* CaptureRules
        const org = yield* organization("Catalog")
        const other = yield* organization("Other catalog")
        const archived = yield* catalog
          .add({ organizationId: org.id, codigo: "OLD-0001", externalCode: null, archived: true })
          .pipe(Effect.orDie)
        assert.deepStrictEqual(
          (yield* queries.properties(org.id, "")).map((p) => [p.codigo, p.archived]),
          [
            ["ABC-1234", false],
            ["OLD-0001", true]
          ]
        )
        assert.deepStrictEqual(
          (yield* queries.properties(org.id, "torre")).map((p) => p.id),
          [org.property.id]
        )
        assert.isTrue(Option.isNone(yield* queries.property(other.id, archived.id)))
        yield* (yield* PropertyCatalog).restore(archived.id)
        assert.isFalse(Option.getOrThrow(yield* queries.property(org.id, archived.id)).archived)

        assert.deepStrictEqual(
          (yield* queries.agents(org.id)).map((a) => a.name),
          ["Ana", "Beto"]
        )
        const first = yield* rules
          .addRule({
            organizationId: org.id,
            originId: org.origin.id,
            propertyId: org.property.id,
            agentIds: [org.ana.id],
            roundRobin: false,
            priority: 10
          })
          .pipe(Effect.orDie)
        const listed = yield* queries.rules(org.id)
        assert.deepStrictEqual(
          listed.map((r) => r.id),
          [first.id, org.rule.id]
        )
        assert.deepStrictEqual(listed[0], {
          id: first.id,
          priority: 10,
          origin: { id: org.origin.id, label: "Web" },
          property: { id: org.property.id, codigo: "ABC-1234" },
          agents: [{ id: org.ana.id, name: "Ana" }],
          round_robin: false
        })
        assert.deepStrictEqual(
          listed[1]!.agents.map((a) => a.name),
          ["Beto", "Ana"]
        )
        assert.isFalse(yield* queries.deleteRule(other.id, first.id))
        assert.isTrue(yield* queries.deleteRule(org.id, first.id))
        assert.isFalse(yield* queries.deleteRule(org.id, first.id))
        assert.deepStrictEqual(
          (yield* queries.rules(org.id)).map((r) => r.id),
          [org.rule.id]
        )
      }))

    test("overview: requests per minute per origin, leads per day, error codes by count", () =>
      Effect.gen(function* () {
        const log = yield* RequestLog
        const leads = yield* LeadRepository
        const now = yield* setClock("2026-11-22T12:00:30.000Z")
        const org = yield* organization("Overview")
        const target = { organizationId: org.id, originId: org.origin.id }
        yield* leads
          .createOrEnrich(leadWrite(target, { nombre: "Uno", telefono: "5511112222" }))
          .pipe(Effect.orDie)
        yield* leads
          .createOrEnrich(
            leadWrite(target, { nombre: "Uno", telefono: "5511112222", email: "u@example.com" })
          )
          .pipe(Effect.orDie)
        const minute = Date.parse("2026-11-22T12:00:00.000Z")
        for (const entry of [
          row({ at: minute + 1000, originId: org.origin.id }),
          row({ at: minute + 2000, originId: org.origin.id, status: 422, outcome: "validation_error" }),
          row({ at: minute - 60_000, originId: org.origin.id, status: 422, outcome: "validation_error" }),
          row({ at: minute - 60_000, originId: org.origin.id, status: 429, outcome: "rate_limited" }),
          row({ at: now - 2 * 86_400_000, originId: org.origin.id, status: 500, outcome: "internal_error" })
        ])
          yield* log.record(entry)
        yield* flushLog
        const overview = yield* queries.overview(org.id)
        assert.deepStrictEqual(overview.requests_per_minute, [
          { minute: "2026-11-22T11:59:00.000Z", origin_id: org.origin.id, label: "Web", count: 2 },
          { minute: "2026-11-22T12:00:00.000Z", origin_id: org.origin.id, label: "Web", count: 2 }
        ])
        assert.deepStrictEqual(overview.leads_per_day, [{ day: "2026-11-22", created: 1, enriched: 1 }])
        assert.deepStrictEqual(overview.error_codes, [
          { code: "validation_error", count: 2 },
          { code: "rate_limited", count: 1 }
        ])
      }))

    // Midnight in Mexico City (UTC-6) is 06:00 UTC: a minute before it, a minute after it, and a
    // minute before UTC's own midnight.
    for (const [at, mexicoDay, utcDay] of [
      ["2026-11-23T05:59:00.000Z", "2026-11-22", "2026-11-23"],
      ["2026-11-23T06:01:00.000Z", "2026-11-23", "2026-11-23"],
      ["2026-11-22T23:59:00.000Z", "2026-11-22", "2026-11-22"]
    ] as const)
      test(`overview: leads count on the organization's day, in its zone or else its country's (at ${at})`, () =>
        Effect.gen(function* () {
          const leads = yield* LeadRepository
          const sql = yield* SqlClient.SqlClient
          yield* setClock(at)
          const mexican = yield* organization("Zona MX")
          const inUtc = yield* organization("Zona UTC")
          yield* sql`UPDATE organizations SET time_zone = 'UTC' WHERE id = ${inUtc.id}`
          for (const org of [mexican, inUtc])
            yield* leads
              .createOrEnrich(
                leadWrite(
                  { organizationId: org.id, originId: org.origin.id },
                  { nombre: "Noche", telefono: "5533334444" }
                )
              )
              .pipe(Effect.orDie)
          assert.deepStrictEqual((yield* queries.overview(mexican.id)).leads_per_day, [
            { day: mexicoDay, created: 1, enriched: 0 }
          ])
          assert.deepStrictEqual((yield* queries.overview(inUtc.id)).leads_per_day, [
            { day: utcDay, created: 1, enriched: 0 }
          ])
        }))

    test("overview: the leads chart starts at the zone's midnight 29 days ago, across Tijuana's clock change", () =>
      Effect.gen(function* () {
        const leads = yield* LeadRepository
        const sql = yield* SqlClient.SqlClient
        const org = yield* organization("Zona Tijuana")
        yield* sql`UPDATE organizations SET time_zone = 'America/Tijuana' WHERE id = ${org.id}`
        const lead = (at: string, telefono: string) =>
          Effect.andThen(
            setClock(at),
            leads
              .createOrEnrich(
                leadWrite({ organizationId: org.id, originId: org.origin.id }, { nombre: "Borde", telefono })
              )
              .pipe(Effect.orDie)
          )
        // 21 October 23:30 PDT: the day before the chart's first; 22 October 00:30 PDT: its first day.
        yield* lead("2026-10-22T06:30:00.000Z", "5533330001")
        yield* lead("2026-10-22T07:30:00.000Z", "5533330002")
        // 1 November, after the clocks went back: 23:30 PST is still the 1st in Tijuana.
        yield* lead("2026-11-02T07:30:00.000Z", "5533330003")
        // 20 November 23:59 PST, the last minute of today in Tijuana (30 days span 721 hours).
        yield* setClock("2026-11-21T07:59:00.000Z")
        assert.deepStrictEqual((yield* queries.overview(org.id)).leads_per_day, [
          { day: "2026-10-22", created: 1, enriched: 0 },
          { day: "2026-11-01", created: 1, enriched: 0 }
        ])
      }))

    test("test data: only behind the switch (requests, leads, search), marked on a lead and a request, never in the overview", () =>
      Effect.gen(function* () {
        const log = yield* RequestLog
        const leads = yield* LeadRepository
        const now = yield* setClock("2026-11-22T12:00:30.000Z")
        const org = yield* organization("Test data")
        const target = { organizationId: org.id, originId: org.origin.id }
        const live = yield* leads
          .createOrEnrich(leadWrite(target, { nombre: "Vivo", telefono: "5511112222" }))
          .pipe(Effect.orDie)
        const test = yield* leads
          .createOrEnrich(
            leadWrite(target, { nombre: "Prueba", telefono: "5511112222" }, { livemode: false })
          )
          .pipe(Effect.orDie)
        yield* leads
          .createOrEnrich(
            leadWrite(
              target,
              { nombre: "Prueba", telefono: "5511112222", email: "p@example.com" },
              { livemode: false }
            )
          )
          .pipe(Effect.orDie)
        const liveRow = row({ at: now - 1000, originId: org.origin.id, leadId: live.leadId })
        const testRow = row({ at: now - 500, originId: org.origin.id, leadId: test.leadId, livemode: false })
        const testError = row({
          at: now - 400,
          originId: org.origin.id,
          livemode: false,
          status: 422,
          outcome: "property_not_found"
        })
        for (const entry of [liveRow, testRow, testError]) yield* log.record(entry)
        yield* flushLog

        const overview = yield* queries.overview(org.id)
        assert.deepStrictEqual(overview.requests_per_minute, [
          { minute: "2026-11-22T12:00:00.000Z", origin_id: org.origin.id, label: "Web", count: 1 }
        ])
        assert.deepStrictEqual(overview.leads_per_day, [{ day: "2026-11-22", created: 1, enriched: 0 }])
        assert.deepStrictEqual(overview.error_codes, [])
        assert.strictEqual((yield* queries.origins(org.id))[0]!.requests_24h, 1)

        const scope = { _tag: "organization", organizationId: org.id } as const
        const ids = (page: { readonly items: ReadonlyArray<{ readonly request_id: string }> }) =>
          page.items.map((item) => item.request_id)
        assert.deepStrictEqual(ids(yield* queries.requests(scope, {}, { limit: 50 })), [liveRow.requestId])
        const testRequests = yield* queries.requests(scope, { livemode: false }, { limit: 50 })
        assert.deepStrictEqual(ids(testRequests), [testError.requestId, testRow.requestId])
        assert.isTrue(testRequests.items.every((item) => item.livemode === false))
        assert.deepStrictEqual(
          ids(yield* queries.requests(scope, { livemode: false, statusClass: "4xx" }, { limit: 50 })),
          [testError.requestId]
        )
        const single = yield* queries.request(org.id, testRow.requestId, false)
        assert.isFalse(Option.getOrThrow(single).livemode)

        const names = (page: { readonly items: ReadonlyArray<{ readonly nombre: string | null }> }) =>
          page.items.map((item) => item.nombre)
        const orgRow = { id: org.id, name: org.name, country: "MX" }
        assert.deepStrictEqual(names(yield* queries.leads(orgRow, "", { limit: 50 })), ["Vivo"])
        assert.deepStrictEqual(names(yield* queries.leads(orgRow, "", { limit: 50 }, false)), ["Prueba"])
        assert.deepStrictEqual(names(yield* queries.leads(orgRow, "55 1111 2222", { limit: 50 })), ["Vivo"])
        assert.deepStrictEqual(names(yield* queries.leads(orgRow, "55 1111 2222", { limit: 50 }, false)), [
          "Prueba"
        ])
        assert.deepStrictEqual(names(yield* queries.leads(orgRow, "p@example", { limit: 50 })), [])

        const detail = Option.getOrThrow(yield* queries.lead(org.id, test.leadId))
        assert.isFalse(detail.livemode)
        assert.deepStrictEqual(detail.tasks, [])
        assert.isNull(detail.assignee)
        assert.deepStrictEqual(
          detail.requests.map((r) => [r.request_id, r.livemode]),
          [[testRow.requestId, false]]
        )
        assert.isTrue(Option.getOrThrow(yield* queries.lead(org.id, live.leadId)).livemode)
      }))
  })
}
