import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { layerFreshDatabase } from "../support/Database.ts"

/**
 * The road past one PostgreSQL (docs/sre.md, "Capacity"): distributing the tenant tables by
 * `organization_id` with Citus needs every primary key, unique key (constraint or unique index) and
 * foreign key of a tenant table to carry `organization_id`. Read from the live catalog of a migrated
 * database, the keys that do not are exactly the exceptions below, each with its fix; a new table or
 * key that breaks the rule fails here until it carries the column or is listed (and its fix written).
 */

/** A tenant table has an `organization_id` column, or hangs by a foreign key on one that does. */
const tenantTablesQuery = `
  WITH RECURSIVE tenant(relid) AS (
    SELECT a.attrelid FROM pg_attribute a
      JOIN pg_class c ON c.oid = a.attrelid AND c.relkind IN ('r', 'p')
      JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
     WHERE a.attname = 'organization_id' AND NOT a.attisdropped
    UNION
    SELECT con.conrelid FROM pg_constraint con JOIN tenant t ON con.confrelid = t.relid WHERE con.contype = 'f'
  )
  SELECT DISTINCT relid::regclass::text AS name FROM tenant ORDER BY 1`

/** Every key of those tables, as `table: kind name (columns)`, whose columns lack organization_id. */
const keysWithoutOrganizationQuery = `
  WITH keys AS (
    SELECT con.conrelid AS relid, con.conname AS name,
           CASE con.contype WHEN 'p' THEN 'primary key' WHEN 'u' THEN 'unique' ELSE 'foreign key' END AS kind,
           con.conkey AS cols, con.confrelid AS refrelid
      FROM pg_constraint con WHERE con.contype IN ('p', 'u', 'f')
    UNION ALL
    SELECT i.indrelid, ic.relname, 'unique index', i.indkey::int2[], 0
      FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
     WHERE i.indisunique AND NOT EXISTS (SELECT 1 FROM pg_constraint con WHERE con.conindid = i.indexrelid)
  )
  SELECT k.relid::regclass::text AS "table", k.kind, k.name,
         (SELECT string_agg(a.attname, ', ' ORDER BY array_position(k.cols, a.attnum))
            FROM pg_attribute a WHERE a.attrelid = k.relid AND a.attnum = ANY (k.cols)) AS columns
    FROM keys k
   WHERE k.relid = ANY ($1::regclass[])
     AND NOT EXISTS (SELECT 1 FROM pg_attribute a
                      WHERE a.attrelid = k.relid AND a.attnum = ANY (k.cols) AND a.attname = 'organization_id')
     -- organization_id → organizations (id) is the distribution column itself.
     AND NOT (k.kind = 'foreign key' AND k.refrelid = 'organizations'::regclass
              AND (SELECT array_agg(a.attname) FROM pg_attribute a
                    WHERE a.attrelid = k.relid AND a.attnum = ANY (k.cols)) = ARRAY['organization_id']::name[])
   ORDER BY 1, 2, 3`

/**
 * The keys that do not carry `organization_id` today, and what makes each ready. `organizations`
 * itself is distributed on its `id` (or kept as a reference table); `operators` may have no
 * organization (platform admins) and stays a reference table with its sessions.
 */
