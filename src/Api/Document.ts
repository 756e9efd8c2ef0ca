import {
  type Example,
  errorExamples as examplesOfCodes,
  parameterExamples,
  requestExamples,
  responseExamples
} from "./Documentation.ts"
import { type ErrorCode, errorCatalog, errorCodes } from "./Errors.ts"
import { codeSamples } from "./Guide.ts"
import { Limits } from "./LeadRequest.ts"

/**
 * The only hand-editing of the document `OpenApi.fromApi(Api)` generates. Everything an annotation
 * can say is said on the schemas, endpoints, groups and the API in `Api.ts` (descriptions, titles,
 * formats, tags, the security scheme, the guide, the webhooks); each edit below is here because no
 * annotation of Schema or HttpApi can say it, and its comment says why.
 */

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

// -- 1. Response headers ------------------------------------------------------------------------
// Request id, rate limit, Retry-After and the rest are set by the global middleware and the error
// table, outside the endpoint's typed response; HttpApi documents only headers a response schema has.

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

const leadResponseHeaders = (status: string): Json => {
  const limits = status === "401" || status === "503" ? {} : rateLimitHeaders(status !== "500")
  const retryAfter =
    status === "409" || status === "429" || status === "503"
      ? {
          "Retry-After": header(
            "Seconds to wait before retrying.",
            { type: "integer", minimum: 1 },
            status !== "409"
          )
        }
      : {}
  const replay =
    status === "200" || status === "201"
      ? {
          "Idempotent-Replayed": header(
            "`true` when the response repeats an earlier one for the same Idempotency-Key.",
            { type: "string", enum: ["true"] },
            false
          )
        }
      : {}
  const close = status === "413" ? { Connection: header("`close`", { type: "string" }, true) } : {}
  const authenticate =
    status === "401"
      ? {
          "WWW-Authenticate": header(
            "The authentication scheme to use (RFC 6750).",
            { type: "string", enum: [errorCatalog.invalid_key.headers["www-authenticate"]] },
            true
          )
        }
      : {}
  return { ...limits, ...retryAfter, ...replay, ...close, ...authenticate }
}

const responseHeaders: Record<string, (status: string) => Json> = {
  "POST /v1/leads": leadResponseHeaders,
  "GET /v1/openapi.json": (status) =>
    status === "200" ? { "Cache-Control": header("`public, max-age=300`", { type: "string" }, true) } : {}
}

const withHeaders = (name: string, operation: Json): Json => ({
  ...operation,
  responses: mapValues(recordAt(operation, "responses"), (response, status) => ({
    ...response,
    headers: {
      ...recordAt(response, "headers"),
      ...requestIdHeader,
      ...(responseHeaders[name]?.(status) ?? {})
    }
  }))
})

// -- 2. Parameters ------------------------------------------------------------------------------
// HttpApi writes a header's schema under `parameters[].schema` and has no annotation for the
// parameter's own `description` or `example`. The Idempotency-Key's rule is checked on the headers
// together (a dry-run ignores the key), so its field's schema carries no constraint to derive.

const idempotencyKeySchema = {
  type: "string",
  minLength: 1,
  maxLength: Limits.idempotencyKey,
  pattern: "^[\\x20-\\x7E]+$"
}

const withParameters = (operation: Json): Json => {
  const parameters = operation.parameters
  if (!Array.isArray(parameters)) return operation
  return {
    ...operation,
    parameters: parameters.map((parameter: unknown) => {
      if (!isRecord(parameter)) return parameter
      const name = String(parameter.name)
      const schema = recordAt(parameter, "schema")
      const description = parameter.description ?? schema.description
      const example = parameter.example ?? parameterExamples[name]
      return {
        ...parameter,
        ...(name === "idempotency-key" ? { schema: idempotencyKeySchema } : {}),
        ...(typeof description === "string" ? { description } : {}),
        ...(example === undefined ? {} : { example })
      }
    })
  }
}

