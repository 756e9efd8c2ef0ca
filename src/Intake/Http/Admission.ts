import { isUtf8 } from "node:buffer"
import {
  ByteSize,
  Cause,
  Context,
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
  Decoding,
  LeadHeaders,
  leadHeaderNames,
  type ValidationError
} from "../../Api/Api.ts"
import { fieldAt, Limits, rankOf } from "../../Api/LeadRequest.ts"
import { RateLimiter } from "../RateLimiter.ts"
import {
  answered,
  CurrentRequest,
  type CurrentRequestShape,
  rateLimitHeaders,
  refuse,
  settledOnDefect
} from "./Outcome.ts"

const isJsonMediaType = (contentType: string | undefined) =>
  contentType?.split(";")[0]?.trim().toLowerCase() === "application/json"

const tooLarge = () => refuse("payload_too_large", `The body is over ${Limits.bodyBytes} bytes`)

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

/**
 * Contract order 2-3 of `POST /v1/leads`, each a named step: the key names the caller (a refused
 * key is still attributed in the request log), then the request counts in its origin's window (past
 * the limit, 429). Every answer past the key check is attributed and carries the window's headers.
 */
export const layerAdmission = Layer.effect(
  Admission,
  Effect.gen(function* () {
    const keys = yield* KeyStore
    const limiter = yield* RateLimiter

    return Admission.of({
      bearer: (httpEffect, { credential }) =>
        Effect.flatMap(Effect.service(CurrentRequest), (request) =>
          Effect.gen(function* () {
            const caller = yield* answered(keys.authenticate(Redacted.value(credential)))
            const attribution = { keyPrefix: caller.prefix, originId: caller.originId }
            const attributed: CurrentRequestShape = {
              ...request,
              settle: (settlement) => request.settle({ ...settlement, attribution })
            }
            const window = yield* answered(limiter.consume(caller)).pipe(
              Effect.provideService(CurrentRequest, attributed)
            )
            const headers = rateLimitHeaders(window)
            const admitted: CurrentRequestShape = {
              ...request,
              settle: (settlement) =>
                request.settle({ ...settlement, attribution, headers: { ...headers, ...settlement.headers } })
            }
            return yield* Effect.updateContext(httpEffect, (context: Context.Context<never>) =>
              Context.merge(context, Context.make(Caller, caller).pipe(Context.add(CurrentRequest, admitted)))
            ).pipe(settledOnDefect(admitted))
          }).pipe(settledOnDefect(request))
        )
    })
  })
)

/** 4. */
const requireJson = (request: HttpServerRequest.HttpServerRequest) =>
  isJsonMediaType(request.headers["content-type"])
    ? Effect.void
    : refuse("unsupported_media_type", "Content-Type must be application/json")

const isBodyTooLarge = (error: unknown) =>
  HttpServerError.isHttpServerError(error) &&
  error.reason._tag === "RequestParseError" &&
  error.reason.reason === "BodyTooLarge"

const invalidHeaders = (issue: SchemaIssue.Issue) => {
  const problem = headerProblem(issue)
  return refuse("validation_error", problem.message, problem.field)
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
    return yield* refuse("validation_error", "The body is not valid UTF-8", "body")
  })

/** 6-7, decoded by HttpApi with the endpoint's schemas: their failures become the contract's 400. */
const invalid = (error: HttpApiError.HttpApiSchemaError) => {
  const problem = error.kind === "Headers" ? headerProblem(error.cause.issue) : bodyProblem(error.cause.issue)
  return Effect.andThen(
    Effect.annotateCurrentSpan({ "validation.field": problem.field }),
    refuse("validation_error", problem.message, problem.field)
  )
}

export const layerDecoding = Layer.succeed(Decoding, (httpEffect) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    yield* answered(requireJson(request))
    yield* answered(readBody(request))
    return yield* httpEffect.pipe(
      Effect.catch(
        (error): Effect.Effect<never, Types.unhandled | ValidationError> =>
          HttpApiError.HttpApiSchemaError.is(error) ? answered(invalid(error)) : Effect.fail(error)
      )
    )
  })
)
