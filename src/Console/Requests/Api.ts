import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import {
  AdminSchemaErrors,
  Cursor,
  Instant,
  OperatorSession,
  OrgQuery,
  StoredText,
  scoped,
  TestDataQuery,
  Unavailable,
  Uuid
} from "../../AdminApi/Common.ts"
import { AdminNotFound, AdminValidationError, Forbidden } from "../../AdminApi/Errors.ts"

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
