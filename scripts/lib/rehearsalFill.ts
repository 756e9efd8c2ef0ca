import type pg from "pg"

/**
 * A live-looking database, written by PostgreSQL itself (`generate_series`, `INSERT … SELECT` in
 * batches of `batchLeads` leads, each its own transaction): `organizations` organizations, the first
 * holding half the leads; per organization origins with live, test and revoked keys, agents,
 * properties, capture rules, operators and audit entries; `leads` leads over the past year, each with
 * one or two notes, its task, one or two request-log rows (creates, enrichments, refusals, rows of
 * no origin); the newest twentieth with outbox events fanned out to webhook deliveries and attempts,
 * and their Idempotency-Keys; erased and test leads among them. Every row is what the service would
 * write (the schema's checks and keys hold), on the schema of any release from migration 0015 to 0021
 * (the columns 0018-0021 add are written where they exist). A later schema that a fill must write
 * more to (a column NOT NULL without a default) needs its statements here.
 */
export interface FillOptions {
  readonly leads: number
  readonly organizations: number
  readonly log: (line: string) => void
}

export interface FillPhase {
  readonly phase: string
  readonly seconds: number
}

const batchLeads = 50_000
const yearSeconds = 365 * 24 * 3600

const timed = async (phases: Array<FillPhase>, phase: string, run: () => Promise<unknown>) => {
  const started = performance.now()
  await run()
  phases.push({ phase, seconds: (performance.now() - started) / 1000 })
}

