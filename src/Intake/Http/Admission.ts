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
import { fixedMessages } from "../../Api/Errors.ts"
import { bodyProblem, problemsOf } from "../../Api/LeadBody.ts"
import { Limits } from "../../Api/LeadRequest.ts"
import { visiblePrefixOf } from "../../Domain/ApiKey.ts"
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
 * A key that could not be checked (the database away: 503) keeps the prefix that was sent, never
 * its secret, so the request log files the row under that prefix's origin once the database answers.
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
            const token = Redacted.value(credential)
            const sent = { keyPrefix: visiblePrefixOf(token) ?? null, originId: null }
            const checking: CurrentRequestShape = {
              ...request,
              settle: (settlement) => request.settle({ attribution: sent, ...settlement })
            }
            const caller = yield* answered(keys.authenticate(token)).pipe(
              Effect.provideService(CurrentRequest, checking)
            )
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
            // Added over the request's context, not merged: a merge copies the whole context.
            return yield* Effect.updateContext(httpEffect, (context: Context.Context<never>) =>
              context.pipe(Context.add(Caller, caller), Context.add(CurrentRequest, admitted))
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
    : refuse("unsupported_media_type", fixedMessages.unsupported_media_type)

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
