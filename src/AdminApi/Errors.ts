import { Schema } from "effect"

/** Every error code of the admin API (the console's JSON API), with its status. */
export const adminErrorCatalog = {
  validation_error: { status: 400, description: "A query parameter or a body field failed validation." },
  unauthenticated: { status: 401, description: "No session, or the session expired or was revoked." },
  forbidden: { status: 403, description: "The operator may not do this (a viewer changing something)." },
  csrf_failed: {
    status: 403,
    description:
      "A state change without the session's `X-CSRF-Token` header, with a wrong one, or sent from another origin (`Origin` header)."
  },
  misdirected_request: {
    status: 421,
    description:
      "The `Host` header names none of the console's host names (`ADMIN_HOSTS`): answered before anything else runs."
  },
  not_found: { status: 404, description: "No such thing in the operator's organization." },
  conflict: {
    status: 409,
    description: "The change clashes with existing data (a duplicate label or code)."
  },
  payload_too_large: { status: 413, description: "The body is over 64 KiB." },
  unsupported_media_type: { status: 415, description: "A body that is not `application/json`." },
  rate_limited: {
    status: 429,
    description:
      "Too many failed sign-ins for this e-mail from this address, or from this address; `Retry-After` gives the seconds of backoff."
  },
  internal_error: { status: 500, description: "An unexpected failure." },
  temporarily_unavailable: { status: 503, description: "The database could not be reached." }
} as const

export type AdminErrorCode = keyof typeof adminErrorCatalog

const envelope = <const Code extends AdminErrorCode>(code: Code) => ({
  error: Schema.Struct({
    code: Schema.Literal(code),
    message: Schema.String,
    field: Schema.optionalKey(
      Schema.String.annotate({ description: "The field that failed, in dot notation." })
    )
  }),
  request_id: Schema.String.annotate({ description: "Same as the X-Request-Id header." })
})

const describe = (code: AdminErrorCode) => ({
  httpApiStatus: adminErrorCatalog[code].status,
  description: adminErrorCatalog[code].description
})

export class AdminValidationError extends Schema.Error<AdminValidationError>("AdminValidationError")(
  envelope("validation_error"),
  describe("validation_error")
) {
  readonly _tag = "AdminValidationError"
}

export class Unauthenticated extends Schema.Error<Unauthenticated>("Unauthenticated")(
  envelope("unauthenticated"),
  describe("unauthenticated")
) {
  readonly _tag = "Unauthenticated"
}

export class Forbidden extends Schema.Error<Forbidden>("Forbidden")(
  envelope("forbidden"),
  describe("forbidden")
) {
  readonly _tag = "Forbidden"
}

export class CsrfFailed extends Schema.Error<CsrfFailed>("CsrfFailed")(
  envelope("csrf_failed"),
  describe("csrf_failed")
) {
  readonly _tag = "CsrfFailed"
}

export class AdminMisdirected extends Schema.Error<AdminMisdirected>("AdminMisdirected")(
  envelope("misdirected_request"),
  describe("misdirected_request")
) {
  readonly _tag = "AdminMisdirected"
}

export class AdminNotFound extends Schema.Error<AdminNotFound>("AdminNotFound")(
  envelope("not_found"),
  describe("not_found")
) {
  readonly _tag = "AdminNotFound"
}

export class Conflict extends Schema.Error<Conflict>("Conflict")(envelope("conflict"), describe("conflict")) {
  readonly _tag = "Conflict"
}

export class AdminPayloadTooLarge extends Schema.Error<AdminPayloadTooLarge>("AdminPayloadTooLarge")(
  envelope("payload_too_large"),
  describe("payload_too_large")
) {
  readonly _tag = "AdminPayloadTooLarge"
}

export class AdminUnsupportedMediaType extends Schema.Error<AdminUnsupportedMediaType>(
  "AdminUnsupportedMediaType"
)(envelope("unsupported_media_type"), describe("unsupported_media_type")) {
  readonly _tag = "AdminUnsupportedMediaType"
}

export class LoginThrottled extends Schema.Error<LoginThrottled>("LoginThrottled")(
  envelope("rate_limited"),
  describe("rate_limited")
) {
  readonly _tag = "LoginThrottled"
}

export class AdminInternalError extends Schema.Error<AdminInternalError>("AdminInternalError")(
  envelope("internal_error"),
  describe("internal_error")
) {
  readonly _tag = "AdminInternalError"
}

export class AdminUnavailable extends Schema.Error<AdminUnavailable>("AdminUnavailable")(
  envelope("temporarily_unavailable"),
  describe("temporarily_unavailable")
) {
  readonly _tag = "AdminUnavailable"
}

export const adminErrorClasses = {
  validation_error: AdminValidationError,
  unauthenticated: Unauthenticated,
  forbidden: Forbidden,
  csrf_failed: CsrfFailed,
  misdirected_request: AdminMisdirected,
  not_found: AdminNotFound,
  conflict: Conflict,
  payload_too_large: AdminPayloadTooLarge,
  unsupported_media_type: AdminUnsupportedMediaType,
  rate_limited: LoginThrottled,
  internal_error: AdminInternalError,
  temporarily_unavailable: AdminUnavailable
} as const
