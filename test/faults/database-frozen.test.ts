import { Duration } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { statementTimeout, writeAbandonAfter } from "../../src/Platform/Sql/Sql.ts"
import {
  type DedicatedCluster,
  inspector,
  newLead,
  sleep,
  startDedicatedCluster,
  startPostgresServer
} from "./support.ts"

/** What docs/sre.md#database-outages-every-answer-within-5-s promises: every request answers within 5 s, whatever the database does. */
const answerBound = 5_000
const freezeMillis = 8_000

interface Answer {
  readonly phone: string
  readonly key: string
  readonly body: ReturnType<typeof newLead>["body"]
  readonly status: number
  readonly json: { [key: string]: unknown; error?: { code: string } }
  readonly startedAt: number
  readonly elapsed: number
}

/**
 * PostgreSQL stops answering without closing anything (SIGSTOP to the postmaster and every child,
 * by PID): a frozen host, or a partition that drops packets. Creates with Idempotency-Keys keep
 * coming through `serve`'s listener; the service is never restarted.
 */
describe("fault: the database freezes mid-load", () => {
  let cluster: DedicatedCluster
  let server: Awaited<ReturnType<typeof startPostgresServer>>
  let db: ReturnType<typeof inspector>

  beforeAll(async () => {
    cluster = await startDedicatedCluster()
    await cluster.createDatabase("faults")
    server = await startPostgresServer(cluster.url("faults"), 10)
    db = inspector(cluster.url("faults"))
  }, 60_000)

  afterAll(async () => {
    cluster?.thaw()
    await server?.close()
    await db?.close()
    await cluster?.release()
  })

  const post = async (lead: ReturnType<typeof newLead>): Promise<Answer> => {
    const startedAt = performance.now()
    const response = await fetch(`http://127.0.0.1:${server.port}/v1/leads`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${server.fixture.key}`,
        "content-type": "application/json",
        "idempotency-key": lead.key
      },
      body: lead.body,
      signal: AbortSignal.timeout(freezeMillis + 10_000)
    }).catch(() => undefined)
    const elapsed = performance.now() - startedAt
    if (response === undefined) return { ...lead, status: 0, json: {}, startedAt, elapsed }
    return {
      ...lead,
      status: response.status,
      json: (await response.json()) as Answer["json"],
      startedAt,
      elapsed
    }
  }

  it("answers every request within the bound while frozen; after the thaw each key yields exactly one lead", async () => {
    expect(
      Duration.toMillis(statementTimeout) < answerBound && Duration.toMillis(writeAbandonAfter) < answerBound,
      "the bounds"
    ).toBe(true)
    const sent: Array<Answer> = []
    let done = false
    const worker = async () => {
      while (!done) {
        sent.push(await post(newLead("frozen")))
        await sleep(5)
      }
    }
    const workers = Array.from({ length: 8 }, worker)

    await sleep(1_000)
    const frozenAt = performance.now()
    const pids = await cluster.freeze()
    expect(pids.length, "the postmaster and its children").toBeGreaterThan(3)
    await sleep(freezeMillis)
    cluster.thaw()
    const thawedAt = performance.now()
    await sleep(2_000)
    done = true
    await Promise.all(workers)

    const before = sent.filter((s) => s.startedAt + s.elapsed < frozenAt)
    const during = sent.filter((s) => s.startedAt + s.elapsed >= frozenAt && s.startedAt < thawedAt)
    expect(before.length, "creates before the freeze").toBeGreaterThan(10)
    expect(
      before.every((s) => s.status === 201),
      "all 201 before the freeze"
    ).toBe(true)
    expect(during.length, "requests answered while frozen").toBeGreaterThan(20)
    for (const s of sent) {
      expect([201, 500, 503], JSON.stringify(s.json)).toContain(s.status)
      expect(s.elapsed, `answered within ${answerBound} ms`).toBeLessThan(answerBound)
    }
    for (const s of sent.filter((s) => s.status === 503)) {
      expect(s.json.error?.code).toBe("temporarily_unavailable")
    }
    for (const s of sent.filter((s) => s.status === 500)) expect(s.json.error?.code).toBe("internal_error")
    const count = (status: number) => during.filter((s) => s.status === status).length
    process.stdout.write(
      `[faults] freeze ${freezeMillis} ms: ${before.length} created before; while frozen ${count(503)} answered 503, ` +
        `${count(500)} answered 500, ${count(201)} 201; slowest answer ` +
        `${Math.round(Math.max(...sent.map((s) => s.elapsed)))} ms\n`
    )

    // Every request that did not get its 201 is retried with its key until the answer is final.
    const unanswered = sent.filter((s) => s.status !== 201)
    const finals = new Map<string, Answer>()
    const retryDeadline = performance.now() + 60_000
    const queue = [...unanswered]
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let lead = queue.shift(); lead !== undefined; lead = queue.shift()) {
          while (true) {
            const answer = await post(lead)
            if (answer.status === 201 || performance.now() > retryDeadline) {
              finals.set(lead.key, answer)
              break
            }
            await sleep(500)
          }
        }
      })
    )
    for (const s of unanswered) {
      const final = finals.get(s.key)!
      expect(final.status, JSON.stringify(final.json)).toBe(201)
      if (s.status === 503)
        expect(final.json.replay, "a 503 wrote nothing: its retry is no replay").toBeUndefined()
    }
    const counts = await db.query<{ telefono: string; n: number }>(
      "SELECT telefono, count(*)::int AS n FROM leads WHERE telefono = ANY($1::text[]) GROUP BY telefono",
      [sent.map((s) => s.phone)]
    )
    expect(counts.length, "every request's lead exists after retries").toBe(sent.length)
    expect(
      counts.filter((row) => row.n !== 1),
      "exactly once"
    ).toEqual([])
  }, 120_000)
})
