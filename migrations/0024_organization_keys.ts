import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { childTables } from "./0022_organization_columns.ts"
import { organizationKeys } from "./0023_organization_backfill.ts"

/**
 * Keys that distribute, step 3 of 4, in the transaction that also applies the SQL functions which
 * write `organization_id` themselves:
 *
 * - `organization_id` becomes `NOT NULL` (no scan: 0023's validated check proves it) and leads every
 *   primary key (the unique indexes 0023 built become the keys), unique key and foreign key of a
 *   tenant table. The new foreign keys are added `NOT VALID` (no scan under lock); 0025 validates
 *   them. `api_keys.public_id` is unique in `api_key_directory` now.
 * - No triggers: what they did, the SQL functions now do in their own statements (a trigger on a
 *   table distributed by Citus runs on the node holding the row, where it cannot reach the others).
 *   A round-robin rule's turns, kept in a sequence per rule until now, move to
 *   `capture_rules.turns_taken`; a deleted delivery's attempts go by a cascading foreign key.
 */
export const foreignKeys: ReadonlyArray<
  readonly [
    table: string,
    old: string | null,
    name: string,
    columns: string,
    references: string,
    action?: string
  ]
> = [
  ["api_keys", "api_keys_origin_id_fkey", "api_keys_origin_fkey", "organization_id, origin_id", "origins"],
  [
    "capture_rules",
    "capture_rules_origin_id_fkey",
    "capture_rules_origin_fkey",
    "organization_id, origin_id",
    "origins"
  ],
  [
    "capture_rules",
    "capture_rules_property_id_fkey",
    "capture_rules_property_fkey",
    "organization_id, property_id",
    "properties"
  ],
  [
    "idempotency_keys",
    "idempotency_keys_origin_id_fkey",
    "idempotency_keys_origin_fkey",
    "organization_id, origin_id",
    "origins"
  ],
  [
    "test_idempotency_keys",
    "test_idempotency_keys_origin_id_fkey",
    "test_idempotency_keys_origin_fkey",
    "organization_id, origin_id",
    "origins"
  ],
  [
    "lead_erasures",
    "lead_erasures_lead_id_fkey",
    "lead_erasures_lead_fkey",
    "organization_id, lead_id",
    "leads"
  ],
  ["lead_notes", "lead_notes_lead_id_fkey", "lead_notes_lead_fkey", "organization_id, lead_id", "leads"],
  ["lead_tasks", "lead_tasks_lead_id_fkey", "lead_tasks_lead_fkey", "organization_id, lead_id", "leads"],
  [
    "lead_tasks",
    "lead_tasks_assignee_id_fkey",
    "lead_tasks_assignee_fkey",
    "organization_id, assignee_id",
    "agents"
  ],
  ["leads", "leads_assignee_id_fkey", "leads_assignee_fkey", "organization_id, assignee_id", "agents"],
  ["leads", "leads_origin_id_fkey", "leads_origin_fkey", "organization_id, origin_id", "origins"],
  ["leads", "leads_property_id_fkey", "leads_property_fkey", "organization_id, property_id", "properties"],
  [
    "outbox_events",
    "outbox_events_lead_id_fkey",
    "outbox_events_lead_fkey",
    "organization_id, lead_id",
    "leads"
  ],
  [
    "rate_limit_windows",
    "rate_limit_windows_origin_id_fkey",
    "rate_limit_windows_origin_fkey",
    "organization_id, origin_id",
    "origins"
  ],
  [
    "test_rate_limit_windows",
    "test_rate_limit_windows_origin_id_fkey",
    "test_rate_limit_windows_origin_fkey",
    "organization_id, origin_id",
    "origins"
  ],
  [
    "request_log",
    "request_log_origin_id_fkey",
    "request_log_origin_fkey",
    "organization_id, origin_id",
    "origins"
  ],
  [
    "webhook_deliveries",
    "webhook_deliveries_endpoint_id_fkey",
    "webhook_deliveries_endpoint_fkey",
    "organization_id, endpoint_id",
    "webhook_endpoints",
    "ON DELETE CASCADE"
  ],
  [
    "webhook_deliveries",
    "webhook_deliveries_outbox_id_fkey",
    "webhook_deliveries_outbox_fkey",
    "organization_id, outbox_id",
    "outbox_events",
    "ON DELETE CASCADE"
  ],
  [
    "webhook_attempts",
    null,
    "webhook_attempts_delivery_fkey",
    "organization_id, endpoint_id, event_id",
    "webhook_deliveries",
    "ON DELETE CASCADE"
  ]
]

/** Tables whose key moves to the index 0023 built, and the key's columns on the parent side. */
const referencedKeys: Record<string, string> = {
  origins: "organization_id, id",
  properties: "organization_id, id",
  agents: "organization_id, id",
  leads: "organization_id, id",
  webhook_endpoints: "organization_id, id",
  outbox_events: "organization_id, id",
  webhook_deliveries: "organization_id, endpoint_id, event_id"
}

