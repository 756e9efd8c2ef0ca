import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * `request_log.row_key`: the key the instance gives a row when it queues it. A batch whose answer
 * was lost (the connection died mid-commit, a failover) is written again when the database answers;
 * the unique index makes the second INSERT skip the rows the first one committed, so a row is never
 * written twice. Rows of the previous release have none (NULL, which the index does not compare).
 * Written so that it can be applied again (the production test re-applies the newest migration).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE request_log ADD COLUMN IF NOT EXISTS row_key uuid`
  yield* sql`CREATE UNIQUE INDEX IF NOT EXISTS request_log_row_key_idx ON request_log (row_key)`
})
