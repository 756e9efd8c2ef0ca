import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Sign-in failures counted per (e-mail, address) pair and per address, each with a backoff from
 * its last failure (issue 26): counting per e-mail let anyone who knew an operator's e-mail lock
 * the operator out. The counts are minutes-lived state, so the old table is replaced, not converted.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP TABLE login_throttle`
  yield* sql`
    CREATE TABLE login_throttle (
      scope text NOT NULL CHECK (scope IN ('pair', 'address')),
      subject text NOT NULL,
      failures integer NOT NULL,
      last_failure_at timestamptz NOT NULL,
      PRIMARY KEY (scope, subject)
    )`
  yield* sql`CREATE INDEX login_throttle_last_failure_idx ON login_throttle (last_failure_at)`
})
