import { Effect, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { isAcceptablePhone, phoneMatchKey } from "../../Domain/Phone.ts"
import type { OrganizationRow } from "../Organizations.ts"
import { requestsOfLead } from "../Requests/Queries.ts"
import {
  decodeAs,
  decodeCursor,
  decodeItem,
  decodeItems,
  encodeCursor,
  isUuid,
  likePattern,
  pageOf
} from "../Rows.ts"
import { LeadDetail, LeadItem } from "./Api.ts"

/** Live leads, or with `livemode` false the test leads instead; `query` matches a phone, a name or an e-mail. */
export const listLeads = Effect.fn("Leads.list")(function* (
  organization: OrganizationRow,
  query: string,
  page: { readonly cursor?: string | undefined; readonly limit: number },
  livemode = true
) {
  const sql = yield* SqlClient.SqlClient
  const after = decodeCursor(page.cursor, "lead")
  const text = query.trim()
  const match =
    text === ""
      ? sql`true`
      : sql.or([
          ...(isAcceptablePhone(text)
            ? [sql`l.phone_key = lead_match_key(${phoneMatchKey(text, organization.country)}, ${livemode})`]
            : []),
          sql`l.nombre ILIKE ${likePattern(text)}`,
          sql`l.email ILIKE ${likePattern(text)}`
        ])
  const rows = yield* sql`
    SELECT l.id, l.nombre, l.telefono, l.email, json_build_object('id', o.id, 'label', o.label) AS origin,
           l.created_at
    FROM leads l JOIN origins o ON o.id = l.origin_id
    WHERE l.organization_id = ${organization.id} AND l.livemode = ${livemode} AND ${match}
      ${Option.match(after, {
        onNone: () => sql``,
        onSome: ([at, id]) => sql`AND (l.created_at, l.id) < (${at}, ${id}::uuid)`
      })}
    ORDER BY l.created_at DESC, l.id DESC
    LIMIT ${page.limit + 1}`.pipe(decodeItems(LeadItem))
  return pageOf(rows, page.limit, (last) => encodeCursor(last.created_at, last.id))
})

const { notes, tasks, events, requests: _, ...leadFields } = LeadDetail.fields
const LeadRecord = Schema.Struct(leadFields)

/** A lead of the organization with its notes, tasks, events and the requests that named it. */
export const findLead = Effect.fn("Leads.find")(function* (organizationId: string, id: string) {
  if (!isUuid(id)) return Option.none<typeof LeadDetail.Type>()
  const sql = yield* SqlClient.SqlClient
  const found = yield* sql`
    SELECT l.id, l.nombre, l.telefono, l.email, json_build_object('id', o.id, 'label', o.label) AS origin,
           CASE WHEN l.property_id IS NULL THEN NULL
                ELSE json_build_object('id', l.property_id, 'codigo', COALESCE(p.codigo, '')) END AS property,
           CASE WHEN l.assignee_id IS NULL THEN NULL
                ELSE json_build_object('id', l.assignee_id, 'name', COALESCE(a.name, '')) END AS assignee,
           l.created_at, l.updated_at, l.erased_at, l.livemode
    FROM leads l
    JOIN origins o ON o.id = l.origin_id
    LEFT JOIN properties p ON p.id = l.property_id
    LEFT JOIN agents a ON a.id = l.assignee_id
    WHERE l.id = ${id} AND l.organization_id = ${organizationId}`.pipe(decodeItem(LeadRecord))
  if (Option.isNone(found)) return Option.none<typeof LeadDetail.Type>()
  const [noteRows, taskRows, eventRows] = yield* Effect.all([
    sql`SELECT body, created_at FROM lead_notes WHERE lead_id = ${id} ORDER BY created_at, id`,
    sql`
      SELECT t.kind, a.name AS assignee, t.due_at
      FROM lead_tasks t LEFT JOIN agents a ON a.id = t.assignee_id
      WHERE t.lead_id = ${id} ORDER BY t.created_at, t.id`,
    sql`SELECT type, created_at FROM outbox_events WHERE lead_id = ${id} ORDER BY id`
  ]).pipe(Effect.orDie)
  const requests = yield* requestsOfLead(organizationId, id)
  const detail = yield* decodeAs(Schema.Struct({ notes, tasks, events }), {
    notes: noteRows,
    tasks: taskRows,
    events: eventRows
  })
  return Option.some<typeof LeadDetail.Type>({ ...found.value, ...detail, requests })
})
