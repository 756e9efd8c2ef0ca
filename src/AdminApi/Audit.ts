import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { AdminSchemaErrors, Cursor, cursorQuery, Instant, OperatorSession, Unavailable } from "./Common.ts"
import { AdminNotFound } from "./Errors.ts"

/**
 * Every action the audit log records: what an operator did in the console or the CLI, and what the
 * delivery worker did on its own (`webhook.auto_disabled`). The console has words for each.
 */
export const auditActions = [
  "agent.create",
  "key.revoke",
  "key.rotate",
  "key.test_revoked",
  "key.test_rotated",
  "lead.erase",
  "lead.export",
  "leads.export_csv",
  "requests.export_csv",
  "operator.set_language",
  "organization.set_time_zone",
  "origin.create",
  "origin.set_rate_limit",
  "property.create",
  "property.archive",
  "property.restore",
  "request.rescue",
  "rule.create",
  "rule.delete",
  "session.sign_in",
  "session.sign_in_throttled",
  "session.sign_out",
  "session.sign_out_everywhere",
  "test_data.purged",
  "webhook.create",
  "webhook.disable",
  "webhook.enable",
  "webhook.remove",
  "webhook.resend",
  "webhook.resend_failed",
  "webhook.rotate_secret",
  "webhook.test",
  "webhook.auto_disabled"
] as const

export type AuditAction = (typeof auditActions)[number]

export const AuditEntry = Schema.Struct({
  id: Schema.String,
  at: Instant,
  operator_email: Schema.String,
  action: Schema.String,
  target: Schema.NullOr(Schema.String),
  ip: Schema.NullOr(Schema.String)
}).annotate({ identifier: "AuditEntry" })

export class AuditGroup extends HttpApiGroup.make("audit")
  .add(
    HttpApiEndpoint.get("audit", "/api/audit", {
      query: cursorQuery,
      success: Schema.Struct({ items: Schema.Array(AuditEntry), next_cursor: Cursor }).annotate({
        identifier: "AuditPage"
      }),
      error: [AdminNotFound, ...Unavailable]
    })
  )
  .middleware(AdminSchemaErrors)
  .middleware(OperatorSession)
  .annotate(OpenApi.Description, "The audit trail: every change an operator made, and every sign-in.") {}
