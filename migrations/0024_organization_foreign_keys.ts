import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Keys that distribute (docs/sre.md#distributing-by-organization-citus), step 3 of 5, in the
 * migrator's transaction with the expand release's SQL functions (the last migration before them):
 *
 * - A round-robin rule's turns move from its sequence to `capture_rules.turns_taken`, read in the
 *   transaction that makes the functions take turns there (for the previous release's instances too:
 *   they call the same `create_or_enrich_lead`), so no turn is counted twice or lost.
 * - The attempts of deliveries that are gone go (a trigger deletes them with their delivery until
 *   0026; a cascading foreign key will), so that 0025 can validate that key.
 *
 * `foreignKeys` lists the keys that carry `organization_id`, each beside the one it replaces: 0025
 * adds and validates them, 0026 drops the old ones. Written so that it can be applied again.
 */
export const foreignKeys: ReadonlyArray<
  readonly [
    table: string,
    old: string | null,
    name: string,
    columns: string,
    references: string,
    action?: string
  ]
> = [
  ["api_keys", "api_keys_origin_id_fkey", "api_keys_origin_fkey", "organization_id, origin_id", "origins"],
  [
    "capture_rules",
    "capture_rules_origin_id_fkey",
    "capture_rules_origin_fkey",
    "organization_id, origin_id",
    "origins"
  ],
  [
    "capture_rules",
    "capture_rules_property_id_fkey",
    "capture_rules_property_fkey",
    "organization_id, property_id",
    "properties"
  ],
  [
    "idempotency_keys",
    "idempotency_keys_origin_id_fkey",
    "idempotency_keys_origin_fkey",
    "organization_id, origin_id",
    "origins"
  ],
  [
    "test_idempotency_keys",
    "test_idempotency_keys_origin_id_fkey",
    "test_idempotency_keys_origin_fkey",
    "organization_id, origin_id",
    "origins"
  ],
  [
    "lead_erasures",
    "lead_erasures_lead_id_fkey",
    "lead_erasures_lead_fkey",
    "organization_id, lead_id",
    "leads"
  ],
  ["lead_notes", "lead_notes_lead_id_fkey", "lead_notes_lead_fkey", "organization_id, lead_id", "leads"],
  ["lead_tasks", "lead_tasks_lead_id_fkey", "lead_tasks_lead_fkey", "organization_id, lead_id", "leads"],
  [
    "lead_tasks",
    "lead_tasks_assignee_id_fkey",
    "lead_tasks_assignee_fkey",
    "organization_id, assignee_id",
    "agents"
  ],
  ["leads", "leads_assignee_id_fkey", "leads_assignee_fkey", "organization_id, assignee_id", "agents"],
  ["leads", "leads_origin_id_fkey", "leads_origin_fkey", "organization_id, origin_id", "origins"],
  ["leads", "leads_property_id_fkey", "leads_property_fkey", "organization_id, property_id", "properties"],
  [
    "outbox_events",
    "outbox_events_lead_id_fkey",
    "outbox_events_lead_fkey",
    "organization_id, lead_id",
    "leads"
  ],
  [
    "rate_limit_windows",
    "rate_limit_windows_origin_id_fkey",
    "rate_limit_windows_origin_fkey",
    "organization_id, origin_id",
    "origins"
  ],
  [
    "test_rate_limit_windows",
    "test_rate_limit_windows_origin_id_fkey",
    "test_rate_limit_windows_origin_fkey",
    "organization_id, origin_id",
    "origins"
  ],
  [
    "request_log",
    "request_log_origin_id_fkey",
    "request_log_origin_fkey",
    "organization_id, origin_id",
    "origins"
  ],
  [
    "webhook_deliveries",
    "webhook_deliveries_endpoint_id_fkey",
    "webhook_deliveries_endpoint_fkey",
    "organization_id, endpoint_id",
    "webhook_endpoints",
    "ON DELETE CASCADE"
  ],
  [
    "webhook_deliveries",
    "webhook_deliveries_outbox_id_fkey",
    "webhook_deliveries_outbox_fkey",
    "organization_id, outbox_id",
    "outbox_events",
    "ON DELETE CASCADE"
  ],
  [
    "webhook_attempts",
    null,
    "webhook_attempts_delivery_fkey",
    "organization_id, endpoint_id, event_id",
    "webhook_deliveries",
    "ON DELETE CASCADE"
  ]
]

/** The key each foreign key points at: the unique index 0023 built, the primary key from 0026. */
export const referencedKeys: Record<string, string> = {
  origins: "organization_id, id",
  properties: "organization_id, id",
  agents: "organization_id, id",
  leads: "organization_id, id",
  webhook_endpoints: "organization_id, id",
  outbox_events: "organization_id, id",
  webhook_deliveries: "organization_id, endpoint_id, event_id"
}

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // The turns each rule's sequence gave, read before the functions stop taking turns there.
  yield* sql`UPDATE capture_rules SET turns_taken = capture_rule_turns_taken(id) WHERE turns_taken = 0`
  yield* sql`
    DELETE FROM webhook_attempts a WHERE NOT EXISTS (
      SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = a.endpoint_id AND d.event_id = a.event_id)`
})
