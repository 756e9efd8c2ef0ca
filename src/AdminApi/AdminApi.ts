import { Context, Schema } from "effect"
import {
  HttpApi,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSchema,
  HttpApiSecurity,
  OpenApi
} from "effect/http-api"
import {
  AdminInternalError,
  AdminNotFound,
  AdminUnavailable,
  AdminValidationError,
  Conflict,
  CsrfFailed,
  Forbidden,
  LoginThrottled,
  Unauthenticated
} from "./Errors.ts"
import { canonicalTimeZone, languages } from "./Locale.ts"
import { unstorableReason } from "./StoredText.ts"

export * from "./Errors.ts"
export * from "./Locale.ts"

export const sessionCookieName = "lead_intake_session"
export const csrfHeaderName = "x-csrf-token"

/**
 * Every text the console takes: PostgreSQL cannot store U+0000 or a lone surrogate, so they are
 * refused here (400 naming the field) before anything reaches it.
 */
export const StoredText = Schema.String.check(
  Schema.makeFilter((value: string) => unstorableReason(value) ?? true)
)

const Uuid = StoredText.annotate({ format: "uuid" })

/** An id inside a body: anything but a UUID is a 400 on the field, not a failed cast in PostgreSQL. */
const UuidField = StoredText.check(
  Schema.isPattern(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i)
).annotate({ format: "uuid" })
const Instant = StoredText.annotate({ format: "date-time", description: "ISO-8601, UTC." })
const Cursor = Schema.NullOr(
  Schema.String.annotate({ description: "Pass as `?cursor=` for the next page; null on the last page." })
)
const Role = Schema.Literals(["admin", "viewer"])

/** The console's "Test data" switch: live data by default, test data alone when asked. */
const TestDataQuery = Schema.optional(
  Schema.Literals(["true", "false"]).annotate({
    description:
      "`true`: only test data (what the origins' test keys `lk_test_…` sent, decisions.md §10); otherwise live data only."
  })
)

const trimmed = (maximum: number) =>
  StoredText.check(
    Schema.makeFilter((value: string) =>
      value.trim() === ""
        ? "Expected a non-empty value"
        : value.length > maximum
          ? `Expected at most ${maximum} characters`
          : true
    )
  )

const RateLimitValue = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1_000_000 })).annotate({
  description: "Requests per minute allowed for the origin's key."
})

const Codigo = StoredText.check(
  Schema.makeFilter(
    (value: string) =>
      /^[A-Za-z]{3}-[0-9]{4}$/.test(value.trim()) || "Expected three letters, a hyphen and four digits"
  )
).annotate({ description: "Three letters, a hyphen and four digits, such as ABC-1234." })

const OrgQuery = Schema.optional(
  Uuid.annotate({
    description:
      "Platform administrators only: the organization to act on (default: the first by name). Ignored for others."
  })
)

export interface OperatorIdentity {
  readonly id: string
  readonly email: string
  readonly role: "admin" | "viewer"
  /** Null for a platform administrator, who may act on every organization. */
  readonly organizationId: string | null
  readonly sessionId: string
  readonly csrfToken: string
  readonly ip: string
}

/** The signed-in operator behind the request's session cookie. */
export class CurrentOperator extends Context.Service<CurrentOperator, OperatorIdentity>()(
  "lead-intake/admin/CurrentOperator"
) {}

export const sessionSecurity = HttpApiSecurity.apiKey({ in: "cookie", key: sessionCookieName }).pipe(
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "Session cookie set by `POST /api/session`. State changes also need the `X-CSRF-Token` header."
  )
)

/**
 * Resolves the session cookie; on every state change checks the CSRF header, and refuses a
 * viewer unless the change only ends the viewer's own sessions.
 */
export class OperatorSession extends HttpApiMiddleware.Service<
  OperatorSession,
  { provides: CurrentOperator }
>()("lead-intake/admin/OperatorSession", {
  security: { session: sessionSecurity },
  error: [Unauthenticated, CsrfFailed, Forbidden, AdminUnavailable]
}) {}

/** Query, path and body decoding failures become `validation_error` with the field. */
export class AdminSchemaErrors extends HttpApiMiddleware.Service<AdminSchemaErrors>()(
  "lead-intake/admin/AdminSchemaErrors",
  { error: [AdminValidationError] }
) {}

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

