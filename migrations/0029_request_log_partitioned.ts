import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { sqlFunctions } from "./functions.ts"

/**
 * Retention without DELETE (docs/sre.md#retention-jobs), the expand release: `logged_requests`, the
 * request log partitioned by day (UTC) on `at`, beside `request_log`, which the previous release
 * keeps writing until its instances stop (its `ON CONFLICT (organization_id, row_key)` names a unique
 * key that a table partitioned by `at` cannot have: every unique key of a partitioned table carries
 * the partition key). The janitor moves `request_log`'s rows here, newest first, a bounded number a
 * sweep, while the previous release may still write there (`src/Intake/PreviousRequestLog.ts`), and
 * drops a day's partition once the day is past the retention.
 *
 * - Keys: `(organization_id, id, at)` and `(organization_id, row_key, at)` (a row's `at` is fixed when
 *   it is queued, so a batch written twice still finds its rows). `id` from a sequence of its own that
 *   starts a billion past `request_log`'s: a moved row keeps its id, the previous release's instances
 *   draw theirs from `request_log`'s meanwhile, and no id names two rows unless they write a billion
 *   rows during the rollout. (Not `request_log`'s identity itself: on Citus, distributing a table whose
 *   default draws from another table's identity fails on the workers, "relation
 *   request_log_id_seq does not exist".)
 * - `logged_requests_add_partitions(from, until)` and `logged_requests_drop_partitions(before)` run
 *   as the schema's owner (the service's role has no DDL rights), today's text in
 *   `migrations/functions.ts`; created here too, to make the first partitions.
 * - The partitions from yesterday through a week ahead (a moved row's day gets its own when it moves).
 *
 * A new table and functions only: nothing the previous release uses changes. Safe to run again.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE SEQUENCE IF NOT EXISTS logged_requests_id_seq AS bigint`
  yield* sql`
    CREATE TABLE IF NOT EXISTS logged_requests (
      id bigint NOT NULL DEFAULT nextval('logged_requests_id_seq'),
      organization_id uuid NOT NULL,
      row_key uuid,
      request_id text NOT NULL,
      at timestamptz NOT NULL,
      origin_id uuid,
      key_prefix text,
      status integer NOT NULL,
      outcome text NOT NULL,
      lead_id uuid,
      idempotency_key text,
      duration_ms double precision NOT NULL,
      livemode boolean NOT NULL DEFAULT true,
      kept_body text,
      rescued_lead_id uuid,
      CONSTRAINT logged_requests_pkey PRIMARY KEY (organization_id, id, at),
      CONSTRAINT logged_requests_row_key UNIQUE (organization_id, row_key, at),
      CONSTRAINT logged_requests_origin_fkey FOREIGN KEY (organization_id, origin_id)
        REFERENCES origins (organization_id, id)
    ) PARTITION BY RANGE (at)`
  yield* sql`ALTER SEQUENCE logged_requests_id_seq OWNED BY logged_requests.id`
  // The ids start a billion past request_log's, once (a run again finds the sequence used).
  yield* sql`
    DO $do$
    DECLARE
      v_last bigint;
    BEGIN
      IF (SELECT NOT is_called FROM logged_requests_id_seq) THEN
        EXECUTE format('SELECT last_value FROM %s', pg_get_serial_sequence('request_log', 'id')) INTO v_last;
        PERFORM setval('logged_requests_id_seq', v_last + 1000000000);
      END IF;
    END
    $do$`
  yield* sql`CREATE INDEX IF NOT EXISTS logged_requests_origin_idx ON logged_requests (origin_id, at DESC, id DESC)`
  yield* sql`
    CREATE INDEX IF NOT EXISTS logged_requests_kept_idx ON logged_requests (origin_id, at DESC, id DESC)
    WHERE kept_body IS NOT NULL`
  yield* sql`CREATE INDEX IF NOT EXISTS logged_requests_request_id_idx ON logged_requests (request_id)`
  yield* sql`
    CREATE INDEX IF NOT EXISTS logged_requests_lead_idx ON logged_requests (organization_id, lead_id)
    WHERE lead_id IS NOT NULL`

  // What `SET search_path FROM CURRENT` pins the owner's functions to, as the migrator applies them.
  yield* sql`SELECT set_config('search_path', quote_ident(current_schema()) || ', pg_temp', true)`
  for (const { name, text } of sqlFunctions)
    if (name === "logged_requests_add_partitions" || name === "logged_requests_drop_partitions")
      yield* sql.unsafe(text)
  yield* sql`SELECT logged_requests_add_partitions(now() - interval '1 day', now() + interval '7 days')`
})