export const fill = async (client: pg.Client, options: FillOptions): Promise<ReadonlyArray<FillPhase>> => {
  const { leads, organizations, log } = options
  if (organizations < 2) throw new Error("--organizations must be at least 2")
  const present = new Set(
    (
      await client.query<{ name: string }>(
        `SELECT table_name || '.' || column_name AS name FROM information_schema.columns
         WHERE table_schema = current_schema()`
      )
    ).rows.map((row) => row.name)
  )
  const has = (column: string) => present.has(column)
  const run = (text: string, values: ReadonlyArray<unknown> = []) => client.query(text, [...values])
  const phases: Array<FillPhase> = []
  // A scratch database: a crash loses the fill, which is run again; nothing waits for the WAL flush.
  await run("SET synchronous_commit = off")
  // Its plans run once each: compiling them (JIT) costs more than it saves.
  await run("SET jit = off")

  await timed(phases, "organizations, origins, keys, agents, properties, rules, endpoints, operators", () =>
    setUp(run, has, organizations)
  )

  await timed(phases, "leads, notes, tasks, erasures, request log", async () => {
    for (let first = 1; first <= leads; first += batchLeads) {
      const last = Math.min(leads, first + batchLeads - 1)
      await run(leadsBatch(has), [first, last, leads, yearSeconds / leads, organizations])
      log(`fill: ${last.toLocaleString("en")} / ${leads.toLocaleString("en")} leads`)
    }
  })

  // The newest twentieth of the leads still has its outbox events (the webhook worker prunes older
  // ones); the triggers fan them out to the endpoints, as a create does.
  const recent = `now() - make_interval(secs => ${Math.ceil(yearSeconds / 20)})`
  await timed(phases, "outbox events, webhook deliveries and attempts", async () => {
    await run(`
      INSERT INTO outbox_events (organization_id, lead_id, type, payload, created_at, published_at, livemode)
      SELECT l.organization_id, l.id, 'lead.created',
             jsonb_build_object('lead_id', l.id, 'origin_id', l.origin_id, 'assignee_id', l.assignee_id,
                                'request_id', 'req_fill'),
             l.created_at, CASE WHEN l.created_at < now() - interval '1 minute' THEN l.created_at END, l.livemode
      FROM leads l WHERE l.created_at >= ${recent} AND l.erased_at IS NULL ORDER BY l.created_at`)
    await run(`
      UPDATE webhook_deliveries
      SET state = CASE WHEN outbox_id % 50 = 0 THEN 'failed' ELSE 'delivered' END,
          attempts = CASE WHEN outbox_id % 50 = 0 THEN 8 ELSE 1 END,
          failures = CASE WHEN outbox_id % 50 = 0 THEN 8 ELSE 0 END,
          last_status = CASE WHEN outbox_id % 50 = 0 THEN 503 ELSE 200 END,
          last_attempt_at = created_at + interval '2 seconds',
          delivered_at = CASE WHEN outbox_id % 50 = 0 THEN NULL ELSE created_at + interval '2 seconds' END,
          next_attempt_at = NULL
      WHERE created_at < now() - interval '10 minutes'`)
    if (has("webhook_attempts.event_id"))
      await run(`
        INSERT INTO webhook_attempts (organization_id, endpoint_id, event_id, attempt, at, status, error, duration_ms)
        SELECT e.organization_id, d.endpoint_id, d.event_id, 1, d.last_attempt_at, d.last_status,
               CASE WHEN d.state = 'failed' THEN 'HTTP 503' END, 180
        FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.last_attempt_at IS NOT NULL`)
  })

  await timed(phases, "idempotency keys, rate windows, sessions", async () => {
    // Each with its organization from 0022 on, as every tenant table.
    const withOrganization = (table: string) => has(`${table}.organization_id`)
    for (const [table, livemode] of [
      ["idempotency_keys", "r.livemode"],
      ["test_idempotency_keys", "NOT r.livemode"]
    ] as const)
      await run(`
        INSERT INTO ${table} (${withOrganization(table) ? "organization_id, " : ""}origin_id, key, fingerprint, state,
                              http_status, response, completed_at)
        SELECT ${withOrganization(table) ? "o.organization_id, " : ""}r.origin_id, r.idempotency_key,
               md5(r.idempotency_key), 'completed', 201, jsonb_build_object('lead_id', r.lead_id, 'status', 'created'),
               r.at
        FROM request_log r JOIN origins o ON o.id = r.origin_id
        WHERE r.at > now() - interval '1 day' AND r.status = 201 AND r.idempotency_key IS NOT NULL AND ${livemode}`)
    for (const table of ["rate_limit_windows", "test_rate_limit_windows"])
      await run(`
        INSERT INTO ${table} (${withOrganization(table) ? "organization_id, " : ""}origin_id, window_start, count)
        SELECT ${withOrganization(table) ? "o.organization_id, " : ""}o.id,
               date_trunc('minute', now()) - m * interval '1 minute', 1 + m
        FROM origins o, generate_series(1, 9) m`)
    // From 0027 on the windows are counted in one table of the node the service connects to.
    if (has("rate_windows.origin_id"))
      await run(`
        INSERT INTO rate_windows (origin_id, livemode, window_start, count)
        SELECT o.id, true, date_trunc('minute', now()) - m * interval '1 minute', 1 + m
        FROM origins o, generate_series(1, 9) m`)
    await run(`
      INSERT INTO operator_sessions (operator_id, token_hash, csrf_token, ip, created_at, last_seen_at)
      SELECT id, md5('session' || id), md5('csrf' || id), '127.0.0.1', now() - interval '1 hour', now() FROM operators`)
  })
  return phases
}

type Run = (text: string, values?: ReadonlyArray<unknown>) => Promise<unknown>

