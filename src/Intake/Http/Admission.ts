import { isUtf8 } from "node:buffer"
import {
  ByteSize,
  Cause,
  Effect,
  Exit,
  Layer,
  Option,
  Redacted,
  Schema,
  type SchemaAST,
  type SchemaIssue,
  type Types
} from "effect"
import { HttpIncomingMessage, HttpServerError, HttpServerRequest } from "effect/http"
import { HttpApiError } from "effect/http-api"
import { KeyStore } from "../../Accounts/KeyStore.ts"
import {
  Admission,
  Caller,
  type CallerShape,
  Decoding,
  LeadHeaders,
  leadHeaderNames,
  type ValidationError
} from "../../Api/Api.ts"
import { fieldAt, Limits, rankOf } from "../../Api/LeadRequest.ts"
import type { RateWindowShape } from "../../Domain/RateWindow.ts"
import { RateLimiter } from "../RateLimiter.ts"
import { addResponseHeaders, fail, RequestContext, type RequestContextShape } from "./RequestContext.ts"

/** The rate-limit headers every answer past the key check carries (docs/contract.md#4-rate-limit). */
export const rateLimitHeaders = (window: RateWindowShape): Record<string, string> => ({
  "x-ratelimit-limit": String(window.limit),
  "x-ratelimit-remaining": String(window.remaining),
  "x-ratelimit-reset": String(window.resetAt),
  "ratelimit-policy": `"default";q=${window.limit};w=60`,
  ratelimit: `"default";r=${window.remaining};t=${window.retryAfter}`,
  ...(window.allowed ? {} : { "retry-after": String(window.retryAfter) })
})

export const unavailable = () =>
  fail("temporarily_unavailable", "The database could not be reached; nothing was written")

const isJsonMediaType = (contentType: string | undefined) =>
  contentType?.split(";")[0]?.trim().toLowerCase() === "application/json"

const tooLarge = () => fail("payload_too_large", `The body is over ${Limits.bodyBytes} bytes`)

const describe = (ast: SchemaAST.AST): string => {
  switch (ast._tag) {
    case "String":
      return "a string"
    case "Number":
      return "a number"
    case "Boolean":
      return "a boolean"
    case "Null":
      return "null"
    case "Objects":
      return "an object"
    case "Literal":
      return JSON.stringify(ast.literal)
    case "Union":
      return ast.types.map(describe).join(" or ")
    default:
      return "of another type"
  }
}

