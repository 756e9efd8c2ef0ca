import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { inShortTransactions, shortTransaction } from "./outsideTransaction.ts"

/**
 * Keys that distribute (docs/sre.md#distributing-by-organization-citus), step 1 of 5: every tenant
 * table gets `organization_id`, and what has no organization gets a table of its own.
 *
 * - The tenant tables that hung by a foreign key on a parent get the column, nullable for now (adding
 *   it takes no scan). `fill_organization_id` fills it from the parent on INSERT while writers that
 *   do not send it yet run (the previous release's SQL functions until this run applies the new ones,
 *   its instances' statements during a deploy), and sends a request-log row of no origin to
 *   `unattributed_requests` and an audit entry of no organization to `platform_audit_log`; migration
 *   0023 backfills the rows that exist.
 * - `api_key_directory`: a key's `public_id` → its organization, read before the organization is
 *   known. Global (a reference table on Citus); `api_keys` becomes a tenant table.
 * - `unattributed_requests` and `platform_audit_log`: the request-log rows that name no origin and the
 *   audit entries of no organization (platform actions), which a table distributed by organization
 *   cannot hold.
 * - `capture_rules.turns_taken`: a round-robin rule's turns, taken in the write's own transaction
 *   (migration 0024 copies the per-rule sequences into it; a sequence made by a trigger cannot be
 *   created on the node that holds the rule).
 *
 * On a live database: each table is altered in a short transaction of its own (its column and its
 * trigger together, so no row is written between them without the fill), which waits for its lock
 * at most 200 ms and is tried again. One transaction over every table would hold the first table's
 * lock while it queued for the next, and deadlock with requests that write two of them (the
 * rehearsal saw it: docs/sre.md#rehearsing-migrations-on-a-database-with-data). Written so that it
 * can be applied again from the start.
 */
export default inShortTransactions(
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // New tables first: nothing uses them yet, and the fill writes to them.
    yield* shortTransaction(
      "api_key_directory",
      sql`
        CREATE TABLE IF NOT EXISTS api_key_directory (
          public_id text PRIMARY KEY,
          organization_id uuid NOT NULL REFERENCES organizations (id),
          key_id uuid NOT NULL
        )`
    )
    yield* sql`
      CREATE TABLE IF NOT EXISTS unattributed_requests (
        id bigserial PRIMARY KEY,
        row_key uuid UNIQUE,
        request_id text NOT NULL,
        at timestamptz NOT NULL,
        key_prefix text,
        status integer NOT NULL,
        outcome text NOT NULL,
        idempotency_key text,
        duration_ms double precision NOT NULL,
        livemode boolean NOT NULL DEFAULT true
      )`
    yield* sql`CREATE INDEX IF NOT EXISTS unattributed_requests_at_idx ON unattributed_requests (at DESC, id DESC)`
    // One sequence numbers both audit tables, so one order runs through them (an identity column's own
    // sequence could not be shared).
    yield* sql`CREATE SEQUENCE IF NOT EXISTS audit_entry_id_seq`
    yield* sql`
      CREATE TABLE IF NOT EXISTS platform_audit_log (
        id bigint PRIMARY KEY DEFAULT nextval('audit_entry_id_seq'),
        at timestamptz NOT NULL,
        operator_id uuid,
        operator_email text NOT NULL,
        action text NOT NULL,
        target text,
        ip text
      )`
    yield* sql.unsafe(fillOrganizationFunction)

    yield* shortTransaction(
      "capture_rules",
      sql`ALTER TABLE capture_rules ADD COLUMN IF NOT EXISTS turns_taken bigint NOT NULL DEFAULT 0`
    )
    for (const table of childTables.map((child) => child.name))
      yield* shortTransaction(
        table,
        Effect.andThen(
          sql.unsafe(`ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS organization_id uuid`),
          fillTrigger(table)
        )
      )
    // The audit log's ids from the shared sequence, from past the highest it gave, and its fill.
    yield* shortTransaction(
      "audit_log",
      Effect.gen(function* () {
        yield* sql`ALTER TABLE audit_log ALTER COLUMN id DROP IDENTITY IF EXISTS`
        yield* sql`
          SELECT setval('audit_entry_id_seq', GREATEST((SELECT max(id) FROM audit_log), 0) + 1, false)
          WHERE (SELECT column_default FROM information_schema.columns
                 WHERE table_schema = current_schema() AND table_name = 'audit_log' AND column_name = 'id') IS NULL`
        yield* sql`ALTER TABLE audit_log ALTER COLUMN id SET DEFAULT nextval('audit_entry_id_seq')`
        yield* fillTrigger("audit_log")
      })
    )

    // The keys that exist; a key made from here on is added by the fill on api_keys.
    yield* sql`
      INSERT INTO api_key_directory (public_id, organization_id, key_id)
      SELECT k.public_id, o.organization_id, k.id FROM api_keys k JOIN origins o ON o.id = k.origin_id
      ON CONFLICT (public_id) DO NOTHING`
  })
)