// -- 3. Errors ------------------------------------------------------------------------------------
// HttpApi documents each error class as its own component and response; on the wire every error is
// the one envelope, told apart by `error.code`, so the responses refer to the one `Error` schema
// (`ErrorBody` in Api.ts) and list the codes per status (`x-error-codes`). 404 and 405 are the router's answers, on every route, not
// any endpoint's.

const errorSchemaRef = { $ref: "#/components/schemas/Error" }

const codesWithStatus = (status: string): ReadonlyArray<ErrorCode> =>
  errorCodes.filter((code) => String(errorCatalog[code].status) === status)

const routerResponse = (status: "404" | "405") => {
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

const withSharedErrors = (operation: Json): Json => ({
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
    "404": routerResponse("404"),
    "405": routerResponse("405")
  }
})

/** The per-error envelopes HttpApi generated (`…Encoded`), replaced by the one `Error`. */
const isPerErrorSchema = (name: string) => name.endsWith("Encoded")

// -- 4. Examples ----------------------------------------------------------------------------------
// OpenAPI's named examples (`examples` of a media type, each with a summary) have no annotation: a
// Schema `examples` annotation lands unnamed inside the JSON Schema, and the one `Error` schema
// stands for bodies whose examples differ per status (the codes that status can answer).

const withExamples = (name: string, operation: Json): Json => {
  const body = recordAt(recordAt(operation, "requestBody"), "content")
  const requestBody =
    body["application/json"] === undefined || name !== "POST /v1/leads"
      ? operation.requestBody
      : {
          ...recordAt(operation, "requestBody"),
          content: {
            ...body,
            "application/json": { ...recordAt(body, "application/json"), examples: requestExamples }
          }
        }
  return {
    ...operation,
    ...(requestBody === undefined ? {} : { requestBody }),
    responses: mapValues(recordAt(operation, "responses"), (response, status) => {
      if (response.content === undefined) return response
      return {
        ...response,
        content: mapValues(recordAt(response, "content"), (media, mediaType) => {
          const examples: Record<string, Example> | undefined =
            Number(status) >= 400
              ? examplesOfCodes(response["x-error-codes"] as ReadonlyArray<ErrorCode>)
              : responseExamples(name, status, mediaType)
          return examples === undefined ? media : { ...media, examples }
        })
      }
    })
  }
}

// -- 5. The deployment --------------------------------------------------------------------------------
// The samples, the license link and the server name the URL the service is reached at
// (PUBLIC_BASE_URL), known when it starts, not when the API is declared.

/** Where the committed `openapi.json` says the API is; a running server names its own PUBLIC_BASE_URL. */
export const defaultServerUrl = "http://127.0.0.1:8080"

const forDeployment = (publicBaseUrl: string, document: Json): Json => ({
  ...document,
  info: {
    ...recordAt(document, "info"),
    license: { name: "Proprietary", url: `${publicBaseUrl}/v1/docs#license` }
  },
  servers: [
    {
      url: publicBaseUrl,
      description:
        publicBaseUrl === defaultServerUrl
          ? "A local server (npm start)"
          : "This deployment (PUBLIC_BASE_URL)"
    }
  ]
})

/** The generated document with the edits above, for a service reached at `publicBaseUrl`. */
export const finishDocument = (publicBaseUrl: string, generated: Json): Json => {
  const components = recordAt(generated, "components")
  const schemas = Object.entries(recordAt(components, "schemas")).filter(([name]) => !isPerErrorSchema(name))
  const paths = mapValues(recordAt(generated, "paths"), (item, path) =>
    mapValues(item, (operation, method) => {
      const name = `${method.toUpperCase()} ${path}`
      const edited = withExamples(name, withSharedErrors(withParameters(withHeaders(name, operation))))
      return name === "POST /v1/leads" ? { ...edited, "x-codeSamples": codeSamples(publicBaseUrl) } : edited
    })
  )
  return forDeployment(publicBaseUrl, {
    ...generated,
    paths,
    components: { ...components, schemas: Object.fromEntries(schemas) }
  })
}
