import { Schema } from "effect"

/** Every error code of the contract, with what a partner needs to know about it. */
export const errorCatalog = {
  validation_error: {
    status: 400,
    title: "Validation error",
    description:
      "The body, a field or a header failed validation. `field` names the first failing one (`body`, `nombre`, `telefono`, `email`, `mensaje`, `propiedad`, `propiedad.codigo`, `propiedad.id`, `extras`, `extras.<key>`, an unknown field's name, `Idempotency-Key`, `X-Service-Dry-Run`).",
    retry: "After correcting the request; the same Idempotency-Key may be reused."
  },
  invalid_key: {
    status: 401,
    title: "Invalid API key",
    description:
      "The Authorization header is missing, is not `Bearer`, or the key is malformed, unknown or revoked.",
    retry: "No, until a valid key is used."
  },
  not_found: {
    status: 404,
    title: "Not found",
    description: "The route does not exist. Only routes under `/v1` are served; `/v1/` is not a route.",
    retry: "No."
  },
  method_not_allowed: {
    status: 405,
    title: "Method not allowed",
    description:
      "The route exists but not with this method. The `Allow` header lists the methods it accepts.",
    retry: "No."
  },
  idempotency_conflict: {
    status: 409,
    title: "Idempotency conflict",
    description: "The same Idempotency-Key was used within 24 hours with a different body.",
    retry: "With a different Idempotency-Key."
  },
  idempotency_in_progress: {
    status: 409,
    title: "Idempotency key in progress",
    description: "The original request with this Idempotency-Key is still running. `Retry-After: 1`.",
    retry: "Yes, after 1 second; the original response then comes back with `replay: true`."
  },
  payload_too_large: {
    status: 413,
    title: "Payload too large",
    description: "The body is over 64000 bytes. The connection is closed after the response.",
    retry: "After reducing the body."
  },
  unsupported_media_type: {
    status: 415,
    title: "Unsupported media type",
    description:
      "Content-Type is missing or is not `application/json` (parameters such as charset are allowed).",
    retry: "After fixing the header."
  },
  property_not_found: {
    status: 422,
    title: "Property not found",
    description:
      "`propiedad` matches no property of the caller's organization, or the property is archived. The Idempotency-Key is not reserved.",
    retry: "After correcting the property."
  },
  rate_limited: {
    status: 429,
    title: "Rate limited",
    description:
      "More requests this minute than the key's limit (60 by default). `Retry-After` gives the seconds to the next window; `X-RateLimit-*` give the window state.",
    retry: "Yes, after Retry-After."
  },
  internal_error: {
    status: 500,
    title: "Internal error",
    description: "A failure while saving. Nothing of the request was left behind.",
    retry:
      "Yes, with the same Idempotency-Key: if the lead had been created its response is returned, otherwise it is created."
  },
  temporarily_unavailable: {
    status: 503,
    title: "Temporarily unavailable",
    description:
      "The database could not be queried (key lookup, idempotency or the write). Nothing was written. `Retry-After: 5`.",
    retry: "Yes, after 5 seconds, with the same Idempotency-Key."
  }
} as const

export type ErrorCode = keyof typeof errorCatalog

export const errorCodes = Object.keys(errorCatalog) as ReadonlyArray<ErrorCode>

const envelope = <const Code extends ErrorCode>(code: Code) => ({
  error: Schema.Struct({
    code: Schema.Literal(code),
    message: Schema.String.annotate({ description: "English text for developers; wording may change." }),
    field: Schema.optionalKey(
      Schema.String.annotate({ description: "The field or header that failed, in dot notation." })
    ),
    docs_url: Schema.String.annotate({ description: "Link to the explanation of the code.", format: "uri" })
  }),
  request_id: Schema.String.annotate({ description: "Same as the X-Request-Id header." })
})

const describe = (code: ErrorCode) => ({
  httpApiStatus: errorCatalog[code].status,
  description: `${errorCatalog[code].title}. ${errorCatalog[code].description}`
})

export class ValidationError extends Schema.Error<ValidationError>("ValidationError")(
  envelope("validation_error"),
  describe("validation_error")
) {
  readonly _tag = "ValidationError"
}

export class InvalidKey extends Schema.Error<InvalidKey>("InvalidKey")(
  envelope("invalid_key"),
  describe("invalid_key")
) {
  readonly _tag = "InvalidKey"
}

export class NotFound extends Schema.Error<NotFound>("NotFound")(
  envelope("not_found"),
  describe("not_found")
) {
  readonly _tag = "NotFound"
}

export class MethodNotAllowed extends Schema.Error<MethodNotAllowed>("MethodNotAllowed")(
  envelope("method_not_allowed"),
  describe("method_not_allowed")
) {
  readonly _tag = "MethodNotAllowed"
}

export class IdempotencyConflict extends Schema.Error<IdempotencyConflict>("IdempotencyConflict")(
  envelope("idempotency_conflict"),
  describe("idempotency_conflict")
) {
  readonly _tag = "IdempotencyConflict"
}

export class IdempotencyInProgress extends Schema.Error<IdempotencyInProgress>("IdempotencyInProgress")(
  envelope("idempotency_in_progress"),
  describe("idempotency_in_progress")
) {
  readonly _tag = "IdempotencyInProgress"
}

export class PayloadTooLarge extends Schema.Error<PayloadTooLarge>("PayloadTooLarge")(
  envelope("payload_too_large"),
  describe("payload_too_large")
) {
  readonly _tag = "PayloadTooLarge"
}

export class UnsupportedMediaType extends Schema.Error<UnsupportedMediaType>("UnsupportedMediaType")(
  envelope("unsupported_media_type"),
  describe("unsupported_media_type")
) {
  readonly _tag = "UnsupportedMediaType"
}

export class PropertyNotFound extends Schema.Error<PropertyNotFound>("PropertyNotFound")(
  envelope("property_not_found"),
  describe("property_not_found")
) {
  readonly _tag = "PropertyNotFound"
}

export class RateLimited extends Schema.Error<RateLimited>("RateLimited")(
  envelope("rate_limited"),
  describe("rate_limited")
) {
  readonly _tag = "RateLimited"
}

export class InternalError extends Schema.Error<InternalError>("InternalError")(
  envelope("internal_error"),
  describe("internal_error")
) {
  readonly _tag = "InternalError"
}

export class TemporarilyUnavailable extends Schema.Error<TemporarilyUnavailable>("TemporarilyUnavailable")(
  envelope("temporarily_unavailable"),
  describe("temporarily_unavailable")
) {
  readonly _tag = "TemporarilyUnavailable"
}

export const errorClasses = {
  validation_error: ValidationError,
  invalid_key: InvalidKey,
  not_found: NotFound,
  method_not_allowed: MethodNotAllowed,
  idempotency_conflict: IdempotencyConflict,
  idempotency_in_progress: IdempotencyInProgress,
  payload_too_large: PayloadTooLarge,
  unsupported_media_type: UnsupportedMediaType,
  property_not_found: PropertyNotFound,
  rate_limited: RateLimited,
  internal_error: InternalError,
  temporarily_unavailable: TemporarilyUnavailable
} as const

export type ApiErrorClass = (typeof errorClasses)[ErrorCode]
export type ApiError = InstanceType<ApiErrorClass>