export const Organization = Schema.Struct({ id: Uuid, name: Schema.String, country: Schema.String }).annotate(
  {
    identifier: "Organization"
  }
)

export const Overview = Schema.Struct({
  requests_per_minute: Schema.Array(
    Schema.Struct({ minute: Instant, origin_id: Uuid, label: Schema.String, count: Schema.Int })
  ),
  leads_per_day: Schema.Array(
    Schema.Struct({
      day: Schema.String.annotate({ format: "date" }),
      created: Schema.Int,
      enriched: Schema.Int
    })
  ),
  error_codes: Schema.Array(Schema.Struct({ code: Schema.String, count: Schema.Int }))
}).annotate({
  identifier: "Overview",
  description: "Live data only: the requests and leads of test keys count in no figure."
})

export const OriginItem = Schema.Struct({
  id: Uuid,
  label: Schema.String,
  prefix: Schema.NullOr(Schema.String),
  created_at: Instant,
  last_used_at: Schema.NullOr(Instant),
  requests_24h: Schema.Int.annotate({ description: "Live requests only." }),
  rate_limit: Schema.Int,
  revoked: Schema.Boolean,
  test_prefix: Schema.NullOr(Schema.String).annotate({
    description: "The active test key's prefix (`lk_test_…`); null when the origin has none."
  })
}).annotate({ identifier: "Origin" })

export const NewOrigin = Schema.Struct({
  label: trimmed(100),
  rate_limit: Schema.optional(RateLimitValue)
}).annotate({ identifier: "NewOrigin" })

export const CreatedOrigin = Schema.Struct({
  id: Uuid,
  label: Schema.String,
  key: Schema.String.annotate({ description: "The full key: shown this once, never again." }),
  prefix: Schema.String,
  rate_limit: Schema.Int
})
  .annotate({ identifier: "CreatedOrigin" })
  .pipe(HttpApiSchema.status(201))

export const IssuedKey = Schema.Struct({
  key: Schema.String.annotate({ description: "The new key: shown this once; the old one no longer works." }),
  prefix: Schema.String
}).annotate({ identifier: "IssuedKey" })

export const RevokedKey = Schema.Struct({ prefix: Schema.String, revoked_at: Instant }).annotate({
  identifier: "RevokedKey"
})

export const PurgedTestData = Schema.Struct({
  purged: Schema.Int.annotate({
    description:
      "Test leads removed, with their notes, tasks, events, deliveries and idempotency records; the request log keeps its rows."
  })
}).annotate({ identifier: "PurgedTestData" })

export const RequestItem = Schema.Struct({
  request_id: Schema.String,
  at: Instant,
  status: Schema.Int,
  outcome: Schema.String,
  lead_id: Schema.NullOr(Uuid),
  key_prefix: Schema.NullOr(Schema.String),
  idempotency_key: Schema.NullOr(Schema.String),
  duration_ms: Schema.Number,
  origin_id: Schema.NullOr(Uuid),
  origin_label: Schema.NullOr(Schema.String),
  livemode: Schema.Boolean.annotate({ description: "false: a request made with a test key (`lk_test_…`)." })
}).annotate({ identifier: "RequestLogItem" })

export const RequestFilters = {
  org: OrgQuery,
  origin: Schema.optional(Uuid.annotate({ description: "Only this origin's requests." })),
  unattributed: Schema.optional(
    Schema.Literals(["true", "false"]).annotate({
      description: "`true`: only requests whose key prefix names no origin (platform administrators only)."
    })
  ),
  status_class: Schema.optional(Schema.Literals(["2xx", "4xx", "5xx"])),
  outcome: Schema.optional(StoredText.check(Schema.isMaxLength(100))),
  from: Schema.optional(Instant),
  to: Schema.optional(Instant),
  request_id: Schema.optional(StoredText.check(Schema.isMaxLength(200))),
  idempotency_key: Schema.optional(StoredText.check(Schema.isMaxLength(200))),
  test: TestDataQuery,
  cursor: Schema.optional(StoredText.check(Schema.isMaxLength(200))),
  limit: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 200 })))
}

export const RequestPage = Schema.Struct({ items: Schema.Array(RequestItem), next_cursor: Cursor }).annotate({
  identifier: "RequestLogPage"
})

