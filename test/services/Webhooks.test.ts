import { assert, it } from "@effect/vitest"
import { Clock, Effect, Layer, Option, type Scope } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import {
  eventTypes,
  isLeadWriteEvent,
  type LeadWriteEvent,
  leadIdOf,
  type WebhookEvent,
  webhookBody
} from "../../src/Domain/WebhookPayload.ts"
import { LeadRepository } from "../../src/Intake/LeadRepository.ts"
import { PersonalData } from "../../src/PersonalData/PersonalData.ts"
import { WebhookConfig, type WebhookConfigShape } from "../../src/Platform/Config.ts"
import { type ClaimedDelivery, type ClaimRequest, WebhookDeliveries } from "../../src/Webhooks/Deliveries.ts"
import { rotationGraceMillis, WebhookEndpoints } from "../../src/Webhooks/Endpoints.ts"
import { addOutboxEvent } from "../../src/Webhooks/Outbox.ts"
import { layerPostgresServices, seed } from "../support/Client.ts"
import { expectFailure, leadWrite, setClock } from "./Suite.ts"

const leadEventOf = (event: WebhookEvent): LeadWriteEvent => {
  if (!isLeadWriteEvent(event)) throw new Error(`expected a lead write event, got ${event.type}`)
  return event
}

const config: WebhookConfigShape = {
  allowPrivate: false,
  timeoutMillis: 1000,
  retrySchedule: [1000, 2000],
  retentionDays: 30,
  concurrency: 8,
  concurrencyPerEndpoint: 2,
  pollIntervalMillis: 1000,
  workerInServe: true,
  disableAfterMillis: 5 * 86_400_000
}

const webhookLayers = Layer.mergeAll(WebhookEndpoints.layer, WebhookDeliveries.layer, PersonalData.layer)

const variants = [
  [
    "postgres",
    webhookLayers.pipe(
      Layer.provideMerge(layerPostgresServices),
      Layer.provide(Layer.succeed(WebhookConfig, config))
    )
  ]
] as const

type Services = Layer.Success<(typeof variants)[0][1]>

/** One behaviour suite on both layers; each test gets its own store (claims are global) and TestClock. */
const acrossLayers = (
  suite: (
    test: (name: string, self: () => Effect.Effect<void, unknown, Services | Scope.Scope>) => void
  ) => void
) => {
  for (const [variant, services] of variants) {
    suite((name, self) =>
      it.live(`webhooks (${variant}): ${name}`, () =>
        Effect.suspend(self).pipe(
          Effect.provide(TestClock.layer()),
          Effect.provide(services as Layer.Layer<Services>)
        )
      )
    )
  }
}

const claimAll: ClaimRequest = { limit: 100, perEndpoint: 100, excludeEndpoints: [], leaseMillis: 30_000 }

const publicUrl = "https://93.184.216.34/hooks"

let phone = 1000
const lead = (fixture: { organizationId: string; originId: string }, input: { email?: string } = {}) =>
  Effect.gen(function* () {
    const leads = yield* LeadRepository
    return yield* leads.createOrEnrich(
      leadWrite(fixture, { nombre: "Ana Pérez", telefono: `+52 55 1234 ${phone++}`, ...input })
    )
  })

