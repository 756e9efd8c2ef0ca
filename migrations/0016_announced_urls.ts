import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Where each running server said it listens (`api`, `admin`), written at start and removed when it
 * stops, so an operator command (`demo`) prints the URLs of the server actually running on this
 * database rather than its own environment's defaults. Not tenant data: one row per listener of a
 * running instance.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE IF NOT EXISTS announced_urls (
      instance text NOT NULL,
      listener text NOT NULL,
      url text NOT NULL,
      announced_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (instance, listener)
    )`
})
