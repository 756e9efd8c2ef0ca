import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { childTables } from "./0022_organization_columns.ts"
import { createIndexConcurrently, outsideTransaction, shortTransaction } from "./outsideTransaction.ts"

/**
 * Keys that distribute, step 2 of 5, outside a transaction so that writes go on throughout:
 *
 * - `organization_id` backfilled from each row's parent in batches of `batchSize` rows, each its own
 *   short transaction, walking the table's primary key (a batch reads its range by the index, never
 *   the whole table); the request-log rows of no origin and the audit entries of no organization
 *   move to their own tables the same way.
 * - `organization_id IS NOT NULL` checked by a constraint added `NOT VALID` (no scan) and then
 *   validated (a scan that blocks no writer), so that 0026 sets the column `NOT NULL` without a scan.
 * - The unique indexes that 0024's foreign keys point at and 0026 turns into the primary keys, built `CONCURRENTLY`.
 *
 * Safe to run again from the start after a crash: every step skips what is done.
 */
const batchSize = 5_000

/** Each table's current primary key, with the SQL type of each column (for the batch's bounds). */
const primaryKeys: Record<(typeof childTables)[number]["name"], ReadonlyArray<readonly [string, string]>> = {
  api_keys: [["id", "uuid"]],
  idempotency_keys: [
    ["origin_id", "uuid"],
    ["key", "text"]
  ],
  test_idempotency_keys: [
    ["origin_id", "uuid"],
    ["key", "text"]
  ],
  rate_limit_windows: [
    ["origin_id", "uuid"],
    ["window_start", "timestamptz"]
  ],
  test_rate_limit_windows: [
    ["origin_id", "uuid"],
    ["window_start", "timestamptz"]
  ],
  request_log: [["id", "bigint"]],
  lead_notes: [["id", "uuid"]],
  lead_tasks: [["id", "uuid"]],
  webhook_deliveries: [
    ["endpoint_id", "uuid"],
    ["event_id", "uuid"]
  ]
}

const backfill = (table: (typeof childTables)[number]) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const key = primaryKeys[table.name]
    const columns = key.map(([name]) => `c.${name}`).join(", ")
    const bound = (from: number) => key.map(([, type], i) => `$${from + i}::${type}`).join(", ")
    let last: ReadonlyArray<string> | undefined
    let updated = 0
    while (true) {
      const after = last === undefined ? "true" : `(${columns}) > (${bound(1)})`
      const [upper] = yield* sql.unsafe<Record<string, string>>(
        `SELECT ${key.map(([name]) => `c.${name}::text AS ${name}`).join(", ")} FROM ${table.name} c
         WHERE ${after} ORDER BY ${columns} OFFSET ${batchSize - 1} LIMIT 1`,
        last ?? []
      )
      const next = upper === undefined ? undefined : key.map(([name]) => upper[name]!)
      const offset = last === undefined ? 1 : key.length + 1
      const until = next === undefined ? "true" : `(${columns}) <= (${bound(offset)})`
      const [row] = yield* sql.unsafe<{ n: number }>(
        `WITH batch AS (
           UPDATE ${table.name} c SET organization_id = p.organization_id FROM ${table.parent} p
           WHERE p.id = c.${table.column} AND c.organization_id IS NULL AND ${after} AND ${until}
           RETURNING 1)
         SELECT count(*)::int AS n FROM batch`,
        [...(last ?? []), ...(next ?? [])]
      )
      updated += row?.n ?? 0
      if (next === undefined) break
      last = next
    }
    return updated
  })

/** Moves rows matching `where` from `from` into `into`, `batchSize` at a time, each batch its own transaction. */
const moveInBatches = (from: string, where: string, into: string, columns: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    while (true) {
      const moved = yield* sql.unsafe<{ n: number }>(`
        WITH moved AS (
          DELETE FROM ${from} WHERE ctid = ANY (ARRAY(SELECT ctid FROM ${from} WHERE ${where} LIMIT ${batchSize}))
          RETURNING ${columns}
        ), kept AS (INSERT INTO ${into} (${columns}) SELECT ${columns} FROM moved RETURNING 1)
        SELECT count(*)::int AS n FROM kept`)
      if ((moved[0]?.n ?? 0) === 0) return
    }
  })

