import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Test mode (docs/contract.md#10-test-mode): an origin may hold a test key beside its live key, and what a test
 * key writes is test data that never meets live data.
 *
 * - `api_keys.livemode`: one active key per origin and mode.
 * - `leads.livemode`. A phone can exist once in each mode: a test lead's match key is kept apart by
 *   `lead_match_key` (migrations/functions.ts), so the one unique index on (organization, phone_key)
 *   still decides races, and still is the index the previous release's `create_or_enrich_lead`
 *   names (an instance of that release re-applies its own text when it starts during a deploy).
 * - `request_log.livemode`: test requests are logged like live ones, marked.
 * - A test key's rate windows and idempotency keys live in their own tables, shaped like the live
 *   ones. The live tables keep their keys unchanged, so the previous release's statements (`ON
 *   CONFLICT (origin_id, window_start)`, `(origin_id, key)`) hold during a rolling deploy.
 *
 * Written so that it can be applied again (the production test re-applies the newest migration).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  yield* sql`ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS livemode boolean NOT NULL DEFAULT true`
  yield* sql`DROP INDEX IF EXISTS api_keys_one_active_per_origin`
  yield* sql`
    CREATE UNIQUE INDEX IF NOT EXISTS api_keys_one_active_per_origin_and_mode
    ON api_keys (origin_id, livemode) WHERE revoked_at IS NULL`

  yield* sql`ALTER TABLE leads ADD COLUMN IF NOT EXISTS livemode boolean NOT NULL DEFAULT true`
  yield* sql`CREATE INDEX IF NOT EXISTS leads_test_idx ON leads (organization_id, created_at DESC) WHERE NOT livemode`

  yield* sql`ALTER TABLE request_log ADD COLUMN IF NOT EXISTS livemode boolean NOT NULL DEFAULT true`

  yield* sql`
    CREATE TABLE IF NOT EXISTS test_rate_limit_windows (
      origin_id uuid NOT NULL REFERENCES origins (id),
      window_start timestamptz NOT NULL,
      count integer NOT NULL,
      PRIMARY KEY (origin_id, window_start)
    )`

  yield* sql`
    CREATE TABLE IF NOT EXISTS test_idempotency_keys (
      origin_id uuid NOT NULL REFERENCES origins (id),
      key text NOT NULL,
      fingerprint text NOT NULL,
      state text NOT NULL CHECK (state IN ('in_progress', 'completed')),
      lease_token uuid,
      lease_expires_at timestamptz,
      http_status integer,
      response jsonb,
      completed_at timestamptz,
      PRIMARY KEY (origin_id, key),
      CHECK ((state = 'completed') = (response IS NOT NULL))
    )`
})
