import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** Rows moved per transaction. */
const batchSize = 5_000

const columns =
  "id, organization_id, row_key, request_id, at, origin_id, key_prefix, status, outcome, lead_id, idempotency_key, duration_ms, livemode, kept_body, rescued_lead_id"

/**
 * `request_log`, the request log before it was partitioned (migration 0029), emptied into
 * `logged_requests` until the contract release drops it: the rows it held at the deploy, and those the
 * previous release's instances write there until they stop.
 *
 * One batch: the newest `size` rows (5,000 by default), moved in one transaction with their ids (their days'
 * partitions made first); rows older than `cutoff` (past the retention) are deleted instead. Two
 * statements rather than one writable CTE, so that Citus runs each on the shards' nodes. Returns the
 * rows taken from `request_log`: none when it is empty.
 */
export const moveBatch = (cutoff: Date, size = batchSize) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(
      Effect.gen(function* () {
        // Ordered by the column, not by the text it is read as (`ORDER BY` an output column's name
        // sorts that column: "999999" would come before "5075520", the oldest rows first).
        const rows = yield* sql<{ id: string }>`
          SELECT r.id::text AS id FROM request_log r ORDER BY r.id DESC LIMIT ${size}`
        if (rows.length === 0) return 0
        const batch = sql`id = ANY(${`{${rows.map((row) => row.id).join(",")}}`}::bigint[])`
        yield* sql`
          SELECT logged_requests_add_partitions(min(at), max(at))
          FROM request_log WHERE ${batch} AND at >= ${cutoff} HAVING count(*) > 0`
        yield* sql`
          INSERT INTO logged_requests (${sql.literal(columns)})
          SELECT ${sql.literal(columns)} FROM request_log WHERE ${batch} AND at >= ${cutoff}
          ON CONFLICT DO NOTHING`
        yield* sql`DELETE FROM request_log WHERE ${batch}`
        return rows.length
      })
    )
  })

/**
 * Batches moved until `request_log` is empty or `maxBatches` have run (a sweep's share: a big table
 * empties over several sweeps, the newest rows first, so the console's recent pages fill first).
 * Returns the rows taken.
 */
export const moveRows = (cutoff: Date, maxBatches: number) =>
  Effect.gen(function* () {
    let taken = 0
    for (let batch = 0; batch < maxBatches; batch++) {
      const rows = yield* moveBatch(cutoff)
      taken += rows
      if (rows === 0) break
    }
    return taken
  })
