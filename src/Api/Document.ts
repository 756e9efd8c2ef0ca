import { type ErrorCode, errorCatalog, errorCodes } from "./Errors.ts"

type Json = Readonly<Record<string, unknown>>

const isRecord = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const recordAt = (json: Json, key: string): Json => {
  const value = json[key]
  return isRecord(value) ? value : {}
}

const mapValues = (json: Json, f: (value: Json, key: string) => Json): Json =>
  Object.fromEntries(
    Object.entries(json).map(([key, value]) => [key, isRecord(value) ? f(value, key) : value])
  )

const header = (description: string, schema: Json, required: boolean) => ({
  description,
  ...(required ? { required: true } : {}),
  schema
})

const requestIdHeader = {
  "X-Request-Id": header(
    "Unique id of this request; equals `request_id` in the body.",
    { type: "string" },
    true
  )
}

/** Sent on every answer past the key check; a 500 may come before it. */
const rateLimitHeaders = (required: boolean) => ({
  "X-RateLimit-Limit": header("Requests allowed per minute for this key.", { type: "integer" }, required),
  "X-RateLimit-Remaining": header("Requests left in the current window.", { type: "integer" }, required),
  "X-RateLimit-Reset": header(
    "Unix time in seconds when the window restarts (the next Unix minute).",
    { type: "integer" },
    required
  ),
  "RateLimit-Policy": header('IETF draft policy, e.g. `"default";q=60;w=60`.', { type: "string" }, required),
  RateLimit: header('IETF draft state, e.g. `"default";r=59;t=42`.', { type: "string" }, required)
})

const retryAfterHeader = (required: boolean) => ({
  "Retry-After": header("Seconds to wait before retrying.", { type: "integer", minimum: 1 }, required)
})

const replayedHeader = {
  "Idempotent-Replayed": header(
    "`true` when the response repeats an earlier one for the same Idempotency-Key.",
    { type: "string", enum: ["true"] },
    false
  )
}

const wwwAuthenticateHeader = {
  "WWW-Authenticate": header(
    "The authentication scheme to use (RFC 6750).",
    { type: "string", enum: [errorCatalog.invalid_key.headers["www-authenticate"]] },
    true
  )
}

/** Headers set outside the typed body (request id, rate limit, Retry-After) are documented here. */
export const documentHeaders =
  (perStatus: (status: string) => Json) =>
  (operation: Json): Json => ({
    ...operation,
    responses: mapValues(recordAt(operation, "responses"), (response, status) => ({
      ...response,
      headers: { ...recordAt(response, "headers"), ...requestIdHeader, ...perStatus(status) }
    }))
  })

export const leadResponseHeaders = (status: string): Json => {
  const limits = status === "401" || status === "503" ? {} : rateLimitHeaders(status !== "500")
  const retryAfter =
    status === "409" || status === "429" || status === "503" ? retryAfterHeader(status !== "409") : {}
  const replay = status === "200" || status === "201" ? replayedHeader : {}
  const close = status === "413" ? { Connection: header("`close`", { type: "string" }, true) } : {}
  const authenticate = status === "401" ? wwwAuthenticateHeader : {}
  return { ...limits, ...retryAfter, ...replay, ...close, ...authenticate }
}

export const cacheControlHeader = {
  "Cache-Control": header("`public, max-age=300`", { type: "string" }, true)
}

/** The Idempotency-Key header parameter with the rules the schema's filter checks. */
export const documentIdempotencyKey =
  (maxLength: number) =>
  (operation: Json): Json => {
    const parameters = operation.parameters
    if (!Array.isArray(parameters)) return operation
    return {
      ...operation,
      parameters: parameters.map((parameter: unknown) =>
        isRecord(parameter) && parameter.name === "idempotency-key"
          ? {
              ...parameter,
              schema: { type: "string", minLength: 1, maxLength, pattern: "^[\\x20-\\x7E]+$" }
            }
          : parameter
      )
    }
  }

const errorSchemaRef = { $ref: "#/components/schemas/Error" }

const codesWithStatus = (status: string): ReadonlyArray<ErrorCode> =>
  errorCodes.filter((code) => String(errorCatalog[code].status) === status)

const errorResponse = (status: "404" | "405") => {
  const [code] = codesWithStatus(status)
  const entry = errorCatalog[code ?? "not_found"]
  return {
    description: `${entry.title}. ${entry.description}`,
    content: { "application/json": { schema: errorSchemaRef } },
    "x-error-codes": codesWithStatus(status),
    headers: {
      ...requestIdHeader,
      ...(status === "405"
        ? { Allow: header("The methods the route accepts.", { type: "string" }, true) }
        : {})
    }
  }
}

/** Every error response refers to one `Error` schema, lists its codes, and 404/405 are on every route. */
const shareErrorResponses = (operation: Json): Json => ({
  ...operation,
  responses: {
    ...mapValues(recordAt(operation, "responses"), (response, status) =>
      Number(status) < 400
        ? response
        : {
            ...response,
            content: { "application/json": { schema: errorSchemaRef } },
            "x-error-codes": codesWithStatus(status)
          }
    ),
    "404": errorResponse("404"),
    "405": errorResponse("405")
  }
})

const errorSchema = {
  type: "object",
  description:
    "Every error: its code (one per cause, see the docs page), a message for developers, the field that failed.",
  properties: {
    error: {
      type: "object",
      properties: {
        code: { type: "string", enum: errorCodes },
        message: { type: "string", description: "English text for developers; wording may change." },
        field: { type: "string", description: "The field or header that failed, in dot notation." },
        docs_url: { type: "string", description: "Link to the explanation of the code.", format: "uri" }
      },
      required: ["code", "message", "docs_url"],
      additionalProperties: false
    },
    request_id: { type: "string", description: "Same as the X-Request-Id header." }
  },
  required: ["error", "request_id"],
  additionalProperties: false
}

const isPerErrorSchema = (name: string) => name.endsWith("Encoded")

/** One `Error` component in place of one copied envelope per error class. */
export const shareErrorSchema = (document: Json): Json => {
  const components = recordAt(document, "components")
  const schemas = Object.entries(recordAt(components, "schemas")).filter(([name]) => !isPerErrorSchema(name))
  return {
    ...document,
    paths: mapValues(recordAt(document, "paths"), (path) => mapValues(path, shareErrorResponses)),
    components: { ...components, schemas: { ...Object.fromEntries(schemas), Error: errorSchema } }
  }
}
