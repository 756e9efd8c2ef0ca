import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { type DedicatedCluster, startDedicatedCluster } from "../faults/support.ts"
import { createDatabase, databaseUrl } from "../support/Database.ts"
import {
  inProcess,
  newLead,
  postLead,
  type Receiver,
  type RunningProcess,
  sleep,
  startProcess,
  startReceiver,
  waitFor,
  webhookEnv
} from "./support.ts"

const cleanup: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => {})
})

const started = async <
  A extends { close?: () => Promise<unknown>; stop?: (s?: NodeJS.Signals) => Promise<unknown> }
>(
  thing: A
) => {
  cleanup.push(() => (thing.stop ? thing.stop("SIGKILL") : thing.close!()))
  return thing
}

const freshDatabase = async () => databaseUrl(await Effect.runPromise(createDatabase("webhooks")))

type Db = ReturnType<typeof inProcess>

const eventIds = async (db: Db) =>
  (
    await db.sql(
      (sql) =>
        sql<{
          event_id: string
          state: string
        }>`SELECT event_id, state FROM webhook_deliveries ORDER BY created_at`
    )
  ).map((row) => row as { event_id: string; state: string })

const allDelivered = async (db: Db, expected: number) => {
  const rows = await eventIds(db)
  return rows.length === expected && rows.every((row) => row.state === "delivered")
}

const receivedIds = (receiver: Receiver) => receiver.received.map((r) => r.headers["webhook-id"] as string)

