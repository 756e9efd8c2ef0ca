import { Context, Duration, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { statementTimeout } from "../../src/Platform/Sql/Sql.ts"
import { exchange, type FuzzTarget } from "../fuzz/support.ts"
import {
  freshDatabaseUrl,
  inspector,
  newLead,
  type Sent,
  sendLead,
  sleep,
  startPostgresTarget
} from "./support.ts"

const poolSize = 4

/**
 * What the server promises: each store step of a request waits at most the statement timeout (the
 * key check, the idempotency reservation, the phone match, the write and, after a failed write, the
 * release), so no answer takes longer than all of them in a row, plus a second for this process's
 * 400 clients and the server sharing one event loop.
 */
const storeSteps = 5
const answerBound = storeSteps * Duration.toMillis(statementTimeout) + 1_000

/**
 * Slow queries take every connection of the pool (4 here): requests wait a bounded time for one,
 * answer 503 with nothing written, the process keeps answering what needs no database, and
 * everything works again once the slow queries end.
 */
describe("fault: the connection pool is exhausted by slow queries", () => {
  let target: FuzzTarget
  let db: ReturnType<typeof inspector>
  let url: string

  beforeAll(async () => {
    url = await freshDatabaseUrl()
    target = await startPostgresTarget(url, poolSize)
    db = inspector(url)
  }, 60_000)

  afterAll(async () => {
    await target?.close()
    await db?.close()
  })

  const serviceSql = () =>
    Context.get(target.context as unknown as Context.Context<SqlClient.SqlClient>, SqlClient.SqlClient)

  const expectUnavailable = (answers: ReadonlyArray<Sent>, bound: number) => {
    const waits = answers.map((a) => Math.round(a.elapsed))
    process.stdout.write(`[faults] 503 after ${Math.min(...waits)}-${Math.max(...waits)} ms\n`)
    for (const a of answers) {
      expect(a.status, JSON.stringify(a.json)).toBe(503)
      expect(a.json.error?.code).toBe("temporarily_unavailable")
      expect(a.retryAfter).toBe("5")
      expect(a.elapsed, "a bounded wait").toBeLessThan(bound)
    }
  }

  /** Waits until `count` (one row, `n`) reads `expected`: what the test set up holds in PostgreSQL. */
  const holding = (count: string, expected: number) =>
    vi.waitFor(
      async () => {
        const [row] = await db.query<{ n: number }>(count)
        expect(row!.n).toBe(expected)
      },
      { timeout: 10_000, interval: 20 }
    )

  const index = async () => {
    const started = performance.now()
    const answer = await exchange(target, { method: "GET", path: "/v1", headers: [] })
    return { status: answer.status, elapsed: performance.now() - started }
  }

  it("every connection held by pg_sleep: 503 within the statement timeout, GET /v1 unaffected, then recovery", async () => {
    const sql = serviceSql()
    const sleepers = Promise.all(
      Array.from({ length: poolSize }, () => Effect.runPromise(Effect.orDie(sql`SELECT pg_sleep(5)`)))
    )
    await holding(
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND state = 'active' AND query LIKE 'SELECT pg_sleep(5)%'`,
      poolSize
    )
    const leads = Array.from({ length: 12 }, () => newLead("pool"))
    const [answers, health] = await Promise.all([
      Promise.all(leads.map((lead) => sendLead(target, lead))),
      index()
    ])
    expectUnavailable(answers, 4_500)
    expect(health.status).toBe(200)
    expect(health.elapsed, "GET /v1 needs no connection").toBeLessThan(200)
    await sleepers

    const [row] = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM leads WHERE telefono = ANY($1::text[])",
      [leads.map((l) => l.phone)]
    )
    expect(row!.n, "a 503 wrote nothing").toBe(0)
    const retried = await Promise.all(leads.map((lead) => sendLead(target, lead)))
    for (const r of retried) expect(r.status, JSON.stringify(r.json)).toBe(201)
  }, 30_000)

  it("writes stuck behind a lock: 503, the stuck statements are cancelled, nothing is written late", async () => {
    const leads = Array.from({ length: 8 }, () => newLead("locked"))
    const holder = db.transaction(["LOCK TABLE leads IN ACCESS EXCLUSIVE MODE", "SELECT pg_sleep(4)"])
    await holding(
      `SELECT count(*)::int AS n FROM pg_locks
       WHERE database = (SELECT oid FROM pg_database WHERE datname = current_database())
         AND relation = 'leads'::regclass AND mode = 'AccessExclusiveLock' AND granted`,
      1
    )
    const [answers, health] = await Promise.all([
      Promise.all(leads.map((lead) => sendLead(target, lead))),
      index()
    ])
    expectUnavailable(answers, 4_500)
    expect(health.status).toBe(200)
    await holder
    await sleep(1_000)
    const [row] = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM leads WHERE telefono = ANY($1::text[])",
      [leads.map((l) => l.phone)]
    )
    expect(row!.n, "no statement answered 503 and committed later").toBe(0)
    const [stuck] = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid()"
    )
    expect(stuck!.n, "no statement still running").toBe(0)
    const retried = await Promise.all(leads.map((lead) => sendLead(target, lead)))
    for (const r of retried) expect(r.status, JSON.stringify(r.json)).toBe(201)
  }, 30_000)

  it("writes that finish around their deadline: each answer says what PostgreSQL did", async () => {
    const answers: Array<Sent> = []
    for (const offset of [-40, -20, -10, 0, 10, 20, 40]) {
      const leads = Array.from({ length: 3 }, () => newLead("deadline"))
      const holder = db.transaction([
        "LOCK TABLE leads IN ACCESS EXCLUSIVE MODE",
        `SELECT pg_sleep(${(300 + Duration.toMillis(statementTimeout) + offset) / 1000})`
      ])
      await sleep(300)
      answers.push(...(await Promise.all(leads.map((lead) => sendLead(target, lead)))))
      await holder
    }
    for (const a of answers) expect([201, 503], JSON.stringify(a.json)).toContain(a.status)
    const rows = await db.query<{ telefono: string }>(
      "SELECT telefono FROM leads WHERE telefono = ANY($1::text[])",
      [answers.map((a) => a.phone)]
    )
    expect(new Set(rows.map((row) => row.telefono)), "written exactly when answered 201").toEqual(
      new Set(answers.filter((a) => a.status === 201).map((a) => a.phone))
    )
  }, 60_000)

  it("a burst far beyond the pool: every request answers within a bound, none fails otherwise, memory stays flat", async () => {
    const rssBefore = process.memoryUsage().rss
    const leads = Array.from({ length: 400 }, () => newLead("burst"))
    const answers = await Promise.all(leads.map((lead) => sendLead(target, lead)))
    const statuses = new Set(answers.map((a) => a.status))
    for (const status of statuses) expect([201, 503]).toContain(status)
    expect(Math.max(...answers.map((a) => a.elapsed)), "bounded wait").toBeLessThan(answerBound)
    const created = answers.filter((a) => a.status === 201)
    expect(created.length).toBeGreaterThan(0)
    const [row] = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM leads WHERE telefono = ANY($1::text[])",
      [answers.filter((a) => a.status === 503).map((a) => a.phone)]
    )
    expect(row!.n, "a 503 wrote nothing").toBe(0)
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(200 * 2 ** 20)
    expect((await index()).status).toBe(200)
  }, 30_000)
})
