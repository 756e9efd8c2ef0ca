import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The events partners asked for (docs/webhooks.md): `lead.erased` (ids only) written by the erasure in
 * its own transaction, `webhook.test` written for one endpoint (no lead: `lead_id` is NULL and
 * the snapshot names the endpoint), and `livemode` on every event, which the fan-out matches
 * against the endpoints that opted in to test events. The trigger functions that do it
 * (`outbox_webhook_snapshot`, `outbox_webhook_fan_out`) are in `migrations/functions.ts`.
 * Written so that it can be applied again (the production test re-applies the newest migration).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  yield* sql`
    ALTER TABLE outbox_events
      ALTER COLUMN lead_id DROP NOT NULL,
      ADD COLUMN IF NOT EXISTS livemode boolean NOT NULL DEFAULT true,
      DROP CONSTRAINT IF EXISTS outbox_events_type_check,
      DROP CONSTRAINT IF EXISTS outbox_events_lead_check,
      ADD CONSTRAINT outbox_events_type_check
        CHECK (type IN ('lead.created', 'lead.enriched', 'lead.erased', 'webhook.test')),
      ADD CONSTRAINT outbox_events_lead_check CHECK ((lead_id IS NULL) = (type = 'webhook.test'))`

  yield* sql`
    ALTER TABLE webhook_endpoints
      ADD COLUMN IF NOT EXISTS test_events boolean NOT NULL DEFAULT false,
      DROP CONSTRAINT IF EXISTS webhook_endpoints_events_check,
      ADD CONSTRAINT webhook_endpoints_events_check
        CHECK (cardinality(events) >= 1
               AND events <@ ARRAY['lead.created', 'lead.enriched', 'lead.erased']::text[])`
})