const exceptions: Record<string, string> = {
  "agents: primary key agents_pkey (id)": "PRIMARY KEY (organization_id, id)",
  "api_keys: foreign key api_keys_origin_id_fkey (origin_id)":
    "add organization_id (backfilled from origins), FOREIGN KEY (organization_id, origin_id)",
  "api_keys: primary key api_keys_pkey (id)": "with organization_id added: PRIMARY KEY (organization_id, id)",
  "api_keys: unique api_keys_public_id_key (public_id)":
    "the key's lookup before its organization is known: keep (public_id → organization_id) in a reference table, unique there",
  "api_keys: unique index api_keys_one_active_per_origin_and_mode (origin_id, livemode)":
    "with organization_id added: UNIQUE (organization_id, origin_id, livemode) WHERE revoked_at IS NULL",
  "audit_log: primary key audit_log_pkey (id)":
    "PRIMARY KEY (organization_id, id), once entries without an organization (platform actions) move to a table of their own",
  "capture_rules: foreign key capture_rules_origin_id_fkey (origin_id)":
    "FOREIGN KEY (organization_id, origin_id)",
  "capture_rules: foreign key capture_rules_property_id_fkey (property_id)":
    "FOREIGN KEY (organization_id, property_id)",
  "capture_rules: primary key capture_rules_pkey (id)": "PRIMARY KEY (organization_id, id)",
  "idempotency_keys: foreign key idempotency_keys_origin_id_fkey (origin_id)":
    "add organization_id, FOREIGN KEY (organization_id, origin_id)",
  "idempotency_keys: primary key idempotency_keys_pkey (origin_id, key)":
    "with organization_id added: PRIMARY KEY (organization_id, origin_id, key)",
  "lead_erasures: foreign key lead_erasures_lead_id_fkey (lead_id)": "FOREIGN KEY (organization_id, lead_id)",
  "lead_erasures: primary key lead_erasures_pkey (lead_id)": "PRIMARY KEY (organization_id, lead_id)",
  "lead_notes: foreign key lead_notes_lead_id_fkey (lead_id)":
    "add organization_id, FOREIGN KEY (organization_id, lead_id)",
  "lead_notes: primary key lead_notes_pkey (id)":
    "with organization_id added: PRIMARY KEY (organization_id, id)",
  "lead_tasks: foreign key lead_tasks_assignee_id_fkey (assignee_id)":
    "with organization_id added: FOREIGN KEY (organization_id, assignee_id)",
  "lead_tasks: foreign key lead_tasks_lead_id_fkey (lead_id)":
    "add organization_id, FOREIGN KEY (organization_id, lead_id)",
  "lead_tasks: primary key lead_tasks_pkey (id)":
    "with organization_id added: PRIMARY KEY (organization_id, id)",
  "leads: foreign key leads_assignee_id_fkey (assignee_id)": "FOREIGN KEY (organization_id, assignee_id)",
  "leads: foreign key leads_origin_id_fkey (origin_id)": "FOREIGN KEY (organization_id, origin_id)",
  "leads: foreign key leads_property_id_fkey (property_id)": "FOREIGN KEY (organization_id, property_id)",
  "leads: primary key leads_pkey (id)": "PRIMARY KEY (organization_id, id)",
  "operator_sessions: foreign key operator_sessions_operator_id_fkey (operator_id)":
    "none needed: a reference table (copied to every node) with operators",
  "operator_sessions: primary key operator_sessions_pkey (id)": "none needed: a reference table",
  "operator_sessions: unique operator_sessions_token_hash_key (token_hash)": "none needed: a reference table",
  "operators: primary key operators_pkey (id)":
    "none needed: a reference table (few rows; a platform admin belongs to no organization)",
  "operators: unique operators_email_key (email)": "none needed: a reference table (an e-mail signs in once)",
  "origins: primary key origins_pkey (id)": "PRIMARY KEY (organization_id, id)",
  "outbox_events: foreign key outbox_events_lead_id_fkey (lead_id)": "FOREIGN KEY (organization_id, lead_id)",
  "outbox_events: primary key outbox_events_pkey (id)": "PRIMARY KEY (organization_id, id)",
  "properties: primary key properties_pkey (id)": "PRIMARY KEY (organization_id, id)",
  "rate_limit_windows: foreign key rate_limit_windows_origin_id_fkey (origin_id)":
    "add organization_id, FOREIGN KEY (organization_id, origin_id)",
  "rate_limit_windows: primary key rate_limit_windows_pkey (origin_id, window_start)":
    "with organization_id added: PRIMARY KEY (organization_id, origin_id, window_start)",
  "request_log: foreign key request_log_origin_id_fkey (origin_id)":
    "add organization_id, FOREIGN KEY (organization_id, origin_id); unattributed requests (no origin) to a table of their own",
  "request_log: primary key request_log_pkey (id)":
    "with organization_id added: PRIMARY KEY (organization_id, id)",
  "request_log: unique index request_log_row_key_idx (row_key)":
    "with organization_id added: UNIQUE (organization_id, row_key) (the writer knows each row's organization)",
  "test_idempotency_keys: foreign key test_idempotency_keys_origin_id_fkey (origin_id)":
    "add organization_id, FOREIGN KEY (organization_id, origin_id)",
  "test_idempotency_keys: primary key test_idempotency_keys_pkey (origin_id, key)":
    "with organization_id added: PRIMARY KEY (organization_id, origin_id, key)",
  "test_rate_limit_windows: foreign key test_rate_limit_windows_origin_id_fkey (origin_id)":
    "add organization_id, FOREIGN KEY (organization_id, origin_id)",
  "test_rate_limit_windows: primary key test_rate_limit_windows_pkey (origin_id, window_start)":
    "with organization_id added: PRIMARY KEY (organization_id, origin_id, window_start)",
  "webhook_deliveries: foreign key webhook_deliveries_endpoint_id_fkey (endpoint_id)":
    "add organization_id, FOREIGN KEY (organization_id, endpoint_id)",
  "webhook_deliveries: foreign key webhook_deliveries_outbox_id_fkey (outbox_id)":
    "add organization_id, FOREIGN KEY (organization_id, outbox_id)",
  "webhook_deliveries: primary key webhook_deliveries_pkey (endpoint_id, event_id)":
    "with organization_id added: PRIMARY KEY (organization_id, endpoint_id, event_id)",
  "webhook_endpoints: primary key webhook_endpoints_pkey (id)": "PRIMARY KEY (organization_id, id)"
}

const run = <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient>) =>
  Effect.runPromise(Effect.scoped(Effect.provide(effect, Layer.fresh(layerFreshDatabase))).pipe(Effect.orDie))

describe("the schema, ready to be distributed by organization", () => {
  it("every key of a tenant table carries organization_id, or is a listed exception with its fix", async () => {
    const { tables, keys } = await run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const tables = (yield* sql.unsafe<{ name: string }>(tenantTablesQuery)).map((row) => row.name)
        const keys = yield* sql.unsafe<{ table: string; kind: string; name: string; columns: string }>(
          keysWithoutOrganizationQuery,
          [`{${tables.join(",")}}`]
        )
        return { tables, keys: keys.map((key) => `${key.table}: ${key.kind} ${key.name} (${key.columns})`) }
      })
    )
    expect(tables).toContain("leads")
    expect(tables).toContain("lead_notes")
    const unlisted = keys.filter((key) => !(key in exceptions))
    const fixed = Object.keys(exceptions).filter((key) => !keys.includes(key))
    expect(unlisted, "keys without organization_id that are not listed with their fix").toEqual([])
    expect(
      fixed,
      "listed exceptions that no longer exist: remove them from the list and docs/sre.md"
    ).toEqual([])
  })
})