export const unattributedColumns =
  "row_key, request_id, at, key_prefix, status, outcome, idempotency_key, duration_ms, livemode"
export const platformAuditColumns = "id, at, operator_id, operator_email, action, target, ip"

/** `organization_id IS NOT NULL`, checked without a scan that blocks writers. */
const checkNotNull = (table: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const name = `${table}_organization_id_not_null`
    const [existing] = yield* sql<{ validated: boolean }>`
      SELECT convalidated AS validated FROM pg_constraint
      WHERE conrelid = ${table}::regclass AND conname = ${name}`
    // Added in a short transaction: its exclusive lock lasts a moment, but waiting for it would queue
    // every write behind it (the rehearsal saw a write wait 1 s on lead_notes).
    if (existing === undefined)
      yield* shortTransaction(
        table,
        sql.unsafe(
          `ALTER TABLE ${table} ADD CONSTRAINT ${name} CHECK (organization_id IS NOT NULL) NOT VALID`
        )
      )
    if (existing?.validated !== true) yield* sql.unsafe(`ALTER TABLE ${table} VALIDATE CONSTRAINT ${name}`)
  })

/** The unique indexes that become primary and unique keys in 0026. */
export const organizationKeys: ReadonlyArray<readonly [name: string, table: string, definition: string]> = [
  ["agents_organization_key", "agents", "(organization_id, id)"],
  ["api_keys_organization_key", "api_keys", "(organization_id, id)"],
  ["audit_log_organization_key", "audit_log", "(organization_id, id)"],
  ["capture_rules_organization_key", "capture_rules", "(organization_id, id)"],
  ["idempotency_keys_organization_key", "idempotency_keys", "(organization_id, origin_id, key)"],
  ["test_idempotency_keys_organization_key", "test_idempotency_keys", "(organization_id, origin_id, key)"],
  ["lead_erasures_organization_key", "lead_erasures", "(organization_id, lead_id)"],
  ["lead_notes_organization_key", "lead_notes", "(organization_id, id)"],
  ["lead_tasks_organization_key", "lead_tasks", "(organization_id, id)"],
  ["leads_organization_key", "leads", "(organization_id, id)"],
  ["origins_organization_key", "origins", "(organization_id, id)"],
  ["outbox_events_organization_key", "outbox_events", "(organization_id, id)"],
  ["properties_organization_key", "properties", "(organization_id, id)"],
  ["rate_limit_windows_organization_key", "rate_limit_windows", "(organization_id, origin_id, window_start)"],
  [
    "test_rate_limit_windows_organization_key",
    "test_rate_limit_windows",
    "(organization_id, origin_id, window_start)"
  ],
  ["request_log_organization_key", "request_log", "(organization_id, id)"],
  ["webhook_deliveries_organization_key", "webhook_deliveries", "(organization_id, endpoint_id, event_id)"]
]

/** Unique keys that are not primary keys. */
export const organizationUniqueIndexes: ReadonlyArray<readonly [name: string, definition: string]> = [
  ["request_log_organization_row_key", "request_log (organization_id, row_key)"],
  [
    "api_keys_one_active_per_organization_origin_and_mode",
    "api_keys (organization_id, origin_id, livemode) WHERE revoked_at IS NULL"
  ]
]

export default outsideTransaction(
  Effect.gen(function* () {
    for (const table of childTables) {
      const rows = yield* backfill(table)
      if (rows > 0)
        yield* Effect.logInfo("organization_id backfilled").pipe(
          Effect.annotateLogs({ table: table.name, rows })
        )
    }
    yield* moveInBatches("request_log", "origin_id IS NULL", "unattributed_requests", unattributedColumns)
    yield* moveInBatches("audit_log", "organization_id IS NULL", "platform_audit_log", platformAuditColumns)
    for (const table of childTables) yield* checkNotNull(table.name)
    yield* checkNotNull("audit_log")
    for (const [name, table, columns] of organizationKeys)
      yield* createIndexConcurrently(name, `${table} ${columns}`, { unique: true })
    for (const [name, definition] of organizationUniqueIndexes)
      yield* createIndexConcurrently(name, definition, { unique: true })
  })
)
