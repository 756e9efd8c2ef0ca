import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { inShortTransactions, shortTransaction } from "./outsideTransaction.ts"

/**
 * A request is admitted where the service connects (docs/sre.md#distributing-by-organization-citus): on Citus the
 * key check and the rate window are answered by the coordinator itself, so a create's one trip to a
 * worker is its write.
 *
 * - `api_key_directory` carries everything authentication reads of a key: its hash, mode and
 *   revocation, its origin's id, label and rate limit (the organization's country is read from
 *   `organizations`, a reference table too). The key's and the origin's writes keep it in step
 *   (`KeyStore`); nothing is written to it per request. Nullable: a key that the release before issues
 *   during the deploy has no hash here and is checked as before, and `migrate` fills the columns
 *   (`keyDirectory.ts`), after this migration and again on every run.
 * - `rate_windows`: the per-origin minute windows of both modes, a table the coordinator keeps to
 *   itself (never distributed). Unlogged: a window is a minute's count, and a crash or a failover that
 *   forgets it lets at most one minute's limit through again; its writes skip the WAL. The release
 *   before counts in `rate_limit_windows` and `test_rate_limit_windows` until its instances stop.
 *
 * Each change is a short transaction of its own; written so that it can be applied again.
 */
export default inShortTransactions(
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* shortTransaction(
      "api_key_directory",
      sql`
        ALTER TABLE api_key_directory
          ADD COLUMN IF NOT EXISTS key_hash text,
          ADD COLUMN IF NOT EXISTS livemode boolean,
          ADD COLUMN IF NOT EXISTS revoked_at timestamptz,
          ADD COLUMN IF NOT EXISTS origin_id uuid,
          ADD COLUMN IF NOT EXISTS origin_label text,
          ADD COLUMN IF NOT EXISTS rate_limit integer`
    )
    yield* sql`
      CREATE UNLOGGED TABLE IF NOT EXISTS rate_windows (
        origin_id uuid NOT NULL,
        livemode boolean NOT NULL,
        window_start timestamptz NOT NULL,
        count integer NOT NULL,
        PRIMARY KEY (origin_id, livemode, window_start)
      )`
  })
)
