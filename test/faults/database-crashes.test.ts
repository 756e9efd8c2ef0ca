import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type DedicatedCluster,
  inspector,
  newLead,
  sleep,
  startDedicatedCluster,
  startPostgresServer
} from "./support.ts"

const answerBound = 5_000
const crashes = 8

interface Answer {
  readonly phone: string
  readonly key: string
  readonly body: ReturnType<typeof newLead>["body"]
  readonly status: number
  readonly json: { [key: string]: unknown; error?: { code: string } }
  readonly elapsed: number
}

/**
 * PostgreSQL crashes (`pg_ctl stop -m immediate`) again and again under a steady stream of creates
 * through `serve`'s listener, each time mid-commit for some of them, and comes back on the same
 * port. A 503 promises that nothing was written, so its retry must create, never replay.
 */
describe("fault: the database crashes again and again under load", () => {
  let cluster: DedicatedCluster
  let server: Awaited<ReturnType<typeof startPostgresServer>>
  let db: ReturnType<typeof inspector>
  const lines: Array<string> = []

  beforeAll(async () => {
    cluster = await startDedicatedCluster()
    await cluster.createDatabase("faults")
    server = await startPostgresServer(cluster.url("faults"), 10, { logLines: lines })
    db = inspector(cluster.url("faults"))
  }, 60_000)

  afterAll(async () => {
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
      signal: AbortSignal.timeout(20_000)
    }).catch(() => undefined)
    const elapsed = performance.now() - startedAt
    if (response === undefined) return { ...lead, status: 0, json: {}, elapsed }
    return { ...lead, status: response.status, json: (await response.json()) as Answer["json"], elapsed }
  }

  it("never answers 503 for a write that was committed: no 503 is followed by a replay of its key", async () => {
    const sent: Array<Answer> = []
    let done = false
    const worker = async () => {
      while (!done) {
        const answer = await post(newLead("crash"))
        sent.push(answer)
        await sleep(answer.status === 201 ? 2 : 50)
      }
    }
    const workers = Array.from({ length: 12 }, worker)
    for (let crash = 0; crash < crashes; crash++) {
      await sleep(400 + ((crash * 137) % 500))
      await cluster.stop("immediate")
      await sleep(200)
      await cluster.start()
    }
    await sleep(1_000)
    done = true
    await Promise.all(workers)

    const tally = (status: number) => sent.filter((s) => s.status === status).length
    process.stdout.write(
      `[faults] ${crashes} crashes: ${sent.length} creates, ${tally(201)} answered 201, ${tally(503)} 503, ` +
        `${tally(500)} 500; slowest ${Math.round(Math.max(...sent.map((s) => s.elapsed)))} ms\n`
    )
    expect(tally(201), "creates between the crashes").toBeGreaterThan(50)
    expect(tally(503), "creates refused while down").toBeGreaterThan(0)
    for (const s of sent) {
      expect([201, 500, 503], JSON.stringify(s.json)).toContain(s.status)
      expect(s.elapsed, `answered within ${answerBound} ms`).toBeLessThan(answerBound)
    }

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
            await sleep(answer.status === 409 ? 1_000 : 300)
          }
        }
      })
    )
    const replayedAfter503 = unanswered.filter(
      (s) => s.status === 503 && finals.get(s.key)?.json.replay === true
    )
    expect(
      replayedAfter503.map((s) => s.key),
      "a 503 wrote nothing"
    ).toEqual([])
    const committedAfter500 = unanswered.filter(
      (s) => s.status === 500 && finals.get(s.key)?.json.replay === true
    )
    process.stdout.write(
      `[faults] of the ${tally(500)} answered 500, ${committedAfter500.length} had committed (their retry replayed)\n`
    )
    for (const s of unanswered)
      expect(finals.get(s.key)?.status, JSON.stringify(finals.get(s.key)?.json)).toBe(201)
    // A key whose write's answer was lost is kept past its request only until the database answers.
    const keyLines = lines
      .filter((line) => line.includes('"key_digest"'))
      .map((line) => JSON.parse(line) as { msg: string; outcome: string; held_ms: number })
    const kept = keyLines.filter((line) => line.outcome === "Kept")
    const settledLater = keyLines.filter(
      (line) => line.msg === "idempotency key settled" && line.held_ms > 5_000
    )
    process.stdout.write(
      `[faults] lost answers settled within their request: ${keyLines.length - 2 * kept.length} ` +
        `(${keyLines.filter((line) => line.outcome === "Committed").length} committed, ` +
        `${keyLines.filter((line) => line.outcome === "Released").length} released); kept past it: ${kept.length}, ` +
        `settled after ${settledLater.map((line) => `${line.outcome} ${line.held_ms} ms`).join(", ") || "-"}\n`
    )
    expect(keyLines.filter((line) => line.outcome === "lease_ended")).toEqual([])
    for (const line of settledLater)
      expect(line.held_ms, "settled once the database answered").toBeLessThan(15_000)
    const counts = await db.query<{ telefono: string; n: number }>(
      "SELECT telefono, count(*)::int AS n FROM leads WHERE telefono = ANY($1::text[]) GROUP BY telefono",
      [sent.map((s) => s.phone)]
    )
    expect(counts.length, "every request's lead exists after retries").toBe(sent.length)
    expect(
      counts.filter((row) => row.n !== 1),
      "exactly once"
    ).toEqual([])
  }, 180_000)
})
