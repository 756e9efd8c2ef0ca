import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Rejected leads kept for rescue (docs/contract.md#11-rejected-leads-are-kept-for-rescue).
 *
 * - `request_log.kept_body`: the body of an authenticated `POST /v1/leads` answered 400
 *   `validation_error` or 422 `property_not_found` (not a dry run), as received. Written with its row
 *   by the request log's batched INSERT (so a batch written again after a lost answer skips it with
 *   its row), set to NULL by a rescue, by an erasure of the lead it names, and by the janitor after
 *   `REJECTED_RETENTION_DAYS`. Personal data.
 * - `request_log.rescued_lead_id`: the lead a rescue created or enriched from the kept body (a
 *   request is rescued at most once: `rescue_lead` in migrations/functions.ts).
 * - The partial index serves the "kept for rescue" lists and the retention sweep.
 *
 * Written so that it can be applied again (the production test re-applies the newest migration).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE request_log ADD COLUMN IF NOT EXISTS kept_body text`
  yield* sql`ALTER TABLE request_log ADD COLUMN IF NOT EXISTS rescued_lead_id uuid`
  yield* sql`
    CREATE INDEX IF NOT EXISTS request_log_kept_idx ON request_log (origin_id, at DESC, id DESC)
    WHERE kept_body IS NOT NULL`
})
