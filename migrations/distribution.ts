/**
 * How the schema spreads over a Citus cluster (docs/sre.md#distributing-by-organization-citus): what
 * `Migrations.distribute` does after the migrations when the `citus` extension is present, and what
 * the key test holds the schema to on every PostgreSQL.
 *
 * - Global tables, few and small, are copied to every node (reference tables): what is read before
 *   an organization is known (an API key's directory entry, an operator's session) or belongs to none.
 * - Every other table of the service is a tenant table, distributed by `organization_id` in one
 *   colocation group: an organization's rows of every table live on the same node.
 * - The functions a request calls are distributed by their organization argument, colocated with
 *   `leads`, so Citus runs a whole call on the node that holds the organization.
 */
export const referenceTables = [
  "organizations",
  "operators",
  "operator_sessions",
  "login_throttle",
  "api_key_directory",
  "unattributed_requests",
  "platform_audit_log",
  "announced_urls"
] as const

/** Tenant tables in an order where each one's foreign keys point at tables distributed before it. */
export const distributedTables = [
  "origins",
  "properties",
  "agents",
  "leads",
  "capture_rules",
  "api_keys",
  "idempotency_keys",
  "test_idempotency_keys",
  "rate_limit_windows",
  "test_rate_limit_windows",
  "request_log",
  "logged_requests",
  "lead_notes",
  "lead_tasks",
  "lead_erasures",
  "outbox_events",
  "webhook_endpoints",
  "webhook_deliveries",
  "webhook_attempts",
  "audit_log"
] as const

/**
 * Tables the coordinator keeps to itself: the migrator's bookkeeping, and the rate windows, counted
 * where the service connects so that admitting a request makes no trip to a worker.
 */
export const coordinatorTables = ["schema_migrations", "schema_functions", "rate_windows"] as const

/**
 * Each distributed function by its name, with the argument that names the organization:
 * `Migrations.distribute` finds its one signature (a name with two is refused), so a function whose
 * document gains a field is listed here unchanged.
 */
export const distributedFunctions: ReadonlyArray<{ readonly name: string; readonly argument: string }> = [
  { name: "lead_write", argument: "p_organization_id" },
  { name: "lead_write_keyed", argument: "p_organization_id" },
  { name: "lead_rescue", argument: "p_organization_id" },
  { name: "idempotency_key_reserve", argument: "p_organization_id" },
  { name: "release_idempotency_key", argument: "p_organization_id" },
  { name: "resolve_property", argument: "p_organization_id" }
]
