import { expect } from "vitest"
import type { inspector } from "./support.ts"

/** A lead a test sent with an Idempotency-Key, as it was answered. */
export interface SentLead {
  readonly phone: string
  readonly key: string
  readonly requestId: string | undefined
  readonly leadId: string | undefined
}

const digits = (phone: string) => phone.replace(/\D/g, "")

export interface RestoreExpectations<Lead extends SentLead> {
  /** Every lead the test was answered 2xx for. */
  readonly sent: ReadonlyArray<Lead>
  /** Those acknowledged before the moment restored to: each must be there. */
  readonly before: ReadonlyArray<Lead>
  /** Those sent after the moment's answer: none may be there. */
  readonly later: ReadonlyArray<Lead>
  /** The request ids whose request-log rows were written before the moment: each must be there. */
  readonly logged: ReadonlyArray<string>
  /** The moment, as failures name it ("the target", "the restore point"). */
  readonly moment: string
  /** How a missing lead is named in a failure (its key by default). */
  readonly name?: (lead: Lead) => string
  /** Called with what the restore holds before anything is asserted (the test's log line). */
  readonly read?: (counts: {
    readonly leads: number
    readonly keys: number
    readonly rows: number
    readonly restored: ReadonlyArray<Lead>
  }) => void
}

/**
 * What a database restored to a moment (one PostgreSQL to a time, a Citus cluster to a restore point)
 * must hold of the leads a test sent through the service, read with `check`: every lead acknowledged
 * before the moment, each with exactly one note, task and outbox event and its Idempotency-Key
 * completed with it; none sent after it; no lead, key or request-log row that no client was told
 * about; every request-log row written before the moment. Leads in flight at the moment may be there
 * or not, whole either way. Returns the sent leads the restore holds.
 */
export const expectRestored = async <Lead extends SentLead>(
  check: ReturnType<typeof inspector>,
  expectations: RestoreExpectations<Lead>
): Promise<ReadonlyArray<Lead>> => {
  const { sent, before, later, logged, moment, name = (lead) => lead.key } = expectations
  const leads = await check.query<{
    id: string
    telefono: string
    notes: number
    tasks: number
    events: number
  }>(
    `SELECT l.id, l.telefono,
       (SELECT count(*)::int FROM lead_notes n WHERE n.organization_id = l.organization_id AND n.lead_id = l.id) AS notes,
       (SELECT count(*)::int FROM lead_tasks t WHERE t.organization_id = l.organization_id AND t.lead_id = l.id) AS tasks,
       (SELECT count(*)::int FROM outbox_events e WHERE e.organization_id = l.organization_id AND e.lead_id = l.id) AS events
     FROM leads l`
  )
  const keys = await check.query<{ key: string; state: string; lead_id: string | null }>(
    "SELECT key, state, response->>'lead_id' AS lead_id FROM idempotency_keys"
  )
  const rows = await check.query<{ request_id: string; status: number; lead_id: string | null }>(
    "SELECT request_id, status, lead_id FROM logged_requests"
  )
  const byPhone = new Map(leads.map((lead) => [digits(lead.telefono), lead]))
  const keyOf = new Map(keys.map((row) => [row.key, row]))
  const rowOf = new Map(rows.map((row) => [row.request_id, row]))
  const present = (lead: Lead) => byPhone.get(digits(lead.phone))?.id === lead.leadId
  const restored = sent.filter(present)
  expectations.read?.({ leads: leads.length, keys: keys.length, rows: rows.length, restored })

  expect(
    before.filter((lead) => !present(lead)).map(name),
    `leads acknowledged before ${moment}, missing`
  ).toEqual([])
  expect(
    later.filter((lead) => byPhone.has(digits(lead.phone))).map((lead) => lead.key),
    `leads sent after ${moment}, present`
  ).toEqual([])
  expect(leads.length, "no lead that no client was told about").toBe(restored.length)
  expect(
    leads
      .filter((lead) => lead.notes !== 1 || lead.tasks !== 1 || lead.events !== 1)
      .map((lead) => `${lead.id}: ${lead.notes} notes, ${lead.tasks} tasks, ${lead.events} events`),
    "leads without exactly one note, task and outbox event"
  ).toEqual([])
  // Idempotency-Keys: a restored lead's key completed with its lead; no other key at all.
  expect(
    restored
      .filter(
        (lead) => keyOf.get(lead.key)?.state !== "completed" || keyOf.get(lead.key)?.lead_id !== lead.leadId
      )
      .map((lead) => lead.key),
    "restored leads whose key is not completed with them"
  ).toEqual([])
  expect(keys.length, "keys of leads the restore does not hold").toBe(restored.length)
  // The request log: the rows written before the moment, and no row of a lead not restored.
  expect(
    logged.filter((requestId) => !rowOf.has(requestId)),
    `request-log rows written before ${moment}, missing`
  ).toEqual([])
  const sentOf = new Map(sent.map((lead) => [lead.requestId, lead]))
  expect(
    rows
      .filter((row) => {
        const lead = sentOf.get(row.request_id)
        return lead === undefined || !present(lead) || row.status !== 201 || row.lead_id !== lead.leadId
      })
      .map((row) => row.request_id),
    "request-log rows of no restored lead"
  ).toEqual([])
  return restored
}
