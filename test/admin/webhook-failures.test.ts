import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type AttemptResult, type ClaimedDelivery, WebhookDeliveries } from "../../src/Webhooks/Deliveries.ts"
import { WebhookEndpoints } from "../../src/Webhooks/Endpoints.ts"
import { type Answer, type Harness, makeHarness, type Signed, signIn } from "./support.ts"

const day = 86_400_000

const expectError = (answer: Answer, status: number, code: string, field?: string) => {
  expect(answer.status, answer.text).toBe(status)
  expect(answer.body.error.code).toBe(code)
  if (field !== undefined) expect(answer.body.error.field).toBe(field)
}

/**
 * The console's view of failing endpoints (docs/webhooks.md#when-an-endpoint-keeps-failing): each
 * delivery's last error and attempts, "resend failed since", the endpoint's state and the overview's
 * list, through the real admin router on PostgreSQL. Attempts are recorded by the worker's own
 * `WebhookDeliveries.record` at chosen times (the default WEBHOOK_DISABLE_AFTER is 5 days).
 */
describe("failing webhook endpoints in the console API, on PostgreSQL", { timeout: 120_000 }, () => {
  let harness: Harness
  let adminA: Signed
  let viewerA: Signed
  let adminB: Signed
  let endpointId = ""
  let eventId = ""
  const t0 = Date.now()

  /** One attempt of the endpoint's one pending delivery; others claimed meanwhile are given back. */
  const attempt = (result: (claimed: ClaimedDelivery) => AttemptResult) =>
    harness.run(
      Effect.gen(function* () {
        const deliveries = yield* WebhookDeliveries
        const claimed = yield* deliveries.claim({
          limit: 50,
          perEndpoint: 10,
          excludeEndpoints: [],
          leaseMillis: 30_000
        })
        const mine = claimed.filter((c) => c.endpointId === endpointId)
        yield* Effect.forEach(
          claimed.filter((c) => c.endpointId !== endpointId),
          (other) => deliveries.release(other)
        )
        if (mine.length !== 1) return yield* Effect.die(`expected one claim, got ${mine.length}`)
        yield* deliveries.record(mine[0]!, result(mine[0]!))
      }).pipe(Effect.orDie)
    )

  const failed = (at: number, retry: boolean, status: number | null, error: string) => () =>
    ({
      _tag: "Failed",
      status,
      error,
      attemptedAt: at,
      durationMillis: 12,
      retryAt: retry ? Date.now() - 1 : undefined,
      disableEndpoint: false
    }) as const

  const endpointOf = async (signed: Signed) =>
    (await signed.call("GET", "/api/webhooks")).body.items.find((w: { id: string }) => w.id === endpointId)

  const lastAudit = async () => (await adminA.call("GET", "/api/audit")).body.items[0]

  beforeAll(async () => {
    harness = await makeHarness()
    adminA = await signIn(harness, harness.a.admin)
    viewerA = await signIn(harness, harness.a.viewer)
    adminB = await signIn(harness, harness.b.admin)
    const added = await harness.run(
      WebhookEndpoints.use((endpoints) =>
        endpoints.add({
          organizationId: harness.a.organizationId,
          url: "https://93.184.215.14/crm/down",
          events: ["lead.created"]
        })
      ).pipe(Effect.orDie)
    )
    endpointId = added.endpoint.id
    const lead = await harness.publicApi(
      new Request("http://api.test/v1/leads", {
        method: "POST",
        headers: { authorization: `Bearer ${harness.a.key}`, "content-type": "application/json" },
        body: JSON.stringify({ nombre: "Rosa Díaz", telefono: "+52 55 2222 3333" })
      })
    )
    expect(lead.status).toBe(201)
    const [delivery] = await harness.run(
      WebhookDeliveries.use((d) => d.list(endpointId, 1)).pipe(Effect.orDie)
    )
    eventId = delivery!.event_id
  }, 120_000)

  afterAll(() => harness?.close())

  it("shows each delivery's last error and opens its attempts: time, HTTP status or none, the error, duration", async () => {
    await attempt(failed(t0, true, 503, "HTTP 503"))
    await attempt(failed(t0 + 1000, false, null, "connection refused (ECONNREFUSED)"))

    const listed = await viewerA.call("GET", `/api/webhooks/${endpointId}/deliveries`)
    expect(listed.status, listed.text).toBe(200)
    expect(listed.body.items).toEqual([
      {
        event_id: eventId,
        type: "lead.created",
        state: "failed",
        attempts: 2,
        last_status: null,
        last_error: "connection refused (ECONNREFUSED)",
        last_attempt_at: new Date(t0 + 1000).toISOString(),
        next_attempt_at: null
      }
    ])
    const attempts = await viewerA.call("GET", `/api/webhooks/${endpointId}/deliveries/${eventId}/attempts`)
    expect(attempts.status, attempts.text).toBe(200)
    expect(attempts.body).toEqual({
      items: [
        { at: new Date(t0).toISOString(), status: 503, error: "HTTP 503", duration_ms: 12 },
        {
          at: new Date(t0 + 1000).toISOString(),
          status: null,
          error: "connection refused (ECONNREFUSED)",
          duration_ms: 12
        }
      ]
    })
    // The same rows as the CLI's `webhook attempts` reads: one implementation.
    expectError(
      await viewerA.call("GET", `/api/webhooks/${endpointId}/deliveries/${harness.b.eventId}/attempts`),
      404,
      "not_found"
    )
    expectError(
      await viewerA.call("GET", `/api/webhooks/${endpointId}/deliveries/not-a-uuid/attempts`),
      404,
      "not_found"
    )
    expectError(
      await adminB.call("GET", `/api/webhooks/${endpointId}/deliveries/${eventId}/attempts`),
      404,
      "not_found"
    )
  })

  it("says the endpoint is failing since its first failed attempt, with its last error; the overview lists it", async () => {
    expect(await endpointOf(viewerA)).toMatchObject({
      disabled: false,
      disabled_reason: null,
      disabled_at: null,
      failing_since: new Date(t0).toISOString(),
      last_error: "connection refused (ECONNREFUSED)"
    })
    const alerts = await viewerA.call("GET", "/api/overview/webhooks")
    expect(alerts.status, alerts.text).toBe(200)
    expect(alerts.body.items).toEqual([
      {
        id: endpointId,
        url: "https://93.184.215.14/crm/down",
        state: "failing",
        since: new Date(t0).toISOString(),
        disabled_reason: null,
        last_error: "connection refused (ECONNREFUSED)"
      }
    ])
    expect((await adminB.call("GET", "/api/overview/webhooks")).body.items).toEqual([])
  })

  it("queues again the failed deliveries created since a time (admins only, audited) and says how many", async () => {
    const path = `/api/webhooks/${endpointId}/resend-failed`
    expectError(
      await viewerA.call("POST", path, { body: { since: new Date(t0 - day).toISOString() } }),
      403,
      "forbidden"
    )
    expectError(
      await adminA.call("POST", path, { body: { since: "yesterday" } }),
      400,
      "validation_error",
      "since"
    )
    expectError(
      await adminA.call("POST", path, { body: { since: "2026-11-23T10:00" } }),
      400,
      "validation_error",
      "since"
    )
    expectError(await adminA.call("POST", path, { body: {} }), 400, "validation_error", "since")
    expectError(
      await adminB.call("POST", path, { body: { since: new Date(t0 - day).toISOString() } }),
      404,
      "not_found"
    )

    const later = new Date(Date.now() + 3_600_000).toISOString()
    const none = await adminA.call("POST", path, { body: { since: later } })
    expect(none.status, none.text).toBe(200)
    expect(none.body).toEqual({ queued: 0 })

    const since = new Date(t0 - day).toISOString()
    const queued = await adminA.call("POST", path, { body: { since } })
    expect(queued.status, queued.text).toBe(200)
    expect(queued.body).toEqual({ queued: 1 })
    expect(await lastAudit()).toMatchObject({
      operator_email: harness.a.admin.email,
      action: "webhook.resend_failed",
      target: `webhook ${endpointId} since ${since}: 1 queued`
    })
    const [delivery] = (await viewerA.call("GET", `/api/webhooks/${endpointId}/deliveries`)).body.items
    expect(delivery).toMatchObject({ event_id: eventId, state: "pending", attempts: 2 })
    expect((await adminA.call("POST", path, { body: { since } })).body).toEqual({ queued: 0 })
  })

  it("shows an endpoint paused automatically (why, when, last error) on the page and the overview; Resume enables it", async () => {
    const pausedAt = t0 + 6 * day
    await attempt(failed(pausedAt, true, 503, "HTTP 503"))
    const paused = await endpointOf(viewerA)
    expect(paused).toMatchObject({
      disabled: true,
      disabled_reason: "failing",
      disabled_at: new Date(pausedAt).toISOString(),
      failing_since: new Date(t0).toISOString(),
      last_error: "HTTP 503"
    })
    expect((await viewerA.call("GET", "/api/overview/webhooks")).body.items).toEqual([
      {
        id: endpointId,
        url: "https://93.184.215.14/crm/down",
        state: "paused",
        since: new Date(pausedAt).toISOString(),
        disabled_reason: "failing",
        last_error: "HTTP 503"
      }
    ])
    const audit = (await viewerA.call("GET", "/api/audit")).body.items
    expect(audit).toContainEqual(
      expect.objectContaining({
        action: "webhook.auto_disabled",
        target: expect.stringContaining(endpointId)
      })
    )

    expectError(await viewerA.call("POST", `/api/webhooks/${endpointId}/enable`), 403, "forbidden")
    const resumed = await adminA.call("POST", `/api/webhooks/${endpointId}/enable`)
    expect(resumed.status, resumed.text).toBe(200)
    expect(resumed.body).toMatchObject({
      disabled: false,
      disabled_reason: null,
      disabled_at: null,
      failing_since: null,
      last_error: null
    })
    expect(await lastAudit()).toMatchObject({ action: "webhook.enable" })
    expect((await viewerA.call("GET", "/api/overview/webhooks")).body.items).toEqual([])
  })

  it("names an endpoint an operator disabled as such, and leaves it off the overview", async () => {
    await harness.run(
      Effect.flatMap(
        Effect.service(SqlClient.SqlClient),
        (sql) =>
          sql`UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = 'operator' WHERE id = ${endpointId}`
      ).pipe(Effect.orDie)
    )
    expect(await endpointOf(viewerA)).toMatchObject({ disabled: true, disabled_reason: "operator" })
    expect((await viewerA.call("GET", "/api/overview/webhooks")).body.items).toEqual([])
  })
})
