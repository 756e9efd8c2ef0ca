import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Create-or-enrich as one round trip. Inserting first (ON CONFLICT DO NOTHING waits for a
 * concurrent insert of the same phone and then yields) tells for certain whether this request
 * created the lead, so only a real creation takes a round-robin turn; each later statement in
 * the function sees the rows committed before it, so a lost race enriches the winner's lead.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE FUNCTION create_or_enrich_lead(
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
      p_lead_url_base text,
      p_idempotency_key text,
      p_lease_token uuid
    ) RETURNS TABLE (lead_id uuid, created boolean, assignee_id uuid)
    LANGUAGE plpgsql AS $fn$
    DECLARE
      v_lead_id uuid;
      v_assignee uuid;
      v_created boolean := false;
      v_rule record;
    BEGIN
      INSERT INTO leads (organization_id, origin_id, nombre, telefono, phone_key, email, property_id, created_at, updated_at)
      VALUES (p_organization_id, p_origin_id, p_nombre, p_telefono, p_phone_key, p_email, p_property_id, p_now, p_now)
      ON CONFLICT (organization_id, phone_key) DO NOTHING
      RETURNING id INTO v_lead_id;

      IF v_lead_id IS NOT NULL THEN
        v_created := true;
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
        UPDATE leads l
        SET email = COALESCE(l.email, p_email),
            property_id = COALESCE(l.property_id, p_property_id),
            updated_at = p_now
        WHERE l.organization_id = p_organization_id AND l.phone_key = p_phone_key
        RETURNING l.id, l.assignee_id INTO v_lead_id, v_assignee;
        IF v_lead_id IS NULL THEN
          RAISE EXCEPTION 'lead for phone key vanished during enrichment';
        END IF;
      END IF;

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
                                          'status', CASE WHEN v_created THEN 'created' ELSE 'enriched' END,
                                          'lead_url', p_lead_url_base || v_lead_id),
            completed_at = p_now, lease_token = NULL, lease_expires_at = NULL
        WHERE k.origin_id = p_origin_id AND k.key = p_idempotency_key AND k.lease_token = p_lease_token;
      END IF;

      RETURN QUERY SELECT v_lead_id, v_created, v_assignee;
    END
    $fn$`
})
