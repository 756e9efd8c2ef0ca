import { Schema } from "effect"

/**
 * Every wire error of the contract, declared once: its code, status, what a partner needs to know
 * about it, and the headers it is always sent with. Headers that depend on the request (the rate
 * window, `Allow`) are sent by the step that knows them.
 */
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
    retry: "No, until a valid key is used.",
    headers: { "www-authenticate": 'Bearer realm="lead-intake"' }
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
    description:
      "The original request with this Idempotency-Key is still running, or its answer was lost and the database has not yet told whether it was written. `Retry-After: 1`.",
    retry: "Yes, after 1 second; the original response then comes back with `replay: true`.",
    headers: { "retry-after": "1" }
  },
  payload_too_large: {
    status: 413,
    title: "Payload too large",
    description: "The body is over 64000 bytes. The connection is closed after the response.",
    retry: "After reducing the body.",
    headers: { connection: "close" }
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
    description:
      "A failure while saving, or a write whose outcome is unknown because the database stopped answering after it was sent (the lead may have been saved).",
    retry:
      "Yes, with the same Idempotency-Key: if the lead had been created its response is returned, otherwise it is created."
  },
  temporarily_unavailable: {
    status: 503,
    title: "Temporarily unavailable",
    description:
      "The database could not be queried (key lookup, idempotency or the write). Nothing was written. `Retry-After: 5`.",
    retry: "Yes, after 5 seconds, with the same Idempotency-Key.",
    headers: { "retry-after": "5" }
  }
} as const satisfies Record<
  string,
  {
    readonly status: number
    readonly title: string
    readonly description: string
    readonly retry: string
    readonly headers?: Readonly<Record<string, string>>
  }
>

export type ErrorCode = keyof typeof errorCatalog

/**
 * The messages the server sends word for word (the others carry a detail: a field, a limit, a
 * reason), declared once for the handlers that send them and for the document's examples.
 */
export const fixedMessages = {
  unsupported_media_type: "Content-Type must be application/json",
  idempotency_conflict: "This Idempotency-Key was used in the last 24 hours with another body",
  idempotency_in_progress:
    "The original request with this Idempotency-Key is still running, or its outcome is being settled",
  temporarily_unavailable: "The database could not be reached; nothing was written",
  internal_error: "An unexpected error occurred"
} as const satisfies Partial<Record<ErrorCode, string>>

export const isErrorCode = (value: string): value is ErrorCode => Object.hasOwn(errorCatalog, value)

export const errorCodes = Object.keys(errorCatalog) as ReadonlyArray<ErrorCode>

/** The headers the error with this code is always sent with. */
export const errorHeaders = (code: ErrorCode): Readonly<Record<string, string>> => {
  const entry = errorCatalog[code]
  return "headers" in entry ? entry.headers : {}
}

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

// One class per code, each from its catalog entry. Written out rather than made by a factory: the
// installable client's declarations (clients/typescript) cannot name a factory's class type.
export class ValidationError extends Schema.Error<ValidationError>("ValidationError")(
  envelope("validation_error"),
  describe("validation_error")
) {
  readonly _tag = "ValidationError"
  static readonly code = "validation_error"
}

export class InvalidKey extends Schema.Error<InvalidKey>("InvalidKey")(
  envelope("invalid_key"),
  describe("invalid_key")
) {
  readonly _tag = "InvalidKey"
  static readonly code = "invalid_key"
}

export class NotFound extends Schema.Error<NotFound>("NotFound")(
  envelope("not_found"),
  describe("not_found")
) {
  readonly _tag = "NotFound"
  static readonly code = "not_found"
}

export class MethodNotAllowed extends Schema.Error<MethodNotAllowed>("MethodNotAllowed")(
  envelope("method_not_allowed"),
  describe("method_not_allowed")
) {
  readonly _tag = "MethodNotAllowed"
  static readonly code = "method_not_allowed"
}

export class IdempotencyConflict extends Schema.Error<IdempotencyConflict>("IdempotencyConflict")(
  envelope("idempotency_conflict"),
  describe("idempotency_conflict")
) {
  readonly _tag = "IdempotencyConflict"
  static readonly code = "idempotency_conflict"
}

export class IdempotencyInProgress extends Schema.Error<IdempotencyInProgress>("IdempotencyInProgress")(
  envelope("idempotency_in_progress"),
  describe("idempotency_in_progress")
) {
  readonly _tag = "IdempotencyInProgress"
  static readonly code = "idempotency_in_progress"
}

export class PayloadTooLarge extends Schema.Error<PayloadTooLarge>("PayloadTooLarge")(
  envelope("payload_too_large"),
  describe("payload_too_large")
) {
  readonly _tag = "PayloadTooLarge"
  static readonly code = "payload_too_large"
}

export class UnsupportedMediaType extends Schema.Error<UnsupportedMediaType>("UnsupportedMediaType")(
  envelope("unsupported_media_type"),
  describe("unsupported_media_type")
) {
  readonly _tag = "UnsupportedMediaType"
  static readonly code = "unsupported_media_type"
}

export class PropertyNotFound extends Schema.Error<PropertyNotFound>("PropertyNotFound")(
  envelope("property_not_found"),
  describe("property_not_found")
) {
  readonly _tag = "PropertyNotFound"
  static readonly code = "property_not_found"
}

export class RateLimited extends Schema.Error<RateLimited>("RateLimited")(
  envelope("rate_limited"),
  describe("rate_limited")
) {
  readonly _tag = "RateLimited"
  static readonly code = "rate_limited"
}

export class InternalError extends Schema.Error<InternalError>("InternalError")(
  envelope("internal_error"),
  describe("internal_error")
) {
  readonly _tag = "InternalError"
  static readonly code = "internal_error"
}

export class TemporarilyUnavailable extends Schema.Error<TemporarilyUnavailable>("TemporarilyUnavailable")(
  envelope("temporarily_unavailable"),
  describe("temporarily_unavailable")
) {
  readonly _tag = "TemporarilyUnavailable"
  static readonly code = "temporarily_unavailable"
}

/** The envelope every error is answered with, for the error with this code. */
export interface Envelope<Code extends ErrorCode> {
  readonly error: {
    readonly code: Code
    readonly message: string
    readonly field?: string
    readonly docs_url: string
  }
  readonly request_id: string
}

/** Each code's class: the registry the fallbacks and the request path make their errors from. */
const wireErrors = {
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
} as const satisfies { readonly [Code in ErrorCode]: { readonly code: Code } }

/** The wire error declared for `code`. */
export type WireErrorOf<Code extends ErrorCode> = InstanceType<(typeof wireErrors)[Code]>

/** Every error the API answers with: the only way any endpoint, middleware or fallback fails. */
export type WireError = WireErrorOf<ErrorCode>

const constructors: { readonly [Code in ErrorCode]: new (fields: Envelope<Code>) => WireErrorOf<Code> } =
  wireErrors

const wireErrorClasses = Object.values(wireErrors)

export const isWireError = (u: unknown): u is WireError =>
  wireErrorClasses.some((WireErrorClass) => u instanceof WireErrorClass)

/** The wire error for `code`, in the envelope. */
export const makeWireError = <Code extends ErrorCode>(fields: Envelope<Code>): WireErrorOf<Code> =>
  new constructors[fields.error.code](fields)
