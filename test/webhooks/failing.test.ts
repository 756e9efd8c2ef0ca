import { once } from "node:events"
import { createServer } from "node:http"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ClaimedDelivery } from "../../src/Webhooks/Deliveries.ts"
import { WebhookDeliveries } from "../../src/Webhooks/Deliveries.ts"
import { WebhookEndpoints } from "../../src/Webhooks/Endpoints.ts"
import { describeFailure } from "../../src/Webhooks/Worker.ts"
import { freePort } from "../cluster/support.ts"
import { createDatabase, databaseUrl } from "../support/Database.ts"
import {
  cliJson,
  inProcess,
  newLead,
  postLead,
  type RunningProcess,
  runCli,
  startProcess,
  startReceiver,
  waitFor,
  webhookEnv
} from "./support.ts"

const freshDatabase = async () => databaseUrl(await Effect.runPromise(createDatabase("webhooks")))

const day = 86_400_000

describe("an attempt's error, in one line", () => {
  it("names the failure the way the contract lists them", () => {
    const answered = (status: number) => ({ _tag: "Answered" as const, status, retryAfter: undefined })
    const noAnswer = (reason: "timeout" | "connection" | "blocked", error: string) => ({
      _tag: "NoAnswer" as const,
      reason,
      error
    })
    expect(
      [
        answered(500),
        answered(429),
        answered(301),
        noAnswer("timeout", "no answer within 15000 ms"),
        noAnswer("connection", "ECONNREFUSED"),
        noAnswer("connection", "ECONNRESET"),
        noAnswer("connection", "CERT_HAS_EXPIRED"),
        noAnswer("connection", "ERR_TLS_CERT_ALTNAME_INVALID"),
        noAnswer("connection", "EWHATEVER"),
        noAnswer("blocked", "the host resolves to 10.0.0.8,\na private address")
      ].map(describeFailure)
    ).toEqual([
      "HTTP 500",
      "HTTP 429",
      "redirect: HTTP 301 (not followed)",
      "timeout: no answer within 15000 ms",
      "connection refused (ECONNREFUSED)",
      "connection reset (ECONNRESET)",
      "TLS: CERT_HAS_EXPIRED",
      "TLS: ERR_TLS_CERT_ALTNAME_INVALID",
      "connection error: EWHATEVER",
      "address not allowed: the host resolves to 10.0.0.8, a private address"
    ])
  })
})

const auditRows = (db: ReturnType<typeof inProcess>, endpointId: string) =>
  db.sql<{ action: string; operator_email: string; target: string }>(
    (sql) => sql`
      SELECT action, operator_email, target FROM audit_log
      WHERE action = 'webhook.auto_disabled' AND target LIKE ${`webhook ${endpointId} %`}`
  )

