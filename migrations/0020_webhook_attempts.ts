import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Failing endpoints explained and paused (docs/webhooks.md#when-an-endpoint-keeps-failing).
 *
 * - `webhook_attempts`: one row per attempt (time, HTTP status or none, a one-line error, duration),
 *   keyed by organization like every tenant table. It holds no personal data. Its rows go with their
 *   delivery: a trigger deletes them when the delivery row is deleted (retention, an endpoint
 *   removed, test data purged), since a foreign key to the delivery would lack `organization_id`.
 * - `webhook_endpoints.failing_since`: the first failed attempt since the last success (or since the
 *   endpoint was enabled); NULL while it succeeds. The clock of `WEBHOOK_DISABLE_AFTER`.
 * - `disabled_reason` takes the contract's words: `gone` (a 410, formerly written `410 Gone`),
 *   `failing` or `operator`.
 *
 * Written so that it can be applied again (the production test re-applies the newest migration).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  yield* sql`
    CREATE UNIQUE INDEX IF NOT EXISTS webhook_endpoints_organization_id_idx
    ON webhook_endpoints (organization_id, id)`

  yield* sql`
    ALTER TABLE webhook_endpoints ADD COLUMN IF NOT EXISTS failing_since timestamptz`
  yield* sql`UPDATE webhook_endpoints SET disabled_reason = 'gone' WHERE disabled_reason = '410 Gone'`

  yield* sql`
    CREATE TABLE IF NOT EXISTS webhook_attempts (
      organization_id uuid NOT NULL,
      endpoint_id uuid NOT NULL,
      event_id uuid NOT NULL,
      attempt integer NOT NULL,
      at timestamptz NOT NULL,
      status integer,
      error text,
      duration_ms integer NOT NULL CHECK (duration_ms >= 0),
      PRIMARY KEY (organization_id, endpoint_id, event_id, attempt),
      FOREIGN KEY (organization_id, endpoint_id)
        REFERENCES webhook_endpoints (organization_id, id) ON DELETE CASCADE
    )`
  yield* sql`
    CREATE INDEX IF NOT EXISTS webhook_attempts_endpoint_at_idx
    ON webhook_attempts (organization_id, endpoint_id, at)`

  yield* sql`
    CREATE OR REPLACE FUNCTION webhook_deliveries_drop_attempts() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      DELETE FROM webhook_attempts a USING gone
      WHERE a.endpoint_id = gone.endpoint_id AND a.event_id = gone.event_id;
      RETURN NULL;
    END
    $fn$`
  yield* sql`DROP TRIGGER IF EXISTS webhook_deliveries_drop_attempts ON webhook_deliveries`
  yield* sql`
    CREATE TRIGGER webhook_deliveries_drop_attempts AFTER DELETE ON webhook_deliveries
    REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION webhook_deliveries_drop_attempts()`
})
