import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { childTables } from "./0022_organization_columns.ts"
import { organizationKeys } from "./0023_organization_backfill.ts"
import { foreignKeys } from "./0024_organization_foreign_keys.ts"
import { inShortTransactions, shortTransaction } from "./outsideTransaction.ts"

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
 * Every statement changes the catalog only (no table is scanned or rewritten), in a short
 * transaction of its own for each table (`shortTransaction`: a lock waited for 200 ms at most, then
 * tried again), so the release before, running meanwhile, never waits long nor deadlocks with it.
 * The contract release's SQL functions are applied after it. Safe to run again from the start.
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

export default inShortTransactions(
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const inShort = (what: string, statements: ReadonlyArray<string>) =>
      shortTransaction(
        what,
        Effect.forEach(statements, (statement) => sql.unsafe(statement), { discard: true })
      )

    for (const [trigger, table] of [
      ["capture_rules_turns", "capture_rules"],
      ["leads_note_filled", "leads"],
      ["outbox_webhook_snapshot", "outbox_events"],
      ["outbox_webhook_fan_out", "outbox_events"],
      ["webhook_deliveries_drop_attempts", "webhook_deliveries"],
      ...[...childTables.map((child) => child.name), "audit_log"].map((table) => [
        "fill_organization_id",
        table
      ])
    ] as const)
      yield* inShort(`${table}.${trigger}`, [`DROP TRIGGER IF EXISTS ${trigger} ON ${table}`])

    const sequences = yield* sql<{ name: string }>`
      SELECT sequencename AS name FROM pg_sequences
      WHERE schemaname = current_schema() AND sequencename LIKE 'capture\\_rule\\_turns\\_%'`
    for (const { name } of sequences)
      if (/^capture_rule_turns_[0-9a-f]{32}$/.test(name)) yield* sql.unsafe(`DROP SEQUENCE IF EXISTS ${name}`)

    // No scan: 0023's validated check proves the column is filled.
    for (const table of [...childTables.map((child) => child.name), "audit_log"])
      yield* inShort(table, [
        `ALTER TABLE ${table} ALTER COLUMN organization_id SET NOT NULL`,
        `ALTER TABLE ${table} DROP CONSTRAINT IF EXISTS ${table}_organization_id_not_null`
      ])

    for (const [table, old] of foreignKeys)
      if (old !== null)
        yield* inShort(`${table}.${old}`, [`ALTER TABLE ${table} DROP CONSTRAINT IF EXISTS ${old}`])

    for (const [name, table] of organizationKeys) {
      const [swapped] = yield* sql<{ done: boolean }>`
        SELECT EXISTS (SELECT 1 FROM pg_class WHERE oid = to_regclass(${name})) IS FALSE AS done`
      if (swapped?.done === true) continue
      yield* inShort(`${table} primary key`, [
        `ALTER TABLE ${table} DROP CONSTRAINT IF EXISTS ${table}_pkey, ADD CONSTRAINT ${table}_pkey PRIMARY KEY USING INDEX ${name}`
      ])
    }
    const [endpoints] = yield* sql<{ pending: boolean }>`
      SELECT to_regclass('webhook_endpoints_organization_id_idx') IS NOT NULL AS pending`
    if (endpoints?.pending === true)
      yield* inShort("webhook_endpoints primary key", [
        `ALTER TABLE webhook_endpoints DROP CONSTRAINT IF EXISTS webhook_endpoints_pkey,
           ADD CONSTRAINT webhook_endpoints_pkey PRIMARY KEY USING INDEX webhook_endpoints_organization_id_idx`
      ])
    yield* inShort("api_keys", ["ALTER TABLE api_keys DROP CONSTRAINT IF EXISTS api_keys_public_id_key"])
    // Indexes that are not a constraint go without blocking anyone.
    yield* sql`DROP INDEX CONCURRENTLY IF EXISTS api_keys_one_active_per_origin_and_mode`
    yield* sql`DROP INDEX CONCURRENTLY IF EXISTS request_log_row_key_idx`

    yield* inShort(
      "functions",
      droppedFunctions.map((signature) => `DROP FUNCTION IF EXISTS ${signature}`)
    )
    const [recorded] = yield* sql<{
      present: boolean
    }>`SELECT to_regclass('schema_functions') IS NOT NULL AS present`
    if (recorded?.present === true)
      yield* sql`DELETE FROM schema_functions WHERE name IN ${sql.in(droppedEntries)}`
  })
)
