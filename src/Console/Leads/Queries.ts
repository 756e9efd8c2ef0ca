import { Effect, Option, Schema, Stream } from "effect"
import { SqlClient } from "effect/sql"
import { LeadDetail, LeadItem } from "../../AdminApi/Leads.ts"
import { isAcceptablePhone, phoneMatchKey } from "../../Domain/Phone.ts"
import { readLead } from "../../Intake/LeadRecord.ts"
import type { OrganizationRow } from "../Organizations.ts"
import { requestsOfLead } from "../Requests/Queries.ts"
import { decodeAs, decodeCursor, decodeItems, encodeCursor, isUuid, likePattern, pageOf } from "../Rows.ts"

/** Live leads, or with `livemode` false the test leads instead; `query` matches a phone, a name or an e-mail. */
const matching = (
  sql: SqlClient.SqlClient,
  organization: OrganizationRow,
  query: string,
  livemode: boolean
) => {
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
  return sql`l.organization_id = ${organization.id} AND l.livemode = ${livemode} AND ${match}`
}

const leadColumns = (sql: SqlClient.SqlClient) => sql`
  l.id, l.nombre, l.telefono, l.email, json_build_object('id', o.id, 'label', o.label) AS origin, l.created_at`

export const listLeads = Effect.fn("Leads.list")(function* (
  organization: OrganizationRow,
  query: string,
  page: { readonly cursor?: string | undefined; readonly limit: number },
  livemode = true
) {
  const sql = yield* SqlClient.SqlClient
  const after = decodeCursor(page.cursor, "lead")
  const rows = yield* sql`
    SELECT ${leadColumns(sql)}
    FROM leads l JOIN origins o ON o.id = l.origin_id AND o.organization_id = l.organization_id
    WHERE ${matching(sql, organization, query, livemode)}
      ${Option.match(after, {
        onNone: () => sql``,
        onSome: ([at, id]) => sql`AND (l.created_at, l.id) < (${at}, ${id}::uuid)`
      })}
    ORDER BY l.created_at DESC, l.id DESC
    LIMIT ${page.limit + 1}`.pipe(decodeItems(LeadItem))
  return pageOf(rows, page.limit, (last) => encodeCursor(last.created_at, last.id))
})

/** Every lead the list would show for `query`, newest first, streamed as PostgreSQL sends them (see `streamRequests`). */
export const streamLeads = (organization: OrganizationRow, query: string, livemode = true) =>
  Stream.unwrap(
    Effect.map(Effect.service(SqlClient.SqlClient), (sql) =>
      sql`
        SELECT ${leadColumns(sql)}
        FROM leads l JOIN origins o ON o.id = l.origin_id AND o.organization_id = l.organization_id
        WHERE ${matching(sql, organization, query, livemode)}
        ORDER BY l.created_at DESC, l.id DESC`.stream.pipe(
        Stream.orDie,
        Stream.mapEffect((row) => decodeAs(LeadItem, row))
      )
    )
  )

const { requests: _, ...detailFields } = LeadDetail.fields
const LeadWithoutRequests = Schema.Struct(detailFields)

/** A lead of the organization with its notes, tasks, events and the requests that named it. */
export const findLead = Effect.fn("Leads.find")(function* (organizationId: string, id: string) {
  if (!isUuid(id)) return Option.none<typeof LeadDetail.Type>()
  const found = yield* readLead(id)
  if (Option.isNone(found) || found.value.lead.organization_id !== organizationId)
    return Option.none<typeof LeadDetail.Type>()
  const { lead, notes, tasks, events } = found.value
  const requests = yield* requestsOfLead(organizationId, id)
  const detail = yield* decodeAs(LeadWithoutRequests, {
    id: lead.id,
    nombre: lead.nombre,
    telefono: lead.telefono,
    email: lead.email,
    origin: { id: lead.origin_id, label: lead.origin_label },
    property:
      lead.property_id === null ? null : { id: lead.property_id, codigo: lead.property?.codigo ?? "" },
    assignee: lead.assignee_id === null ? null : { id: lead.assignee_id, name: lead.assignee_name ?? "" },
    created_at: lead.created_at,
    updated_at: lead.updated_at,
    erased_at: lead.erased_at,
    livemode: lead.livemode,
    notes: notes.map((note) => ({ body: note.body, created_at: note.created_at })),
    tasks: tasks.map((task) => ({ kind: task.kind, assignee: task.assignee_name, due_at: task.due_at })),
    events: events.map((event) => ({ type: event.type, created_at: event.created_at }))
  })
  return Option.some<typeof LeadDetail.Type>({ ...detail, requests })
})
