import { connect } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Fixture } from "../support/Client.ts"
import { freshDatabaseUrl, inspector, newLead, sleep, startPostgresServer } from "./support.ts"

/**
 * Clients hang up at every moment of a create (before the body, during the key lookup, while the
 * write runs, after it committed but before the answer) over a real socket. Each request's
 * transaction commits wholly or not at all, and a retry with the same key answers exactly once.
 */
describe("fault: the client disconnects mid-request", () => {
  let server: Awaited<ReturnType<typeof startPostgresServer>>
  let fixture: Fixture
  let db: ReturnType<typeof inspector>

  beforeAll(async () => {
    const url = await freshDatabaseUrl()
    server = await startPostgresServer(url, 10)
    fixture = server.fixture
    db = inspector(url)
    await db.query(`
      CREATE FUNCTION slow_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_sleep(0.2);
        RETURN NEW;
      END $$`)
    await db.query(
      "CREATE TRIGGER slow_insert BEFORE INSERT ON lead_notes FOR EACH ROW EXECUTE FUNCTION slow_insert()"
    )
  }, 60_000)

  afterAll(async () => {
    await server?.close()
    await db?.close()
  })

  const request = (lead: ReturnType<typeof newLead>) =>
    Buffer.concat([
      Buffer.from(
        [
          "POST /v1/leads HTTP/1.1",
          "Host: api.test",
          `Authorization: Bearer ${fixture.key}`,
          "Content-Type: application/json",
          `Idempotency-Key: ${lead.key}`,
          `Content-Length: ${lead.body.length}`,
          "",
          ""
        ].join("\r\n")
      ),
      Buffer.from(lead.body)
    ])

  /** Sends the request (all of it, or only the head when `partial`) and hangs up after `delay` ms. */
  const hangUp = (lead: ReturnType<typeof newLead>, delay: number, partial: boolean) =>
    new Promise<void>((resolve) => {
      const socket = connect(server.port, "127.0.0.1", () => {
        const bytes = request(lead)
        socket.write(partial ? bytes.subarray(0, bytes.length - 5) : bytes)
        setTimeout(() => socket.destroy(), delay)
      })
      socket.on("error", () => {})
      socket.on("close", () => resolve())
    })

  const post = async (lead: ReturnType<typeof newLead>) => {
    const response = await fetch(`http://127.0.0.1:${server.port}/v1/leads`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${fixture.key}`,
        "content-type": "application/json",
        "idempotency-key": lead.key
      },
      body: lead.body
    })
    return { status: response.status, json: (await response.json()) as Record<string, unknown> }
  }

  it("every hang-up leaves all of the lead or none of it; the retry replays or creates exactly once", async () => {
    const cases = Array.from({ length: 60 }, (_, index) => ({
      lead: newLead("hangup"),
      delay: (index * 37) % 700,
      partial: index % 10 === 0
    }))
    for (let wave = 0; wave < cases.length; wave += 6) {
      await Promise.all(
        cases.slice(wave, wave + 6).map(({ lead, delay, partial }) => hangUp(lead, delay, partial))
      )
    }

    const settle = performance.now() + 10_000
    while (performance.now() < settle) {
      const [row] = await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state <> 'idle' AND pid <> pg_backend_pid()"
      )
      if (row!.n === 0) break
      await sleep(100)
    }

    // The key is taken in the write's own transaction, so a hang-up leaves all of it or none of it:
    // never a key held without a lead. A retry may meet 409 idempotency_in_progress (Retry-After: 1)
    // while the first attempt's statement still runs.
    let committed = 0
    const existing = new Map<string, string>()
    for (const { lead } of cases) {
      const [state] = await db.query<Record<string, number | string | null>>(
        `SELECT
           (SELECT count(*)::int FROM leads WHERE telefono = $1) AS leads,
           (SELECT count(*)::int FROM lead_notes n JOIN leads l ON l.id = n.lead_id WHERE l.telefono = $1) AS notes,
           (SELECT count(*)::int FROM lead_tasks t JOIN leads l ON l.id = t.lead_id WHERE l.telefono = $1) AS tasks,
           (SELECT count(*)::int FROM outbox_events e JOIN leads l ON l.id = e.lead_id WHERE l.telefono = $1) AS events,
           (SELECT state FROM idempotency_keys WHERE key = $2) AS key_state,
           (SELECT id::text FROM leads WHERE telefono = $1) AS lead_id`,
        [lead.phone, lead.key]
      )
      const { lead_id: leadId, ...counts } = state!
      if (counts.leads === 1) {
        committed++
        existing.set(lead.key, leadId as string)
        expect(counts, "all of it").toEqual({
          leads: 1,
          notes: 1,
          tasks: 1,
          events: 1,
          key_state: "completed"
        })
      } else {
        expect(counts, "none of it, its key free").toEqual({
          leads: 0,
          notes: 0,
          tasks: 0,
          events: 0,
          key_state: null
        })
      }
    }
    process.stdout.write(
      `[faults] hang-ups: ${committed} committed wholly, ${cases.length - committed} left nothing\n`
    )
    expect(committed, "some hang-ups came after the commit").toBeGreaterThan(0)
    expect(committed, "some hang-ups came before it").toBeLessThan(cases.length)

    await db.query("DROP TRIGGER slow_insert ON lead_notes")
    const deadline = performance.now() + 40_000
    const queue = cases.map((c) => c.lead)
    const retry = async (lead: ReturnType<typeof newLead>) => {
      while (true) {
        const retried = await post(lead)
        if (retried.status === 409 && retried.json.error !== undefined && performance.now() < deadline) {
          expect((retried.json.error as { code: string }).code).toBe("idempotency_in_progress")
          await sleep(1_000)
          continue
        }
        expect(retried.status, JSON.stringify(retried.json)).toBe(201)
        const before = existing.get(lead.key)
        if (before === undefined) expect(retried.json.replay).toBeUndefined()
        else {
          expect(retried.json.replay).toBe(true)
          expect(retried.json.lead_id).toBe(before)
        }
        return
      }
    }
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        for (let lead = queue.shift(); lead !== undefined; lead = queue.shift()) await retry(lead)
      })
    )
    const [total] = await db.query<{ n: number; phones: number }>(
      "SELECT count(*)::int AS n, count(DISTINCT telefono)::int AS phones FROM leads WHERE telefono = ANY($1::text[])",
      [cases.map((c) => c.lead.phone)]
    )
    expect(total).toEqual({ n: cases.length, phones: cases.length })
  }, 60_000)
})