export const LeadItem = Schema.Struct({
  id: Uuid,
  nombre: Schema.NullOr(Schema.String).annotate({ description: "Null once the lead was erased." }),
  telefono: Schema.NullOr(Schema.String),
  email: Schema.NullOr(Schema.String),
  origin: Schema.Struct({ id: Uuid, label: Schema.String }),
  created_at: Instant
}).annotate({ identifier: "LeadSummary" })

export const LeadPage = Schema.Struct({ items: Schema.Array(LeadItem), next_cursor: Cursor }).annotate({
  identifier: "LeadPage"
})

export const LeadDetail = Schema.Struct({
  id: Uuid,
  nombre: Schema.NullOr(Schema.String).annotate({ description: "Null once the lead was erased." }),
  erased_at: Schema.NullOr(Instant.annotate({ description: "When its personal data was erased." })),
  telefono: Schema.NullOr(Schema.String),
  email: Schema.NullOr(Schema.String),
  origin: Schema.Struct({ id: Uuid, label: Schema.String }),
  property: Schema.NullOr(Schema.Struct({ id: Uuid, codigo: Schema.String })),
  assignee: Schema.NullOr(Schema.Struct({ id: Uuid, name: Schema.String })),
  created_at: Instant,
  updated_at: Instant,
  livemode: Schema.Boolean.annotate({ description: "false: a test lead, sent with a test key." }),
  notes: Schema.Array(Schema.Struct({ body: Schema.String, created_at: Instant })),
  tasks: Schema.Array(
    Schema.Struct({ kind: Schema.String, assignee: Schema.NullOr(Schema.String), due_at: Instant })
  ),
  events: Schema.Array(Schema.Struct({ type: Schema.String, created_at: Instant })),
  requests: Schema.Array(RequestItem)
}).annotate({ identifier: "LeadDetail" })

export const Property = Schema.Struct({
  id: Uuid,
  codigo: Schema.String,
  external_code: Schema.NullOr(Schema.String),
  archived: Schema.Boolean,
  created_at: Instant
}).annotate({ identifier: "Property" })

export const NewProperty = Schema.Struct({
  codigo: Codigo,
  external_code: Schema.optional(Schema.NullOr(trimmed(100)))
}).annotate({ identifier: "NewProperty" })

export const Agent = Schema.Struct({ id: Uuid, name: Schema.String }).annotate({ identifier: "Agent" })

export const Rule = Schema.Struct({
  id: Uuid,
  priority: Schema.Int,
  origin: Schema.NullOr(Schema.Struct({ id: Uuid, label: Schema.String })),
  property: Schema.NullOr(Schema.Struct({ id: Uuid, codigo: Schema.String })),
  agents: Schema.Array(Agent),
  round_robin: Schema.Boolean
}).annotate({ identifier: "CaptureRule" })

export const NewRule = Schema.Struct({
  origin_id: Schema.optional(Schema.NullOr(UuidField)),
  property_id: Schema.optional(Schema.NullOr(UuidField)),
  agent_ids: Schema.Array(UuidField).check(Schema.isMinLength(1), Schema.isMaxLength(100)),
  round_robin: Schema.Boolean,
  priority: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: -1_000_000, maximum: 1_000_000 })))
}).annotate({ identifier: "NewCaptureRule" })

export const AuditEntry = Schema.Struct({
  id: Schema.String,
  at: Instant,
  operator_email: Schema.String,
  action: Schema.String,
  target: Schema.NullOr(Schema.String),
  ip: Schema.NullOr(Schema.String)
}).annotate({ identifier: "AuditEntry" })

export const WebhookEventType = Schema.Literals(["lead.created", "lead.enriched", "lead.erased"])

export const DeliveredEventType = Schema.Literals([
  "lead.created",
  "lead.enriched",
  "lead.erased",
  "webhook.test"
])

export const WebhookEndpointItem = Schema.Struct({
  id: Uuid,
  url: Schema.String,
  events: Schema.Array(WebhookEventType),
  test_events: Schema.Boolean.annotate({
    description: 'Also receives the events of test leads (`"livemode": false`).'
  }),
  disabled: Schema.Boolean,
  created_at: Instant
}).annotate({ identifier: "WebhookEndpoint" })

