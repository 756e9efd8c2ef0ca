import { Effect, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { StoredLeadFields } from "../Domain/LeadInput.ts"
import { decodeFirst, decodeRows } from "../Platform/Sql/Decode.ts"

/**
 * A lead's row as `to_jsonb` gives it, with what its references name: the stored fields by
 * `StoredLeadFields`, as the write's document gave them, so a new field is read without an edit here.
 */
const LeadRow = Schema.Struct({
  id: Schema.String,
  organization_id: Schema.String,
  origin_id: Schema.String,
  origin_label: Schema.String,
  ...StoredLeadFields.fields,
  phone_key: Schema.NullOr(Schema.String),
  /** The lead's column; `property` is the catalog row it names, when that row exists. */
  property_id: Schema.NullOr(Schema.String),
  property: Schema.NullOr(
    Schema.Struct({ id: Schema.String, codigo: Schema.String, external_code: Schema.NullOr(Schema.String) })
  ),
  assignee_id: Schema.NullOr(Schema.String),
  assignee_name: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromString,
  updated_at: Schema.DateFromString,
  erased_at: Schema.NullOr(Schema.DateFromString),
  livemode: Schema.Boolean
})
const NoteRow = Schema.Struct({ body: Schema.String, request_id: Schema.String, created_at: Schema.Date })
const TaskRow = Schema.Struct({
  kind: Schema.String,
  assignee_id: Schema.NullOr(Schema.String),
  assignee_name: Schema.NullOr(Schema.String),
  due_at: Schema.Date,
  created_at: Schema.Date
})
const EventRow = Schema.Struct({
  type: Schema.String,
  payload: Schema.Unknown,
  created_at: Schema.Date,
  published_at: Schema.NullOr(Schema.Date)
})

/** A lead as stored, with its notes, tasks and events (each oldest first). */
export interface LeadRecord {
  readonly lead: typeof LeadRow.Type
  readonly notes: ReadonlyArray<typeof NoteRow.Type>
  readonly tasks: ReadonlyArray<typeof TaskRow.Type>
  readonly events: ReadonlyArray<typeof EventRow.Type>
}

/**
 * The one read of a lead with its notes, tasks and events: the CLI's `lead show`
 * (`LeadRepository.show`), the console's lead detail (`Console/Leads/Queries.ts`) and the
 * personal-data export (`PersonalData.export`) each map it to their own shape. Its statements run
 * one after another, so inside a caller's transaction they read one snapshot.
 */
export const readLead = Effect.fn("LeadRecord.read")(function* (id: string) {
  const sql = yield* SqlClient.SqlClient
  const found = yield* sql`
    SELECT to_jsonb(l) || jsonb_build_object(
             'origin_label', o.label,
             'property', CASE WHEN p.id IS NULL THEN NULL
                              ELSE jsonb_build_object('id', p.id, 'codigo', p.codigo, 'external_code', p.external_code)
                         END,
             'assignee_name', a.name) AS lead
    FROM leads l
    JOIN origins o ON o.id = l.origin_id AND o.organization_id = l.organization_id
    LEFT JOIN properties p ON p.id = l.property_id AND p.organization_id = l.organization_id
    LEFT JOIN agents a ON a.id = l.assignee_id AND a.organization_id = l.organization_id
    WHERE l.id = ${id}`.pipe(
    decodeFirst(Schema.Struct({ lead: LeadRow })),
    Effect.map(Option.map((row) => row.lead))
  )
  if (Option.isNone(found)) return Option.none<LeadRecord>()
  // What hangs on the lead, read in its organization (on Citus: on the one node holding it). Ids of a
  // distributed table are not in the order of their rows (each node numbers its own): time first.
  const organizationId = found.value.organization_id
  const notes = yield* sql`
    SELECT body, request_id, created_at FROM lead_notes
    WHERE organization_id = ${organizationId} AND lead_id = ${id} ORDER BY created_at, id`.pipe(
    decodeRows(NoteRow)
  )
  const tasks = yield* sql`
    SELECT t.kind, t.assignee_id, a.name AS assignee_name, t.due_at, t.created_at
    FROM lead_tasks t LEFT JOIN agents a ON a.id = t.assignee_id AND a.organization_id = t.organization_id
    WHERE t.organization_id = ${organizationId} AND t.lead_id = ${id} ORDER BY t.created_at, t.id`.pipe(
    decodeRows(TaskRow)
  )
  const events = yield* sql`
    SELECT type, payload, created_at, published_at FROM outbox_events
    WHERE organization_id = ${organizationId} AND lead_id = ${id} ORDER BY created_at, id`.pipe(
    decodeRows(EventRow)
  )
  return Option.some<LeadRecord>({ lead: found.value, notes, tasks, events })
})
