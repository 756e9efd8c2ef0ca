import { errorExamples, parameterExamples, requestExamples, responseExamples } from "./Documentation.ts"
import { type ErrorCode, errorCatalog, errorCodes } from "./Errors.ts"
import { codeSamples } from "./Guide.ts"
import { Limits } from "./LeadRequest.ts"

/**
 * The only hand-editing of the document `OpenApi.fromApi(Api)` generates. Everything an annotation
 * can say is said on the schemas, endpoints, groups and the API (`Api.ts`, and the deployment's
 * server and license in `OpenApiDocument.ts`); each edit below says why no annotation can.
 */

type Json = Readonly<Record<string, unknown>>

const isRecord = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const at = (json: Json, key: string): Json => {
  const value = json[key]
  return isRecord(value) ? value : {}
}

const mapValues = (json: Json, f: (value: Json, key: string) => Json): Json =>
  Object.fromEntries(
    Object.entries(json).map(([key, value]) => [key, isRecord(value) ? f(value, key) : value])
  )

const header = (description: string, schema: Json, required = true) => ({
  description,
  ...(required ? { required: true } : {}),
  schema
})
const integer = { type: "integer" }
const string = { type: "string" }

// Response headers: the global middleware and the error table set them outside the endpoint's
// typed response, and HttpApi documents only the headers a response schema carries.
const requestId = {
  "X-Request-Id": header("Unique id of this request; equals `request_id` in the body.", string)
}

const headersOf = (operation: string, status: number): Json => {
  if (operation === "GET /v1/openapi.json" && status === 200) {
    return { ...requestId, "Cache-Control": header("`public, max-age=300`", string) }
  }
  if (operation !== "POST /v1/leads") return requestId
  const limited = status !== 401 && status !== 503 // sent past the key check; a 500 may come before it
  const required = status !== 500
  return {
    ...requestId,
    ...(limited && {
      "X-RateLimit-Limit": header("Requests allowed per minute for this key.", integer, required),
      "X-RateLimit-Remaining": header("Requests left in the current window.", integer, required),
      "X-RateLimit-Reset": header(
        "Unix time in seconds when the window restarts (the next Unix minute).",
        integer,
        required
      ),
      "RateLimit-Policy": header('IETF draft policy, e.g. `"default";q=60;w=60`.', string, required),
      RateLimit: header('IETF draft state, e.g. `"default";r=59;t=42`.', string, required)
    }),
    ...([409, 429, 503].includes(status) && {
      "Retry-After": header("Seconds to wait before retrying.", { ...integer, minimum: 1 }, status !== 409)
    }),
    ...(status < 300 && {
      "Idempotent-Replayed": header(
        "`true` when the response repeats an earlier one for the same Idempotency-Key.",
        { ...string, enum: ["true"] },
        false
      )
    }),
    ...(status === 413 && { Connection: header("`close`", string) }),
    ...(status === 401 && {
      "WWW-Authenticate": header("The authentication scheme to use (RFC 6750).", {
        ...string,
        enum: [errorCatalog.invalid_key.headers["www-authenticate"]]
      })
    })
  }
}

// Header parameters: HttpApi writes a header's description under its `schema` and has no annotation
// for the parameter's own `description` or `example`. The Idempotency-Key's rule is checked on the
// headers together (a dry-run ignores the key), so its field carries no constraint to derive.
const idempotencyKey = {
  ...string,
  minLength: 1,
  maxLength: Limits.idempotencyKey,
  pattern: "^[\\x20-\\x7E]+$"
}

const parameter = (json: unknown) => {
  if (!isRecord(json)) return json
  const name = String(json.name)
  const description = json.description ?? at(json, "schema").description
  const example = json.example ?? parameterExamples[name]
  return {
    ...json,
    ...(name === "idempotency-key" && { schema: idempotencyKey }),
    ...(typeof description === "string" && { description }),
    ...(example !== undefined && { example })
  }
}

// Errors: HttpApi makes each error class its own component and response; on the wire every error is
// the one envelope told apart by `error.code`, so a status refers to the one `Error` schema
// (`ErrorBody`) and lists its codes (`x-error-codes`). 404 and 405 are the router's, on every route.
// Examples: OpenAPI's named examples (a media type's `examples`, each with a summary) have no
// annotation; a Schema `examples` lands unnamed in the JSON Schema, and the one `Error` schema
// stands for bodies whose examples differ per status.
const codesWithStatus = (status: number): ReadonlyArray<ErrorCode> =>
  errorCodes.filter((code) => errorCatalog[code].status === status)

const errorResponse = (status: number, response: Json) => ({
  ...response,
  content: {
    "application/json": {
      schema: { $ref: "#/components/schemas/Error" },
      examples: errorExamples(codesWithStatus(status))
    }
  },
  "x-error-codes": codesWithStatus(status)
})

const routerResponse = (status: 404 | 405) => {
  const entry = errorCatalog[status === 404 ? "not_found" : "method_not_allowed"]
  const allow = status === 405 && { Allow: header("The methods the route accepts.", string) }
  return {
    ...errorResponse(status, { description: `${entry.title}. ${entry.description}` }),
    headers: { ...requestId, ...allow }
  }
}

const response = (operation: string) => (json: Json, key: string) => {
  const status = Number(key)
  const headers = { ...at(json, "headers"), ...headersOf(operation, status) }
  if (status >= 400) return errorResponse(status, { ...json, headers })
  const content = mapValues(at(json, "content"), (media, mediaType) => {
    const examples = responseExamples(operation, key, mediaType)
    return examples === undefined ? media : { ...media, examples }
  })
  return { ...json, headers, ...(json.content !== undefined && { content }) }
}

const edit = (publicBaseUrl: string, operation: string, json: Json): Json => {
  const leads = operation === "POST /v1/leads"
  const body = at(at(json, "requestBody"), "content")
  return {
    ...json,
    ...(Array.isArray(json.parameters) && { parameters: json.parameters.map(parameter) }),
    ...(leads && {
      requestBody: {
        ...at(json, "requestBody"),
        content: {
          ...body,
          "application/json": { ...at(body, "application/json"), examples: requestExamples }
        }
      }
    }),
    responses: {
      ...mapValues(at(json, "responses"), response(operation)),
      404: routerResponse(404),
      405: routerResponse(405)
    },
    // The samples name the URL the service is reached at, known when it starts.
    ...(leads && { "x-codeSamples": codeSamples(publicBaseUrl) })
  }
}

/** The generated document with the edits above, for a service reached at `publicBaseUrl`. */
export const finishDocument = (publicBaseUrl: string, generated: Json): Json => {
  const components = at(generated, "components")
  const paths = mapValues(at(generated, "paths"), (item, path) =>
    mapValues(item, (json, method) => edit(publicBaseUrl, `${method.toUpperCase()} ${path}`, json))
  )
  // The per-error envelopes HttpApi generated (`…Encoded`), replaced by the one `Error`.
  const schemas = Object.entries(at(components, "schemas")).filter(([name]) => !name.endsWith("Encoded"))
  return { ...generated, paths, components: { ...components, schemas: Object.fromEntries(schemas) } }
}
