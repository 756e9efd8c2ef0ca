import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Erasure leaves a tombstone: the lead row keeps its id, organization, origin and times, and
 * every personal column is NULL. A NULL phone key is distinct in the unique index, so the same
 * phone creates a new lead afterwards. `lead_erasures` is the audit trail (no personal data).
 *
 * `create_or_enrich_lead` is replaced only to survive an erasure committing between its insert
 * (which saw the phone taken) and its enrichment (which then finds no lead with that phone): it
 * tries the insert again instead of failing, so the request creates a new lead.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  yield* sql`ALTER TABLE leads ALTER COLUMN nombre DROP NOT NULL`
  yield* sql`ALTER TABLE leads ADD COLUMN erased_at timestamptz`
  yield* sql`
    ALTER TABLE leads ADD CONSTRAINT leads_live_or_tombstone CHECK (
      CASE WHEN erased_at IS NULL THEN nombre IS NOT NULL
           ELSE nombre IS NULL AND telefono IS NULL AND phone_key IS NULL AND email IS NULL
                AND property_id IS NULL AND assignee_id IS NULL
      END
    )`

  yield* sql`
    CREATE TABLE lead_erasures (
      lead_id uuid PRIMARY KEY REFERENCES leads (id),
      organization_id uuid NOT NULL REFERENCES organizations (id),
      erased_at timestamptz NOT NULL,
      erased_by text NOT NULL CHECK (erased_by <> ''),
      reason text NOT NULL CHECK (reason <> ''),
      removed jsonb NOT NULL
    )`
  yield* sql`CREATE INDEX lead_erasures_organization_idx ON lead_erasures (organization_id, erased_at DESC)`

  yield* sql`CREATE INDEX request_log_at_idx ON request_log (at)`

  yield* sql`
    CREATE OR REPLACE FUNCTION create_or_enrich_lead(
      p_organization_id uuid,
      p_origin_id uuid,
      p_nombre text,
      p_telefono text,
      p_phone_key text,
      p_email text,
      p_property_id uuid,
      p_note text,
      p_request_id text,
      p_now timestamptz,
      p_due_at timestamptz,
      p_idempotency_key text,
      p_lease_token uuid
    ) RETURNS TABLE (lead_id uuid, created boolean, assignee_id uuid, filled text[])
    LANGUAGE plpgsql AS $fn$
    DECLARE
      v_lead_id uuid;
      v_assignee uuid;
      v_created boolean := false;
      v_filled text[] := '{}';
      v_rule record;
      v_before record;
      v_attempt integer := 0;
    BEGIN
      <<attempts>>
      LOOP
      v_attempt := v_attempt + 1;
      INSERT INTO leads (organization_id, origin_id, nombre, telefono, phone_key, email, property_id, created_at, updated_at)
      VALUES (p_organization_id, p_origin_id, p_nombre, p_telefono, p_phone_key, p_email, p_property_id, p_now, p_now)
      ON CONFLICT (organization_id, phone_key) DO NOTHING
      RETURNING id INTO v_lead_id;

      IF v_lead_id IS NOT NULL THEN
        v_created := true;
        IF p_email IS NOT NULL THEN v_filled := array_append(v_filled, 'email'); END IF;
        IF p_property_id IS NOT NULL THEN v_filled := array_append(v_filled, 'property'); END IF;
        SELECT r.id, r.agent_ids, r.round_robin INTO v_rule
        FROM capture_rules r
        WHERE r.organization_id = p_organization_id
          AND (r.origin_id IS NULL OR r.origin_id = p_origin_id)
          AND (r.property_id IS NULL OR r.property_id = p_property_id)
        ORDER BY r.priority, r.created_at, r.id
        LIMIT 1;
        IF FOUND THEN
          IF v_rule.round_robin THEN
            UPDATE capture_rules c SET rotation = c.rotation + 1 WHERE c.id = v_rule.id
            RETURNING c.agent_ids[((c.rotation - 1) % cardinality(c.agent_ids)) + 1] INTO v_assignee;
          ELSE
            v_assignee := v_rule.agent_ids[1];
          END IF;
          UPDATE leads l SET assignee_id = v_assignee WHERE l.id = v_lead_id;
        END IF;
        INSERT INTO lead_tasks (lead_id, kind, assignee_id, due_at, created_at)
        VALUES (v_lead_id, 'first_contact', v_assignee, p_due_at, p_now);
      ELSE
        SELECT l.id, l.email, l.property_id INTO v_before
        FROM leads l
        WHERE l.organization_id = p_organization_id AND l.phone_key = p_phone_key
        FOR UPDATE;
        IF NOT FOUND THEN
          IF v_attempt >= 3 THEN
            RAISE EXCEPTION 'lead for phone key vanished during enrichment';
          END IF;
          CONTINUE attempts;
        END IF;
        UPDATE leads l
        SET email = COALESCE(l.email, p_email),
            property_id = COALESCE(l.property_id, p_property_id),
            updated_at = p_now
        WHERE l.id = v_before.id
        RETURNING l.id, l.assignee_id INTO v_lead_id, v_assignee;
        IF v_before.email IS NULL AND p_email IS NOT NULL THEN v_filled := array_append(v_filled, 'email'); END IF;
        IF v_before.property_id IS NULL AND p_property_id IS NOT NULL THEN v_filled := array_append(v_filled, 'property'); END IF;
      END IF;
      EXIT attempts;
      END LOOP;

      IF p_note IS NOT NULL THEN
        INSERT INTO lead_notes (lead_id, body, request_id, created_at) VALUES (v_lead_id, p_note, p_request_id, p_now);
      END IF;

      INSERT INTO outbox_events (organization_id, lead_id, type, payload, created_at)
      VALUES (
        p_organization_id, v_lead_id, CASE WHEN v_created THEN 'lead.created' ELSE 'lead.enriched' END,
        jsonb_build_object('lead_id', v_lead_id, 'origin_id', p_origin_id, 'assignee_id', v_assignee,
                           'request_id', p_request_id),
        p_now
      );

      IF p_idempotency_key IS NOT NULL THEN
        UPDATE idempotency_keys k
        SET state = 'completed',
            http_status = CASE WHEN v_created THEN 201 ELSE 200 END,
            response = jsonb_build_object('lead_id', v_lead_id,
                                          'status', CASE WHEN v_created THEN 'created' ELSE 'enriched' END),
            completed_at = p_now, lease_token = NULL, lease_expires_at = NULL
        WHERE k.origin_id = p_origin_id AND k.key = p_idempotency_key AND k.lease_token = p_lease_token;
      END IF;

      RETURN QUERY SELECT v_lead_id, v_created, v_assignee, v_filled;
    END
    $fn$`
})
