import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { FuzzTarget } from "../fuzz/support.ts"
import { freshDatabaseUrl, inspector, newLead, sendLead, startPostgresTarget } from "./support.ts"

/**
 * A statement made to fail at each step inside the create-or-enrich write (a trigger raises when
 * the test flips a switch): the answer is 500, nothing of the request is left, the key is
 * released, and a retry with the same key creates (or enriches) exactly once.
 */
describe("fault: a statement fails inside the write", () => {
  let target: FuzzTarget
  let db: ReturnType<typeof inspector>

  beforeAll(async () => {
    const url = await freshDatabaseUrl()
    target = await startPostgresTarget(url, 4)
    db = inspector(url)
    await db.query("CREATE TABLE fault_switch (table_name text NOT NULL, operation text NOT NULL)")
    await db.query(`
      CREATE FUNCTION inject_fault() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM fault_switch WHERE table_name = TG_TABLE_NAME AND operation = TG_OP) THEN
          RAISE EXCEPTION 'injected failure on % of %', TG_OP, TG_TABLE_NAME;
        END IF;
        RETURN NEW;
      END $$`)
    for (const table of [
      "leads",
      "capture_rules",
      "lead_tasks",
      "lead_notes",
      "outbox_events",
      "idempotency_keys",
      "logged_requests"
    ]) {
      await db.query(
        `CREATE TRIGGER inject_fault BEFORE INSERT OR UPDATE ON ${table} FOR EACH ROW EXECUTE FUNCTION inject_fault()`
      )
    }
  }, 60_000)

  afterAll(async () => {
    await target?.close()
    await db?.close()
  })

  const failOn = (table: string, operation: "INSERT" | "UPDATE") =>
    db.query("INSERT INTO fault_switch VALUES ($1, $2)", [table, operation])
  const heal = () => db.query("DELETE FROM fault_switch")

  const counts = async (phone: string) => {
    const [row] = await db.query<Record<string, number>>(
      `SELECT
         (SELECT count(*)::int FROM leads WHERE telefono = $1) AS leads,
         (SELECT count(*)::int FROM lead_notes n JOIN leads l ON l.id = n.lead_id WHERE l.telefono = $1) AS notes,
         (SELECT count(*)::int FROM lead_tasks t JOIN leads l ON l.id = t.lead_id WHERE l.telefono = $1) AS tasks,
         (SELECT count(*)::int FROM outbox_events e JOIN leads l ON l.id = e.lead_id WHERE l.telefono = $1) AS events,
         (SELECT coalesce(sum(turns_taken), 0)::int FROM capture_rules) AS turns`,
      [phone]
    )
    return row!
  }
  /** Units taken from every rate window: every authenticated request takes one, whatever its answer. */
  const unitsTaken = async () =>
    (
      await db.query<{ n: number }>(
        "SELECT coalesce(sum(count), 0)::int AS n FROM rate_windows WHERE livemode"
      )
    )[0]!.n
  const keyState = async (key: string) =>
    (await db.query<{ state: string }>("SELECT state FROM idempotency_keys WHERE key = $1", [key]))[0]
      ?.state ?? null

  /** Each write of a create (the round-robin turn, `capture_rules` UPDATE, among them). */
  const createSteps = [
    ["leads", "INSERT"],
    ["capture_rules", "UPDATE"],
    ["leads", "UPDATE"],
    ["lead_tasks", "INSERT"],
    ["lead_notes", "INSERT"],
    ["outbox_events", "INSERT"],
    ["idempotency_keys", "UPDATE"]
  ] as const

  for (const [table, operation] of createSteps) {
    it(`create failing on ${operation} ${table}: 500, nothing left, the retry creates once`, async () => {
      const lead = newLead("fail-create")
      const turnsBefore = (await counts(lead.phone)).turns!
      const unitsBefore = await unitsTaken()
      await failOn(table, operation)
      const failed = await sendLead(target, lead)
      await heal()
      expect(failed.status, JSON.stringify(failed.json)).toBe(500)
      expect(failed.json.error?.code).toBe("internal_error")
      expect(await unitsTaken(), "the failed request took its unit of the window").toBe(unitsBefore + 1)
      expect(await counts(lead.phone)).toEqual({
        leads: 0,
        notes: 0,
        tasks: 0,
        events: 0,
        // A turn is taken in the write's transaction: a write that fails gives it back.
        turns: turnsBefore
      })
      expect(await keyState(lead.key), "the key is released").toBeNull()

      const retried = await sendLead(target, lead)
      expect(retried.status, JSON.stringify(retried.json)).toBe(201)
      const replayed = await sendLead(target, lead)
      expect(replayed.status).toBe(201)
      expect(replayed.json.replay).toBe(true)
      expect(replayed.json.lead_id).toBe(retried.json.lead_id)
      expect(await counts(lead.phone)).toEqual({
        leads: 1,
        notes: 1,
        tasks: 1,
        events: 1,
        turns: turnsBefore + 1
      })
      expect(await keyState(lead.key)).toBe("completed")
    })
  }

  const enrichSteps = [
    ["leads", "UPDATE"],
    ["lead_notes", "INSERT"],
    ["outbox_events", "INSERT"],
    ["idempotency_keys", "UPDATE"]
  ] as const

  for (const [table, operation] of enrichSteps) {
    it(`enrich failing on ${operation} ${table}: 500, the lead unchanged, the retry enriches once`, async () => {
      const first = newLead("fail-enrich")
      expect((await sendLead(target, first)).status).toBe(201)
      const before = await counts(first.phone)
      const enrichment = {
        ...first,
        key: `${first.key}-again`,
        body: new TextEncoder().encode(
          JSON.stringify({
            nombre: "otro",
            telefono: first.phone,
            email: "nuevo@example.com",
            mensaje: "segunda vez"
          })
        )
      }
      await failOn(table, operation)
      const failed = await sendLead(target, enrichment)
      await heal()
      expect(failed.status, JSON.stringify(failed.json)).toBe(500)
      expect(await counts(first.phone)).toEqual(before)
      const [unchanged] = await db.query<{ email: string | null }>(
        "SELECT email FROM leads WHERE telefono = $1",
        [first.phone]
      )
      expect(unchanged!.email).toBeNull()
      expect(await keyState(enrichment.key)).toBeNull()

      const retried = await sendLead(target, enrichment)
      expect(retried.status, JSON.stringify(retried.json)).toBe(200)
      expect(retried.json.status).toBe("enriched")
      const replayed = await sendLead(target, enrichment)
      expect(replayed.json.replay).toBe(true)
      expect(await counts(first.phone)).toEqual({
        ...before,
        notes: before.notes! + 1,
        events: before.events! + 1
      })
    })
  }

  it("a request log that cannot be written does not change the answer", async () => {
    const lead = newLead("fail-log")
    await failOn("logged_requests", "INSERT")
    const answer = await sendLead(target, lead)
    await heal()
    expect(answer.status, JSON.stringify(answer.json)).toBe(201)
    expect((await counts(lead.phone)).leads).toBe(1)
  })
})