/** Everything the leads hang on, and the session's map of it (`fill_org`: each organization's ids as arrays). */
const setUp = async (run: Run, has: (column: string) => boolean, organizations: number) => {
  await run(
    `
    CREATE TEMP TABLE fill_org AS
    SELECT i AS idx, gen_random_uuid() AS id,
           CASE WHEN i = 0 THEN 20 ELSE 5 END AS origins,
           CASE WHEN i = 0 THEN 30 ELSE 5 END AS agents,
           CASE WHEN i = 0 THEN 500 ELSE 50 END AS properties
    FROM generate_series(0, $1 - 1) i`,
    [organizations]
  )
  await run(`
    INSERT INTO organizations (id, name, country, created_at${has("organizations.time_zone") ? ", time_zone" : ""})
    SELECT id, 'Rehearsal Realty ' || lpad(idx::text, 3, '0'), 'MX', now() - interval '2 years'
           ${has("organizations.time_zone") ? ", 'America/Mexico_City'" : ""}
    FROM fill_org`)
  await run(`
    CREATE TEMP TABLE fill_origin AS
    SELECT o.idx AS org_idx, j, gen_random_uuid() AS id, lpad((o.idx * 1000 + j)::text, 7, '0') AS serial
    FROM fill_org o, generate_series(1, o.origins) j`)
  await run(`
    INSERT INTO origins (id, organization_id, label, rate_limit, created_at)
    SELECT r.id, o.id, 'portal-' || r.j, 1000000000, now() - interval '2 years'
    FROM fill_origin r JOIN fill_org o ON o.idx = r.org_idx`)
  // A live key per origin, a test key for every other one, and a live key revoked before it (each with
  // its organization from migration 0026 on).
  const keyOrganization = has("api_keys.organization_id") ? ", organization_id" : ""
  await run(`
    INSERT INTO api_keys (origin_id, public_id, prefix, key_hash, created_at, revoked_at, livemode${keyOrganization})
    SELECT fill_origin.id, p.letter || serial, p.prefix || p.letter || serial,
           encode(sha256(convert_to(p.letter || serial, 'UTF8')), 'hex'), now() - p.age, p.revoked, p.live
           ${keyOrganization === "" ? "" : ", (SELECT o.id FROM fill_org o WHERE o.idx = fill_origin.org_idx)"}
    FROM fill_origin,
         LATERAL (VALUES ('L', 'lk_live_', interval '1 year', NULL::timestamptz, true),
                         ('T', 'lk_test_', interval '1 year', NULL, false),
                         ('R', 'lk_live_', interval '2 years', now() - interval '1 year', true))
           AS p(letter, prefix, age, revoked, live)
    WHERE p.letter <> 'T' OR j % 2 = 1`)
  await run(`
    CREATE TEMP TABLE fill_agent AS
    SELECT o.idx AS org_idx, j, gen_random_uuid() AS id FROM fill_org o, generate_series(1, o.agents) j`)
  await run(`
    INSERT INTO agents (id, organization_id, name, created_at)
    SELECT a.id, o.id, 'Agente ' || a.j, now() - interval '2 years' FROM fill_agent a JOIN fill_org o ON o.idx = a.org_idx`)
  await run(`
    CREATE TEMP TABLE fill_property AS
    SELECT o.idx AS org_idx, j, gen_random_uuid() AS id FROM fill_org o, generate_series(1, o.properties) j`)
  await run(`
    INSERT INTO properties (id, organization_id, codigo, external_code, archived, created_at)
    SELECT p.id, o.id, 'REH-' || lpad(p.j::text, 4, '0'), CASE WHEN p.j % 2 = 0 THEN 'EXT-' || p.j END,
           p.j % 20 = 0, now() - interval '2 years'
    FROM fill_property p JOIN fill_org o ON o.idx = p.org_idx`)
  await run(`
    ALTER TABLE fill_org ADD COLUMN origin_ids uuid[], ADD COLUMN prefixes text[], ADD COLUMN agent_ids uuid[],
                         ADD COLUMN property_ids uuid[]`)
  await run(`
    UPDATE fill_org o SET
      origin_ids = (SELECT array_agg(id ORDER BY j) FROM fill_origin WHERE org_idx = o.idx),
      prefixes = (SELECT array_agg('lk_live_L' || serial ORDER BY j) FROM fill_origin WHERE org_idx = o.idx),
      agent_ids = (SELECT array_agg(id ORDER BY j) FROM fill_agent WHERE org_idx = o.idx),
      property_ids = (SELECT array_agg(id ORDER BY j) FROM fill_property WHERE org_idx = o.idx AND j % 20 <> 0)`)
  // Round-robin over every agent, one origin's leads to its first agent, one property's to its second.
  await run(`
    INSERT INTO capture_rules (organization_id, priority, origin_id, property_id, agent_ids, round_robin, created_at)
    SELECT id, 100, NULL::uuid, NULL::uuid, agent_ids, true, now() - interval '1 year' FROM fill_org
    UNION ALL SELECT id, 50, origin_ids[1], NULL, agent_ids[1:1], false, now() - interval '1 year' FROM fill_org
    UNION ALL SELECT id, 40, NULL, property_ids[1], agent_ids[2:2], false, now() - interval '1 year' FROM fill_org`)
  await run(`
    INSERT INTO webhook_endpoints (organization_id, url, events, secret, created_at, disabled_at, disabled_reason)
    SELECT id, 'https://crm-' || idx || '.example.com/hooks/leads', ARRAY['lead.created', 'lead.enriched'],
           'whsec_' || md5(id::text), now() - interval '1 year', NULL::timestamptz, NULL
    FROM fill_org WHERE idx < 8
    UNION ALL
    SELECT id, 'https://backup.example.com/hooks/' || idx, ARRAY['lead.created'], 'whsec_' || md5(idx::text),
           now() - interval '1 year', now() - interval '30 days', 'operator'
    FROM fill_org WHERE idx = 0`)
  await run(`
    INSERT INTO operators (organization_id, email, role, password_hash, created_at)
    SELECT id, r.role || idx || '@rehearsal.example', r.role, 'fill:no-password', now() - interval '2 years'
    FROM fill_org, (VALUES ('admin'), ('viewer')) AS r(role)
    UNION ALL SELECT NULL, 'platform@rehearsal.example', 'admin', 'fill:no-password', now() - interval '2 years'`)
  await run(
    `
    INSERT INTO audit_log (at, organization_id, operator_id, operator_email, action, target, ip)
    SELECT now() - i * interval '1 hour', o.id, NULL::uuid, 'admin' || o.idx || '@rehearsal.example', 'origin.rate_limit',
           'origin:portal-1', '127.0.0.1'
    FROM generate_series(1, 5000) i JOIN fill_org o ON o.idx = i % $1`,
    [organizations]
  )
  // The platform's own actions: in their own table from 0022 on, before in the audit log with no organization.
  const platform = has("platform_audit_log.id") ? "platform_audit_log (at" : "audit_log (at, organization_id"
  await run(`
    INSERT INTO ${platform}, operator_id, operator_email, action, target, ip)
    SELECT now() - i * interval '1 day'${platform.startsWith("audit_log") ? ", NULL" : ""}, NULL::uuid,
           'platform@rehearsal.example', 'organization.create', NULL, '127.0.0.1'
    FROM generate_series(1, 100) i`)
}

