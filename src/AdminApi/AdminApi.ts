import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { AuditGroup } from "./Audit.ts"
import { CaptureGroup } from "./Capture.ts"
import { CatalogGroup } from "./Catalog.ts"
import {
  AdminSchemaErrors,
  OperatorSession,
  Role,
  StoredText,
  scoped,
  trimmed,
  Unavailable,
  Uuid
} from "./Common.ts"
import { AdminNotFound, LoginThrottled, Unauthenticated } from "./Errors.ts"
import { LeadsGroup } from "./Leads.ts"
import { canonicalTimeZone, languages } from "./Locale.ts"
import { OriginsGroup } from "./Origins.ts"
import { OverviewGroup } from "./Overview.ts"
import { RequestsGroup } from "./Requests.ts"
import { WebhooksGroup } from "./Webhooks.ts"

export * from "./Audit.ts"
export * from "./Capture.ts"
export * from "./Catalog.ts"
export * from "./Common.ts"
export * from "./Errors.ts"
export * from "./Leads.ts"
export * from "./Locale.ts"
export * from "./Origins.ts"
export * from "./Overview.ts"
export * from "./Requests.ts"
export * from "./Webhooks.ts"

export const Language = Schema.Literals(languages).annotate({
  description: "The console's language: `es` Spanish (Mexico), `en` English."
})

export const TimeZone = StoredText.check(
  Schema.makeFilter(
    (value: string) =>
      canonicalTimeZone(value) !== undefined || "Expected an IANA time zone, such as America/Mexico_City"
  )
).annotate({ description: "An IANA time zone name, such as `America/Mexico_City`." })

export const OrganizationSettings = Schema.Struct({
  id: Uuid,
  name: Schema.String,
  country: Schema.String,
  time_zone: Schema.String.annotate({
    description:
      "The zone the console shows the organization's times in: the one set, else its country's (MX: America/Mexico_City; otherwise UTC)."
  })
}).annotate({ identifier: "OrganizationSettings" })

export const OperatorView = Schema.Struct({
  id: Uuid,
  email: Schema.String,
  role: Role,
  organization_id: Schema.NullOr(Uuid),
  language: Schema.NullOr(Language).annotate({
    description:
      "The language the operator chose; null until they choose (the browser's, else the organization's country's)."
  })
}).annotate({ identifier: "Operator" })

export const SessionInfo = Schema.Struct({
  operator: OperatorView,
  organization: Schema.NullOr(OrganizationSettings).annotate({
    description:
      "The operator's organization; null for a platform administrator (`GET /api/organization?org=`)."
  }),
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
      .annotateMerge(OpenApi.annotations({ summary: "Sign out every session of this operator" })),
    HttpApiEndpoint.put("setLanguage", "/api/session/language", {
      payload: Schema.Struct({
        language: Schema.NullOr(Language).annotate({ description: "null: follow the browser again." })
      }).annotate({ identifier: "LanguageChoice" }),
      success: SessionInfo,
      error: Unavailable
    })
      .middleware(OperatorSession)
      .annotateMerge(
        OpenApi.annotations({
          summary: "Keep the console's language with the operator's account (any role; audited)"
        })
      )
  )
  .middleware(AdminSchemaErrors)
  .annotate(
    OpenApi.Description,
    "Sign in and out; the signed-in operator, their language and the CSRF token."
  ) {}

export class SettingsGroup extends HttpApiGroup.make("settings")
  .add(
    HttpApiEndpoint.get("organization", "/api/organization", {
      ...scoped,
      success: OrganizationSettings,
      error: [AdminNotFound, ...Unavailable]
    }).annotateMerge(OpenApi.annotations({ summary: "The organization's settings" })),
    HttpApiEndpoint.patch("setTimeZone", "/api/organization", {
      ...scoped,
      payload: Schema.Struct({ time_zone: TimeZone }).annotate({ identifier: "TimeZoneChoice" }),
      success: OrganizationSettings,
      error: [AdminNotFound, ...Unavailable]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Set the time zone the console shows the organization's times in (admins; audited)"
      })
    )
  )
  .middleware(AdminSchemaErrors)
  .middleware(OperatorSession)
  .annotate(OpenApi.Description, "The organization's settings: the time zone its times are shown in.") {}

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
  .add(SettingsGroup)
  .add(AdminDocsGroup)
  .annotateMerge(
    OpenApi.annotations({
      title: "Lead Intake operator console API",
      version: "1.0.0",
      description:
        'The JSON API behind the operator console, served on the admin listener only (ADMIN_HOST:ADMIN_PORT). Session cookie auth; every POST, PATCH and DELETE except sign-in needs `X-CSRF-Token`. Errors: `{"error":{"code","message","field"?},"request_id"}`. Only the host names in ADMIN_HOSTS are served (any other `Host`: 421 `misdirected_request`). Text holding U+0000 or a lone surrogate is a 400 `validation_error` naming the field. No CORS headers; answers are `Cache-Control: no-store`.'
    })
  ) {}