export const NewWebhookEndpoint = Schema.Struct({
  url: trimmed(2048).annotate({
    description: "https:// to a public address (unless WEBHOOK_ALLOW_PRIVATE)."
  }),
  events: Schema.optional(
    Schema.Array(WebhookEventType)
      .check(Schema.isMinLength(1), Schema.isMaxLength(3))
      .annotate({ description: "Default: lead.created, lead.enriched and lead.erased." })
  ),
  test_events: Schema.optional(
    Schema.Boolean.annotate({ description: "Also send the events of test leads. Default: false." })
  )
}).annotate({ identifier: "NewWebhookEndpoint" })

export const CreatedWebhookEndpoint = Schema.Struct({
  endpoint: WebhookEndpointItem,
  secret: Schema.String.annotate({
    description: "The signing secret `whsec_…`: shown this once, never again."
  })
})
  .annotate({ identifier: "CreatedWebhookEndpoint" })
  .pipe(HttpApiSchema.status(201))

export const WebhookSecret = Schema.Struct({
  id: Uuid,
  secret: Schema.String.annotate({
    description: "The new signing secret: shown this once; the old one keeps signing beside it for 24 h."
  })
}).annotate({ identifier: "WebhookSecret" })

export const WebhookDelivery = Schema.Struct({
  event_id: Uuid,
  type: DeliveredEventType,
  state: Schema.Literals(["pending", "delivered", "failed"]),
  attempts: Schema.Int,
  last_status: Schema.NullOr(Schema.Int),
  last_attempt_at: Schema.NullOr(Instant),
  next_attempt_at: Schema.NullOr(Instant)
}).annotate({ identifier: "WebhookDelivery" })

export const LeadErasure = Schema.Struct({
  reason: trimmed(500).annotate({
    description: "Why (kept in the audit trail; must not contain the person's name, phone or e-mail)."
  })
}).annotate({ identifier: "LeadErasure" })

export const ErasedLead = Schema.Struct({
  id: Uuid,
  erased_at: Instant,
  already_erased: Schema.Boolean
}).annotate({ identifier: "ErasedLead" })

const itemsOf = <S extends Schema.Top>(item: S, identifier: string) =>
  Schema.Struct({ items: Schema.Array(item) }).annotate({ identifier })

const IdParam = { id: StoredText }
const cursorQuery = { org: OrgQuery, cursor: Schema.optional(StoredText.check(Schema.isMaxLength(200))) }
const scoped = { query: { org: OrgQuery } }
const created = <S extends Schema.Top>(schema: S) => schema.pipe(HttpApiSchema.status(201))
const Unavailable = [AdminUnavailable, AdminInternalError]

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

export class OverviewGroup extends HttpApiGroup.make("overview")
  .add(
    HttpApiEndpoint.get("organizations", "/api/organizations", {
      success: Schema.Array(Organization),
      error: Unavailable
    }).annotateMerge(
      OpenApi.annotations({
        summary: "The organizations the operator may see (all, for platform administrators)"
      })
    ),
    HttpApiEndpoint.get("overview", "/api/overview", {
      ...scoped,
      success: Overview,
      error: [AdminNotFound, ...Unavailable]
    })
  )
  .middleware(AdminSchemaErrors)
  .middleware(OperatorSession)
  .annotate(
    OpenApi.Description,
    "The organizations the operator may see and an organization's figures at a glance."
  ) {}