describe("an endpoint that keeps failing (WEBHOOK_DISABLE_AFTER, on PostgreSQL)", () => {
  let db: ReturnType<typeof inProcess>

  beforeAll(async () => {
    db = inProcess(await freshDatabase())
  }, 60_000)

  afterAll(async () => {
    await db?.close()
  })

  /** One attempt of the endpoint's one delivery, recorded as made at `at` (the window is 5 days). */
  const attempt = (endpointId: string, at: number, outcome: "fail" | "ok") =>
    db.run(
      Effect.gen(function* () {
        const deliveries = yield* WebhookDeliveries
        const claimed = yield* deliveries.claim({
          limit: 10,
          perEndpoint: 10,
          excludeEndpoints: [],
          leaseMillis: 30_000
        })
        const mine = claimed.filter((c: ClaimedDelivery) => c.endpointId === endpointId)
        if (mine.length !== 1) return yield* Effect.die(`expected one claim, got ${mine.length}`)
        yield* deliveries.record(
          mine[0]!,
          outcome === "ok"
            ? { _tag: "Delivered", status: 200, attemptedAt: at, durationMillis: 12 }
            : {
                _tag: "Failed",
                status: 503,
                error: "HTTP 503",
                attemptedAt: at,
                durationMillis: 12,
                retryAt: Date.now() - 1,
                disableEndpoint: false
              }
        )
        // The next attempt is due at once (a success leaves nothing pending: queue the event again).
        if (outcome === "ok") yield* deliveries.resend(endpointId, mine[0]!.event.eventId)
      })
    )

  const endpointState = async (organization: string, endpointId: string) => {
    const listed = await db.run(WebhookEndpoints.use((e) => e.list(organization)))
    const endpoint = listed.find((e) => e.id === endpointId)!
    return { disabled: endpoint.disabled, reason: endpoint.disabledReason }
  }

  const endpointWithDelivery = async () => {
    const { organization } = await db.provision()
    const added = await db.addEndpoint(organization, "http://127.0.0.1:9/hook")
    await db.run(WebhookDeliveries.use((d) => d.sendTest(added.endpoint.id)))
    return { organization, endpointId: added.endpoint.id }
  }

  it("pauses only after the whole window without a success and three failed attempts in it; audits it once", async () => {
    const { organization, endpointId } = await endpointWithDelivery()
    const t = Date.UTC(2026, 0, 1)
    await attempt(endpointId, t, "fail")
    await attempt(endpointId, t + 1 * day, "fail")
    await attempt(endpointId, t + 2 * day, "fail")
    expect(await endpointState(organization, endpointId)).toEqual({ disabled: false, reason: null })
    await attempt(endpointId, t + 5 * day, "fail")
    expect(await endpointState(organization, endpointId)).toEqual({ disabled: true, reason: "failing" })
    expect(await auditRows(db, endpointId)).toEqual([
      {
        action: "webhook.auto_disabled",
        operator_email: "system",
        target: `webhook ${endpointId} http://127.0.0.1:9/hook`
      }
    ])
    // Paused: nothing is claimed for it, and its delivery stays pending.
    const claimed = await db.run(
      WebhookDeliveries.use((d) =>
        d.claim({ limit: 10, perEndpoint: 10, excludeEndpoints: [], leaseMillis: 30_000 })
      )
    )
    expect(claimed.filter((c) => c.endpointId === endpointId)).toEqual([])
    expect((await db.deliveries(endpointId)).map((d) => [d.state, d.last_error])).toEqual([
      ["pending", "HTTP 503"]
    ])

    // Enabled: the reason goes and the clock starts again.
    const enabled = await db.run(WebhookEndpoints.use((e) => e.enable(endpointId)))
    expect([enabled.disabled, enabled.disabledReason]).toEqual([false, null])
    await attempt(endpointId, t + 6 * day, "fail")
    await attempt(endpointId, t + 7 * day, "fail")
    await attempt(endpointId, t + 8 * day, "fail")
    expect(await endpointState(organization, endpointId)).toEqual({ disabled: false, reason: null })
    await attempt(endpointId, t + 11 * day, "fail")
    expect(await endpointState(organization, endpointId)).toEqual({ disabled: true, reason: "failing" })
    expect(await auditRows(db, endpointId)).toHaveLength(2)
  })

  it("one success resets the clock; failed attempts count over the whole time without a success, however sparse", async () => {
    const { organization, endpointId } = await endpointWithDelivery()
    const t = Date.UTC(2026, 1, 1)
    await attempt(endpointId, t, "fail")
    await attempt(endpointId, t + 1 * day, "fail")
    await attempt(endpointId, t + 2 * day, "fail")
    await attempt(endpointId, t + 3 * day, "ok")
    await attempt(endpointId, t + 4 * day, "fail")
    await attempt(endpointId, t + 20 * day, "fail")
    // Failing since t + 4 days, for sixteen days, but only two failed attempts in that time.
    expect(await endpointState(organization, endpointId)).toEqual({ disabled: false, reason: null })
    // The third, ten days after the second: no three failures fall in any five days, but the endpoint
    // has not succeeded since t + 4 days and three attempts failed in that time.
    await attempt(endpointId, t + 30 * day, "fail")
    expect(await endpointState(organization, endpointId)).toEqual({ disabled: true, reason: "failing" })
    expect(await auditRows(db, endpointId)).toHaveLength(1)
  })

  it("counts only the failed attempts since the last success, not those before it", async () => {
    const { organization, endpointId } = await endpointWithDelivery()
    const t = Date.UTC(2026, 1, 15)
    await attempt(endpointId, t, "fail")
    await attempt(endpointId, t + 1 * day, "fail")
    await attempt(endpointId, t + 2 * day, "ok")
    await attempt(endpointId, t + 3 * day, "fail")
    await attempt(endpointId, t + 9 * day, "fail")
    // Four failed attempts in all, two since the success: not paused.
    expect(await endpointState(organization, endpointId)).toEqual({ disabled: false, reason: null })
    await attempt(endpointId, t + 10 * day, "fail")
    expect(await endpointState(organization, endpointId)).toEqual({ disabled: true, reason: "failing" })
  })

  it("keeps every attempt, oldest first; they go with their delivery when it is pruned or the endpoint removed", async () => {
    const { endpointId } = await endpointWithDelivery()
    const t = Date.UTC(2026, 2, 1)
    await attempt(endpointId, t, "fail")
    await attempt(endpointId, t + 1000, "ok")
    const [delivery] = await db.deliveries(endpointId)
    const count = () =>
      db.sql<{ n: number }>(
        (sql) => sql`SELECT count(*)::int AS n FROM webhook_attempts WHERE endpoint_id = ${endpointId}`
      )
    expect(await count()).toEqual([{ n: 2 }])
    await db.run(WebhookEndpoints.use((e) => e.remove(endpointId)))
    expect(await count()).toEqual([{ n: 0 }])
    expect(delivery!.last_error).toBe(null)

    const other = await endpointWithDelivery()
    await attempt(other.endpointId, t, "fail")
    await db.sql(
      (sql) => sql`UPDATE webhook_deliveries SET state = 'failed', next_attempt_at = NULL,
                   created_at = ${new Date(t)} WHERE endpoint_id = ${other.endpointId} RETURNING 1`
    )
    await db.run(WebhookDeliveries.use((d) => d.prune(t + 1)))
    expect(
      await db.sql<{ n: number }>(
        (sql) => sql`SELECT count(*)::int AS n FROM webhook_attempts WHERE endpoint_id = ${other.endpointId}`
      )
    ).toEqual([{ n: 0 }])
  })
})

