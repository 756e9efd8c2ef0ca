import { Context, Schema } from "effect"
import { HttpApiMiddleware, HttpApiSchema, HttpApiSecurity, OpenApi } from "effect/http-api"
import {
  AdminInternalError,
  AdminUnavailable,
  AdminValidationError,
  CsrfFailed,
  Forbidden,
  Unauthenticated
} from "./Errors.ts"
import { unstorableReason } from "./StoredText.ts"

export const sessionCookieName = "lead_intake_session"
export const csrfHeaderName = "x-csrf-token"

/**
 * Every text the console takes: PostgreSQL cannot store U+0000 or a lone surrogate, so they are
 * refused here (400 naming the field) before anything reaches it.
 */
export const StoredText = Schema.String.check(
  Schema.makeFilter((value: string) => unstorableReason(value) ?? true)
)

export const Uuid = StoredText.annotate({ format: "uuid" })

/** An id inside a body: anything but a UUID is a 400 on the field, not a failed cast in PostgreSQL. */
export const UuidField = StoredText.check(
  Schema.isPattern(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i)
).annotate({ format: "uuid" })
export const Instant = StoredText.annotate({ format: "date-time", description: "ISO-8601, UTC." })
export const Cursor = Schema.NullOr(
  Schema.String.annotate({ description: "Pass as `?cursor=` for the next page; null on the last page." })
)
export const Role = Schema.Literals(["admin", "viewer"])

/** The console's "Test data" switch: live data by default, test data alone when asked. */
export const TestDataQuery = Schema.optional(
  Schema.Literals(["true", "false"]).annotate({
    description:
      "`true`: only test data (what the origins' test keys `lk_test_…` sent, docs/contract.md#10-test-mode); otherwise live data only."
  })
)

export const trimmed = (maximum: number) =>
  StoredText.check(
    Schema.makeFilter((value: string) =>
      value.trim() === ""
        ? "Expected a non-empty value"
        : value.length > maximum
          ? `Expected at most ${maximum} characters`
          : true
    )
  )

export const RateLimitValue = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1_000_000 })).annotate(
  {
    description: "Requests per minute allowed for the origin's key."
  }
)

export const Codigo = StoredText.check(
  Schema.makeFilter(
    (value: string) =>
      /^[A-Za-z]{3}-[0-9]{4}$/.test(value.trim()) || "Expected three letters, a hyphen and four digits"
  )
).annotate({ description: "Three letters, a hyphen and four digits, such as ABC-1234." })

export const OrgQuery = Schema.optional(
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

export const itemsOf = <S extends Schema.Top>(item: S, identifier: string) =>
  Schema.Struct({ items: Schema.Array(item) }).annotate({ identifier })

export const IdParam = { id: StoredText }
export const cursorQuery = {
  org: OrgQuery,
  cursor: Schema.optional(StoredText.check(Schema.isMaxLength(200)))
}
export const scoped = { query: { org: OrgQuery } }
export const created = <S extends Schema.Top>(schema: S) => schema.pipe(HttpApiSchema.status(201))

/**
 * A list as a CSV file for a spreadsheet (docs/operators.md#csv-export): streamed as PostgreSQL sends
 * the rows, UTF-8 with a byte-order mark, named by `Content-Disposition` so a browser saves it.
 */
export const CsvFile = HttpApiSchema.WithHeaders(
  HttpApiSchema.StreamUint8Array({ contentType: "text/csv; charset=utf-8" }),
  {
    "content-disposition": Schema.String.annotate({
      description: 'attachment; filename="…csv": the file name a browser saves it under.'
    })
  }
)
export const Unavailable = [AdminUnavailable, AdminInternalError]
