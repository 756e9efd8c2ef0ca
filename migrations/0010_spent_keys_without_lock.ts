import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * A spent Idempotency-Key answers without its lock. `intake_lead` took the key's advisory lock
 * before reading it, so two retries of a completed request arriving together found the lock held by
 * each other and one was answered 409 `idempotency_in_progress` instead of its replay (seen in the
 * bench's replay row, 3-4 per run; `test/integration/concurrency.test.ts`). A completed key's row
 * does not change while it is remembered, so it is read first without the lock: replay or conflict.
 * Only a key that is free, in progress or forgotten takes the lock, and is read again under it.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE OR REPLACE FUNCTION intake_lead(
      p_organization_id uuid,
      p_origin_id uuid,
      p_nombre text,
      p_telefono text,
      p_phone_key text,
      p_email text,
      p_property_by text,
      p_property_value text,
      p_note text,
      p_request_id text,
      p_now timestamptz,
      p_due_at timestamptz,
      p_idempotency_key text,
      p_fingerprint text,
      p_remember interval,
      p_lease interval
    ) RETURNS TABLE (outcome text, lead_id uuid, created boolean, assignee_id uuid, filled text[])
    LANGUAGE plpgsql AS $fn$
    DECLARE
      v_property_id uuid;
      v_key record;
      v_token uuid;
    BEGIN
      IF p_idempotency_key IS NOT NULL THEN
        SELECT k.state, k.fingerprint, k.response, k.lease_expires_at, k.completed_at INTO v_key
        FROM idempotency_keys k
        WHERE k.origin_id = p_origin_id AND k.key = p_idempotency_key;
        IF NOT (FOUND AND v_key.state = 'completed' AND v_key.completed_at > p_now - p_remember) THEN
          IF NOT pg_try_advisory_xact_lock(hashtextextended(p_origin_id::text || '/' || p_idempotency_key, 7)) THEN
            RETURN QUERY SELECT 'in_progress', NULL::uuid, NULL::boolean, NULL::uuid, NULL::text[];
            RETURN;
          END IF;
          -- Read again under the lock: its holder may have committed since the read above.
          SELECT k.state, k.fingerprint, k.response, k.lease_expires_at, k.completed_at INTO v_key
          FROM idempotency_keys k
          WHERE k.origin_id = p_origin_id AND k.key = p_idempotency_key;
        END IF;
        IF FOUND THEN
          IF v_key.state = 'completed' AND v_key.completed_at > p_now - p_remember THEN
            IF v_key.fingerprint <> p_fingerprint THEN
              RETURN QUERY SELECT 'conflict', NULL::uuid, NULL::boolean, NULL::uuid, NULL::text[];
            ELSE
              RETURN QUERY SELECT 'replay', (v_key.response ->> 'lead_id')::uuid,
                                  v_key.response ->> 'status' = 'created', NULL::uuid, '{}'::text[];
            END IF;
            RETURN;
          END IF;
          IF v_key.state = 'in_progress' AND v_key.lease_expires_at > p_now THEN
            RETURN QUERY SELECT 'in_progress', NULL::uuid, NULL::boolean, NULL::uuid, NULL::text[];
            RETURN;
          END IF;
        END IF;
      END IF;

      IF p_property_by IS NOT NULL THEN
        IF p_property_by = 'id' THEN
          SELECT p.id INTO v_property_id FROM properties p
          WHERE p.organization_id = p_organization_id AND p.id = p_property_value::uuid AND NOT p.archived;
        ELSIF p_property_by = 'codigo' THEN
          SELECT p.id INTO v_property_id FROM properties p
          WHERE p.organization_id = p_organization_id AND p.codigo = p_property_value AND NOT p.archived;
        ELSE
          SELECT p.id INTO v_property_id FROM properties p
          WHERE p.organization_id = p_organization_id AND p.external_code = p_property_value AND NOT p.archived;
        END IF;
        IF v_property_id IS NULL THEN
          RETURN QUERY SELECT 'property_not_found', NULL::uuid, NULL::boolean, NULL::uuid, NULL::text[];
          RETURN;
        END IF;
      END IF;

      IF p_idempotency_key IS NOT NULL THEN
        v_token := gen_random_uuid();
        INSERT INTO idempotency_keys AS k (origin_id, key, fingerprint, state, lease_token, lease_expires_at)
        VALUES (p_origin_id, p_idempotency_key, p_fingerprint, 'in_progress', v_token, p_now + p_lease)
        ON CONFLICT (origin_id, key) DO UPDATE
          SET fingerprint = EXCLUDED.fingerprint, state = 'in_progress', lease_token = EXCLUDED.lease_token,
              lease_expires_at = EXCLUDED.lease_expires_at, http_status = NULL, response = NULL, completed_at = NULL;
      END IF;

      RETURN QUERY
        SELECT 'written', w.lead_id, w.created, w.assignee_id, w.filled
        FROM create_or_enrich_lead(p_organization_id, p_origin_id, p_nombre, p_telefono, p_phone_key, p_email,
                                   v_property_id, p_note, p_request_id, p_now, p_due_at, p_idempotency_key, v_token) w;
    END
    $fn$`
})
