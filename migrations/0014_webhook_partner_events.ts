import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The events partners asked for (webhooks.md): `lead.erased` (ids only) written by the erasure in
 * its own transaction, `webhook.test` written for one endpoint (no lead: `lead_id` is NULL and
 * the snapshot names the endpoint), and `livemode` on every event, which the fan-out matches
 * against the endpoints that opted in to test events.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  yield* sql`
    ALTER TABLE outbox_events
      ALTER COLUMN lead_id DROP NOT NULL,
      ADD COLUMN livemode boolean NOT NULL DEFAULT true,
      DROP CONSTRAINT outbox_events_type_check,
      ADD CONSTRAINT outbox_events_type_check
        CHECK (type IN ('lead.created', 'lead.enriched', 'lead.erased', 'webhook.test')),
      ADD CONSTRAINT outbox_events_lead_check CHECK ((lead_id IS NULL) = (type = 'webhook.test'))`

  yield* sql`
    ALTER TABLE webhook_endpoints
      ADD COLUMN test_events boolean NOT NULL DEFAULT false,
      DROP CONSTRAINT webhook_endpoints_events_check,
      ADD CONSTRAINT webhook_endpoints_events_check
        CHECK (cardinality(events) >= 1
               AND events <@ ARRAY['lead.created', 'lead.enriched', 'lead.erased']::text[])`

  yield* sql`
    CREATE OR REPLACE FUNCTION outbox_webhook_snapshot() RETURNS trigger LANGUAGE plpgsql AS $fn$
    DECLARE
      v_filled text := current_setting('lead_intake.filled', true);
    BEGIN
      IF v_filled IS NOT NULL AND v_filled <> '' THEN
        PERFORM set_config('lead_intake.filled', '', true);
      END IF;
      IF NEW.webhook_snapshot IS NULL
         AND EXISTS (SELECT 1 FROM webhook_endpoints e
                     WHERE e.organization_id = NEW.organization_id AND e.disabled_at IS NULL
                       AND NEW.type = ANY (e.events) AND (NEW.livemode OR e.test_events)) THEN
        IF NEW.type = 'lead.erased' THEN
          NEW.webhook_snapshot := '{}'::jsonb;
        ELSE
          SELECT jsonb_build_object(
            'origin', jsonb_build_object('id', o.id, 'label', o.label),
            'request_id', NEW.payload ->> 'request_id',
            'lead', jsonb_build_object('nombre', l.nombre, 'telefono', l.telefono, 'email', l.email,
                                       'property_id', l.property_id, 'assignee_id', l.assignee_id),
            'filled', CASE WHEN NEW.type = 'lead.enriched' AND v_filled IS NOT NULL AND v_filled <> ''
                           THEN v_filled::jsonb ELSE '[]'::jsonb END)
          INTO NEW.webhook_snapshot
          FROM leads l
          JOIN origins o ON o.id = COALESCE((NEW.payload ->> 'origin_id')::uuid, l.origin_id)
          WHERE l.id = NEW.lead_id;
        END IF;
      END IF;
      RETURN NEW;
    END
    $fn$`

  yield* sql`
    CREATE OR REPLACE FUNCTION outbox_webhook_fan_out() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      IF NEW.type = 'webhook.test' THEN
        INSERT INTO webhook_deliveries (endpoint_id, event_id, outbox_id, type, next_attempt_at, created_at)
        SELECT e.id, NEW.event_id, NEW.id, NEW.type, NEW.created_at, NEW.created_at
        FROM webhook_endpoints e
        WHERE e.id = (NEW.webhook_snapshot ->> 'endpoint_id')::uuid AND e.organization_id = NEW.organization_id;
      ELSE
        INSERT INTO webhook_deliveries (endpoint_id, event_id, outbox_id, type, next_attempt_at, created_at)
        SELECT e.id, NEW.event_id, NEW.id, NEW.type, NEW.created_at, NEW.created_at
        FROM webhook_endpoints e
        WHERE e.organization_id = NEW.organization_id AND e.disabled_at IS NULL
          AND NEW.type = ANY (e.events) AND (NEW.livemode OR e.test_events);
      END IF;
      PERFORM pg_notify('lead_intake_webhooks', '');
      RETURN NULL;
    END
    $fn$`
})
