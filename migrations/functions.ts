/**
 * Today's text of every SQL function, one entry each: the migrator applies the ones whose text
 * changed after the versioned migrations (`Migrations.migrate`), so a rule is read, and changed, here.
 * The versioned migrations that first created them are history and stay as they landed.
 *
 * Old and new instances run side by side during a deploy: a new text keeps the signature (change
 * one by a versioned migration that adds the new function beside the old) and stays correct for
 * the code of the release before.
 *
 * Every function a request calls takes the organization first and touches that organization's rows
 * only (each statement names `organization_id`), so Citus runs the whole call on the node that holds
 * the organization (`Migrations.distribute`); no triggers, no sequences made on the fly.
 */
export const sqlFunctions: ReadonlyArray<{ readonly name: string; readonly text: string }> = [
  {
    // A phone can exist once per mode: a test lead's match key is its phone's, marked, so the unique
    // index on (organization_id, phone_key) keeps the modes apart (docs/contract.md#10-test-mode, migration 0015).
    name: "lead_match_key",
    text: `
CREATE OR REPLACE FUNCTION lead_match_key(p_phone_key text, p_livemode boolean) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
  SELECT CASE WHEN p_livemode THEN p_phone_key ELSE 'test:' || p_phone_key END
$fn$`
  },
  {
    // An API key by its public id (docs/contract.md#6-keys), read before the organization is
    // known, from the global directory alone: on Citus a reference table, so the node the service
    // connects to answers it without a trip to a worker (docs/sre.md#distributing-by-organization-citus). An entry
    // without a hash (a key the release before issued during a deploy, until `migrate` syncs it) is
    // read from its organization's key and origin instead.
    name: "api_key_by_public_id",
    text: `
CREATE OR REPLACE FUNCTION api_key_by_public_id(p_public_id text)
RETURNS TABLE (key_id uuid, key_hash text, revoked boolean, livemode boolean, origin_id uuid, label text,
               rate_limit integer, organization_id uuid, country text)
LANGUAGE plpgsql STABLE AS $fn$
DECLARE
  v_entry record;
BEGIN
  SELECT d.organization_id, d.key_id, d.key_hash, d.livemode, d.revoked_at, d.origin_id, d.origin_label, d.rate_limit
  INTO v_entry FROM api_key_directory d WHERE d.public_id = p_public_id;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  IF v_entry.key_hash IS NOT NULL THEN
    RETURN QUERY
    SELECT v_entry.key_id, v_entry.key_hash, v_entry.revoked_at IS NOT NULL, v_entry.livemode, v_entry.origin_id,
           v_entry.origin_label, v_entry.rate_limit, g.id, g.country::text
    FROM organizations g WHERE g.id = v_entry.organization_id;
    RETURN;
  END IF;
  RETURN QUERY
  SELECT k.id, k.key_hash, k.revoked_at IS NOT NULL, k.livemode, o.id, o.label, o.rate_limit, g.id, g.country::text
  FROM api_keys k
  JOIN origins o ON o.organization_id = k.organization_id AND o.id = k.origin_id
  JOIN organizations g ON g.id = k.organization_id
  WHERE k.organization_id = v_entry.organization_id AND k.id = v_entry.key_id;
END
$fn$`
  },
  {
    // An event of the outbox and its webhook deliveries (docs/webhooks.md): the payload an endpoint
    // receives is snapshotted now (the lead as this write left it, `p_filled` the fields an enrichment
    // filled), only when an enabled endpoint of the organization takes the event; a test event names its
    // endpoint in `p_snapshot`. Every writer of the outbox calls this.
    name: "add_outbox_event",
    text: `
CREATE OR REPLACE FUNCTION add_outbox_event(
  p_organization_id uuid, p_lead_id uuid, p_type text, p_payload jsonb, p_now timestamptz, p_livemode boolean,
  p_filled jsonb, p_snapshot jsonb
) RETURNS TABLE (id bigint, event_id uuid)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_snapshot jsonb := p_snapshot;
  v_id bigint;
  v_event_id uuid;
BEGIN
  IF v_snapshot IS NULL
     AND EXISTS (SELECT 1 FROM webhook_endpoints e
                 WHERE e.organization_id = p_organization_id
                   AND (e.disabled_at IS NULL OR e.disabled_reason = 'operator')
                   AND p_type = ANY (e.events) AND (p_livemode OR e.test_events)) THEN
    IF p_type = 'lead.erased' THEN
      v_snapshot := '{}'::jsonb;
    ELSE
      SELECT jsonb_build_object(
        'origin', jsonb_build_object('id', o.id, 'label', o.label),
        'request_id', p_payload ->> 'request_id',
        'lead', jsonb_build_object('nombre', l.nombre, 'telefono', l.telefono, 'email', l.email,
                                   'property_id', l.property_id, 'assignee_id', l.assignee_id),
        'filled', CASE WHEN p_type = 'lead.enriched' THEN COALESCE(p_filled, '[]'::jsonb) ELSE '[]'::jsonb END)
      INTO v_snapshot
      FROM leads l
      JOIN origins o ON o.organization_id = l.organization_id
                    AND o.id = COALESCE((p_payload ->> 'origin_id')::uuid, l.origin_id)
      WHERE l.organization_id = p_organization_id AND l.id = p_lead_id;
    END IF;
  END IF;

  INSERT INTO outbox_events (organization_id, lead_id, type, payload, created_at, livemode, webhook_snapshot)
  VALUES (p_organization_id, p_lead_id, p_type, p_payload, p_now, p_livemode, v_snapshot)
  RETURNING outbox_events.id, outbox_events.event_id INTO v_id, v_event_id;

  IF v_snapshot IS NOT NULL THEN
    INSERT INTO webhook_deliveries (organization_id, endpoint_id, event_id, outbox_id, type, next_attempt_at, created_at)
    SELECT e.organization_id, e.id, v_event_id, v_id, p_type, p_now, p_now
    FROM webhook_endpoints e
    WHERE e.organization_id = p_organization_id
      -- An endpoint an operator disabled keeps getting its events: they wait for enable.
      AND CASE WHEN p_type = 'webhook.test' THEN e.id = (v_snapshot ->> 'endpoint_id')::uuid
               ELSE (e.disabled_at IS NULL OR e.disabled_reason = 'operator')
                    AND p_type = ANY (e.events) AND (p_livemode OR e.test_events) END;
    PERFORM pg_notify('lead_intake_webhooks', '');
  END IF;
  RETURN QUERY SELECT v_id, v_event_id;
END
$fn$`
  },
  {
    // A write with an Idempotency-Key commits only with its key's completion: a reservation released
    // meanwhile (a lost answer settled by `IdempotencyStore.settle`, a lease run out) makes it roll
    // back, so a released key always means nothing was written (docs/contract.md#5-idempotency).
    // A completed key keeps the token of the reservation that completed it, so that settling a lost
    // answer tells this request's completion from another's. A round-robin rule's turn is taken last
    // among the lead's own rows and rolls back with the write.
    name: "create_or_enrich_lead(livemode)",
    text: `
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
  p_lease_token uuid,
  p_livemode boolean
) RETURNS TABLE (lead_id uuid, created boolean, assignee_id uuid, filled text[])
LANGUAGE plpgsql AS $fn$
DECLARE
  v_lead_id uuid;
  v_assignee uuid;
  v_created boolean := false;
  v_filled text[] := '{}';
  v_rule record;
  v_turn bigint;
  v_before record;
  v_attempt integer := 0;
  v_match_key text := lead_match_key(p_phone_key, p_livemode);
BEGIN
  <<attempts>>
  LOOP
  v_attempt := v_attempt + 1;
  INSERT INTO leads (organization_id, origin_id, nombre, telefono, phone_key, email, property_id, created_at, updated_at,
                     livemode)
  VALUES (p_organization_id, p_origin_id, p_nombre, p_telefono, v_match_key, p_email, p_property_id, p_now, p_now,
          p_livemode)
  ON CONFLICT (organization_id, phone_key) DO NOTHING
  RETURNING id INTO v_lead_id;

  IF v_lead_id IS NOT NULL THEN
    v_created := true;
    IF p_email IS NOT NULL THEN v_filled := array_append(v_filled, 'email'); END IF;
    IF p_property_id IS NOT NULL THEN v_filled := array_append(v_filled, 'property'); END IF;
  END IF;

  -- A test lead is never assigned and sets off no task (docs/contract.md#10-test-mode).
  IF v_lead_id IS NOT NULL AND p_livemode THEN
    SELECT r.id, r.agent_ids, r.round_robin INTO v_rule
    FROM capture_rules r
    WHERE r.organization_id = p_organization_id
      AND (r.origin_id IS NULL OR r.origin_id = p_origin_id)
      AND (r.property_id IS NULL OR r.property_id = p_property_id)
    ORDER BY r.priority, r.created_at, r.id
    LIMIT 1;
    IF FOUND THEN
      IF v_rule.round_robin THEN
        UPDATE capture_rules r SET turns_taken = r.turns_taken + 1
        WHERE r.organization_id = p_organization_id AND r.id = v_rule.id
        RETURNING r.turns_taken INTO v_turn;
        v_assignee := v_rule.agent_ids[((v_turn - 1) % cardinality(v_rule.agent_ids)) + 1];
      ELSE
        v_assignee := v_rule.agent_ids[1];
      END IF;
      UPDATE leads l SET assignee_id = v_assignee WHERE l.organization_id = p_organization_id AND l.id = v_lead_id;
    END IF;
    INSERT INTO lead_tasks (organization_id, lead_id, kind, assignee_id, due_at, created_at)
    VALUES (p_organization_id, v_lead_id, 'first_contact', v_assignee, p_due_at, p_now);
  END IF;

  IF v_lead_id IS NULL THEN
    SELECT l.id, l.email, l.property_id INTO v_before
    FROM leads l
    WHERE l.organization_id = p_organization_id AND l.phone_key = v_match_key
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
    WHERE l.organization_id = p_organization_id AND l.id = v_before.id
    RETURNING l.id, l.assignee_id INTO v_lead_id, v_assignee;
    IF v_before.email IS NULL AND p_email IS NOT NULL THEN v_filled := array_append(v_filled, 'email'); END IF;
    IF v_before.property_id IS NULL AND p_property_id IS NOT NULL THEN v_filled := array_append(v_filled, 'property'); END IF;
  END IF;
  EXIT attempts;
  END LOOP;

  IF p_note IS NOT NULL THEN
    INSERT INTO lead_notes (organization_id, lead_id, body, request_id, created_at)
    VALUES (p_organization_id, v_lead_id, p_note, p_request_id, p_now);
  END IF;

  PERFORM add_outbox_event(
    p_organization_id, v_lead_id, CASE WHEN v_created THEN 'lead.created' ELSE 'lead.enriched' END,
    jsonb_build_object('lead_id', v_lead_id, 'origin_id', p_origin_id, 'assignee_id', v_assignee,
                       'request_id', p_request_id),
    p_now, p_livemode,
    (SELECT COALESCE(jsonb_agg(CASE f WHEN 'property' THEN 'property_id' ELSE f END), '[]'::jsonb)
       FROM unnest(v_filled) AS f),
    NULL);

  IF p_idempotency_key IS NOT NULL AND p_livemode THEN
    UPDATE idempotency_keys k
    SET state = 'completed',
        http_status = CASE WHEN v_created THEN 201 ELSE 200 END,
        response = jsonb_build_object('lead_id', v_lead_id,
                                      'status', CASE WHEN v_created THEN 'created' ELSE 'enriched' END),
        completed_at = p_now, lease_expires_at = NULL
    WHERE k.organization_id = p_organization_id AND k.origin_id = p_origin_id AND k.key = p_idempotency_key
      AND k.lease_token = p_lease_token;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'the idempotency key''s reservation is no longer held' USING ERRCODE = 'P0004';
    END IF;
  ELSIF p_idempotency_key IS NOT NULL THEN
    UPDATE test_idempotency_keys k
    SET state = 'completed',
        http_status = CASE WHEN v_created THEN 201 ELSE 200 END,
        response = jsonb_build_object('lead_id', v_lead_id,
                                      'status', CASE WHEN v_created THEN 'created' ELSE 'enriched' END),
        completed_at = p_now, lease_expires_at = NULL
    WHERE k.organization_id = p_organization_id AND k.origin_id = p_origin_id AND k.key = p_idempotency_key
      AND k.lease_token = p_lease_token;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'the idempotency key''s reservation is no longer held' USING ERRCODE = 'P0004';
    END IF;
  END IF;

  RETURN QUERY SELECT v_lead_id, v_created, v_assignee, v_filled;
END
$fn$`
  },
  {
    // The active property of an organization that a lead request names by `codigo`, `external_code`
    // or `id` (docs/contract.md#3-order-of-checks, step 10): NULL when none does, an archived one
    // included. The one text of the rule: the catalog's lookup (a dry run's) and the writes below call it.
    name: "resolve_property",
    text: `
CREATE OR REPLACE FUNCTION resolve_property(p_organization_id uuid, p_by text, p_value text) RETURNS uuid
LANGUAGE plpgsql STABLE AS $fn$
BEGIN
  IF p_by = 'codigo' THEN
    RETURN (SELECT p.id FROM properties p
            WHERE p.organization_id = p_organization_id AND p.codigo = p_value AND NOT p.archived LIMIT 1);
  ELSIF p_by = 'external_code' THEN
    RETURN (SELECT p.id FROM properties p
            WHERE p.organization_id = p_organization_id AND p.external_code = p_value AND NOT p.archived LIMIT 1);
  ELSIF p_by = 'id' AND p_value ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN
    RETURN (SELECT p.id FROM properties p
            WHERE p.organization_id = p_organization_id AND p.id = p_value::uuid AND NOT p.archived);
  END IF;
  RETURN NULL;
END
$fn$`
  },
  {
    // The property a write names (`p_by` NULL: none): `resolve_property`, raising P0005 when nothing
    // active matches, which the service answers 422 `property_not_found` (the write rolls back).
    name: "required_property",
    text: `
CREATE OR REPLACE FUNCTION required_property(p_organization_id uuid, p_by text, p_value text) RETURNS uuid
LANGUAGE plpgsql STABLE AS $fn$
DECLARE
  v_property_id uuid;
BEGIN
  IF p_by IS NULL THEN
    RETURN NULL;
  END IF;
  v_property_id := resolve_property(p_organization_id, p_by, p_value);
  IF v_property_id IS NULL THEN
    RAISE EXCEPTION 'no active property of the organization matches' USING ERRCODE = 'P0005';
  END IF;
  RETURN v_property_id;
END
$fn$`
  },
  {
    // The one text of an Idempotency-Key's reservation (docs/contract.md#5-idempotency): a first use,
    // a lease run out (before `p_now`) or a completion forgotten (before `p_forget_before`) is
    // reserved for `p_token` until `p_lease_expires_at`; otherwise the key's row as it stands (none:
    // it was just released, which the caller reads as still in progress). `IdempotencyStore.reserve`
    // and `reserve_and_write_lead_json` call it.
    name: "reserve_idempotency_key(organization)",
    text: `
CREATE OR REPLACE FUNCTION reserve_idempotency_key(
  p_organization_id uuid, p_livemode boolean, p_origin_id uuid, p_key text, p_fingerprint text, p_token uuid, p_now timestamptz,
  p_lease_expires_at timestamptz, p_forget_before timestamptz
) RETURNS TABLE (reserved boolean, state text, fingerprint text, response jsonb)
LANGUAGE plpgsql AS $fn$
BEGIN
  IF p_livemode THEN
    INSERT INTO idempotency_keys AS k (organization_id, origin_id, key, fingerprint, state, lease_token, lease_expires_at)
    VALUES (p_organization_id, p_origin_id, p_key, p_fingerprint, 'in_progress', p_token, p_lease_expires_at)
    ON CONFLICT (organization_id, origin_id, key) DO UPDATE
      SET fingerprint = EXCLUDED.fingerprint, state = 'in_progress', lease_token = EXCLUDED.lease_token,
          lease_expires_at = EXCLUDED.lease_expires_at, http_status = NULL, response = NULL, completed_at = NULL
      WHERE (k.state = 'in_progress' AND k.lease_expires_at <= p_now)
         OR (k.state = 'completed' AND k.completed_at <= p_forget_before);
    IF FOUND THEN
      RETURN QUERY SELECT true, NULL::text, NULL::text, NULL::jsonb;
    ELSE
      RETURN QUERY SELECT false, k.state::text, k.fingerprint, k.response FROM idempotency_keys k
                   WHERE k.organization_id = p_organization_id AND k.origin_id = p_origin_id AND k.key = p_key;
    END IF;
  ELSE
    INSERT INTO test_idempotency_keys AS k (organization_id, origin_id, key, fingerprint, state, lease_token, lease_expires_at)
    VALUES (p_organization_id, p_origin_id, p_key, p_fingerprint, 'in_progress', p_token, p_lease_expires_at)
    ON CONFLICT (organization_id, origin_id, key) DO UPDATE
      SET fingerprint = EXCLUDED.fingerprint, state = 'in_progress', lease_token = EXCLUDED.lease_token,
          lease_expires_at = EXCLUDED.lease_expires_at, http_status = NULL, response = NULL, completed_at = NULL
      WHERE (k.state = 'in_progress' AND k.lease_expires_at <= p_now)
         OR (k.state = 'completed' AND k.completed_at <= p_forget_before);
    IF FOUND THEN
      RETURN QUERY SELECT true, NULL::text, NULL::text, NULL::jsonb;
    ELSE
      RETURN QUERY SELECT false, k.state::text, k.fingerprint, k.response FROM test_idempotency_keys k
                   WHERE k.organization_id = p_organization_id AND k.origin_id = p_origin_id AND k.key = p_key;
    END IF;
  END IF;
END
$fn$`
  },
  {
    // The one text of freeing a reservation: once no write holds the key's lock (a write still
    // running is waited for, so that its end decides), deleted only while it is still `p_token`'s and
    // in progress (a completed key, or one reserved anew after its lease, stays). True when it was.
    // `IdempotencyStore.settle` calls it.
    name: "release_idempotency_key(organization)",
    text: `
CREATE OR REPLACE FUNCTION release_idempotency_key(
  p_organization_id uuid, p_livemode boolean, p_origin_id uuid, p_key text, p_token uuid
)
RETURNS boolean
LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM pg_advisory_xact_lock(idempotency_key_lock(p_livemode, p_origin_id, p_key));
  IF p_livemode THEN
    DELETE FROM idempotency_keys k
    WHERE k.organization_id = p_organization_id AND k.origin_id = p_origin_id AND k.key = p_key AND k.state = 'in_progress' AND k.lease_token = p_token;
  ELSE
    DELETE FROM test_idempotency_keys k
    WHERE k.organization_id = p_organization_id AND k.origin_id = p_origin_id AND k.key = p_key AND k.state = 'in_progress' AND k.lease_token = p_token;
  END IF;
  RETURN FOUND;
END
$fn$`
  },
  {
    // `create_or_enrich_lead` with the property as the request names it, resolved in the same
    // statement (one round trip less per create that names one): `required_property`. One value
    // (`{lead_id, created, assignee_id, filled}`), so that a caller's `SELECT write_lead_json(…)` is a
    // call Citus hands whole to the node holding the organization.
    name: "write_lead_json",
    text: `
CREATE OR REPLACE FUNCTION write_lead_json(
  p_organization_id uuid, p_origin_id uuid, p_nombre text, p_telefono text, p_phone_key text, p_email text,
  p_property_by text, p_property_value text, p_note text, p_request_id text, p_now timestamptz,
  p_due_at timestamptz, p_idempotency_key text, p_lease_token uuid, p_livemode boolean
) RETURNS jsonb
LANGUAGE sql AS $fn$
  SELECT to_jsonb(w) FROM create_or_enrich_lead(p_organization_id, p_origin_id, p_nombre, p_telefono, p_phone_key, p_email,
                                      required_property(p_organization_id, p_property_by, p_property_value),
                                      p_note, p_request_id, p_now, p_due_at, p_idempotency_key, p_lease_token,
                                      p_livemode) w
$fn$`
  },
  {
    // The advisory lock an Idempotency-Key's write holds while it runs (`reserve_and_write_lead_json`),
    // and that settling its lost answer waits for (`release_idempotency_key`): 64 bits of the key's
    // slot, so that two keys in flight at once share one only by a chance of about 2^-64 per pair.
    name: "idempotency_key_lock",
    text: `
CREATE OR REPLACE FUNCTION idempotency_key_lock(p_livemode boolean, p_origin_id uuid, p_key text) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
  SELECT hashtextextended(CASE WHEN p_livemode THEN 'live/' ELSE 'test/' END || p_origin_id::text || '/' || p_key, 7)
$fn$`
  },
  {
    // A create or enrichment behind its Idempotency-Key in one statement and one transaction
    // (docs/contract.md#5-idempotency), which Citus hands whole to the node holding the organization:
    // - a key completed within the last 24 h answers at once, without the lock (concurrent retries of
    //   a finished request all replay);
    // - otherwise the key's advisory lock (`idempotency_key_lock`), held until this transaction ends:
    //   a request with the same key meanwhile finds it taken and answers 409 in progress;
    // - then the reservation (`reserve_idempotency_key`: a key reserved by a previous release's
    //   instance and still leased is in progress too), and `create_or_enrich_lead` with it, which
    //   completes the key.
    // A write that fails rolls back with its reservation: nothing of the request is left, and there is
    // nothing to release. One value (`{reserved, key_state, key_fingerprint, key_response, lead_id,
    // created, assignee_id, filled}`), as `write_lead_json`.
    name: "reserve_and_write_lead_json",
    text: `
CREATE OR REPLACE FUNCTION reserve_and_write_lead_json(
  p_organization_id uuid, p_origin_id uuid, p_nombre text, p_telefono text, p_phone_key text, p_email text,
  p_property_by text, p_property_value text, p_note text, p_request_id text, p_now timestamptz,
  p_due_at timestamptz, p_idempotency_key text, p_lease_token uuid, p_livemode boolean, p_fingerprint text,
  p_lease_expires_at timestamptz, p_forget_before timestamptz
) RETURNS jsonb
LANGUAGE plpgsql AS $fn$
DECLARE
  v_reserved boolean := false;
  v_state text;
  v_fingerprint text;
  v_response jsonb;
  v_lead_id uuid;
  v_created boolean;
  v_assignee uuid;
  v_filled text[];
BEGIN
  IF p_livemode THEN
    SELECT k.state, k.fingerprint, k.response INTO v_state, v_fingerprint, v_response FROM idempotency_keys k
    WHERE k.organization_id = p_organization_id AND k.origin_id = p_origin_id AND k.key = p_idempotency_key
      AND k.state = 'completed' AND k.completed_at > p_forget_before;
  ELSE
    SELECT k.state, k.fingerprint, k.response INTO v_state, v_fingerprint, v_response FROM test_idempotency_keys k
    WHERE k.organization_id = p_organization_id AND k.origin_id = p_origin_id AND k.key = p_idempotency_key
      AND k.state = 'completed' AND k.completed_at > p_forget_before;
  END IF;
  IF v_state IS NULL THEN
    IF pg_try_advisory_xact_lock(idempotency_key_lock(p_livemode, p_origin_id, p_idempotency_key)) THEN
      SELECT r.reserved, r.state, r.fingerprint, r.response INTO v_reserved, v_state, v_fingerprint, v_response
      FROM reserve_idempotency_key(p_organization_id, p_livemode, p_origin_id, p_idempotency_key, p_fingerprint,
                                   p_lease_token, p_now, p_lease_expires_at, p_forget_before) r;
    ELSE
      v_state := 'in_progress';
    END IF;
  END IF;
  IF v_reserved THEN
    SELECT w.lead_id, w.created, w.assignee_id, w.filled INTO v_lead_id, v_created, v_assignee, v_filled
    FROM create_or_enrich_lead(p_organization_id, p_origin_id, p_nombre, p_telefono, p_phone_key, p_email,
                               required_property(p_organization_id, p_property_by, p_property_value), p_note,
                               p_request_id, p_now, p_due_at, p_idempotency_key, p_lease_token, p_livemode) w;
  END IF;
  RETURN jsonb_build_object(
    'reserved', v_reserved, 'key_state', v_state, 'key_fingerprint', v_fingerprint, 'key_response', v_response,
    'lead_id', v_lead_id, 'created', v_created, 'assignee_id', v_assignee, 'filled', to_jsonb(v_filled));
END
$fn$`
  },
  {
    // A rescue (docs/contract.md#11-rejected-leads-are-kept-for-rescue): the very write of
    // `POST /v1/leads`, done only while the request-log row still keeps its body and names no lead,
    // and then marked on that row in the same transaction. The row lock makes two rescues of one
    // request take turns; the second finds the body gone and writes nothing (no row returned).
    name: "rescue_lead",
    text: `
CREATE OR REPLACE FUNCTION rescue_lead(
  p_request_log_id bigint,
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
  p_livemode boolean
) RETURNS TABLE (lead_id uuid, created boolean, assignee_id uuid, filled text[])
LANGUAGE plpgsql AS $fn$
DECLARE
  v_written record;
BEGIN
  PERFORM 1 FROM request_log r
  WHERE r.organization_id = p_organization_id AND r.id = p_request_log_id AND r.origin_id = p_origin_id AND r.kept_body IS NOT NULL
    AND r.rescued_lead_id IS NULL
  FOR UPDATE;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  SELECT * INTO v_written
  FROM create_or_enrich_lead(p_organization_id, p_origin_id, p_nombre, p_telefono, p_phone_key, p_email,
                             p_property_id, p_note, p_request_id, p_now, p_due_at, NULL, NULL, p_livemode) w;
  UPDATE request_log r SET rescued_lead_id = v_written.lead_id, kept_body = NULL WHERE r.organization_id = p_organization_id AND r.id = p_request_log_id;
  RETURN QUERY SELECT v_written.lead_id, v_written.created, v_written.assignee_id, v_written.filled;
END
$fn$`
  },
  {
    // `rescue_lead` with the property as the kept request names it: `required_property` first,
    // whatever the row's state.
    name: "rescue_write_lead",
    text: `
CREATE OR REPLACE FUNCTION rescue_write_lead(
  p_request_log_id bigint, p_organization_id uuid, p_origin_id uuid, p_nombre text, p_telefono text,
  p_phone_key text, p_email text, p_property_by text, p_property_value text, p_note text, p_request_id text,
  p_now timestamptz, p_due_at timestamptz, p_livemode boolean
) RETURNS TABLE (lead_id uuid, created boolean, assignee_id uuid, filled text[])
LANGUAGE sql AS $fn$
  SELECT * FROM rescue_lead(p_request_log_id, p_organization_id, p_origin_id, p_nombre, p_telefono, p_phone_key,
                            p_email, required_property(p_organization_id, p_property_by, p_property_value),
                            p_note, p_request_id, p_now, p_due_at, p_livemode)
$fn$`
  }
]
