import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { AuditGroup } from "../Console/Audit/Api.ts"
import { CaptureGroup } from "../Console/Capture/Api.ts"
import { CatalogGroup } from "../Console/Catalog/Api.ts"
import { LeadsGroup } from "../Console/Leads/Api.ts"
import { OriginsGroup } from "../Console/Origins/Api.ts"
import { OverviewGroup } from "../Console/Overview/Api.ts"
import { RequestsGroup } from "../Console/Requests/Api.ts"
import { WebhooksGroup } from "../Console/Webhooks/Api.ts"
import { AdminSchemaErrors, OperatorSession, Role, StoredText, trimmed, Unavailable, Uuid } from "./Common.ts"
import { LoginThrottled, Unauthenticated } from "./Errors.ts"

export * from "../Console/Audit/Api.ts"
export * from "../Console/Capture/Api.ts"
export * from "../Console/Catalog/Api.ts"
export * from "../Console/Leads/Api.ts"
export * from "../Console/Origins/Api.ts"
export * from "../Console/Overview/Api.ts"
export * from "../Console/Requests/Api.ts"
export * from "../Console/Webhooks/Api.ts"
export * from "./Common.ts"
export * from "./Errors.ts"

export const OperatorView = Schema.Struct({
  id: Uuid,
  email: Schema.String,
  role: Role,
  organization_id: Schema.NullOr(Uuid)
}).annotate({ identifier: "Operator" })

export const SessionInfo = Schema.Struct({
  operator: OperatorView,
  csrf_token: Schema.String.annotate({ description: "Send as `X-CSRF-Token` on every state change." })
}).annotate({ identifier: "Session" })

export const Credentials = Schema.Struct({
  email: trimmed(254),
  password: StoredText.check(Schema.isMaxLength(1024))
}).annotate({ identifier: "Credentials" })

export class SessionGroup extends HttpApiGroup.make("session")
  .add(
    HttpApiEndpoint.post("login", "/api/session", {
      payload: Credentials,
      success: SessionInfo,
      error: [Unauthenticated, LoginThrottled, ...Unavailable]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Sign in",
        description:
          "Sets the session cookie. Wrong e-mail or password: 401 with the same message and timing. Failures are counted per (e-mail, address) pair and per address; past the free ones each attempt waits a backoff that doubles with every further failure (429 with `Retry-After`), so an attacker elsewhere cannot lock the operator out."
      })
    ),
    HttpApiEndpoint.get("current", "/api/session", { success: SessionInfo, error: Unavailable })
      .middleware(OperatorSession)
      .annotateMerge(OpenApi.annotations({ summary: "The signed-in operator and the CSRF token" })),
    HttpApiEndpoint.delete("logout", "/api/session", { success: HttpApiSchema.NoContent, error: Unavailable })
      .middleware(OperatorSession)
      .annotateMerge(OpenApi.annotations({ summary: "Sign out this session" })),
    HttpApiEndpoint.post("revokeAll", "/api/session/revoke-all", {
      success: HttpApiSchema.NoContent,
      error: Unavailable
    })
      .middleware(OperatorSession)
      .annotateMerge(OpenApi.annotations({ summary: "Sign out every session of this operator" }))
  )
  .middleware(AdminSchemaErrors)
  .annotate(OpenApi.Description, "Sign in and out; the signed-in operator and the CSRF token.") {}

export class AdminDocsGroup extends HttpApiGroup.make("adminDocs")
  .add(
    HttpApiEndpoint.get("openapi", "/api/openapi.json", {
      success: Schema.Record(Schema.String, Schema.Json).annotate({
        description: "This OpenAPI 3.1 document."
      })
    })
  )
  .annotate(OpenApi.Description, "This document.") {}

export class AdminApi extends HttpApi.make("lead-intake-admin")
  .add(SessionGroup)
  .add(OverviewGroup)
  .add(OriginsGroup)
  .add(RequestsGroup)
  .add(LeadsGroup)
  .add(CatalogGroup)
  .add(CaptureGroup)
  .add(WebhooksGroup)
  .add(AuditGroup)
  .add(AdminDocsGroup)
  .annotateMerge(
    OpenApi.annotations({
      title: "Lead Intake operator console API",
      version: "1.0.0",
      description:
        'The JSON API behind the operator console, served on the admin listener only (ADMIN_HOST:ADMIN_PORT). Session cookie auth; every POST, PATCH and DELETE except sign-in needs `X-CSRF-Token`. Errors: `{"error":{"code","message","field"?},"request_id"}`. Only the host names in ADMIN_HOSTS are served (any other `Host`: 421 `misdirected_request`). Text holding U+0000 or a lone surrogate is a 400 `validation_error` naming the field. No CORS headers; answers are `Cache-Control: no-store`.'
    })
  ) {}
