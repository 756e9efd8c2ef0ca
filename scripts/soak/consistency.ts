import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Answer } from "./traffic.ts"

export interface Check {
  readonly name: string
  readonly ok: boolean
  readonly detail: string
}

type Record = (name: string, ok: boolean, detail: string) => void

const acknowledgedOf = (answers: ReadonlyArray<Answer>) => {
  const acknowledged = answers.filter((a) => (a.status === 200 || a.status === 201) && !a.dryRun)
  return { acknowledged, writes: acknowledged.filter((a) => !a.replay) }
}

const leadIdOf = (answer: Answer) => answer.leadId ?? ""
const keyOf = (answer: Answer) => answer.key ?? ""

/** Every acknowledged lead exists once, with its phone, and no other. */
const checkLeads = (answers: ReadonlyArray<Answer>, check: Record) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const { acknowledged } = acknowledgedOf(answers)
    const leadIds = [...new Set(acknowledged.map((a) => leadIdOf(a)))]
    const leads = yield* sql<{ id: string; phone_key: string | null; assignee_id: string | null }>`
      SELECT id, phone_key, assignee_id FROM leads`
    const leadById = new Map(leads.map((row) => [row.id, row]))

    const missing = leadIds.filter((id) => !leadById.has(id))
    check(
      "every acknowledged request's lead exists",
      missing.length === 0,
      `${leadIds.length} leads acknowledged, ${missing.length} missing`
    )
    const wrongPhone = acknowledged.filter(
      (a) => a.phoneKey !== null && leadById.get(leadIdOf(a))?.phone_key !== a.phoneKey
    )
    check(
      "each acknowledged lead has the request's phone",
      wrongPhone.length === 0,
      `${wrongPhone.length} mismatches`
    )
    const unacknowledged = leads.filter((row) => !leadIds.includes(row.id))
    check(
      "no lead exists that no client was told about",
      unacknowledged.length === 0,
      `${leads.length} leads in the database, ${unacknowledged.length} never acknowledged`
    )

    const byPhone = new Map<string, Set<string>>()
    const createdPerPhone = new Map<string, number>()
    for (const a of acknowledged) {
      if (a.phoneKey === null) continue
      byPhone.set(a.phoneKey, (byPhone.get(a.phoneKey) ?? new Set()).add(leadIdOf(a)))
      if (a.status === 201 && !a.replay)
        createdPerPhone.set(a.phoneKey, (createdPerPhone.get(a.phoneKey) ?? 0) + 1)
    }
    const splitPhones = [...byPhone.values()].filter((ids) => ids.size !== 1).length
    const twiceCreated = [...createdPerPhone.values()].filter((n) => n !== 1).length
    check(
      "each phone is one lead, created exactly once",
      splitPhones === 0 && twiceCreated === 0,
      `${byPhone.size} phones; ${splitPhones} with several leads, ${twiceCreated} created more than once`
    )
  })

/** Every acknowledged key stores its answer; replays repeat it; none is left in progress. */
const checkIdempotency = (answers: ReadonlyArray<Answer>, check: Record) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const { acknowledged, writes } = acknowledgedOf(answers)
    const keyed = writes.filter((a) => a.key !== null)
    const stored = yield* sql<{
      key: string
      state: string
      http_status: number | null
      lead_id: string | null
    }>`
      SELECT key, state, http_status, response->>'lead_id' AS lead_id FROM idempotency_keys`
    const storedByKey = new Map(stored.map((row) => [row.key, row]))
    const badKeys = keyed.filter((a) => {
      const row = storedByKey.get(keyOf(a))
      return (
        row === undefined ||
        row.state !== "completed" ||
        row.http_status !== a.status ||
        row.lead_id !== a.leadId
      )
    })
    check(
      "every acknowledged Idempotency-Key stores its answer",
      badKeys.length === 0,
      `${keyed.length} keys, ${badKeys.length} wrong`
    )
    const replays = acknowledged.filter((a) => a.replay)
    const badReplays = replays.filter((a) => storedByKey.get(keyOf(a))?.lead_id !== a.leadId)
    check(
      "every replay repeats the stored answer",
      badReplays.length === 0,
      `${replays.length} replays, ${badReplays.length} differ`
    )
    const dangling = stored.filter((row) => row.state !== "completed").length
    check("no key is left in progress", dangling === 0, `${dangling} in progress`)
  })

