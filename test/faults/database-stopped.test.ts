import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { FuzzTarget } from "../fuzz/support.ts"
import { type Fixture, seed } from "../support/Client.ts"
import {
  type DedicatedCluster,
  inspector,
  newLead,
  type Sent,
  sendLead,
  sleep,
  startDedicatedCluster,
  startPostgresTarget
} from "./support.ts"

/** A request as sent, with the origin whose key it carried. */
type SentBy = Sent & { readonly fixture: Fixture }

/**
 * PostgreSQL crashes (`pg_ctl stop -m immediate`) under a steady stream of creates from two
 * origins, stays down for a few seconds and comes back on the same port. The service is never
 * restarted.
 */
describe("fault: the database stops mid-load", () => {
  let cluster: DedicatedCluster
  let target: FuzzTarget
  let db: ReturnType<typeof inspector>
  /** The target's origin and a second one, of another organization: the clients take turns with their keys. */
  let origins: ReadonlyArray<Fixture>

  beforeAll(async () => {
    cluster = await startDedicatedCluster()
    await cluster.createDatabase("faults")
    target = await startPostgresTarget(cluster.url("faults"), 10)
    db = inspector(cluster.url("faults"))
    const second = await Effect.runPromise(
      seed({ rateLimit: 1_000_000 }).pipe(Effect.provide(Layer.succeedContext(target.context)))
    )
    origins = [target.fixture, second]
  }, 90_000)

  afterAll(async () => {
    await target?.close()
    await db?.close()
    await cluster?.release()
  })

  it("answers 503 within 2 s while it is down, recovers without a restart, loses no acknowledged lead, and logs every request under the origin whose key it carried", async () => {
    const sent: Array<SentBy> = []
    let stoppedAt = Number.POSITIVE_INFINITY
    let restartedAt = Number.POSITIVE_INFINITY
    let done = false
    /** A client sending one create after another with `fixture`'s key while `going()`. */
    const client = async (going: () => boolean, fixture: Fixture) => {
      while (going()) {
        sent.push({ ...(await sendLead(target, newLead("outage"), 10_000, fixture)), fixture })
        await sleep(5)
      }
    }
    const workers = Array.from({ length: 8 }, (_, index) => client(() => !done, origins[index % 2]!))

    await sleep(1_000)
    const stopping = performance.now()
    await cluster.stop("immediate")
    stoppedAt = performance.now()
    // A write in flight at the crash has lost its answer and asks the database until its request's
    // deadline (docs/contract.md#5-idempotency), so a worker caught in one can stay busy
    // past the whole outage. Two more clients start with the outage: what a new request meets then.
    const probes = Array.from({ length: 2 }, (_, index) =>
      client(() => performance.now() < stoppedAt + 2_500, origins[index % 2]!)
    )
    await sleep(3_000)
    await Promise.all(probes)
    const starting = performance.now()
    await cluster.start()
    restartedAt = performance.now()

    const recovered = async () => {
      const deadline = performance.now() + 20_000
      while (performance.now() < deadline) {
        const after = sent.filter((s) => s.startedAt > restartedAt && s.status === 201)
        if (after.length >= 20) return after.length
        await sleep(100)
      }
      return 0
    }
    const createdAfterRestart = await recovered()
    done = true
    await Promise.all(workers)

    const before = sent.filter((s) => s.startedAt + s.elapsed < stopping)
    const down = sent.filter((s) => s.startedAt > stoppedAt && s.startedAt + s.elapsed < starting)
    const straddling = sent.filter((s) => !before.includes(s) && !down.includes(s))

    expect(before.length, "creates before the crash").toBeGreaterThan(10)
    expect(
      before.every((s) => s.status === 201),
      "all 201 before the crash"
    ).toBe(true)
    expect(down.length, "requests while the database was down").toBeGreaterThan(20)
    for (const s of down) {
      expect(s.status, JSON.stringify(s.json)).toBe(503)
      expect(s.json.error?.code).toBe("temporarily_unavailable")
      expect(s.retryAfter).toBe("5")
      expect(s.elapsed, "503 within 2 s").toBeLessThan(2_000)
    }
    // In flight at the crash: a write whose connection was lost after it was sent may have committed (500).
    for (const s of straddling) expect([201, 500, 503], JSON.stringify(s.json)).toContain(s.status)
    process.stdout.write(
      `[faults] outage: ${before.length} created before, ${down.length} answered 503 while down ` +
        `(slowest ${Math.round(Math.max(...down.map((s) => s.elapsed)))} ms), ${straddling.length} in flight at the crash\n`
    )
    expect(createdAfterRestart, "creates after the restart, same process").toBeGreaterThanOrEqual(20)

    const acknowledged = sent.filter((s) => s.status === 201)
    const stored = await db.query<{ id: string; telefono: string }>(
      "SELECT id, telefono FROM leads WHERE id = ANY($1::uuid[])",
      [acknowledged.map((s) => s.json.lead_id as string)]
    )
    const storedIds = new Map(stored.map((row) => [row.id, row.telefono]))
    for (const s of acknowledged)
      expect(storedIds.get(s.json.lead_id as string), `lead of ${s.phone}`).toBe(s.phone)

    // A request cut off mid-flight wrote nothing and holds no key (its transaction rolled back with
    // its connection); a retry may still meet 409 idempotency_in_progress while a first attempt runs.
    const unanswered = sent.filter((s) => s.status !== 201)
    const finals: Array<SentBy> = []
    const retryDeadline = performance.now() + 40_000
    const retryOne = async (lead: SentBy) => {
      while (true) {
        const answer = { ...(await sendLead(target, lead, 10_000, lead.fixture)), fixture: lead.fixture }
        if (answer.status !== 409 && answer.status !== 503) {
          if (lead.status === 503) expect(answer.json.replay, "a 503 wrote nothing").toBeUndefined()
          return finals.push(answer)
        }
        if (performance.now() > retryDeadline) return finals.push(answer)
        await sleep(answer.status === 409 ? 1_000 : 500)
      }
    }
    const queue = [...unanswered]
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let lead = queue.shift(); lead !== undefined; lead = queue.shift()) await retryOne(lead)
      })
    )
    for (const r of finals) expect(r.status, JSON.stringify(r.json)).toBe(201)
    const counts = await db.query<{ telefono: string; n: number }>(
      "SELECT telefono, count(*)::int AS n FROM leads WHERE telefono = ANY($1::text[]) GROUP BY telefono",
      [sent.map((s) => s.phone)]
    )
    expect(counts.length, "every request's lead exists after retries").toBe(sent.length)
    expect(
      counts.every((row) => row.n === 1),
      "exactly once"
    ).toBe(true)

    // The request log: every answered request has its row, written once the database answered, under
    // the origin whose key it carried (a 503 whose key could not be checked included), never unattributed.
    const answered = [...sent, ...finals].filter((s) => s.requestId !== null)
    expect(answered.length, "every answer carries X-Request-Id").toBe(sent.length + finals.length)
    const requestIds = answered.map((s) => s.requestId!)
    let rows: ReadonlyArray<{ request_id: string; origin_id: string | null; key_prefix: string | null }> = []
    const logDeadline = performance.now() + 20_000
    do {
      rows = await db.query(
        // a row of no origin lands in unattributed_requests
        `SELECT request_id, origin_id, key_prefix FROM logged_requests WHERE request_id = ANY($1)
         UNION ALL SELECT request_id, NULL, key_prefix FROM unattributed_requests WHERE request_id = ANY($1)`,
        [requestIds]
      )
      if (rows.length >= requestIds.length) break
      await sleep(250)
    } while (performance.now() < logDeadline)
    const rowOf = new Map(rows.map((row) => [row.request_id, row]))
    const misfiled = answered.flatMap((s) => {
      const row = rowOf.get(s.requestId!)
      return row?.origin_id === s.fixture.originId && row.key_prefix === s.fixture.prefix
        ? []
        : [
            `${s.requestId} (${s.status}, key ${s.fixture.prefix}): ${row === undefined ? "no row" : `${row.key_prefix} under ${row.origin_id}`}`
          ]
    })
    const perOrigin = origins.map((fixture) => {
      const mine = answered.filter((s) => s.fixture === fixture)
      const logged = mine.filter((s) => rowOf.get(s.requestId!)?.origin_id === fixture.originId)
      return `${fixture.prefix}: ${logged.length} of ${mine.length} rows (${mine.filter((s) => s.status === 503).length} answered 503)`
    })
    const unattributed = rows.filter((row) => row.origin_id === null).length
    process.stdout.write(
      `[faults] outage request log: ${perOrigin.join("; ")}; ${unattributed} unattributed\n`
    )
    expect(misfiled, "requests not logged under the origin whose key they carried").toEqual([])
    expect(unattributed, "rows with no origin, of requests that carried a well-formed key").toBe(0)
    expect(down.length, "requests answered 503 while the database was down").toBeGreaterThan(0)
  }, 90_000)
})
