import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  yield* sql`
    CREATE TABLE organizations (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      name text NOT NULL CHECK (name <> ''),
      country char(2) NOT NULL DEFAULT 'MX' CHECK (country ~ '^[A-Z]{2}$'),
      created_at timestamptz NOT NULL DEFAULT now()
    )`

  yield* sql`
    CREATE TABLE agents (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations (id),
      name text NOT NULL CHECK (name <> ''),
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX agents_organization_idx ON agents (organization_id)`

  yield* sql`
    CREATE TABLE origins (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations (id),
      label text NOT NULL CHECK (label <> ''),
      rate_limit integer NOT NULL DEFAULT 60 CHECK (rate_limit > 0),
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (organization_id, label)
    )`

  yield* sql`
    CREATE TABLE api_keys (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      origin_id uuid NOT NULL REFERENCES origins (id),
      public_id text NOT NULL UNIQUE,
      prefix text NOT NULL,
      key_hash text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz
    )`
  yield* sql`CREATE UNIQUE INDEX api_keys_one_active_per_origin ON api_keys (origin_id) WHERE revoked_at IS NULL`

  yield* sql`
    CREATE TABLE properties (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations (id),
      codigo text NOT NULL CHECK (codigo ~ '^[A-Z]{3}-[0-9]{4}$'),
      external_code text CHECK (external_code <> ''),
      archived boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (organization_id, codigo),
      UNIQUE (organization_id, external_code)
    )`

  yield* sql`
    CREATE TABLE capture_rules (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations (id),
      priority integer NOT NULL DEFAULT 100,
      origin_id uuid REFERENCES origins (id),
      property_id uuid REFERENCES properties (id),
      agent_ids uuid[] NOT NULL CHECK (cardinality(agent_ids) >= 1),
      round_robin boolean NOT NULL,
      rotation bigint NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX capture_rules_organization_idx ON capture_rules (organization_id, priority, created_at)`

  yield* sql`
    CREATE TABLE leads (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations (id),
      origin_id uuid NOT NULL REFERENCES origins (id),
      nombre text NOT NULL,
      telefono text,
      phone_key text,
      email text,
      property_id uuid REFERENCES properties (id),
      assignee_id uuid REFERENCES agents (id),
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CHECK ((telefono IS NULL) = (phone_key IS NULL))
    )`
  yield* sql`CREATE UNIQUE INDEX leads_phone_per_organization ON leads (organization_id, phone_key)`
  yield* sql`CREATE INDEX leads_organization_created_idx ON leads (organization_id, created_at DESC)`

  yield* sql`
    CREATE TABLE lead_notes (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      lead_id uuid NOT NULL REFERENCES leads (id),
      body text NOT NULL CHECK (body <> ''),
      request_id text NOT NULL,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX lead_notes_lead_idx ON lead_notes (lead_id, created_at)`

  yield* sql`
    CREATE TABLE lead_tasks (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      lead_id uuid NOT NULL REFERENCES leads (id),
      kind text NOT NULL,
      assignee_id uuid REFERENCES agents (id),
      due_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX lead_tasks_lead_idx ON lead_tasks (lead_id)`

  yield* sql`
    CREATE TABLE outbox_events (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations (id),
      lead_id uuid NOT NULL REFERENCES leads (id),
      type text NOT NULL CHECK (type IN ('lead.created', 'lead.enriched')),
      payload jsonb NOT NULL,
      created_at timestamptz NOT NULL,
      published_at timestamptz
    )`
  yield* sql`CREATE INDEX outbox_events_unpublished_idx ON outbox_events (id) WHERE published_at IS NULL`
  yield* sql`CREATE INDEX outbox_events_lead_idx ON outbox_events (lead_id)`

  yield* sql`
    CREATE TABLE idempotency_keys (
      origin_id uuid NOT NULL REFERENCES origins (id),
      key text NOT NULL,
      fingerprint text NOT NULL,
      state text NOT NULL CHECK (state IN ('in_progress', 'completed')),
      lease_token uuid,
      lease_expires_at timestamptz,
      http_status integer,
      response jsonb,
      completed_at timestamptz,
      PRIMARY KEY (origin_id, key),
      CHECK ((state = 'completed') = (response IS NOT NULL))
    )`

  yield* sql`
    CREATE TABLE rate_limit_windows (
      origin_id uuid NOT NULL REFERENCES origins (id),
      window_start timestamptz NOT NULL,
      count integer NOT NULL,
      PRIMARY KEY (origin_id, window_start)
    )`

  yield* sql`
    CREATE TABLE request_log (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      request_id text NOT NULL,
      at timestamptz NOT NULL,
      origin_id uuid REFERENCES origins (id),
      key_prefix text,
      status integer NOT NULL,
      outcome text NOT NULL,
      lead_id uuid,
      idempotency_key text,
      duration_ms double precision NOT NULL
    )`
  yield* sql`CREATE INDEX request_log_origin_idx ON request_log (origin_id, at DESC, id DESC)`
  yield* sql`CREATE INDEX request_log_unattributed_idx ON request_log (at DESC, id DESC) WHERE origin_id IS NULL`
})