acrossLayers((test) => {
  test("adds an endpoint, shows its secret once and lists it without the secret", () =>
    Effect.gen(function* () {
      const endpoints = yield* WebhookEndpoints
      const fixture = yield* seed()
      const now = yield* setClock("2026-11-23T10:00:00.000Z")
      const added = yield* endpoints.add({
        organizationId: fixture.organizationId,
        url: publicUrl,
        events: ["lead.created", "lead.enriched"]
      })
      assert.match(added.secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
      assert.deepStrictEqual(added.endpoint, {
        id: added.endpoint.id,
        organizationId: fixture.organizationId,
        url: publicUrl,
        events: ["lead.created", "lead.enriched"],
        testEvents: false,
        disabled: false,
        disabledReason: null,
        disabledAt: null,
        failingSince: null,
        lastError: null,
        createdAt: new Date(now)
      })
      const listed = yield* endpoints.list(fixture.organizationId)
      assert.deepStrictEqual(listed, [added.endpoint])
      assert.notInclude(JSON.stringify(listed), added.secret)
      assert.deepStrictEqual(yield* endpoints.list((yield* seed()).organizationId), [])
    }))

  test("refuses URLs that are malformed, not https, or private, and unknown ids", () =>
    Effect.gen(function* () {
      const endpoints = yield* WebhookEndpoints
      const deliveries = yield* WebhookDeliveries
      const fixture = yield* seed()
      const add = (url: string) =>
        expectFailure(
          endpoints.add({ organizationId: fixture.organizationId, url, events: ["lead.created"] })
        )
      const reasons = [] as Array<string>
      for (const url of [
        "nope",
        "http://93.184.216.34/",
        "https://127.0.0.1/",
        "https://10.0.0.8/",
        "https://[::ffff:192.168.0.1]/",
        "https://169.254.169.254/latest"
      ]) {
        const error = yield* add(url)
        assert.strictEqual(error._tag, "Rejected", url)
        reasons.push(error.message)
      }
      assert.deepStrictEqual(reasons, [
        "URL not allowed: the URL is malformed (expected an absolute URL such as https://example.com/hooks)",
        "URL not allowed: the URL must use https://",
        "URL not allowed: the host resolves to 127.0.0.1, a special-purpose address (loopback, 127.0.0.0/8, RFC 1122)",
        "URL not allowed: the host resolves to 10.0.0.8, a special-purpose address (private-use, 10.0.0.0/8, RFC 1918)",
        "URL not allowed: the host resolves to ::ffff:c0a8:1, a special-purpose address (IPv4-mapped, ::ffff:0:0/96, RFC 4291)",
        "URL not allowed: the host resolves to 169.254.169.254, a special-purpose address (link-local, 169.254.0.0/16, RFC 3927)"
      ])
      assert.deepStrictEqual(yield* endpoints.list(fixture.organizationId), [])
      const missing = crypto.randomUUID()
      const unknownOrg = yield* expectFailure(
        endpoints.add({ organizationId: missing, url: publicUrl, events: ["lead.created"] })
      )
      assert.strictEqual(unknownOrg.message, `unknown organization ${missing}`)
      for (const failure of [
        endpoints.remove(missing),
        endpoints.enable(missing),
        endpoints.rotateSecret(missing),
        deliveries.list(missing, 10),
        deliveries.resend(missing, missing)
      ]) {
        assert.strictEqual((yield* expectFailure(failure)).message, `unknown webhook ${missing}`)
      }
    }))

  test("fans out only events committed after the endpoint was added, of its types and organization", () =>
    Effect.gen(function* () {
      const endpoints = yield* WebhookEndpoints
      const deliveries = yield* WebhookDeliveries
      const fixture = yield* seed()
      const other = yield* seed()
      yield* setClock("2026-11-23T10:00:00.000Z")
      yield* lead(fixture)
      const both = yield* endpoints.add({
        organizationId: fixture.organizationId,
        url: publicUrl,
        events: ["lead.created", "lead.enriched"]
      })
      const createdOnly = yield* endpoints.add({
        organizationId: fixture.organizationId,
        url: `${publicUrl}/created`,
        events: ["lead.created"]
      })
      yield* TestClock.adjust("1 second")
      const first = yield* lead(fixture)
      yield* TestClock.adjust("1 second")
      const leads = yield* LeadRepository
      yield* leads.createOrEnrich(
        leadWrite(
          fixture,
          { nombre: "Ana", telefono: "+52 55 1234 0001" },
          { propertyId: fixture.propertyId }
        )
      )
      yield* leads.createOrEnrich(
        leadWrite(fixture, { nombre: "Ana", telefono: "+52 55 1234 0001", email: "a@b.co" })
      )
      yield* lead(other)

      const toBoth = yield* deliveries.list(both.endpoint.id, 50)
      assert.deepStrictEqual(
        toBoth.map((d) => [d.type, d.state, d.attempts, d.last_status, d.last_attempt_at]),
        [
          ["lead.enriched", "pending", 0, null, null],
          ["lead.created", "pending", 0, null, null],
          ["lead.created", "pending", 0, null, null]
        ]
      )
      assert.deepStrictEqual(
        (yield* deliveries.list(createdOnly.endpoint.id, 50)).map((d) => d.type),
        ["lead.created", "lead.created"]
      )
      assert.deepStrictEqual((yield* deliveries.list(both.endpoint.id, 1)).length, 1)

      const claimed = yield* deliveries.claim(claimAll)
      assert.strictEqual(claimed.length, 5)
      const created = claimed.find(
        (c) => c.endpointId === both.endpoint.id && leadIdOf(c.event) === first.leadId
      )!
      const createdEvent = leadEventOf(created.event)
      assert.deepStrictEqual(createdEvent.lead, {
        nombre: "Ana Pérez",
        telefono: createdEvent.lead.telefono,
        email: null,
        property_id: null,
        assignee_id: first.assigneeId
      })
      assert.strictEqual(created.event.organizationId, fixture.organizationId)
      assert.strictEqual(createdEvent.origin.id, fixture.originId)
      assert.deepStrictEqual(created.secrets, [both.secret])
      assert.deepStrictEqual(created.attempt, 1)
      assert.strictEqual(created.url, publicUrl)
    }))

  test("leases a claimed delivery: nobody else gets it until the lease ends", () =>
    Effect.gen(function* () {
      const endpoints = yield* WebhookEndpoints
      const deliveries = yield* WebhookDeliveries
      const fixture = yield* seed()
      yield* setClock("2026-11-23T10:00:00.000Z")
      const endpoint = yield* endpoints.add({
        organizationId: fixture.organizationId,
        url: publicUrl,
        events: ["lead.created"]
      })
      yield* lead(fixture)
      const [first, ...rest] = yield* deliveries.claim(claimAll)
      assert.strictEqual(rest.length, 0)
      assert.deepStrictEqual(yield* deliveries.claim(claimAll), [])
      yield* TestClock.adjust("31 seconds")
      const [again] = yield* deliveries.claim(claimAll)
      assert.strictEqual(again!.event.eventId, first!.event.eventId)
      assert.strictEqual(again!.attempt, 2)
      assert.isFalse(
        yield* deliveries.record(first!, {
          _tag: "Delivered",
          status: 200,
          attemptedAt: Date.parse("2026-11-23T10:00:01Z"),
          durationMillis: 10
        })
      )
      yield* deliveries.release(first!)
      assert.deepStrictEqual(yield* deliveries.claim(claimAll), [])
      yield* deliveries.release(again!)
      const [released] = yield* deliveries.claim(claimAll)
      assert.deepStrictEqual([released!.event.eventId, released!.attempt], [first!.event.eventId, 3])
      yield* deliveries.release(released!)
      const [reclaimed] = yield* deliveries.claim(claimAll)
      assert.isFalse(
        yield* deliveries.record(released!, {
          _tag: "Delivered",
          status: 200,
          attemptedAt: yield* TestClockNow,
          durationMillis: 10
        })
      )
      assert.isTrue(
        yield* deliveries.record(reclaimed!, {
          _tag: "Delivered",
          status: 204,
          attemptedAt: yield* TestClockNow,
          durationMillis: 10
        })
      )
      const [row] = yield* deliveries.list(endpoint.endpoint.id, 10)
      assert.deepStrictEqual(row, {
        event_id: first!.event.eventId,
        type: "lead.created",
        state: "delivered",
        attempts: 4,
        last_status: 204,
        last_error: null,
        last_attempt_at: "2026-11-23T10:00:31.000Z",
        next_attempt_at: null
      })
      assert.deepStrictEqual(yield* deliveries.claim(claimAll), [])
    }))

  test("schedules a retry, fails when the schedule is spent, and resends with the same event id", () =>
    Effect.gen(function* () {
      const endpoints = yield* WebhookEndpoints
      const deliveries = yield* WebhookDeliveries
      const fixture = yield* seed()
      const now = yield* setClock("2026-11-23T10:00:00.000Z")
      const endpoint = yield* endpoints.add({
        organizationId: fixture.organizationId,
        url: publicUrl,
        events: ["lead.created"]
      })
      yield* lead(fixture)
      const [first] = yield* deliveries.claim(claimAll)
      assert.isTrue(
        yield* deliveries.record(first!, {
          _tag: "Failed",
          status: 500,
          error: "HTTP 500",
          attemptedAt: now,
          durationMillis: 10,
          retryAt: now + 5000,
          disableEndpoint: false
        })
      )
      assert.deepStrictEqual((yield* deliveries.list(endpoint.endpoint.id, 1))[0], {
        event_id: first!.event.eventId,
        type: "lead.created",
        state: "pending",
        attempts: 1,
        last_status: 500,
        last_error: "HTTP 500",
        last_attempt_at: "2026-11-23T10:00:00.000Z",
        next_attempt_at: "2026-11-23T10:00:05.000Z"
      })
      assert.deepStrictEqual(yield* deliveries.claim(claimAll), [])
      yield* TestClock.adjust("5 seconds")
      const [second] = yield* deliveries.claim(claimAll)
      assert.deepStrictEqual([second!.attempt, second!.failures], [2, 1])
      yield* deliveries.record(second!, {
        _tag: "Failed",
        status: null,
        error: "timed out",
        attemptedAt: now + 5000,
        durationMillis: 10,
        retryAt: undefined,
        disableEndpoint: false
      })
      const [failed] = yield* deliveries.list(endpoint.endpoint.id, 1)
      assert.deepStrictEqual(
        [failed!.state, failed!.last_status, failed!.next_attempt_at],
        ["failed", null, null]
      )
      assert.deepStrictEqual(yield* deliveries.pending(), { count: 0, oldestCreatedAt: null })

      yield* deliveries.resend(endpoint.endpoint.id, first!.event.eventId)
      const [resent] = yield* deliveries.claim(claimAll)
      assert.deepStrictEqual(
        [resent!.event.eventId, resent!.attempt, resent!.failures],
        [first!.event.eventId, 3, 0]
      )
      const unknown = crypto.randomUUID()
      assert.strictEqual(
        (yield* expectFailure(deliveries.resend(endpoint.endpoint.id, unknown))).message,
        `unknown event ${unknown}`
      )
    }))

  test("410 disables the endpoint: its deliveries wait until it is enabled, others go on", () =>
    Effect.gen(function* () {
      const endpoints = yield* WebhookEndpoints
      const deliveries = yield* WebhookDeliveries
      const fixture = yield* seed()
      const now = yield* setClock("2026-11-23T10:00:00.000Z")
      const gone = yield* endpoints.add({
        organizationId: fixture.organizationId,
        url: publicUrl,
        events: ["lead.created"]
      })
      const healthy = yield* endpoints.add({
        organizationId: fixture.organizationId,
        url: `${publicUrl}/2`,
        events: ["lead.created"]
      })
      yield* lead(fixture)
      yield* lead(fixture)
      const claimed = yield* deliveries.claim({ ...claimAll, perEndpoint: 1 })
      assert.strictEqual(claimed.length, 2)
      const toGone = claimed.find((c) => c.endpointId === gone.endpoint.id)!
      yield* deliveries.record(toGone, {
        _tag: "Failed",
        status: 410,
        error: "HTTP 410",
        attemptedAt: now,
        durationMillis: 10,
        retryAt: undefined,
        disableEndpoint: true
      })
      assert.deepStrictEqual(
        new Map((yield* endpoints.list(fixture.organizationId)).map((e) => [e.id, e.disabled])),
        new Map([
          [gone.endpoint.id, true],
          [healthy.endpoint.id, false]
        ])
      )
      yield* lead(fixture)
      const next = yield* deliveries.claim(claimAll)
      assert.deepStrictEqual(
        next.map((c) => c.endpointId),
        [healthy.endpoint.id, healthy.endpoint.id]
      )
      assert.strictEqual((yield* deliveries.list(gone.endpoint.id, 10)).length, 2)
      assert.deepStrictEqual((yield* endpoints.enable(gone.endpoint.id)).disabled, false)
      const resumed = yield* deliveries.claim(claimAll)
      assert.deepStrictEqual(
        resumed.map((c) => c.endpointId),
        [gone.endpoint.id]
      )
    }))

  test("an operator disables an endpoint: nothing is claimed for it, its deliveries wait and resume on enable", () =>
    Effect.gen(function* () {
      const endpoints = yield* WebhookEndpoints
      const deliveries = yield* WebhookDeliveries
      const fixture = yield* seed()
      yield* setClock("2026-11-23T10:00:00.000Z")
      const paused = yield* endpoints.add({
        organizationId: fixture.organizationId,
        url: publicUrl,
        events: ["lead.created"]
      })
      const other = yield* endpoints.add({
        organizationId: fixture.organizationId,
        url: `${publicUrl}/2`,
        events: ["lead.created"]
      })
      yield* lead(fixture)
      const disabled = yield* endpoints.disable(paused.endpoint.id)
      assert.deepStrictEqual(
        [disabled.disabled, disabled.disabledReason, disabled.disabledAt?.toISOString()],
        [true, "operator", "2026-11-23T10:00:00.000Z"]
      )
      // Disabling it again keeps the time it was first disabled.
      yield* TestClock.adjust("1 hour")
      assert.strictEqual(
        (yield* endpoints.disable(paused.endpoint.id)).disabledAt?.toISOString(),
        "2026-11-23T10:00:00.000Z"
      )
      yield* lead(fixture)
      assert.deepStrictEqual(
        (yield* deliveries.claim(claimAll)).map((c) => c.endpointId),
        [other.endpoint.id, other.endpoint.id]
      )
      assert.deepStrictEqual(
        (yield* deliveries.list(paused.endpoint.id, 10)).map((d) => d.state),
        ["pending", "pending"]
      )
      const [listed] = (yield* endpoints.list(fixture.organizationId)).filter(
        (e) => e.id === paused.endpoint.id
      )
      assert.deepStrictEqual([listed?.disabled, listed?.disabledReason], [true, "operator"])
      const enabled = yield* endpoints.enable(paused.endpoint.id)
      assert.deepStrictEqual(
        [enabled.disabled, enabled.disabledReason, enabled.disabledAt],
        [false, null, null]
      )
      assert.deepStrictEqual(
        (yield* deliveries.claim(claimAll)).map((c) => c.endpointId),
        [paused.endpoint.id, paused.endpoint.id]
      )
      assert.strictEqual((yield* expectFailure(endpoints.disable(crypto.randomUUID())))._tag, "UnknownEntity")
    }))

  test("an endpoint paused automatically and then disabled by an operator says so, from then", () =>
    Effect.gen(function* () {
      const endpoints = yield* WebhookEndpoints
      const sql = yield* SqlClient.SqlClient
      const fixture = yield* seed()
      yield* setClock("2026-11-23T10:00:00.000Z")
      const added = yield* endpoints.add({
        organizationId: fixture.organizationId,
        url: publicUrl,
        events: ["lead.created"]
      })
      yield* sql`
        UPDATE webhook_endpoints SET disabled_at = '2026-11-20T00:00:00Z', disabled_reason = 'failing'
        WHERE id = ${added.endpoint.id}`
      const disabled = yield* endpoints.disable(added.endpoint.id)
      assert.deepStrictEqual(
        [disabled.disabledReason, disabled.disabledAt?.toISOString()],
        ["operator", "2026-11-23T10:00:00.000Z"]
      )
    }))

  test("bounds claims per endpoint and in total, and skips excluded endpoints", () =>
    Effect.gen(function* () {
      const endpoints = yield* WebhookEndpoints
      const deliveries = yield* WebhookDeliveries
      const fixture = yield* seed()
      yield* setClock("2026-11-23T10:00:00.000Z")
      const a = yield* endpoints.add({
        organizationId: fixture.organizationId,
        url: publicUrl,
        events: ["lead.created"]
      })
      const b = yield* endpoints.add({
        organizationId: fixture.organizationId,
        url: `${publicUrl}/b`,
        events: ["lead.created"]
      })
      for (let i = 0; i < 4; i++) yield* lead(fixture)
      const excluded = yield* deliveries.claim({
        ...claimAll,
        excludeEndpoints: [a.endpoint.id],
        perEndpoint: 3
      })
      assert.deepStrictEqual(
        excluded.map((c) => c.endpointId),
        [b.endpoint.id, b.endpoint.id, b.endpoint.id]
      )
      const limited = yield* deliveries.claim({ ...claimAll, limit: 2, perEndpoint: 1 })
      assert.strictEqual(limited.length, 2)
      assert.deepStrictEqual(
        new Set(limited.map((c) => c.endpointId)),
        new Set([a.endpoint.id, b.endpoint.id])
      )
      assert.deepStrictEqual((yield* deliveries.pending()).count, 8)
    }))

  test("claims across organizations oldest first, within the bounds per endpoint and in total", () =>
    Effect.gen(function* () {
      const endpoints = yield* WebhookEndpoints
      const deliveries = yield* WebhookDeliveries
      const first = yield* seed()
      const second = yield* seed()
      const start = yield* setClock("2026-11-23T10:00:00.000Z")
      const endpointOf = new Map<string, string>()
      for (const [name, fixture] of [
        ["first", first],
        ["second", second]
      ] as const) {
        const added = yield* endpoints.add({
          organizationId: fixture.organizationId,
          url: publicUrl,
          events: ["lead.created"]
        })
        endpointOf.set(added.endpoint.id, name)
      }
      // Due at 0 s, 1 s, 2 s, 3 s and 4 s.
      for (const fixture of [first, second, first, first, second]) {
        yield* lead(fixture)
        yield* TestClock.adjust("1 second")
      }
      const seen = (claimed: ReadonlyArray<ClaimedDelivery>) =>
        claimed
          .map((c) => [(c.event.createdAt.getTime() - start) / 1000, endpointOf.get(c.endpointId)] as const)
          .sort(([a], [b]) => a - b)
      // Two per endpoint, three in all: the oldest three of those, whatever their organization.
      assert.deepStrictEqual(seen(yield* deliveries.claim({ ...claimAll, limit: 3, perEndpoint: 2 })), [
        [0, "first"],
        [1, "second"],
        [2, "first"]
      ])
      assert.deepStrictEqual(seen(yield* deliveries.claim(claimAll)), [
        [3, "first"],
        [4, "second"]
      ])
      assert.deepStrictEqual(yield* deliveries.claim(claimAll), [])
    }))

  test("signs with the old and new secret for 24 hours after a rotation", () =>
    Effect.gen(function* () {
      const endpoints = yield* WebhookEndpoints
      const deliveries = yield* WebhookDeliveries
      const fixture = yield* seed()
      yield* setClock("2026-11-23T10:00:00.000Z")
      const added = yield* endpoints.add({
        organizationId: fixture.organizationId,
        url: publicUrl,
        events: ["lead.created"]
      })
      const rotated = yield* endpoints.rotateSecret(added.endpoint.id)
      assert.notStrictEqual(rotated.secret, added.secret)
      assert.strictEqual(rotated.id, added.endpoint.id)
      yield* lead(fixture)
      const [during] = yield* deliveries.claim(claimAll)
      assert.deepStrictEqual(during!.secrets, [added.secret, rotated.secret])
      yield* TestClock.adjust(rotationGraceMillis)
      yield* lead(fixture)
      const after = yield* deliveries.claim(claimAll)
      assert.deepStrictEqual(
        after.map((c) => c.secrets),
        [[rotated.secret], [rotated.secret]]
      )
    }))

  test("removing an endpoint removes its deliveries; prune keeps pending work", () =>
    Effect.gen(function* () {
      const endpoints = yield* WebhookEndpoints
      const deliveries = yield* WebhookDeliveries
      const fixture = yield* seed()
      const now = yield* setClock("2026-11-23T10:00:00.000Z")
      const kept = yield* endpoints.add({
        organizationId: fixture.organizationId,
        url: publicUrl,
        events: ["lead.created"]
      })
      const removed = yield* endpoints.add({
        organizationId: fixture.organizationId,
        url: `${publicUrl}/x`,
        events: ["lead.created"]
      })
      yield* lead(fixture)
      yield* lead(fixture)
      yield* endpoints.remove(removed.endpoint.id)
      assert.strictEqual(
        (yield* expectFailure(deliveries.list(removed.endpoint.id, 5)))._tag,
        "UnknownEntity"
      )
      const claimed = yield* deliveries.claim({ ...claimAll, limit: 1 })
      yield* deliveries.record(claimed[0]!, {
        _tag: "Delivered",
        status: 200,
        attemptedAt: now,
        durationMillis: 10
      })
      assert.deepStrictEqual(yield* deliveries.pending(), { count: 1, oldestCreatedAt: now })
      const pruned = yield* deliveries.prune(now + 1)
      assert.strictEqual(pruned.deliveries, 1)
      assert.isAtLeast(pruned.events, 1)
      assert.deepStrictEqual(
        (yield* deliveries.list(kept.endpoint.id, 10)).map((d) => d.state),
        ["pending"]
      )
      const [left] = yield* deliveries.claim(claimAll)
      assert.strictEqual(left!.endpointId, kept.endpoint.id)
    }))
})

/** An event of a test lead, as test mode writes it: an outbox row with livemode false. */
const writeTestModeEvent = (fixture: { organizationId: string }, leadId: string) =>
  Effect.gen(function* () {
    const now = new Date(yield* Clock.currentTimeMillis)
    const sql = yield* SqlClient.SqlClient
    yield* addOutboxEvent(sql, fixture.organizationId, {
      lead_id: leadId,
      type: "lead.created",
      payload: {},
      now,
      livemode: false,
      filled: null,
      snapshot: null
    })
  })

acrossLayers((test) => {
  test("subscribes to lead.created, lead.enriched and lead.erased by default; live events carry livemode true", () =>
    Effect.gen(function* () {
      const endpoints = yield* WebhookEndpoints
      const deliveries = yield* WebhookDeliveries
      const fixture = yield* seed()
      yield* setClock("2026-11-23T10:00:00.000Z")
      const added = yield* endpoints.add({
        organizationId: fixture.organizationId,
        url: publicUrl,
        events: eventTypes
      })
      assert.deepStrictEqual(added.endpoint.events, ["lead.created", "lead.enriched", "lead.erased"])
      assert.isFalse(added.endpoint.testEvents)
      yield* lead(fixture)
      const [claimed] = yield* deliveries.claim(claimAll)
      assert.isTrue(claimed!.event.livemode)
      assert.strictEqual(JSON.parse(webhookBody(claimed!.event, "https://crm.test")).livemode, true)
    }))

  test("lead.erased: exactly one per erasure, ids only, after the lead's own events are cancelled", () =>
    Effect.gen(function* () {
      const endpoints = yield* WebhookEndpoints
      const deliveries = yield* WebhookDeliveries
      const personalData = yield* PersonalData
      const fixture = yield* seed()
      yield* setClock("2026-11-23T10:00:00.000Z")
      const all = yield* endpoints.add({
        organizationId: fixture.organizationId,
        url: publicUrl,
        events: eventTypes
      })
      const createdOnly = yield* endpoints.add({
        organizationId: fixture.organizationId,
        url: `${publicUrl}/created`,
        events: ["lead.created"]
      })
      const created = yield* lead(fixture)
      yield* TestClock.adjust("1 minute")
      const erasedAt = yield* Clock.currentTimeMillis
      const erase = personalData.erase({
        leadId: created.leadId,
        reason: "ARCO cancellation 77",
        actor: "dpo"
      })
      assert.isFalse((yield* erase).already_erased)
      assert.isTrue((yield* erase).already_erased)

      assert.deepStrictEqual(
        (yield* deliveries.list(all.endpoint.id, 10)).map((d) => [d.type, d.state]),
        [
          ["lead.erased", "pending"],
          ["lead.created", "failed"]
        ]
      )
      assert.deepStrictEqual(
        (yield* deliveries.list(createdOnly.endpoint.id, 10)).map((d) => d.type),
        ["lead.created"]
      )
      const [claimed] = yield* deliveries.claim(claimAll)
      assert.strictEqual(claimed!.endpointId, all.endpoint.id)
      const body = JSON.parse(webhookBody(claimed!.event, "https://crm.test"))
      assert.deepStrictEqual(body, {
        type: "lead.erased",
        timestamp: new Date(erasedAt).toISOString(),
        livemode: true,
        data: {
          event_id: claimed!.event.eventId,
          lead_id: created.leadId,
          organization_id: fixture.organizationId,
          erased_at: new Date(erasedAt).toISOString()
        }
      })
      const sent = yield* deliveries.guard(claimed!, (event) => Effect.succeed(event))
      assert.deepStrictEqual(Option.getOrThrow(sent), claimed!.event)
      assert.deepStrictEqual(yield* deliveries.claim(claimAll), [])
    }))

  test("webhook.test goes to the one endpoint asked for, whatever it subscribed to", () =>
    Effect.gen(function* () {
      const endpoints = yield* WebhookEndpoints
      const deliveries = yield* WebhookDeliveries
      const fixture = yield* seed()
      const now = yield* setClock("2026-11-23T10:00:00.000Z")
      const target = yield* endpoints.add({
        organizationId: fixture.organizationId,
        url: publicUrl,
        events: ["lead.enriched"]
      })
      const bystander = yield* endpoints.add({
        organizationId: fixture.organizationId,
        url: `${publicUrl}/other`,
        events: eventTypes
      })
      const queued = yield* deliveries.sendTest(target.endpoint.id)
      assert.deepStrictEqual(
        (yield* deliveries.list(target.endpoint.id, 10)).map((d) => [
          d.event_id,
          d.type,
          d.state,
          d.attempts
        ]),
        [[queued.eventId, "webhook.test", "pending", 0]]
      )
      assert.deepStrictEqual(yield* deliveries.list(bystander.endpoint.id, 10), [])
      const [claimed, ...others] = yield* deliveries.claim(claimAll)
      assert.deepStrictEqual(others, [])
      assert.strictEqual(claimed!.endpointId, target.endpoint.id)
      assert.deepStrictEqual(claimed!.secrets, [target.secret])
      assert.deepStrictEqual(JSON.parse(webhookBody(claimed!.event, "https://crm.test")), {
        type: "webhook.test",
        timestamp: new Date(now).toISOString(),
        livemode: true,
        data: {
          event_id: queued.eventId,
          endpoint_id: target.endpoint.id,
          organization_id: fixture.organizationId
        }
      })
      const sent = yield* deliveries.guard(claimed!, (event) => Effect.succeed(event.type))
      assert.deepStrictEqual(sent, Option.some("webhook.test"))
      yield* deliveries.record(claimed!, {
        _tag: "Delivered",
        status: 204,
        attemptedAt: now,
        durationMillis: 10
      })
      yield* deliveries.resend(target.endpoint.id, queued.eventId)
      const [again] = yield* deliveries.claim(claimAll)
      assert.strictEqual(again!.event.eventId, queued.eventId, "a resent test event keeps its webhook-id")

      const missing = crypto.randomUUID()
      assert.strictEqual(
        (yield* expectFailure(deliveries.sendTest(missing))).message,
        `unknown webhook ${missing}`
      )
    }))

  test("events of test leads (livemode false) reach only endpoints added with test events on", () =>
    Effect.gen(function* () {
      const endpoints = yield* WebhookEndpoints
      const deliveries = yield* WebhookDeliveries
      const fixture = yield* seed()
      yield* setClock("2026-11-23T10:00:00.000Z")
      const liveOnly = yield* endpoints.add({
        organizationId: fixture.organizationId,
        url: publicUrl,
        events: eventTypes
      })
      yield* TestClock.adjust("1 second")
      const withTests = yield* endpoints.add({
        organizationId: fixture.organizationId,
        url: `${publicUrl}/test`,
        events: eventTypes,
        testEvents: true
      })
      assert.isTrue(withTests.endpoint.testEvents)
      assert.deepStrictEqual(
        (yield* endpoints.list(fixture.organizationId)).map((e) => [e.id, e.testEvents]),
        [
          [liveOnly.endpoint.id, false],
          [withTests.endpoint.id, true]
        ]
      )
      const live = yield* lead(fixture)
      yield* writeTestModeEvent(fixture, live.leadId)
      assert.strictEqual((yield* deliveries.list(liveOnly.endpoint.id, 10)).length, 1)
      assert.strictEqual((yield* deliveries.list(withTests.endpoint.id, 10)).length, 2)
      const claimed = yield* deliveries.claim(claimAll)
      assert.deepStrictEqual(
        claimed
          .map((c) => [c.endpointId === withTests.endpoint.id ? "with tests" : "live only", c.event.livemode])
          .sort(),
        [
          ["live only", true],
          ["with tests", false],
          ["with tests", true]
        ]
      )
      const testBody = claimed.find((c) => !c.event.livemode)!
      assert.strictEqual(JSON.parse(webhookBody(testBody.event, "https://crm.test")).livemode, false)
    }))
})

const TestClockNow = Effect.clockWith((clock) => clock.currentTimeMillis)
