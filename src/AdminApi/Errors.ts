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
    description:
      "The change clashes with existing data (a duplicate label or code, a request already rescued or with nothing kept)."
  },
  property_not_found: {
    status: 422,
    description:
      "A rescued lead names no active property of the organization, as `POST /v1/leads` answers it."
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

/**
 * The base of the console's error for `code`: its envelope as the schema, its status and description
 * from the catalog. Each error below is this, named once.
 */
const AdminErrorBase = <const Tag extends string, const Code extends AdminErrorCode>(
  tag: Tag,
  code: Code
) => {
  class Base extends Schema.Error<Base>(tag)(envelope(code), {
    httpApiStatus: adminErrorCatalog[code].status,
    description: adminErrorCatalog[code].description
  }) {
    readonly _tag: Tag = tag
  }
  return Base
}

export class AdminValidationError extends AdminErrorBase("AdminValidationError", "validation_error") {}
export class Unauthenticated extends AdminErrorBase("Unauthenticated", "unauthenticated") {}
export class Forbidden extends AdminErrorBase("Forbidden", "forbidden") {}
export class CsrfFailed extends AdminErrorBase("CsrfFailed", "csrf_failed") {}
export class AdminMisdirected extends AdminErrorBase("AdminMisdirected", "misdirected_request") {}
export class AdminNotFound extends AdminErrorBase("AdminNotFound", "not_found") {}
export class Conflict extends AdminErrorBase("Conflict", "conflict") {}
export class AdminPropertyNotFound extends AdminErrorBase("AdminPropertyNotFound", "property_not_found") {}
export class AdminPayloadTooLarge extends AdminErrorBase("AdminPayloadTooLarge", "payload_too_large") {}
export class AdminUnsupportedMediaType extends AdminErrorBase(
  "AdminUnsupportedMediaType",
  "unsupported_media_type"
) {}
export class LoginThrottled extends AdminErrorBase("LoginThrottled", "rate_limited") {}
export class AdminInternalError extends AdminErrorBase("AdminInternalError", "internal_error") {}
export class AdminUnavailable extends AdminErrorBase("AdminUnavailable", "temporarily_unavailable") {}

export const adminErrorClasses = {
  validation_error: AdminValidationError,
  unauthenticated: Unauthenticated,
  forbidden: Forbidden,
  csrf_failed: CsrfFailed,
  misdirected_request: AdminMisdirected,
  not_found: AdminNotFound,
  conflict: Conflict,
  property_not_found: AdminPropertyNotFound,
  payload_too_large: AdminPayloadTooLarge,
  unsupported_media_type: AdminUnsupportedMediaType,
  rate_limited: LoginThrottled,
  internal_error: AdminInternalError,
  temporarily_unavailable: AdminUnavailable
} as const