describe("a receiver that refuses connections, through serve and the CLI", () => {
  let env: Record<string, string>
  let db: ReturnType<typeof inProcess>
  let server: RunningProcess | undefined

  beforeAll(async () => {
    const url = await freshDatabase()
    env = webhookEnv(url, {
      WEBHOOK_DISABLE_AFTER: "1500ms",
      WEBHOOK_RETRY_SCHEDULE: Array.from({ length: 30 }, () => "200ms").join(",")
    })
    db = inProcess(url)
  }, 60_000)

  afterAll(async () => {
    await server?.stop()
    await db?.close()
  })

  it("records every attempt, pauses the endpoint as failing, and enable resumes its waiting deliveries", async () => {
    const { organization, key } = await db.provision()
    const port = await freePort()
    const url = `http://127.0.0.1:${port}/hook`
    const added = await cliJson(env, ["webhook", "add", "--org", organization, "--url", url])
    server = await startProcess("serve", env)
    const lead = await postLead(server.url, key, newLead())
    expect(lead.status).toBe(201)

    await waitFor(
      async () => (await db.run(WebhookEndpoints.use((e) => e.list(organization))))[0]!.disabled,
      20_000,
      "the endpoint paused"
    )
    const [listed] = await cliJson(env, ["webhook", "list", "--org", organization])
    expect(listed).toEqual({
      id: added.id,
      url,
      events: ["lead.created", "lead.enriched", "lead.erased"],
      test_events: false,
      disabled: true,
      disabled_reason: "failing",
      created_at: expect.any(String)
    })
    expect(await auditRows(db, added.id)).toHaveLength(1)

    const [delivery] = await cliJson(env, ["webhook", "deliveries", "--id", added.id])
    expect(delivery).toEqual({
      event_id: expect.any(String),
      type: "lead.created",
      state: "pending",
      attempts: expect.any(Number),
      last_status: null,
      last_error: "connection refused (ECONNREFUSED)",
      last_attempt_at: expect.any(String),
      next_attempt_at: expect.any(String)
    })
    const attempts = await cliJson(env, [
      "webhook",
      "attempts",
      "--id",
      added.id,
      "--event",
      delivery.event_id
    ])
    expect(attempts.length).toBe(delivery.attempts)
    expect(attempts.length).toBeGreaterThanOrEqual(3)
    for (const row of attempts) {
      expect(Object.keys(row)).toEqual(["at", "status", "error", "duration_ms"])
      expect(row.status).toBe(null)
      expect(row.error).toBe("connection refused (ECONNREFUSED)")
      expect(row.duration_ms).toBeGreaterThanOrEqual(0)
    }
    const times = attempts.map((row: { at: string }) => Date.parse(row.at))
    expect(times).toEqual([...times].sort((a, b) => a - b))
    expect(times.at(-1)! - times[0]!).toBeGreaterThanOrEqual(1500)

    // The receiver comes up; nothing is sent until an operator enables the endpoint.
    const received: Array<string> = []
    const receiver = createServer((request, response) => {
      received.push(request.headers["webhook-id"] as string)
      response.writeHead(204).end()
    })
    receiver.listen(port, "127.0.0.1")
    await once(receiver, "listening")
    try {
      await new Promise((resolve) => setTimeout(resolve, 1000))
      expect(received).toEqual([])
      expect(await cliJson(env, ["webhook", "enable", "--id", added.id])).toEqual({
        id: added.id,
        disabled: false
      })
      await waitFor(() => received.length >= 1, 10_000, "the waiting delivery")
      expect(received[0]).toBe(delivery.event_id)
      const [after] = await cliJson(env, ["webhook", "list", "--org", organization])
      expect([after.disabled, after.disabled_reason]).toEqual([false, null])
      await waitFor(
        async () => (await db.deliveries(added.id))[0]!.state === "delivered",
        5_000,
        "the delivery recorded"
      )
      const [delivered] = await cliJson(env, ["webhook", "deliveries", "--id", added.id])
      expect([delivered.state, delivered.last_status, delivered.last_error]).toEqual(["delivered", 204, null])
      const last = (
        await cliJson(env, ["webhook", "attempts", "--id", added.id, "--event", delivery.event_id])
      ).at(-1)
      expect([last.status, last.error]).toEqual([204, null])
      expect(
        await db.sql<{ failing_since: Date | null }>(
          (sql) => sql`SELECT failing_since FROM webhook_endpoints WHERE id = ${added.id}`
        )
      ).toEqual([{ failing_since: null }])
    } finally {
      receiver.closeAllConnections()
      await new Promise((resolve) => receiver.close(resolve))
    }
  }, 90_000)

  it("resend-failed queues again the failed deliveries created since a time; refuses bad lines", async () => {
    await server?.stop()
    server = undefined
    const { organization } = await db.provision()
    const receiver = await startReceiver(() => ({ status: 500 }))
    try {
      const added = await db.addEndpoint(organization, receiver.url())
      const first = await db.run(WebhookDeliveries.use((d) => d.sendTest(added.endpoint.id)))
      const second = await db.run(WebhookDeliveries.use((d) => d.sendTest(added.endpoint.id)))
      // Both failed for good, the first long ago.
      await db.sql(
        (sql) => sql`
          UPDATE webhook_deliveries SET state = 'failed', next_attempt_at = NULL,
            last_error = 'HTTP 500', created_at = CASE event_id WHEN ${first.eventId}::uuid
              THEN ${new Date(Date.now() - 2 * 86_400_000)} ELSE created_at END
          WHERE endpoint_id = ${added.endpoint.id} RETURNING 1`
      )
      const since = new Date(Date.now() - 86_400_000).toISOString()
      expect(
        await cliJson(env, ["webhook", "resend-failed", "--id", added.endpoint.id, "--since", since])
      ).toEqual({ queued: 1 })
      const states = async () =>
        Object.fromEntries((await db.deliveries(added.endpoint.id)).map((d) => [d.event_id, d.state]))
      expect(await states()).toEqual({ [first.eventId]: "failed", [second.eventId]: "pending" })
      server = await startProcess("serve", env)
      await waitFor(() => receiver.received.length >= 1, 10_000, "the resent delivery")
      expect(receiver.received[0]!.headers["webhook-id"]).toBe(second.eventId)
      expect(
        await cliJson(env, [
          "webhook",
          "resend-failed",
          "--id",
          added.endpoint.id,
          "--since",
          "2026-01-01T00:00:00Z"
        ])
      ).toEqual({ queued: 1 })

      const human = await runCli(env, [
        "webhook",
        "resend-failed",
        "--id",
        added.endpoint.id,
        "--since",
        "2999-01-01"
      ])
      expect(human.code).toBe(0)
      expect(human.stdout).toMatch(/^0 failed deliveries since 2999-01-01T00:00:00.000Z queued again/)

      for (const args of [
        ["webhook", "resend-failed", "--id", added.endpoint.id, "--since", "yesterday"],
        ["webhook", "resend-failed", "--id", crypto.randomUUID(), "--since", since],
        ["webhook", "attempts", "--id", added.endpoint.id, "--event", crypto.randomUUID()],
        ["webhook", "attempts", "--id", crypto.randomUUID(), "--event", first.eventId]
      ]) {
        const result = await runCli(env, [...args, "--json"])
        expect(result.code, args.join(" ")).toBe(1)
        expect(result.stdout).toBe("")
        expect(result.stderr.trim().split("\n"), result.stderr).toHaveLength(1)
      }
    } finally {
      await receiver.close()
    }
  }, 90_000)
})
