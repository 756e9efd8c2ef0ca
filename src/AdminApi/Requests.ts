import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import {
  AdminSchemaErrors,
  CsvFile,
  Cursor,
  Instant,
  OperatorSession,
  OrgQuery,
  StoredText,
  scoped,
  TestDataQuery,
  Unavailable,
  Uuid
} from "./Common.ts"
import { AdminNotFound, AdminPropertyNotFound, AdminValidationError, Conflict, Forbidden } from "./Errors.ts"

/**
 * Every outcome the request log records for `POST /v1/leads`: what the request did to its lead, or
 * the code of the public API's error it was answered with (each one the operation declares).
 */
export const requestOutcomes = [
  "created",
  "enriched",
  "replay",
  "dry_run",
  "invalid_key",
  "validation_error",
  "rate_limited",
  "idempotency_conflict",
  "idempotency_in_progress",
  "property_not_found",
  "payload_too_large",
  "unsupported_media_type",
  "temporarily_unavailable",
  "internal_error"
] as const

export type RequestOutcome = (typeof requestOutcomes)[number]

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
  livemode: Schema.Boolean.annotate({ description: "false: a request made with a test key (`lk_test_…`)." }),
  kept: Schema.Boolean.annotate({
    description: "true: its body is kept for rescue (docs/contract.md#11-rejected-leads-are-kept-for-rescue)."
  }),
  rescued_lead_id: Schema.NullOr(Uuid).annotate({ description: "The lead a rescue made of it." })
}).annotate({ identifier: "RequestLogItem" })

export const KeptRequestBody = Schema.Struct({
  request_id: Schema.String,
  body: Schema.NullOr(Schema.String).annotate({
    description: "The body as received, or null when none is kept."
  }),
  rescued_lead_id: Schema.NullOr(Uuid)
}).annotate({ identifier: "KeptRequestBody", description: "Admins only." })

export const RescueBody = Schema.Struct({
  body: Schema.String.check(Schema.isMaxLength(64_000)).annotate({
    description: "The corrected body: the JSON text `POST /v1/leads` would take."
  })
}).annotate({ identifier: "RescueBody" })

export const RescueResult = Schema.Struct({
  lead_id: Uuid,
  status: Schema.Literals(["created", "enriched"]),
  matched_on: Schema.optionalKey(Schema.Literal("telefono")),
  lead_url: Schema.String,
  request_id: Schema.String
}).annotate({
  identifier: "RescueResult",
  description: "The API's own answer (`LeadCreated` or `LeadEnriched`)."
})

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
  kept: Schema.optional(
    Schema.Literals(["true", "false"]).annotate({
      description: "`true`: only requests whose body is kept for rescue."
    })
  ),
  test: TestDataQuery,
  cursor: Schema.optional(StoredText.check(Schema.isMaxLength(200))),
  limit: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 200 })))
}

const { cursor: _cursor, limit: _limit, ...requestExportFilters } = RequestFilters

/** The list's filters, without its page: an export takes every row they keep. */
export const RequestExportFilters = requestExportFilters

export const RequestPage = Schema.Struct({ items: Schema.Array(RequestItem), next_cursor: Cursor }).annotate({
  identifier: "RequestLogPage"
})

export class RequestsGroup extends HttpApiGroup.make("requests")
  .add(
    HttpApiEndpoint.get("requests", "/api/requests", {
      query: RequestFilters,
      success: RequestPage,
      error: [AdminNotFound, AdminValidationError, Forbidden, ...Unavailable]
    }),
    HttpApiEndpoint.get("exportRequests", "/api/requests.csv", {
      query: RequestExportFilters,
      success: CsvFile,
      error: [AdminNotFound, AdminValidationError, Forbidden, ...Unavailable]
    }).annotateMerge(
      OpenApi.annotations({
        summary:
          "The request log as a CSV file: every row the list's filters keep, newest first, streamed (audited as requests.export_csv once the last row is sent)"
      })
    ),
    HttpApiEndpoint.get("request", "/api/requests/:request_id", {
      ...scoped,
      params: { request_id: StoredText },
      success: RequestItem,
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.get("keptBody", "/api/requests/:request_id/kept", {
      ...scoped,
      params: { request_id: StoredText },
      success: KeptRequestBody,
      error: [AdminNotFound, Forbidden, ...Unavailable]
    }).annotateMerge(OpenApi.annotations({ summary: "The body kept for rescue (admins only)" })),
    HttpApiEndpoint.post("rescue", "/api/requests/:request_id/rescue", {
      ...scoped,
      params: { request_id: StoredText },
      payload: RescueBody,
      success: RescueResult,
      error: [AdminValidationError, AdminPropertyNotFound, Conflict, AdminNotFound, Forbidden, ...Unavailable]
    }).annotateMerge(
      OpenApi.annotations({
        summary:
          "Create or enrich the lead from a corrected body, as POST /v1/leads would (admins only, once)"
      })
    )
  )
  .middleware(AdminSchemaErrors)
  .middleware(OperatorSession)
  .annotate(
    OpenApi.Description,
    "The request log of the public API: every request answered, with its outcome."
  ) {}
