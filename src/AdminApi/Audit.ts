import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { AdminSchemaErrors, Cursor, cursorQuery, Instant, OperatorSession, Unavailable } from "./Common.ts"
import { AdminNotFound } from "./Errors.ts"

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
