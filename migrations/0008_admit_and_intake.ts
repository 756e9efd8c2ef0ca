import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Contract steps 2-3 and 9-11 of `POST /v1/leads` in one statement, for a write whose every local
 * check (media type, size, headers, body) has passed: the key, its rate window, then `intake_lead`.
 * A create costs one round trip and one commit.
 *
 * The window's row is hot (every request of an origin writes it), so it is read first without a
 * lock (a request already over the limit does nothing else) and counted last, right before the
 * commit: the row stays locked only through the commit, as in a statement of its own. When the
 * count finds the window full after all (a race at the limit), the function raises `LI429` and the
 * whole statement rolls back, its write included; the caller answers from a plain key check.
 *
 * A refused key (unknown, revoked, wrong secret) returns its row, or none, and counts nothing. The
 * phone match key depends on the organization's country, which the caller learns from an earlier
 * key check of the same key: `country_changed` says it assumed another one, nothing done.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE FUNCTION admit_and_intake(
      p_public_id text,
      p_key_hash text,
      p_country text,
      p_window_start timestamptz,
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
    ) RETURNS TABLE (
      key_id uuid, key_hash text, revoked boolean, origin_id uuid, label text, rate_limit integer,
      organization_id uuid, country text, count integer,
      outcome text, lead_id uuid, created boolean, assignee_id uuid, filled text[]
    )
    LANGUAGE plpgsql AS $fn$
    #variable_conflict use_column
    DECLARE
      v_key record;
      v_intake record;
      v_count integer;
    BEGIN
      SELECT k.id AS key_id, k.key_hash, k.revoked_at IS NOT NULL AS revoked, o.id AS origin_id, o.label,
             o.rate_limit, g.id AS organization_id, g.country::text AS country
      INTO v_key
      FROM api_keys k
      JOIN origins o ON o.id = k.origin_id
      JOIN organizations g ON g.id = o.organization_id
      WHERE k.public_id = p_public_id;
      IF NOT FOUND THEN
        RETURN;
      END IF;

      IF v_key.key_hash <> p_key_hash OR v_key.revoked THEN
        outcome := 'refused';
      ELSIF v_key.country <> p_country THEN
        outcome := 'country_changed';
      ELSE
        SELECT w.count INTO v_count FROM rate_limit_windows w
        WHERE w.origin_id = v_key.origin_id AND w.window_start = p_window_start;
        IF v_count >= v_key.rate_limit THEN
          outcome := 'rate_limited';
        END IF;
      END IF;
      IF outcome IS NOT NULL THEN
        RETURN QUERY SELECT v_key.key_id, v_key.key_hash, v_key.revoked, v_key.origin_id, v_key.label,
                            v_key.rate_limit, v_key.organization_id, v_key.country, NULL::integer,
                            outcome, NULL::uuid, NULL::boolean, NULL::uuid, NULL::text[];
        RETURN;
      END IF;

      SELECT * INTO v_intake
      FROM intake_lead(v_key.organization_id, v_key.origin_id, p_nombre, p_telefono, p_phone_key, p_email,
                       p_property_by, p_property_value, p_note, p_request_id, p_now, p_due_at,
                       p_idempotency_key, p_fingerprint, p_remember, p_lease);

      INSERT INTO rate_limit_windows AS w (origin_id, window_start, count)
      VALUES (v_key.origin_id, p_window_start, 1)
      ON CONFLICT (origin_id, window_start) DO UPDATE SET count = w.count + 1
        WHERE w.count < v_key.rate_limit
      RETURNING w.count INTO v_count;
      IF v_count IS NULL THEN
        RAISE EXCEPTION 'the rate window of origin % filled during the request', v_key.origin_id
          USING ERRCODE = 'LI429';
      END IF;

      RETURN QUERY SELECT v_key.key_id, v_key.key_hash, v_key.revoked, v_key.origin_id, v_key.label,
                          v_key.rate_limit, v_key.organization_id, v_key.country, v_count,
                          v_intake.outcome, v_intake.lead_id, v_intake.created, v_intake.assignee_id,
                          v_intake.filled;
    END
    $fn$`
})