const fillTrigger = (table: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`DROP TRIGGER IF EXISTS fill_organization_id ON ${table}`)
    yield* sql.unsafe(`
      CREATE TRIGGER fill_organization_id BEFORE INSERT ON ${table}
      FOR EACH ROW WHEN (NEW.organization_id IS NULL) EXECUTE FUNCTION fill_organization_id()`)
  })

/** The tables that get `organization_id`, each with the parent it is read from. */
export const childTables = [
  { name: "api_keys", parent: "origins", column: "origin_id" },
  { name: "idempotency_keys", parent: "origins", column: "origin_id" },
  { name: "test_idempotency_keys", parent: "origins", column: "origin_id" },
  { name: "rate_limit_windows", parent: "origins", column: "origin_id" },
  { name: "test_rate_limit_windows", parent: "origins", column: "origin_id" },
  { name: "request_log", parent: "origins", column: "origin_id" },
  { name: "lead_notes", parent: "leads", column: "lead_id" },
  { name: "lead_tasks", parent: "leads", column: "lead_id" },
  { name: "webhook_deliveries", parent: "webhook_endpoints", column: "endpoint_id" }
] as const

/** The transitional fill (dropped by migration 0026, with the writers that do not send the column). */
const fillOrganizationFunction = `
CREATE OR REPLACE FUNCTION fill_organization_id() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  CASE TG_TABLE_NAME
    WHEN 'audit_log' THEN
      INSERT INTO platform_audit_log (at, operator_id, operator_email, action, target, ip)
      VALUES (NEW.at, NEW.operator_id, NEW.operator_email, NEW.action, NEW.target, NEW.ip);
      RETURN NULL;
    WHEN 'lead_notes', 'lead_tasks' THEN
      SELECT l.organization_id INTO NEW.organization_id FROM leads l WHERE l.id = NEW.lead_id;
    WHEN 'webhook_deliveries' THEN
      SELECT e.organization_id INTO NEW.organization_id FROM webhook_endpoints e WHERE e.id = NEW.endpoint_id;
    ELSE
      IF TG_TABLE_NAME = 'request_log' AND NEW.origin_id IS NULL THEN
        INSERT INTO unattributed_requests (row_key, request_id, at, key_prefix, status, outcome, idempotency_key,
                                           duration_ms, livemode)
        VALUES (NEW.row_key, NEW.request_id, NEW.at, NEW.key_prefix, NEW.status, NEW.outcome, NEW.idempotency_key,
                NEW.duration_ms, NEW.livemode)
        ON CONFLICT (row_key) DO NOTHING;
        RETURN NULL;
      END IF;
      SELECT o.organization_id INTO NEW.organization_id FROM origins o WHERE o.id = NEW.origin_id;
  END CASE;
  IF TG_TABLE_NAME = 'api_keys' THEN
    INSERT INTO api_key_directory (public_id, organization_id, key_id)
    VALUES (NEW.public_id, NEW.organization_id, NEW.id) ON CONFLICT (public_id) DO NOTHING;
  END IF;
  RETURN NEW;
END
$fn$`
