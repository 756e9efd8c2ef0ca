import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { childTables } from "./0022_organization_columns.ts"
import { organizationKeys } from "./0023_organization_backfill.ts"
import { foreignKeys } from "./0024_organization_foreign_keys.ts"

/**
 * Keys that distribute (docs/sre.md#distributing-by-organization-citus), step 5 of 5: the contract
 * release. What only the release before 0022 used goes; its successor, which writes
 * `organization_id` itself and calls the functions that take it, runs on what is left.
 *
 * - `organization_id` becomes `NOT NULL` (no scan: 0023's validated check proves it) and leads every
 *   primary key (the unique indexes 0023 built become the keys) and unique key of a tenant table. The
 *   foreign keys without it go: their twins from 0024 stay. `api_keys.public_id` is unique in
 *   `api_key_directory`.
 * - No triggers: what they did, the SQL functions do in their own statements (a trigger on a table
 *   distributed by Citus runs on the node holding the row, where it cannot reach the others). The
 *   round-robin sequences go (turns are `capture_rules.turns_taken` since 0024); a deleted delivery's
 *   attempts go by 0024's cascading foreign key.
 * - The previous signatures of the functions that now take the organization first go.
 *
 * Every statement changes the catalog only (no table is scanned or rewritten); the locks it takes
 * are held for as long as the transaction lasts.
 */
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

/** The entries of `migrations/functions.ts` that the functions above were applied from. */
const droppedEntries = [
  "capture_rule_turns_sequence",
  "capture_rule_take_turn",
  "capture_rule_turns_taken",
  "capture_rules_turns",
  "leads_note_filled",
  "outbox_webhook_snapshot",
  "outbox_webhook_fan_out",
  "create_or_enrich_lead",
  "reserve_idempotency_key",
  "release_idempotency_key",
  "write_lead"
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

  for (const [name, table] of organizationKeys) {
    const [swapped] = yield* sql<{ done: boolean }>`
      SELECT EXISTS (SELECT 1 FROM pg_class WHERE oid = to_regclass(${name})) IS FALSE AS done`
    if (swapped?.done === true) continue
    yield* sql.unsafe(
      `ALTER TABLE ${table} DROP CONSTRAINT IF EXISTS ${table}_pkey, ADD CONSTRAINT ${table}_pkey PRIMARY KEY USING INDEX ${name}`
    )
  }
  const [endpoints] = yield* sql<{ pending: boolean }>`
    SELECT to_regclass('webhook_endpoints_organization_id_idx') IS NOT NULL AS pending`
  if (endpoints?.pending === true)
    yield* sql`
      ALTER TABLE webhook_endpoints DROP CONSTRAINT IF EXISTS webhook_endpoints_pkey,
        ADD CONSTRAINT webhook_endpoints_pkey PRIMARY KEY USING INDEX webhook_endpoints_organization_id_idx`
  yield* sql`ALTER TABLE api_keys DROP CONSTRAINT IF EXISTS api_keys_public_id_key`
  yield* sql`DROP INDEX IF EXISTS api_keys_one_active_per_origin_and_mode`
  yield* sql`DROP INDEX IF EXISTS request_log_row_key_idx`

  for (const signature of droppedFunctions) yield* sql.unsafe(`DROP FUNCTION IF EXISTS ${signature}`)
  const [recorded] = yield* sql<{
    present: boolean
  }>`SELECT to_regclass('schema_functions') IS NOT NULL AS present`
  if (recorded?.present === true)
    yield* sql`DELETE FROM schema_functions WHERE name IN ${sql.in(droppedEntries)}`
})