export class OriginsGroup extends HttpApiGroup.make("origins")
  .add(
    HttpApiEndpoint.get("origins", "/api/origins", {
      ...scoped,
      success: itemsOf(OriginItem, "OriginList"),
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.post("createOrigin", "/api/origins", {
      ...scoped,
      payload: NewOrigin,
      success: CreatedOrigin,
      error: [AdminNotFound, Conflict, ...Unavailable]
    }),
    HttpApiEndpoint.post("rotateKey", "/api/origins/:id/rotate", {
      ...scoped,
      params: IdParam,
      success: IssuedKey,
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.post("revokeKey", "/api/origins/:id/revoke", {
      ...scoped,
      params: IdParam,
      success: RevokedKey,
      error: [AdminNotFound, Conflict, ...Unavailable]
    }),
    HttpApiEndpoint.post("rotateTestKey", "/api/origins/:id/test-key/rotate", {
      ...scoped,
      params: IdParam,
      success: IssuedKey,
      error: [AdminNotFound, ...Unavailable]
    }).annotateMerge(
      OpenApi.annotations({
        summary:
          "Create the origin's test key (`lk_test_…`), or replace it: an earlier test key is revoked at that instant"
      })
    ),
    HttpApiEndpoint.post("revokeTestKey", "/api/origins/:id/test-key/revoke", {
      ...scoped,
      params: IdParam,
      success: RevokedKey,
      error: [AdminNotFound, Conflict, ...Unavailable]
    }).annotateMerge(OpenApi.annotations({ summary: "Revoke the origin's test key (409 when it has none)" })),
    HttpApiEndpoint.patch("setRateLimit", "/api/origins/:id", {
      ...scoped,
      params: IdParam,
      payload: Schema.Struct({ rate_limit: RateLimitValue }),
      success: Schema.Struct({ id: Uuid, rate_limit: Schema.Int }),
      error: [AdminNotFound, ...Unavailable]
    })
  )
  .middleware(AdminSchemaErrors)
  .middleware(OperatorSession)
  .annotate(
    OpenApi.Description,
    "The sites that send leads: their API keys (live and test) and rate limits."
  ) {}

export class RequestsGroup extends HttpApiGroup.make("requests")
  .add(
    HttpApiEndpoint.get("requests", "/api/requests", {
      query: RequestFilters,
      success: RequestPage,
      error: [AdminNotFound, AdminValidationError, Forbidden, ...Unavailable]
    }),
    HttpApiEndpoint.get("request", "/api/requests/:request_id", {
      ...scoped,
      params: { request_id: StoredText },
      success: RequestItem,
      error: [AdminNotFound, ...Unavailable]
    })
  )
  .middleware(AdminSchemaErrors)
  .middleware(OperatorSession)
  .annotate(
    OpenApi.Description,
    "The request log of the public API: every request answered, with its outcome."
  ) {}

export class LeadsGroup extends HttpApiGroup.make("leads")
  .add(
    HttpApiEndpoint.get("leads", "/api/leads", {
      query: {
        ...cursorQuery,
        q: Schema.optional(StoredText.check(Schema.isMaxLength(200))),
        test: TestDataQuery
      },
      success: LeadPage,
      error: [AdminNotFound, AdminValidationError, ...Unavailable]
    }),
    HttpApiEndpoint.get("lead", "/api/leads/:id", {
      ...scoped,
      params: IdParam,
      success: LeadDetail,
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.post("exportLead", "/api/leads/:id/export", {
      ...scoped,
      params: IdParam,
      success: Schema.Record(Schema.String, Schema.Json).annotate({
        identifier: "LeadExport",
        description: "Everything held about the lead, as `lead-intake lead export` prints it."
      }),
      error: [AdminNotFound, ...Unavailable]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Export a lead's personal data (admins only; a POST because it is audited)"
      })
    ),
    HttpApiEndpoint.get("erasures", "/api/erasures", {
      ...scoped,
      success: itemsOf(
        Schema.Struct({ lead_id: Uuid, erased_at: Instant, erased_by: Schema.String, reason: Schema.String }),
        "ErasureList"
      ).annotate({ description: "The organization's erasures, newest first (at most 200)." }),
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.post("eraseLead", "/api/leads/:id/erase", {
      ...scoped,
      params: IdParam,
      payload: LeadErasure,
      success: ErasedLead,
      error: [AdminNotFound, AdminValidationError, ...Unavailable]
    }).annotateMerge(
      OpenApi.annotations({
        summary:
          "Erase a lead's personal data, leaving a tombstone (admins only; audited without personal data)"
      })
    ),
    HttpApiEndpoint.post("purgeTestData", "/api/test-data/purge", {
      ...scoped,
      success: PurgedTestData,
      error: [AdminNotFound, ...Unavailable]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Remove the organization's test data in one action (admins only; audited)"
      })
    )
  )
  .middleware(AdminSchemaErrors)
  .middleware(OperatorSession)
  .annotate(
    OpenApi.Description,
    "The leads received, their personal data (export, erasure) and the removal of test data."
  ) {}

export class CatalogGroup extends HttpApiGroup.make("catalog")
  .add(
    HttpApiEndpoint.get("properties", "/api/properties", {
      query: { org: OrgQuery, q: Schema.optional(StoredText.check(Schema.isMaxLength(200))) },
      success: itemsOf(Property, "PropertyList"),
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.post("createProperty", "/api/properties", {
      ...scoped,
      payload: NewProperty,
      success: created(Property),
      error: [AdminNotFound, Conflict, ...Unavailable]
    }),
    HttpApiEndpoint.post("archiveProperty", "/api/properties/:id/archive", {
      ...scoped,
      params: IdParam,
      success: Property,
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.post("restoreProperty", "/api/properties/:id/restore", {
      ...scoped,
      params: IdParam,
      success: Property,
      error: [AdminNotFound, Conflict, ...Unavailable]
    })
  )
  .middleware(AdminSchemaErrors)
  .middleware(OperatorSession)
  .annotate(
    OpenApi.Description,
    "The property catalog a lead's `codigo` must name: add, archive, restore."
  ) {}

export class CaptureGroup extends HttpApiGroup.make("capture")
  .add(
    HttpApiEndpoint.get("agents", "/api/agents", {
      ...scoped,
      success: itemsOf(Agent, "AgentList"),
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.post("createAgent", "/api/agents", {
      ...scoped,
      payload: Schema.Struct({ name: trimmed(100) }),
      success: created(Agent),
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.get("rules", "/api/rules", {
      ...scoped,
      success: itemsOf(Rule, "CaptureRuleList").annotate({
        description: "In the order they apply: priority (lowest first), then age."
      }),
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.post("createRule", "/api/rules", {
      ...scoped,
      payload: NewRule,
      success: created(Rule),
      error: [AdminNotFound, AdminValidationError, ...Unavailable]
    }),
    HttpApiEndpoint.delete("deleteRule", "/api/rules/:id", {
      ...scoped,
      params: IdParam,
      success: HttpApiSchema.NoContent,
      error: [AdminNotFound, ...Unavailable]
    })
  )
  .middleware(AdminSchemaErrors)
  .middleware(OperatorSession)
  .annotate(OpenApi.Description, "Who receives a lead: the agents and the capture rules that assign them.") {}

export class WebhooksGroup extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.get("webhooks", "/api/webhooks", {
      ...scoped,
      success: itemsOf(WebhookEndpointItem, "WebhookEndpointList"),
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.post("createWebhook", "/api/webhooks", {
      ...scoped,
      payload: NewWebhookEndpoint,
      success: CreatedWebhookEndpoint,
      error: [AdminNotFound, AdminValidationError, ...Unavailable]
    }),
    HttpApiEndpoint.delete("deleteWebhook", "/api/webhooks/:id", {
      ...scoped,
      params: IdParam,
      success: HttpApiSchema.NoContent,
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.post("enableWebhook", "/api/webhooks/:id/enable", {
      ...scoped,
      params: IdParam,
      success: WebhookEndpointItem,
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.post("rotateWebhookSecret", "/api/webhooks/:id/rotate-secret", {
      ...scoped,
      params: IdParam,
      success: WebhookSecret,
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.get("webhookDeliveries", "/api/webhooks/:id/deliveries", {
      query: {
        org: OrgQuery,
        limit: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 200 })))
      },
      params: IdParam,
      success: itemsOf(WebhookDelivery, "WebhookDeliveryList").annotate({ description: "Newest first." }),
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.post("testWebhook", "/api/webhooks/:id/test", {
      ...scoped,
      params: IdParam,
      success: Schema.Struct({
        event_id: Uuid,
        type: Schema.Literal("webhook.test"),
        state: Schema.Literal("pending")
      })
        .annotate({
          identifier: "QueuedTestEvent",
          description:
            "A `webhook.test` event queued for this endpoint alone, signed and retried like any other."
        })
        .pipe(HttpApiSchema.status(202)),
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.post("resendWebhookDelivery", "/api/webhooks/:id/deliveries/:event_id/resend", {
      ...scoped,
      params: { id: StoredText, event_id: StoredText },
      success: Schema.Struct({ event_id: Uuid, state: Schema.Literal("pending") }).annotate({
        identifier: "ResentDelivery"
      }),
      error: [AdminNotFound, ...Unavailable]
    })
  )
  .middleware(AdminSchemaErrors)
  .middleware(OperatorSession)
  .annotate(OpenApi.Description, "Webhook endpoints, their signing secrets and their deliveries.") {}

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
