import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { KeyStore } from "../../src/Accounts/KeyStore.ts"
import { freshDatabaseUrl, inspector, newLead, sleep, startPostgresServer } from "./support.ts"

/**
 * The rate window's count is pipelined with other requests' statements (`Sql.PipelinedSql`). A
 * window row locked elsewhere (a stuck transaction of an operator, or of another instance) must not
 * stall what is queued behind that count: the count gives up after a second (503, nothing written),
 * and another origin's requests, whose statements share those connections, keep being answered.
 */
describe("fault: a rate window's row is locked elsewhere", () => {
  let server: Awaited<ReturnType<typeof startPostgresServer>>
  let db: ReturnType<typeof inspector>
  let otherKey: string

  beforeAll(async () => {
    const url = await freshDatabaseUrl()
    server = await startPostgresServer(url, 10)
    db = inspector(url)
    const other = await Effect.runPromise(
      KeyStore.use((keys) =>
        keys.createOrigin({
          organizationId: server.fixture.organizationId,
          label: "other",
          rateLimit: 1_000_000
        })
      ).pipe(Effect.provide(server.services))
    )
    otherKey = other.key
  }, 60_000)

  afterAll(async () => {
    await server?.close()
    await db?.close()
  })

  const post = async (key: string) => {
    const lead = newLead("window")
    const startedAt = performance.now()
    const response = await fetch(`http://127.0.0.1:${server.port}/v1/leads`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: lead.body
    })
    const json = (await response.json()) as { error?: { code: string } }
    return { status: response.status, code: json.error?.code, elapsed: performance.now() - startedAt, lead }
  }

  it("answers 503 for the locked origin within about a second and keeps answering the others", async () => {
    // The lock is on this minute's row: start with time to spare before the window turns.
    const intoMinute = Date.now() % 60_000
    if (intoMinute > 50_000) await sleep(60_000 - intoMinute + 200)
    expect((await post(server.fixture.key)).status).toBe(201)

    const held = db.transaction([
      `SELECT 1 FROM rate_windows WHERE origin_id = '${server.fixture.originId}' AND livemode FOR UPDATE`,
      "SELECT pg_sleep(4)"
    ])
    // The row is locked once the holder's transaction has reached its sleep.
    await vi.waitFor(
      async () => {
        const [holding] = await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE datname = current_database() AND state = 'active' AND query LIKE 'SELECT pg_sleep(4)%'`
        )
        expect(holding!.n).toBe(1)
      },
      { timeout: 10_000, interval: 20 }
    )
    const [locked, ...others] = await Promise.all([
      post(server.fixture.key),
      ...Array.from({ length: 8 }, () => post(otherKey))
    ])
    await held

    expect(locked.status).toBe(503)
    expect(locked.code).toBe("temporarily_unavailable")
    expect(locked.elapsed).toBeLessThan(2_500)
    for (const answer of others) {
      expect(answer.status).toBe(201)
      expect(answer.elapsed).toBeLessThan(2_500)
    }
    // The refused request wrote no lead; the lock gone, the origin is answered again.
    expect(
      await db.query<{ n: number }>("SELECT count(*)::int AS n FROM leads WHERE telefono = $1", [
        locked.lead.phone
      ])
    ).toEqual([{ n: 0 }])
    expect((await post(server.fixture.key)).status).toBe(201)
  }, 90_000)
})