/**
 * Leads $1..$2 of $3, lead n created $4 × ($3 - n) seconds ago; even ones in the first organization,
 * odd ones spread over the other $5 - 1. Every fiftieth a test lead, every thousandth erased.
 */
const leadsBatch = (has: (column: string) => boolean) => {
  const rowKey = has("request_log.row_key")
  const keptBody = has("request_log.kept_body")
  const logColumns = `request_id, at, origin_id, key_prefix, status, outcome, lead_id, idempotency_key, duration_ms,
                      livemode${rowKey ? ", row_key" : ""}${keptBody ? ", kept_body" : ""}`
  const logValues = (body: string) => `${rowKey ? ", gen_random_uuid()" : ""}${keptBody ? `, ${body}` : ""}`
  // Since 0022 the children carry their organization, written here: a trigger filling it would read
  // the lead this same statement inserts, which its snapshot does not show.
  const organization = has("lead_notes.organization_id")
  const orgColumn = organization ? "organization_id, " : ""
  const orgValue = organization ? "organization_id, " : ""
  const logOrgColumn = has("request_log.organization_id") ? ", organization_id" : ""
  const logOrgValue = (attributed: string) =>
    has("request_log.organization_id") ? `, CASE WHEN ${attributed} THEN organization_id END` : ""
  // Since 0023 the requests whose key names no origin are kept in a table of their own.
  const unattributed = has("unattributed_requests.request_id")
  const unattributedRows = unattributed
    ? `, unattributed_rows AS (
      INSERT INTO unattributed_requests (row_key, request_id, at, key_prefix, status, outcome, duration_ms, livemode)
      SELECT gen_random_uuid(), 'req_fill_' || n || '_b', least(at + interval '1 hour', now()), 'lk_live_unknown0',
             401, 'unauthorized', 12 + r % 30, NOT test
      FROM src WHERE r < 50 AND r % 10 = 1
      RETURNING 1
    )`
    : ""
  return `
    WITH src AS MATERIALIZED (
      SELECT n, gen_random_uuid() AS lead_id, o.id AS organization_id,
             o.origin_ids[1 + n % cardinality(o.origin_ids)] AS origin_id,
             o.prefixes[1 + n % cardinality(o.prefixes)] AS key_prefix,
             o.agent_ids[1 + n % cardinality(o.agent_ids)] AS agent_id,
             o.property_ids[1 + n % cardinality(o.property_ids)] AS property_id,
             now() - make_interval(secs => ($3 - n) * $4::float8) AS at,
             '+52' || (5500000000 + n) AS phone,
             n % 50 = 7 AS test, n % 1000 = 3 AS erased, (n * 7919) % 100 AS r
      FROM generate_series($1::bigint, $2::bigint) n
      JOIN fill_org o ON o.idx = CASE WHEN n % 2 = 0 THEN 0 ELSE 1 + (n / 2) % ($5 - 1) END
    ), leads_in AS (
      INSERT INTO leads (id, organization_id, origin_id, nombre, telefono, phone_key, email, property_id, assignee_id,
                         created_at, updated_at, erased_at, livemode)
      SELECT lead_id, organization_id, origin_id,
             CASE WHEN NOT erased THEN 'Lead ' || n END,
             CASE WHEN NOT erased THEN phone END,
             CASE WHEN erased THEN NULL WHEN test THEN 'test:' || phone ELSE phone END,
             CASE WHEN NOT erased AND r >= 40 THEN 'lead' || n || '@example.com' END,
             CASE WHEN NOT erased AND r < 30 THEN property_id END,
             CASE WHEN NOT erased AND NOT test THEN agent_id END,
             at, at, CASE WHEN erased THEN least(at + interval '30 days', now()) END, NOT test
      FROM src
      RETURNING 1
    ), notes AS (
      INSERT INTO lead_notes (${orgColumn}lead_id, body, request_id, created_at)
      SELECT ${orgValue}lead_id, CASE WHEN k = 1 THEN 'Me interesa la propiedad, ¿sigue disponible?' ELSE 'Prefiere llamada por la tarde.' END,
             'req_fill_' || n || '_' || k, at
      FROM src, generate_series(1, CASE WHEN r < 50 THEN 2 ELSE 1 END) k
      WHERE NOT erased
      RETURNING 1
    ), tasks AS (
      INSERT INTO lead_tasks (${orgColumn}lead_id, kind, assignee_id, due_at, created_at)
      SELECT ${orgValue}lead_id, 'first_contact', agent_id, at + interval '15 minutes', at FROM src WHERE NOT erased AND NOT test
      RETURNING 1
    ), erasures AS (
      INSERT INTO lead_erasures (lead_id, organization_id, erased_at, erased_by, reason, removed)
      SELECT lead_id, organization_id, least(at + interval '30 days', now()), 'cli:fill', 'requested by the person',
             '{"notes": 1}'::jsonb
      FROM src WHERE erased
      RETURNING 1
    ), created_rows AS (
      INSERT INTO request_log (${logColumns}${logOrgColumn})
      SELECT 'req_fill_' || n, at, origin_id, key_prefix, 201, 'created', lead_id,
             CASE WHEN r % 2 = 0 THEN 'idem-' || n END, 15 + r % 40, NOT test ${logValues("NULL")}${logOrgValue("true")}
      FROM src
      RETURNING 1
    )
    ${unattributedRows}
    INSERT INTO request_log (${logColumns}${logOrgColumn})
    SELECT 'req_fill_' || n || '_b', least(at + interval '1 hour', now()),
           CASE WHEN r % 10 = 1 THEN NULL ELSE origin_id END,
           CASE WHEN r % 10 = 1 THEN 'lk_live_unknown0' ELSE key_prefix END,
           CASE WHEN r % 10 = 1 THEN 401 WHEN r % 10 = 3 THEN 400 WHEN r % 10 = 5 THEN 429 ELSE 200 END,
           CASE WHEN r % 10 = 1 THEN 'unauthorized' WHEN r % 10 = 3 THEN 'validation_error'
                WHEN r % 10 = 5 THEN 'rate_limited' ELSE 'enriched' END,
           CASE WHEN r % 10 IN (1, 3, 5) OR erased THEN NULL ELSE lead_id END,
           NULL, 12 + r % 30, NOT test
           ${logValues(`CASE WHEN r % 10 = 3 THEN '{"nombre": "", "telefono": "' || phone || '"}' END`)}${logOrgValue("r % 10 <> 1")}
    FROM src WHERE r < 50${unattributed ? " AND r % 10 <> 1" : ""}`
}