interface Problem {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

const annotatedMessage = (annotations: { readonly message?: unknown } | undefined) =>
  typeof annotations?.message === "string" ? annotations.message : undefined

/**
 * Every leaf of a decoding issue with its path. Messages name what was expected, never the value
 * sent (it may be long, or personal data); a rule's own message wins over its leaves'.
 */
const problemsOf = (
  issue: SchemaIssue.Issue,
  path: ReadonlyArray<PropertyKey>,
  message?: string
): Array<Problem> => {
  switch (issue._tag) {
    case "Filter":
      return problemsOf(issue.issue, path, message ?? annotatedMessage(issue.filter.annotations))
    case "Encoding":
      return problemsOf(issue.issue, path, message)
    case "Pointer":
      return problemsOf(issue.issue, [...path, ...issue.path], message)
    case "Composite":
    case "AnyOf":
      if (issue.issues.length > 0) return issue.issues.flatMap((inner) => problemsOf(inner, path, message))
      return [
        {
          path,
          message: message ?? annotatedMessage(issue.ast.annotations) ?? `must be ${describe(issue.ast)}`
        }
      ]
    case "MissingKey":
      return [{ path, message: message ?? "is required" }]
    case "UnexpectedKey":
      return [{ path, message: message ?? "is not a field of this object" }]
    case "InvalidType":
      return [
        {
          path,
          message: message ?? annotatedMessage(issue.ast.annotations) ?? `must be ${describe(issue.ast)}`
        }
      ]
    case "InvalidValue":
      return [{ path, message: message ?? annotatedMessage(issue.annotations) ?? "is not valid" }]
    default:
      return [{ path, message: message ?? "is not valid" }]
  }
}

/** Contract order 7: the body's first failing field in the contract's order (the body itself first). */
const bodyProblem = (issue: SchemaIssue.Issue) => {
  let first: Problem | undefined
  for (const problem of problemsOf(issue, [])) {
    if (first === undefined || rankOf(problem.path) < rankOf(first.path)) first = problem
  }
  if (first !== undefined && first.path.length > 0) {
    const field = fieldAt(first.path)
    return { field, message: `${field} ${first.message}` }
  }
  return {
    field: "body",
    message: issue._tag === "InvalidValue" ? "The body is not valid JSON" : "The body must be a JSON object"
  }
}

/** Contract order 6: the first failing header, by its name on the wire. */
const headerProblem = (issue: SchemaIssue.Issue) => {
  const [first] = problemsOf(issue, [])
  const header = leadHeaderNames[String(first?.path[0]) as keyof typeof leadHeaderNames] ?? "headers"
  return { field: header, message: `${header} ${first?.message ?? "is not valid"}` }
}

const decodeHeaders = Schema.decodeUnknownExit(LeadHeaders)

const refusals = {
  missing: "Send the API key as Authorization: Bearer <key>",
  malformed: "The API key is malformed",
  unknown: "The API key is unknown",
  revoked: "The API key is revoked"
} as const

/** Contract order 2-3 of `POST /v1/leads`, each a named step: the key, then the rate window. */
export const layerAdmission = Layer.effect(
  Admission,
  Effect.gen(function* () {
    const keys = yield* KeyStore
    const limiter = yield* RateLimiter

    /** 2. The key names the caller; a refused key is still attributed in the request log. */
    const authenticate = Effect.fnUntraced(function* (context: RequestContextShape, token: string) {
      const caller = yield* keys.authenticate(token).pipe(
        Effect.catchTags({
          KeyRejected: (rejected) => {
            context.attribution = { keyPrefix: rejected.prefix, originId: rejected.originId }
            return fail("invalid_key", refusals[rejected.reason])
          },
          StoreUnavailable: unavailable
        })
      )
      context.attribution = { keyPrefix: caller.prefix, originId: caller.originId }
      return caller
    })

    /** 3. The request counts in its origin's window; past the limit, 429. */
    const limit = Effect.fnUntraced(function* (context: RequestContextShape, caller: CallerShape) {
      const window = yield* limiter.consume(caller).pipe(
        Effect.catchTags({
          RateLimitExceeded: ({ window }) => {
            addResponseHeaders(context, rateLimitHeaders(window))
            return fail("rate_limited", `More than ${window.limit} requests this minute for this key`)
          },
          StoreUnavailable: unavailable
        })
      )
      addResponseHeaders(context, rateLimitHeaders(window))
    })

    return Admission.of({
      bearer: (httpEffect, { credential }) =>
        Effect.gen(function* () {
          const context = yield* RequestContext
          const caller = yield* authenticate(context, Redacted.value(credential))
          yield* limit(context, caller)
          return yield* Effect.provideService(httpEffect, Caller, caller)
        })
    })
  })
)

/** 4. */
const requireJson = (request: HttpServerRequest.HttpServerRequest) =>
  isJsonMediaType(request.headers["content-type"])
    ? Effect.void
    : fail("unsupported_media_type", "Content-Type must be application/json")

const isBodyTooLarge = (error: unknown) =>
  HttpServerError.isHttpServerError(error) &&
  error.reason._tag === "RequestParseError" &&
  error.reason.reason === "BodyTooLarge"

const invalidHeaders = (issue: SchemaIssue.Issue) => {
  const problem = headerProblem(issue)
  return fail("validation_error", problem.message, problem.field)
}

/**
 * 5. By `Content-Length`, then while reading: the body is read here, bounded, and the endpoint
 * decodes the same bytes. Bytes that are not UTF-8 are refused once the headers had their say (6).
 */
const readBody = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function* () {
    if (Number(request.headers["content-length"] ?? 0) > Limits.bodyBytes) return yield* tooLarge()
    const body = yield* request.arrayBuffer.pipe(
      Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(Limits.bodyBytes)),
      Effect.catchIf(isBodyTooLarge, () => Effect.succeed(undefined)),
      Effect.orDie
    )
    if (body === undefined) return yield* tooLarge()
    if (isUtf8(body)) return
    const headers = decodeHeaders(request.headers)
    if (Exit.isFailure(headers)) {
      const error = Cause.findErrorOption(headers.cause)
      if (Option.isSome(error)) return yield* invalidHeaders(error.value.issue)
    }
    return yield* fail("validation_error", "The body is not valid UTF-8", "body")
  })

/** 6-7, decoded by HttpApi with the endpoint's schemas: their failures become the contract's 400. */
const invalid = (error: HttpApiError.HttpApiSchemaError) => {
  const problem = error.kind === "Headers" ? headerProblem(error.cause.issue) : bodyProblem(error.cause.issue)
  return Effect.andThen(
    Effect.annotateCurrentSpan({ "validation.field": problem.field }),
    fail("validation_error", problem.message, problem.field)
  )
}

export const layerDecoding = Layer.succeed(Decoding, (httpEffect) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    yield* requireJson(request)
    yield* readBody(request)
    return yield* httpEffect.pipe(
      Effect.catch(
        (error): Effect.Effect<never, Types.unhandled | ValidationError> =>
          HttpApiError.HttpApiSchemaError.is(error) ? invalid(error) : Effect.fail(error)
      )
    )
  })
)
