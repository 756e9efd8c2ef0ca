import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Webhook endpoints and their deliveries. The fan-out happens in the write's own transaction, by
 * triggers on `outbox_events`, so no request path changes: an event reaches the endpoints that
 * were committed when it was written (the "events committed after it was added" of the contract),
 * with the lead as the write left it, and a NOTIFY wakes the workers at commit. Organizations
 * without an enabled endpoint pay one index probe per event and nothing else.
 *
 * `filled` needs the lead before the write: an UPDATE that fills an empty field leaves the names
 * in a transaction-local setting that the event's trigger reads and clears.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  yield* sql`
    ALTER TABLE outbox_events
      ADD COLUMN event_id uuid NOT NULL DEFAULT gen_random_uuid(),
      ADD COLUMN webhook_snapshot jsonb`

  yield* sql`
    CREATE TABLE webhook_endpoints (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations (id),
      url text NOT NULL CHECK (url <> ''),
      events text[] NOT NULL
        CHECK (cardinality(events) >= 1 AND events <@ ARRAY['lead.created', 'lead.enriched']::text[]),
      secret text NOT NULL,
      previous_secret text,
      previous_secret_expires_at timestamptz,
      disabled_at timestamptz,
      disabled_reason text,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX webhook_endpoints_organization_idx ON webhook_endpoints (organization_id, created_at)`

  yield* sql`
    CREATE TABLE webhook_deliveries (
      endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
      event_id uuid NOT NULL,
      outbox_id bigint NOT NULL REFERENCES outbox_events (id) ON DELETE CASCADE,
      type text NOT NULL,
      state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      failures integer NOT NULL DEFAULT 0,
      last_status integer,
      last_error text,
      last_attempt_at timestamptz,
      next_attempt_at timestamptz,
      lease_token uuid,
      created_at timestamptz NOT NULL,
      delivered_at timestamptz,
      PRIMARY KEY (endpoint_id, event_id),
      CHECK ((state = 'pending') = (next_attempt_at IS NOT NULL))
    )`
  yield* sql`CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (endpoint_id, next_attempt_at) WHERE state = 'pending'`
  yield* sql`CREATE INDEX webhook_deliveries_pending_idx ON webhook_deliveries (next_attempt_at) WHERE state = 'pending'`
  yield* sql`CREATE INDEX webhook_deliveries_list_idx ON webhook_deliveries (endpoint_id, created_at DESC, outbox_id DESC)`
  yield* sql`CREATE INDEX webhook_deliveries_outbox_idx ON webhook_deliveries (outbox_id)`
  yield* sql`CREATE INDEX webhook_deliveries_finished_idx ON webhook_deliveries (created_at) WHERE state <> 'pending'`

  yield* sql`
    CREATE FUNCTION leads_note_filled() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      PERFORM set_config('lead_intake.filled', (
        SELECT COALESCE(jsonb_agg(field), '[]'::jsonb)::text
        FROM unnest(ARRAY[
          CASE WHEN OLD.email IS NULL AND NEW.email IS NOT NULL THEN 'email' END,
          CASE WHEN OLD.property_id IS NULL AND NEW.property_id IS NOT NULL THEN 'property_id' END
        ]) AS field
        WHERE field IS NOT NULL), true);
      RETURN NEW;
    END
    $fn$`
  yield* sql`
    CREATE TRIGGER leads_note_filled BEFORE UPDATE OF email, property_id ON leads
    FOR EACH ROW
    WHEN ((OLD.email IS NULL AND NEW.email IS NOT NULL) OR (OLD.property_id IS NULL AND NEW.property_id IS NOT NULL))
    EXECUTE FUNCTION leads_note_filled()`

  yield* sql`
    CREATE FUNCTION outbox_webhook_snapshot() RETURNS trigger LANGUAGE plpgsql AS $fn$
    DECLARE
      v_filled text := current_setting('lead_intake.filled', true);
    BEGIN
      IF v_filled IS NOT NULL AND v_filled <> '' THEN
        PERFORM set_config('lead_intake.filled', '', true);
      END IF;
      IF EXISTS (SELECT 1 FROM webhook_endpoints e
                 WHERE e.organization_id = NEW.organization_id AND e.disabled_at IS NULL
                   AND NEW.type = ANY (e.events)) THEN
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
      RETURN NEW;
    END
    $fn$`
  yield* sql`
    CREATE TRIGGER outbox_webhook_snapshot BEFORE INSERT ON outbox_events
    FOR EACH ROW EXECUTE FUNCTION outbox_webhook_snapshot()`

  yield* sql`
    CREATE FUNCTION outbox_webhook_fan_out() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      INSERT INTO webhook_deliveries (endpoint_id, event_id, outbox_id, type, next_attempt_at, created_at)
      SELECT e.id, NEW.event_id, NEW.id, NEW.type, NEW.created_at, NEW.created_at
      FROM webhook_endpoints e
      WHERE e.organization_id = NEW.organization_id AND e.disabled_at IS NULL AND NEW.type = ANY (e.events);
      PERFORM pg_notify('lead_intake_webhooks', '');
      RETURN NULL;
    END
    $fn$`
  yield* sql`
    CREATE TRIGGER outbox_webhook_fan_out AFTER INSERT ON outbox_events
    FOR EACH ROW WHEN (NEW.webhook_snapshot IS NOT NULL) EXECUTE FUNCTION outbox_webhook_fan_out()`
})
