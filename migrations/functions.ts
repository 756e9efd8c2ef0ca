/**
 * Today's text of every SQL function, one entry each: the migrator applies the ones whose text
 * changed after the versioned migrations (`Migrations.migrate`), so a rule is read, and changed, here.
 * The versioned migrations that first created them are history and stay as they landed.
 *
 * Old and new instances run side by side during a deploy: a new text keeps the signature and stays
 * correct for the code of the release before. A new signature is a new function beside the old one,
 * which a later release's contract migration drops (0026, 0028). A write function's signature is
 * fixed: the organization and one `jsonb` document that an Effect Schema encodes, answered by one
 * `jsonb` document; no function has more than 6 arguments. The lead's own fields travel in the
 * document by name and are stored by name (`lead_create_or_enrich`), so a new field of the lead
 * changes the document's Schema and the table, not a text here.
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
    // The advisory lock an Idempotency-Key's write holds while it runs (`lead_write_keyed`),
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
    // An event of the outbox and its webhook deliveries (docs/webhooks.md), from one document
    // (`OutboxEvent` in src/Webhooks/Outbox.ts: `lead_id`, `type`, `payload`, `now`, `livemode`,
    // `filled`, `snapshot`): the payload an endpoint receives is snapshotted now (the lead as this
    // write left it, `filled` the fields an enrichment filled that it carries), only when an enabled
    // endpoint of the organization takes the event; a test event names its endpoint in `snapshot`.
    // Every writer of the outbox calls this. Answers `{id, event_id}`.
    name: "outbox_event_add",
    text: `
CREATE OR REPLACE FUNCTION outbox_event_add(p_organization_id uuid, p_event jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $fn$
DECLARE
  v_lead_id uuid := (p_event ->> 'lead_id')::uuid;
  v_type text := p_event ->> 'type';
  v_payload jsonb := COALESCE(NULLIF(p_event -> 'payload', 'null'::jsonb), '{}'::jsonb);
  v_now timestamptz := (p_event ->> 'now')::timestamptz;
  v_livemode boolean := (p_event ->> 'livemode')::boolean;
  v_filled jsonb := NULLIF(p_event -> 'filled', 'null'::jsonb);
  v_snapshot jsonb := NULLIF(p_event -> 'snapshot', 'null'::jsonb);
  v_id bigint;
  v_event_id uuid;
BEGIN
  IF v_snapshot IS NULL
     AND EXISTS (SELECT 1 FROM webhook_endpoints e
                 WHERE e.organization_id = p_organization_id
                   AND (e.disabled_at IS NULL OR e.disabled_reason = 'operator')
                   AND v_type = ANY (e.events) AND (v_livemode OR e.test_events)) THEN
    IF v_type = 'lead.erased' THEN
      v_snapshot := '{}'::jsonb;
    ELSE
      SELECT jsonb_build_object(
        'origin', jsonb_build_object('id', o.id, 'label', o.label),
        'request_id', v_payload ->> 'request_id',
        'lead', jsonb_build_object('nombre', l.nombre, 'telefono', l.telefono, 'email', l.email,
                                   'property_id', l.property_id, 'assignee_id', l.assignee_id),
        'filled', CASE WHEN v_type = 'lead.enriched' THEN COALESCE(v_filled, '[]'::jsonb) ELSE '[]'::jsonb END)
      INTO v_snapshot
      FROM leads l
      JOIN origins o ON o.organization_id = l.organization_id
                    AND o.id = COALESCE((v_payload ->> 'origin_id')::uuid, l.origin_id)
      WHERE l.organization_id = p_organization_id AND l.id = v_lead_id;
      -- Of the fields the write filled, those the payload's lead carries (docs/webhooks.md).
      v_snapshot := jsonb_set(v_snapshot, '{filled}', (
        SELECT COALESCE(jsonb_agg(f.name ORDER BY f.n), '[]'::jsonb)
        FROM jsonb_array_elements_text(v_snapshot -> 'filled') WITH ORDINALITY AS f(name, n)
        WHERE (v_snapshot -> 'lead') ? f.name));
    END IF;
  END IF;

  INSERT INTO outbox_events (organization_id, lead_id, type, payload, created_at, livemode, webhook_snapshot)
  VALUES (p_organization_id, v_lead_id, v_type, v_payload, v_now, v_livemode, v_snapshot)
  RETURNING outbox_events.id, outbox_events.event_id INTO v_id, v_event_id;

  IF v_snapshot IS NOT NULL THEN
    INSERT INTO webhook_deliveries (organization_id, endpoint_id, event_id, outbox_id, type, next_attempt_at, created_at)
    SELECT e.organization_id, e.id, v_event_id, v_id, v_type, v_now, v_now
    FROM webhook_endpoints e
    WHERE e.organization_id = p_organization_id
      -- An endpoint an operator disabled keeps getting its events: they wait for enable.
      AND CASE WHEN v_type = 'webhook.test' THEN e.id = (v_snapshot ->> 'endpoint_id')::uuid
               ELSE (e.disabled_at IS NULL OR e.disabled_reason = 'operator')
                    AND v_type = ANY (e.events) AND (v_livemode OR e.test_events) END;
    PERFORM pg_notify('lead_intake_webhooks', '');
  END IF;
  RETURN jsonb_build_object('id', v_id, 'event_id', v_event_id);
END
$fn$`
  },
  {
    // The one text of an Idempotency-Key's reservation (docs/contract.md#5-idempotency), from one
    // document (`ReservationDocument` in src/Intake/IdempotencyStore.ts: `livemode`, `origin_id`, `key`,
    // `fingerprint`, `token`, `now`, `lease_expires_at`, `forget_before`): a first use, a lease run out
    // (before `now`) or a completion forgotten (before `forget_before`) is reserved for `token` until
    // `lease_expires_at`; otherwise the key's row as it stands (none: it was just released, which the
    // caller reads as still in progress). Answers `{reserved, state, fingerprint, response}`.
    // `IdempotencyStore.reserve` and `lead_write_keyed` call it.
    name: "idempotency_key_reserve",
    text: `
CREATE OR REPLACE FUNCTION idempotency_key_reserve(p_organization_id uuid, p_reservation jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $fn$
DECLARE
  v_livemode boolean := (p_reservation ->> 'livemode')::boolean;
  v_origin_id uuid := (p_reservation ->> 'origin_id')::uuid;
  v_key text := p_reservation ->> 'key';
  v_fingerprint text := p_reservation ->> 'fingerprint';
  v_token uuid := (p_reservation ->> 'token')::uuid;
  v_now timestamptz := (p_reservation ->> 'now')::timestamptz;
  v_lease_expires_at timestamptz := (p_reservation ->> 'lease_expires_at')::timestamptz;
  v_forget_before timestamptz := (p_reservation ->> 'forget_before')::timestamptz;
  v_found record;
BEGIN
  IF v_livemode THEN
    INSERT INTO idempotency_keys AS k (organization_id, origin_id, key, fingerprint, state, lease_token, lease_expires_at)
    VALUES (p_organization_id, v_origin_id, v_key, v_fingerprint, 'in_progress', v_token, v_lease_expires_at)
    ON CONFLICT (organization_id, origin_id, key) DO UPDATE
      SET fingerprint = EXCLUDED.fingerprint, state = 'in_progress', lease_token = EXCLUDED.lease_token,
          lease_expires_at = EXCLUDED.lease_expires_at, http_status = NULL, response = NULL, completed_at = NULL
      WHERE (k.state = 'in_progress' AND k.lease_expires_at <= v_now)
         OR (k.state = 'completed' AND k.completed_at <= v_forget_before);
    IF FOUND THEN
      RETURN jsonb_build_object('reserved', true, 'state', NULL, 'fingerprint', NULL, 'response', NULL);
    END IF;
    SELECT k.state::text AS state, k.fingerprint, k.response INTO v_found FROM idempotency_keys k
    WHERE k.organization_id = p_organization_id AND k.origin_id = v_origin_id AND k.key = v_key;
  ELSE
    INSERT INTO test_idempotency_keys AS k (organization_id, origin_id, key, fingerprint, state, lease_token, lease_expires_at)
    VALUES (p_organization_id, v_origin_id, v_key, v_fingerprint, 'in_progress', v_token, v_lease_expires_at)
    ON CONFLICT (organization_id, origin_id, key) DO UPDATE
      SET fingerprint = EXCLUDED.fingerprint, state = 'in_progress', lease_token = EXCLUDED.lease_token,
          lease_expires_at = EXCLUDED.lease_expires_at, http_status = NULL, response = NULL, completed_at = NULL
      WHERE (k.state = 'in_progress' AND k.lease_expires_at <= v_now)
         OR (k.state = 'completed' AND k.completed_at <= v_forget_before);
    IF FOUND THEN
      RETURN jsonb_build_object('reserved', true, 'state', NULL, 'fingerprint', NULL, 'response', NULL);
    END IF;
    SELECT k.state::text AS state, k.fingerprint, k.response INTO v_found FROM test_idempotency_keys k
    WHERE k.organization_id = p_organization_id AND k.origin_id = v_origin_id AND k.key = v_key;
  END IF;
  RETURN jsonb_build_object('reserved', false, 'state', v_found.state, 'fingerprint', v_found.fingerprint,
                            'response', v_found.response);
END
$fn$`
  },
  {
    // A create or enrichment from the write's document (`LeadWriteDocument` in
    // src/Intake/LeadRepository.ts: the request's `input` as normalised, `origin_id`, `livemode`,
    // `request_id`, `phone_key`, `note`, `now`, `due_at`, `idempotency`), with `property_id` set by the
    // caller once the property is resolved. The lead's own fields are stored by name: every key of
    // `input` that names a column of `leads` (`LeadFields` in src/Domain/LeadInput.ts; a column the
    // document does not name is NULL, not its default), so a new field is a column and a field of the
    // Schema, not an edit here. An enrichment fills the lead's empty ones among them, all but `nombre`
    // and `telefono` (`fillableFieldNames`); `filled` names them, the property as `property`, in byte
    // order. A write with an Idempotency-Key commits only with its key's completion: a reservation
    // released meanwhile (a lost answer settled by `IdempotencyStore.settle`, a lease run out) makes
    // it roll back with P0004, so a released key always means nothing was written
    // (docs/contract.md#5-idempotency). A completed key keeps the token of the reservation that
    // completed it, so that settling a lost answer tells this request's completion from another's. A
    // round-robin rule's turn is taken last among the lead's own rows and rolls back with the write.
    // Answers `{lead_id, created, assignee_id, filled}`.
    name: "lead_create_or_enrich",
    text: `
CREATE OR REPLACE FUNCTION lead_create_or_enrich(p_organization_id uuid, p_write jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $fn$
DECLARE
  v_origin_id uuid := (p_write ->> 'origin_id')::uuid;
  v_livemode boolean := (p_write ->> 'livemode')::boolean;
  v_request_id text := p_write ->> 'request_id';
  v_now timestamptz := (p_write ->> 'now')::timestamptz;
  v_due_at timestamptz := (p_write ->> 'due_at')::timestamptz;
  v_note text := p_write ->> 'note';
  v_property_id uuid := (p_write ->> 'property_id')::uuid;
  v_key text := p_write -> 'idempotency' ->> 'key';
  v_token uuid := (p_write -> 'idempotency' ->> 'token')::uuid;
  v_match_key text := lead_match_key(p_write ->> 'phone_key', (p_write ->> 'livemode')::boolean);
  v_lead leads%ROWTYPE := jsonb_populate_record(NULL::leads, p_write -> 'input');
  -- The fields this write gives that an enrichment may fill, by column.
  v_given jsonb := jsonb_strip_nulls(to_jsonb(v_lead)) - 'nombre' - 'telefono';
  v_lead_id uuid;
  v_assignee uuid;
  v_created boolean := false;
  v_filled text[];
  v_rule record;
  v_turn bigint;
  v_before leads%ROWTYPE;
  v_attempt integer := 0;
BEGIN
  v_lead.id := gen_random_uuid();
  v_lead.organization_id := p_organization_id;
  v_lead.origin_id := v_origin_id;
  v_lead.phone_key := v_match_key;
  v_lead.property_id := v_property_id;
  v_lead.assignee_id := NULL;
  v_lead.created_at := v_now;
  v_lead.updated_at := v_now;
  v_lead.erased_at := NULL;
  v_lead.livemode := v_livemode;
  <<attempts>>
  LOOP
  v_attempt := v_attempt + 1;
  INSERT INTO leads VALUES (v_lead.*)
  ON CONFLICT (organization_id, phone_key) DO NOTHING
  RETURNING id INTO v_lead_id;

  IF v_lead_id IS NOT NULL THEN
    v_created := true;
    IF v_given <> '{}'::jsonb THEN
      v_filled := ARRAY(SELECT jsonb_object_keys(v_given));
    ELSE
      v_filled := '{}';
    END IF;
  END IF;

  -- A test lead is never assigned and sets off no task (docs/contract.md#10-test-mode).
  IF v_lead_id IS NOT NULL AND v_livemode THEN
    SELECT r.id, r.agent_ids, r.round_robin INTO v_rule
    FROM capture_rules r
    WHERE r.organization_id = p_organization_id
      AND (r.origin_id IS NULL OR r.origin_id = v_origin_id)
      AND (r.property_id IS NULL OR r.property_id = v_property_id)
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
    VALUES (p_organization_id, v_lead_id, 'first_contact', v_assignee, v_due_at, v_now);
  END IF;

  IF v_lead_id IS NULL THEN
    SELECT l.* INTO v_before
    FROM leads l
    WHERE l.organization_id = p_organization_id AND l.phone_key = v_match_key
    FOR UPDATE;
    IF NOT FOUND THEN
      IF v_attempt >= 3 THEN
        RAISE EXCEPTION 'lead for phone key vanished during enrichment';
      END IF;
      CONTINUE attempts;
    END IF;
    v_lead_id := v_before.id;
    v_assignee := v_before.assignee_id;
    v_filled := ARRAY(SELECT f.key FROM jsonb_each(to_jsonb(v_before)) f
                    WHERE f.value = 'null'::jsonb AND v_given ? f.key);
    IF cardinality(v_filled) = 0 THEN
      UPDATE leads l
      SET property_id = COALESCE(l.property_id, v_property_id),
          updated_at = v_now
      WHERE l.organization_id = p_organization_id AND l.id = v_lead_id;
    ELSE
      -- The empty fields this write gives, set by their columns' names: a statement of its own for
      -- each set of them, run only by an enrichment that fills one.
      EXECUTE format('UPDATE leads l SET %s, property_id = COALESCE(l.property_id, $3), updated_at = $4 '
                     'WHERE l.organization_id = $1 AND l.id = $2',
                     (SELECT string_agg(format('%1$I = ($5).%1$I', f), ', ') FROM unnest(v_filled) f))
      USING p_organization_id, v_lead_id, v_property_id, v_now, v_lead;
    END IF;
    IF v_before.property_id IS NULL AND v_property_id IS NOT NULL THEN v_filled := array_append(v_filled, 'property'); END IF;
  ELSIF v_property_id IS NOT NULL THEN
    v_filled := array_append(v_filled, 'property');
  END IF;
  EXIT attempts;
  END LOOP;
  IF cardinality(v_filled) > 1 THEN
    v_filled := ARRAY(SELECT f FROM unnest(v_filled) f ORDER BY f COLLATE "C");
  END IF;

  IF v_note IS NOT NULL THEN
    INSERT INTO lead_notes (organization_id, lead_id, body, request_id, created_at)
    VALUES (p_organization_id, v_lead_id, v_note, v_request_id, v_now);
  END IF;

  PERFORM outbox_event_add(p_organization_id, jsonb_build_object(
    'lead_id', v_lead_id,
    'type', CASE WHEN v_created THEN 'lead.created' ELSE 'lead.enriched' END,
    'payload', jsonb_build_object('lead_id', v_lead_id, 'origin_id', v_origin_id, 'assignee_id', v_assignee,
                                  'request_id', v_request_id),
    'now', v_now,
    'livemode', v_livemode,
    'filled', (SELECT COALESCE(jsonb_agg(CASE f WHEN 'property' THEN 'property_id' ELSE f END), '[]'::jsonb)
               FROM unnest(v_filled) AS f),
    'snapshot', NULL));

  IF v_key IS NOT NULL AND v_livemode THEN
    UPDATE idempotency_keys k
    SET state = 'completed',
        http_status = CASE WHEN v_created THEN 201 ELSE 200 END,
        response = jsonb_build_object('lead_id', v_lead_id,
                                      'status', CASE WHEN v_created THEN 'created' ELSE 'enriched' END),
        completed_at = v_now, lease_expires_at = NULL
    WHERE k.organization_id = p_organization_id AND k.origin_id = v_origin_id AND k.key = v_key
      AND k.lease_token = v_token;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'the idempotency key''s reservation is no longer held' USING ERRCODE = 'P0004';
    END IF;
  ELSIF v_key IS NOT NULL THEN
    UPDATE test_idempotency_keys k
    SET state = 'completed',
        http_status = CASE WHEN v_created THEN 201 ELSE 200 END,
        response = jsonb_build_object('lead_id', v_lead_id,
                                      'status', CASE WHEN v_created THEN 'created' ELSE 'enriched' END),
        completed_at = v_now, lease_expires_at = NULL
    WHERE k.organization_id = p_organization_id AND k.origin_id = v_origin_id AND k.key = v_key
      AND k.lease_token = v_token;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'the idempotency key''s reservation is no longer held' USING ERRCODE = 'P0004';
    END IF;
  END IF;

  RETURN jsonb_build_object('lead_id', v_lead_id, 'created', v_created, 'assignee_id', v_assignee,
                            'filled', to_jsonb(v_filled));
END
$fn$`
  },
  {
    // The property a write's document names (`input.propiedad`, null: none), resolved by
    // `required_property` (P0005 when nothing active matches): the document as
    // `lead_create_or_enrich` takes it, with `property_id`.
    name: "lead_write_resolved",
    text: `
CREATE OR REPLACE FUNCTION lead_write_resolved(p_organization_id uuid, p_write jsonb) RETURNS jsonb
LANGUAGE sql STABLE AS $fn$
  SELECT p_write || jsonb_build_object('property_id',
    required_property(p_organization_id, p_write -> 'input' -> 'propiedad' ->> 'by',
                      p_write -> 'input' -> 'propiedad' ->> 'value'))
$fn$`
  },
  {
    // A create or enrichment without an Idempotency-Key: the property the request names resolved in
    // the same statement, then `lead_create_or_enrich`. One value, so that a caller's
    // `SELECT lead_write($1, $2)` is a call Citus hands whole to the node holding the organization.
    // PL/pgSQL, not SQL: PostgreSQL inlines a one-line SQL function into its caller's statement, and
    // Citus then sees a call of `lead_create_or_enrich`, which it runs on the coordinator.
    name: "lead_write",
    text: `
CREATE OR REPLACE FUNCTION lead_write(p_organization_id uuid, p_write jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $fn$
BEGIN
  RETURN lead_create_or_enrich(p_organization_id, lead_write_resolved(p_organization_id, p_write));
END
$fn$`
  },
  {
    // A create or enrichment behind its Idempotency-Key in one statement and one transaction
    // (docs/contract.md#5-idempotency), which Citus hands whole to the node holding the organization.
    // The document is `lead_write`'s, its `idempotency` carrying `key`, `token`, `fingerprint`,
    // `lease_expires_at` and `forget_before`:
    // - a key completed after `forget_before` answers at once, without the lock (concurrent retries
    //   of a finished request all replay);
    // - otherwise the key's advisory lock (`idempotency_key_lock`), held until this transaction ends:
    //   a request with the same key meanwhile finds it taken and answers 409 in progress;
    // - then the reservation (`idempotency_key_reserve`: a key reserved by a previous release's
    //   instance and still leased is in progress too), and `lead_create_or_enrich` with it, which
    //   completes the key.
    // A write that fails rolls back with its reservation: nothing of the request is left, and there is
    // nothing to release. Answers `{reserved, state, fingerprint, response, written}`: what the
    // reservation found, and what the write did (`lead_write`'s answer; null when nothing was written).
    name: "lead_write_keyed",
    text: `
CREATE OR REPLACE FUNCTION lead_write_keyed(p_organization_id uuid, p_write jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $fn$
DECLARE
  v_key jsonb := p_write -> 'idempotency';
  v_livemode boolean := (p_write ->> 'livemode')::boolean;
  v_origin_id uuid := (p_write ->> 'origin_id')::uuid;
  v_found jsonb;
  v_written jsonb;
BEGIN
  IF v_livemode THEN
    SELECT jsonb_build_object('reserved', false, 'state', k.state, 'fingerprint', k.fingerprint, 'response', k.response)
    INTO v_found FROM idempotency_keys k
    WHERE k.organization_id = p_organization_id AND k.origin_id = v_origin_id AND k.key = v_key ->> 'key'
      AND k.state = 'completed' AND k.completed_at > (v_key ->> 'forget_before')::timestamptz;
  ELSE
    SELECT jsonb_build_object('reserved', false, 'state', k.state, 'fingerprint', k.fingerprint, 'response', k.response)
    INTO v_found FROM test_idempotency_keys k
    WHERE k.organization_id = p_organization_id AND k.origin_id = v_origin_id AND k.key = v_key ->> 'key'
      AND k.state = 'completed' AND k.completed_at > (v_key ->> 'forget_before')::timestamptz;
  END IF;
  IF v_found IS NULL THEN
    IF pg_try_advisory_xact_lock(idempotency_key_lock(v_livemode, v_origin_id, v_key ->> 'key')) THEN
      v_found := idempotency_key_reserve(p_organization_id, v_key || jsonb_build_object(
        'livemode', v_livemode, 'origin_id', v_origin_id, 'now', p_write -> 'now'));
    ELSE
      v_found := jsonb_build_object('reserved', false, 'state', 'in_progress', 'fingerprint', NULL, 'response', NULL);
    END IF;
  END IF;
  IF (v_found ->> 'reserved')::boolean THEN
    v_written := lead_create_or_enrich(p_organization_id, lead_write_resolved(p_organization_id, p_write));
  END IF;
  RETURN v_found || jsonb_build_object('written', v_written);
END
$fn$`
  },
  {
    // A rescue (docs/contract.md#11-rejected-leads-are-kept-for-rescue): the very write of
    // `POST /v1/leads` (`lead_write`'s document, with `request_log_id` and no Idempotency-Key), done
    // only while the request-log row still keeps its body and names no lead, and then marked on that
    // row in the same transaction. The property is resolved first, whatever the row's state (P0005).
    // The row lock makes two rescues of one request take turns; the second finds the body gone and
    // writes nothing (null). Answers `lead_write`'s answer, or null.
    name: "lead_rescue",
    text: `
CREATE OR REPLACE FUNCTION lead_rescue(p_organization_id uuid, p_write jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $fn$
DECLARE
  v_write jsonb := lead_write_resolved(p_organization_id, p_write) || jsonb_build_object('idempotency', NULL);
  v_request_log_id bigint := (p_write ->> 'request_log_id')::bigint;
  v_origin_id uuid := (p_write ->> 'origin_id')::uuid;
  v_logged boolean;
  v_written jsonb;
BEGIN
  PERFORM 1 FROM logged_requests r
  WHERE r.organization_id = p_organization_id AND r.id = v_request_log_id
    AND r.origin_id = v_origin_id AND r.kept_body IS NOT NULL AND r.rescued_lead_id IS NULL
  FOR UPDATE;
  v_logged := FOUND;
  IF NOT v_logged THEN
    -- The previous release's row, not moved yet (migration 0029): its instances name that table's ids.
    PERFORM 1 FROM request_log r
    WHERE r.organization_id = p_organization_id AND r.id = v_request_log_id
      AND r.origin_id = v_origin_id AND r.kept_body IS NOT NULL AND r.rescued_lead_id IS NULL
    FOR UPDATE;
    IF NOT FOUND THEN
      RETURN NULL;
    END IF;
  END IF;
  v_written := lead_create_or_enrich(p_organization_id, v_write);
  IF v_logged THEN
    UPDATE logged_requests r SET rescued_lead_id = (v_written ->> 'lead_id')::uuid, kept_body = NULL
    WHERE r.organization_id = p_organization_id AND r.id = v_request_log_id;
  ELSE
    UPDATE request_log r SET rescued_lead_id = (v_written ->> 'lead_id')::uuid, kept_body = NULL
    WHERE r.organization_id = p_organization_id AND r.id = v_request_log_id;
  END IF;
  RETURN v_written;
END
$fn$`
  },

  {
    // The request log's partitions, one per day (UTC) on `at` (migration 0029), made ahead by the
    // janitor and on demand by the request log's writer for a row whose day has none. Run as the
    // schema's owner (the service's role has no DDL rights); one maker at a time (an advisory lock), so
    // instances racing to make the same day do not fail. Returns how many it made.
    name: "logged_requests_add_partitions",
    text: `
CREATE OR REPLACE FUNCTION logged_requests_add_partitions(p_from timestamptz, p_until timestamptz) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT SET lock_timeout = '200ms' AS $fn$
DECLARE
  v_day date := (p_from AT TIME ZONE 'UTC')::date;
  v_name text;
  v_made integer := 0;
BEGIN
  PERFORM pg_advisory_xact_lock(4812775030);
  WHILE v_day <= (p_until AT TIME ZONE 'UTC')::date LOOP
    v_name := 'logged_requests_' || to_char(v_day, 'YYYYMMDD');
    IF to_regclass(v_name) IS NULL THEN
      EXECUTE format('CREATE TABLE %I PARTITION OF logged_requests FOR VALUES FROM (%L) TO (%L)', v_name,
                     (v_day::timestamp AT TIME ZONE 'UTC')::text, ((v_day + 1)::timestamp AT TIME ZONE 'UTC')::text);
      v_made := v_made + 1;
    END IF;
    v_day := v_day + 1;
  END LOOP;
  RETURN v_made;
END
$fn$`
  },
  {
    // Retention without DELETE: every partition whose day ended at or before p_before is dropped
    // (no row by row delete, no WAL for the rows, nothing left to vacuum). A drop holds the parent's
    // exclusive lock for a moment: waited for 200 ms at most, else this fails and the janitor's next
    // sweep tries again. Returns the dropped partitions' names.
    name: "logged_requests_drop_partitions",
    text: `
CREATE OR REPLACE FUNCTION logged_requests_drop_partitions(p_before timestamptz) RETURNS SETOF text
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT SET lock_timeout = '200ms' AS $fn$
DECLARE
  v_name text;
BEGIN
  PERFORM pg_advisory_xact_lock(4812775030);
  FOR v_name IN
    SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = 'logged_requests'::regclass AND c.relname ~ '^logged_requests_[0-9]{8}$'
      AND (to_date(substr(c.relname, 17), 'YYYYMMDD') + 1)::timestamp AT TIME ZONE 'UTC' <= p_before
    ORDER BY c.relname
  LOOP
    EXECUTE format('DROP TABLE %I', v_name);
    RETURN NEXT v_name;
  END LOOP;
END
$fn$`
  }
]