export const droppedFunctions = [
  "capture_rule_take_turn(uuid)",
  "capture_rule_turns_taken(uuid)",
  "capture_rules_turns()",
  "capture_rule_turns_sequence(uuid)",
  "leads_note_filled()",
  "outbox_webhook_snapshot()",
  "outbox_webhook_fan_out()",
  "webhook_deliveries_drop_attempts()",
  "fill_organization_id()",
  "create_or_enrich_lead(uuid, uuid, text, text, text, text, uuid, text, text, timestamptz, timestamptz, text, uuid)",
  "reserve_idempotency_key(boolean, uuid, text, text, uuid, timestamptz, timestamptz, timestamptz)",
  "release_idempotency_key(boolean, uuid, text, uuid)",
  "write_lead(uuid, uuid, text, text, text, text, text, text, text, text, timestamptz, timestamptz, text, uuid, boolean)"
]

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP TRIGGER IF EXISTS capture_rules_turns ON capture_rules`
  yield* sql`DROP TRIGGER IF EXISTS leads_note_filled ON leads`
  yield* sql`DROP TRIGGER IF EXISTS outbox_webhook_snapshot ON outbox_events`
  yield* sql`DROP TRIGGER IF EXISTS outbox_webhook_fan_out ON outbox_events`
  yield* sql`DROP TRIGGER IF EXISTS webhook_deliveries_drop_attempts ON webhook_deliveries`
  for (const table of [...childTables.map((child) => child.name), "audit_log"])
    yield* sql.unsafe(`DROP TRIGGER IF EXISTS fill_organization_id ON ${table}`)

  // The turns each rule's sequence gave, then the sequences.
  yield* sql`UPDATE capture_rules SET turns_taken = capture_rule_turns_taken(id) WHERE turns_taken = 0`
  const sequences = yield* sql<{ name: string }>`
    SELECT sequencename AS name FROM pg_sequences
    WHERE schemaname = current_schema() AND sequencename LIKE 'capture\\_rule\\_turns\\_%'`
  for (const { name } of sequences)
    if (/^capture_rule_turns_[0-9a-f]{32}$/.test(name)) yield* sql.unsafe(`DROP SEQUENCE IF EXISTS ${name}`)

  for (const table of [...childTables.map((child) => child.name), "audit_log"]) {
    yield* sql.unsafe(`ALTER TABLE ${table} ALTER COLUMN organization_id SET NOT NULL`)
    yield* sql.unsafe(`ALTER TABLE ${table} DROP CONSTRAINT IF EXISTS ${table}_organization_id_not_null`)
  }

  for (const [table, old] of foreignKeys)
    if (old !== null) yield* sql.unsafe(`ALTER TABLE ${table} DROP CONSTRAINT IF EXISTS ${old}`)
  // The attempts of deliveries that are gone (the trigger deleted them with their delivery).
  yield* sql`
    DELETE FROM webhook_attempts a WHERE NOT EXISTS (
      SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = a.endpoint_id AND d.event_id = a.event_id)`

  for (const [name, table] of organizationKeys)
    yield* sql.unsafe(
      `ALTER TABLE ${table} DROP CONSTRAINT IF EXISTS ${table}_pkey, ADD CONSTRAINT ${table}_pkey PRIMARY KEY USING INDEX ${name}`
    )
  yield* sql`ALTER TABLE webhook_endpoints DROP CONSTRAINT IF EXISTS webhook_endpoints_pkey`
  yield* sql`ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_endpoints_pkey PRIMARY KEY USING INDEX webhook_endpoints_organization_id_idx`
  yield* sql`ALTER TABLE api_keys DROP CONSTRAINT IF EXISTS api_keys_public_id_key`
  yield* sql`DROP INDEX IF EXISTS api_keys_one_active_per_origin_and_mode`
  yield* sql`DROP INDEX IF EXISTS request_log_row_key_idx`

  for (const [table, , name, columns, references, action] of foreignKeys)
    yield* sql.unsafe(
      `ALTER TABLE ${table} ADD CONSTRAINT ${name} FOREIGN KEY (${columns})
       REFERENCES ${references} (${referencedKeys[references]}) ${action ?? ""} NOT VALID`
    )

  for (const signature of droppedFunctions) yield* sql.unsafe(`DROP FUNCTION IF EXISTS ${signature}`)
  const [recorded] = yield* sql<{
    present: boolean
  }>`SELECT to_regclass('schema_functions') IS NOT NULL AS present`
  if (recorded?.present === true)
    yield* sql`
    DELETE FROM schema_functions WHERE name IN (
      'capture_rule_turns_sequence', 'capture_rule_take_turn', 'capture_rule_turns_taken', 'capture_rules_turns',
      'leads_note_filled', 'outbox_webhook_snapshot', 'outbox_webhook_fan_out', 'create_or_enrich_lead',
      'reserve_idempotency_key', 'release_idempotency_key', 'write_lead')`
})
