import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  yield* sql`
    CREATE TABLE operators (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid REFERENCES organizations (id),
      email text NOT NULL CHECK (email <> '' AND email = lower(email)),
      role text NOT NULL CHECK (role IN ('admin', 'viewer')),
      password_hash text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (email)
    )`

  yield* sql`
    CREATE TABLE operator_sessions (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      operator_id uuid NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
      token_hash text NOT NULL UNIQUE,
      csrf_token text NOT NULL,
      ip text,
      created_at timestamptz NOT NULL,
      last_seen_at timestamptz NOT NULL,
      revoked_at timestamptz
    )`
  yield* sql`CREATE INDEX operator_sessions_operator_idx ON operator_sessions (operator_id)`

  yield* sql`
    CREATE TABLE audit_log (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      at timestamptz NOT NULL,
      organization_id uuid REFERENCES organizations (id),
      operator_id uuid,
      operator_email text NOT NULL,
      action text NOT NULL,
      target text,
      ip text
    )`
  yield* sql`CREATE INDEX audit_log_organization_idx ON audit_log (organization_id, id DESC)`

  yield* sql`
    CREATE TABLE login_throttle (
      scope text NOT NULL CHECK (scope IN ('account', 'address')),
      subject text NOT NULL,
      window_start timestamptz NOT NULL,
      failures integer NOT NULL,
      PRIMARY KEY (scope, subject)
    )`

  yield* sql`CREATE INDEX request_log_request_id_idx ON request_log (request_id)`
  yield* sql`CREATE INDEX request_log_lead_idx ON request_log (lead_id) WHERE lead_id IS NOT NULL`
})