/** Notes, tasks, events and round-robin fairness match what the clients were told. */
const checkEffects = (answers: ReadonlyArray<Answer>, check: Record) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const { writes } = acknowledgedOf(answers)
    const notes = yield* sql<{ request_id: string; orphan: boolean }>`
      SELECT n.request_id, l.id IS NULL AS orphan FROM lead_notes n LEFT JOIN leads l ON l.id = n.lead_id`
    const orphans = notes.filter((n) => n.orphan).length
    const noted = new Set(writes.filter((a) => a.note).map((a) => a.requestId))
    const noteIds = notes.map((n) => n.request_id)
    const unexpectedNotes = noteIds.filter((id) => !noted.has(id)).length
    const missingNotes = [...noted].filter((id) => !noteIds.includes(id)).length
    check(
      "every note has its lead and its acknowledged request, once",
      orphans === 0 && unexpectedNotes === 0 && missingNotes === 0 && noteIds.length === noted.size,
      `${noteIds.length} notes; ${orphans} orphans, ${unexpectedNotes} from unacknowledged requests, ${missingNotes} missing`
    )

    const [effects = { bad_tasks: -1, bad_created: -1, enriched: -1 }] = yield* sql<{
      bad_tasks: number
      bad_created: number
      enriched: number
    }>`
      SELECT
        (SELECT count(*)::int FROM leads l WHERE (SELECT count(*) FROM lead_tasks t WHERE t.lead_id = l.id) <> 1) AS bad_tasks,
        (SELECT count(*)::int FROM leads l
           WHERE (SELECT count(*) FROM outbox_events e WHERE e.lead_id = l.id AND e.type = 'lead.created') <> 1) AS bad_created,
        (SELECT count(*)::int FROM outbox_events WHERE type = 'lead.enriched') AS enriched`
    const enrichments = writes.filter((a) => a.status === 200).length
    check(
      "each lead has one task and one lead.created event; one lead.enriched per enrichment",
      effects.bad_tasks === 0 && effects.bad_created === 0 && effects.enriched === enrichments,
      `${effects.bad_tasks} leads with a wrong task count, ${effects.bad_created} with a wrong created count; ${effects.enriched} enriched events for ${enrichments} enrichments`
    )

    const leads = yield* sql<{ assignee_id: string | null }>`SELECT assignee_id FROM leads`
    const assignees = new Map<string, number>()
    for (const row of leads)
      assignees.set(row.assignee_id ?? "none", (assignees.get(row.assignee_id ?? "none") ?? 0) + 1)
    const counts = [...assignees.values()]
    check(
      "round-robin shares creations evenly",
      counts.length === 2 && Math.abs((counts[0] ?? 0) - (counts[1] ?? 0)) <= 1,
      [...assignees.values()].join(" / ")
    )
  })

/** The request log has every request; rate windows count exactly what they let through. */
const checkLogAndWindows = (answers: ReadonlyArray<Answer>, check: Record) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const logged = yield* sql<{ request_id: string }>`SELECT request_id FROM logged_requests`
    const loggedIds = new Set(logged.map((row) => row.request_id))
    const unlogged = answers.filter((a) => !loggedIds.has(a.requestId)).length
    check(
      "every request is in the request log once",
      unlogged === 0 && logged.length === answers.length,
      `${answers.length} requests, ${logged.length} log rows, ${unlogged} missing`
    )

    const windows = yield* sql<{ origin_id: string; over: boolean; counted: number; logged: number }>`
      SELECT w.origin_id, bool_or(w.count > o.rate_limit) AS over, sum(w.count)::int AS counted,
             (SELECT count(*)::int FROM logged_requests r WHERE r.origin_id = w.origin_id AND r.status NOT IN (401, 429)) AS logged
      FROM rate_windows w JOIN origins o ON o.id = w.origin_id
      WHERE w.livemode
      GROUP BY w.origin_id`
    const insane = windows.filter((w) => w.over || w.counted !== w.logged)
    check(
      "every key's windows are sane: never over its limit, and counting exactly the requests it let through",
      insane.length === 0,
      `${windows.length} origins; ${insane.length} off (${insane.map((w) => `${w.counted} counted vs ${w.logged} logged`).join(", ")})`
    )
    const [limitedWindows] = yield* sql<{ max: number; limit: number }>`
      SELECT max(w.count)::int AS max, o.rate_limit AS limit FROM rate_windows w JOIN origins o ON o.id = w.origin_id
      WHERE w.livemode AND o.label = 'limited' GROUP BY o.rate_limit`
    check(
      "the rate-limited origin reached its limit and no further",
      limitedWindows === undefined || limitedWindows.max === limitedWindows.limit,
      limitedWindows === undefined
        ? "not exercised"
        : `max ${limitedWindows.max} of ${limitedWindows.limit} per window`
    )

    const serverErrors = answers.filter((a) => a.status >= 500).length
    check("no 5xx answer", serverErrors === 0, `${serverErrors} answers 5xx`)
  })

/** Compares what the clients were told with what the database holds. */
export const consistency = (answers: ReadonlyArray<Answer>) =>
  Effect.gen(function* () {
    const checks: Array<Check> = []
    const check: Record = (name, ok, detail) => {
      checks.push({ name, ok, detail })
    }
    yield* checkLeads(answers, check)
    yield* checkIdempotency(answers, check)
    yield* checkEffects(answers, check)
    yield* checkLogAndWindows(answers, check)
    return checks
  })