describe("webhooks are never lost", () => {
  it("SIGKILL during deliveries, then a restart: every event delivered, repeats only with the same webhook-id", async () => {
    const url = await freshDatabase()
    const env = webhookEnv(url, { WEBHOOK_TIMEOUT: "1s" })
    const db = await started(inProcess(url))
    const receiver = await started(await startReceiver(() => ({ status: 200, delayMillis: 150 })))
    const { organization, key } = await db.provision()
    await db.addEndpoint(organization, receiver.url())
    let server: RunningProcess = await started(await startProcess("serve", env))
    const leads = 30
    await Promise.all(Array.from({ length: leads }, () => postLead(server.url, key, newLead())))
    await waitFor(() => receiver.received.length >= 5, 10_000, "the first deliveries")
    await server.stop("SIGKILL")
    const atKill = receiver.received.length
    expect(atKill).toBeLessThan(leads)

    server = await started(await startProcess("serve", env))
    await waitFor(() => allDelivered(db, leads), 60_000, "every event delivered after the restart")
    const events = new Set((await eventIds(db)).map((row) => row.event_id))
    const received = receivedIds(receiver)
    expect(new Set(received)).toEqual(events)
    for (const id of received) expect(events.has(id)).toBe(true)
    expect(received.length - events.size).toBeLessThanOrEqual(8)
  }, 150_000)

  it("SIGTERM mid-attempt gives the claim back: a restarted instance sends again at once, not after the lease", async () => {
    const url = await freshDatabase()
    const env = webhookEnv(url, { WEBHOOK_TIMEOUT: "10s" })
    const db = await started(inProcess(url))
    const receiver = await started(await startReceiver(() => ({ status: 200, delayMillis: 4_000 })))
    const { organization, key } = await db.provision()
    await db.addEndpoint(organization, receiver.url())
    const first = await started(await startProcess("serve", env))
    await postLead(first.url, key, newLead())
    await waitFor(() => receiver.received.length === 1, 10_000, "the first attempt")
    expect(await first.stop("SIGTERM")).toBe(0)
    const stoppedAt = Date.now()
    await started(await startProcess("serve", env))
    await waitFor(() => receiver.received.length === 2, 20_000, "the attempt again")
    expect(Date.now() - stoppedAt).toBeLessThan(15_000)
    expect(receiver.received[1]!.headers["webhook-id"]).toBe(receiver.received[0]!.headers["webhook-id"])
    await waitFor(() => allDelivered(db, 1), 10_000, "the delivery recorded")
  }, 150_000)

  it("PostgreSQL stopped and started mid-delivery: the worker carries on and delivers everything", async () => {
    const cluster: DedicatedCluster = await startDedicatedCluster()
    cleanup.push(() => cluster.release())
    await cluster.createDatabase("webhooks")
    const url = cluster.url("webhooks")
    const env = webhookEnv(url, { WEBHOOK_TIMEOUT: "1s" })
    const db = await started(inProcess(url))
    const receiver = await started(await startReceiver(() => ({ status: 200, delayMillis: 300 })))
    const { organization, key } = await db.provision()
    await db.addEndpoint(organization, receiver.url())
    const server = await started(await startProcess("serve", env))
    await Promise.all(Array.from({ length: 10 }, () => postLead(server.url, key, newLead())))
    await waitFor(() => receiver.received.length >= 1, 10_000, "a first delivery")
    await cluster.stop("immediate")
    await sleep(3_000)
    await cluster.start()
    const deadline = Date.now() + 30_000
    let posted = 0
    while (posted < 5 && Date.now() < deadline) {
      const response = await postLead(server.url, key, newLead()).catch(() => undefined)
      if (response?.status === 201) posted++
      else await sleep(500)
    }
    expect(posted).toBe(5)
    await waitFor(
      () => allDelivered(db, 15).catch(() => false),
      60_000,
      "every event delivered after the outage"
    )
    const events = new Set((await eventIds(db)).map((row) => row.event_id))
    expect(new Set(receivedIds(receiver))).toEqual(events)
    expect(
      server.logs().some((line) => line.msg === "webhook worker resumed" || line.msg === "webhook attempt")
    ).toBe(true)
  }, 150_000)

  it("a hanging endpoint holds only its own slots: bounded in flight, other endpoints delivered at once", async () => {
    const url = await freshDatabase()
    const env = webhookEnv(url, {
      WEBHOOK_TIMEOUT: "3s",
      WEBHOOK_RETRY_SCHEDULE: "1m",
      WEBHOOK_CONCURRENCY: "4",
      WEBHOOK_CONCURRENCY_PER_ENDPOINT: "2"
    })
    const db = await started(inProcess(url))
    const receiver = await started(
      await startReceiver((request) => (request.path === "/hang" ? "hang" : { status: 200 }))
    )
    const { organization, key } = await db.provision()
    await db.addEndpoint(organization, receiver.url("/hang"))
    await db.addEndpoint(organization, receiver.url("/ok"))
    const server = await started(await startProcess("serve", env))
    const leads = 10
    const sentAt = Date.now()
    await Promise.all(Array.from({ length: leads }, () => postLead(server.url, key, newLead())))
    await waitFor(
      () => receiver.received.filter((r) => r.path === "/ok").length === leads,
      5_000,
      "every event at the healthy endpoint"
    )
    const okDone = Math.max(...receiver.received.filter((r) => r.path === "/ok").map((r) => r.at))
    expect(okDone - sentAt).toBeLessThan(3_000)
    await sleep(4_000)
    expect(receiver.mostHanging()).toBe(2)
    expect(receiver.received.filter((r) => r.path === "/hang").length).toBeGreaterThanOrEqual(4)
  }, 150_000)

  it("two instances and one receiver: each event delivered exactly once", async () => {
    const url = await freshDatabase()
    const env = webhookEnv(url)
    const db = await started(inProcess(url))
    const receiver = await started(await startReceiver(() => ({ status: 200, delayMillis: 20 })))
    const { organization, key } = await db.provision()
    await db.addEndpoint(organization, receiver.url())
    const [a, b] = await Promise.all([
      started(await startProcess("serve", env)),
      started(await startProcess("serve", env))
    ])
    const leads = 60
    await Promise.all(
      Array.from({ length: leads }, (_, i) => postLead((i % 2 === 0 ? a : b).url, key, newLead()))
    )
    await waitFor(() => allDelivered(db, leads), 60_000, "every event delivered")
    await sleep(1_000)
    const received = receivedIds(receiver)
    expect(received).toHaveLength(leads)
    expect(new Set(received).size).toBe(leads)
    const byInstance = [a, b].map(
      (server) => server.logs().filter((line) => line.msg === "webhook attempt").length
    )
    expect(byInstance[0]! + byInstance[1]!).toBe(leads)
  }, 150_000)

  it("`lead-intake worker` delivers alone while serve runs with WEBHOOK_WORKER=false", async () => {
    const url = await freshDatabase()
    const db = await started(inProcess(url))
    const receiver = await started(await startReceiver())
    const { organization, key } = await db.provision()
    await db.addEndpoint(organization, receiver.url())
    const server = await started(await startProcess("serve", webhookEnv(url, { WEBHOOK_WORKER: "false" })))
    expect((await postLead(server.url, key, newLead())).status).toBe(201)
    await sleep(2_000)
    expect(receiver.received).toHaveLength(0)
    const worker = await started(await startProcess("worker", webhookEnv(url)))
    await waitFor(() => receiver.received.length === 1, 10_000, "the worker's delivery")
    expect((await postLead(server.url, key, newLead())).status).toBe(201)
    await waitFor(() => receiver.received.length === 2, 5_000, "a delivery woken by NOTIFY")
    const attempts = (running: typeof worker) =>
      running.logs().filter((line) => line.msg === "webhook attempt").length
    // The attempt is logged once its answer is recorded, after the receiver has the request.
    await waitFor(() => attempts(worker) === 2, 5_000, "the worker's log of its second attempt")
    expect(attempts(server)).toBe(0)
    for (const running of [server, worker]) {
      expect(
        running.logs().filter((line) => String(line.msg).startsWith("WEBHOOK_ALLOW_PRIVATE is set"))
      ).toHaveLength(1)
    }
    expect(attempts(worker)).toBe(2)
    expect(await worker.stop("SIGTERM")).toBe(0)
  }, 150_000)
})
