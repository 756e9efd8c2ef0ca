import { Cause, Clock, Effect, Exit, Layer, Option, Redacted, Ref } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiError } from "effect/http-api"
import { Limits } from "../Api/LeadRequest.ts"
import {
  Authentication,
  BodyGuard,
  Caller,
  type ErrorCode,
  errorCatalog,
  errorHeaders,
  isIdempotencyKey,
  isWireError,
  Journal,
  leadHeaderProblem,
  RateLimit,
  RateWindow,
  RequestBody
} from "../Api.ts"
import { KeyCheck } from "../KeyCheck.ts"
import { RequestLog } from "../RequestLog.ts"
import { isJsonMediaType, readBody, tooLarge } from "./Body.ts"
import { attribute, fail, RequestContext, setResponseHeaders, settle } from "./RequestContext.ts"

const unavailable = () =>
  fail("temporarily_unavailable", "The database could not be reached; nothing was written")

/** The Idempotency-Key a request carried, when it is one the request could use. */
const idempotencyKeyOf = (headers: HttpServerRequest.HttpServerRequest["headers"]) => {
  const key = headers["idempotency-key"]
  return headers["x-service-dry-run"] === undefined && key !== undefined && isIdempotencyKey(key) ? key : null
}

/**
 * Records every request in the request log, whatever it ends with, and sends the headers its
 * wire error is declared with; a log failure never changes the answer.
 */
export const layerJournal = Layer.effect(
  Journal,
  Effect.gen(function* () {
    const requestLog = yield* RequestLog
    return Journal.of((httpEffect) =>
      Effect.gen(function* () {
        const context = yield* RequestContext
        const request = yield* HttpServerRequest.HttpServerRequest
        const exit = yield* Effect.exit(httpEffect)
        if (Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)) return yield* exit
        const failure: ErrorCode | null = Exit.isSuccess(exit)
          ? null
          : Option.match(Cause.findErrorOption(exit.cause), {
              onNone: () => "internal_error",
              onSome: (error) => (isWireError(error) ? error.error.code : "internal_error")
            })
        if (failure !== null) {
          yield* setResponseHeaders(errorHeaders(failure))
          yield* settle(failure, null)
        }
        const facts = yield* Ref.get(context.facts)
        yield* requestLog
          .record({
            requestId: context.requestId,
            at: yield* Clock.currentTimeMillis,
            originId: facts.attribution.originId,
            keyPrefix: facts.attribution.keyPrefix,
            status: Exit.isSuccess(exit)
              ? exit.value.status
              : errorCatalog[failure ?? "internal_error"].status,
            outcome: facts.outcome ?? "unknown",
            leadId: facts.leadId,
            idempotencyKey: idempotencyKeyOf(request.headers),
            durationMs: performance.now() - context.startedAt
          })
          .pipe(Effect.catchCause((cause) => Effect.logError("request log write failed", cause)))
        return yield* exit
      })
    )
  })
)

/** Contract order 2: the key, checked and counted in its rate window in one round trip. */
export const layerAuthentication = Layer.effect(
  Authentication,
  Effect.gen(function* () {
    const keys = yield* KeyCheck
    return Authentication.of({
      bearer: (httpEffect, { credential }) =>
        Effect.gen(function* () {
          const token = Redacted.value(credential)
          if (token === "")
            return yield* fail("invalid_key", "Send the API key as Authorization: Bearer <key>")
          const { caller, window } = yield* keys.admit(token).pipe(
            Effect.catchTags({
              KeyRejected: (rejected) =>
                Effect.andThen(
                  attribute({ keyPrefix: rejected.prefix, originId: rejected.originId }),
                  fail("invalid_key", `The API key is ${rejected.reason}`)
                ),
              StoreUnavailable: unavailable
            })
          )
          yield* attribute({ keyPrefix: caller.prefix, originId: caller.originId })
          return yield* httpEffect.pipe(
            Effect.provideService(Caller, caller),
            Effect.provideService(RateWindow, window)
          )
        })
    })
  })
)

/** Contract order 3: the window was counted with the key check; this answers 429 past the limit. */
export const layerRateLimit = Layer.succeed(
  RateLimit,
  RateLimit.of((httpEffect) =>
    Effect.gen(function* () {
      const window = yield* RateWindow
      yield* setResponseHeaders({
        "x-ratelimit-limit": String(window.limit),
        "x-ratelimit-remaining": String(window.remaining),
        "x-ratelimit-reset": String(window.resetAt),
        "ratelimit-policy": `"default";q=${window.limit};w=60`,
        ratelimit: `"default";r=${window.remaining};t=${window.retryAfter}`,
        ...(window.allowed ? {} : { "retry-after": String(window.retryAfter) })
      })
      if (!window.allowed) {
        return yield* fail("rate_limited", `More than ${window.limit} requests this minute for this key`)
      }
      return yield* httpEffect
    })
  )
)

/** Contract order 4-6: media type, size, then the headers, before anything parses the body. */
export const layerBodyGuard = Layer.succeed(
  BodyGuard,
  BodyGuard.of((httpEffect) =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      if (!isJsonMediaType(request.headers["content-type"])) {
        return yield* fail("unsupported_media_type", "Content-Type must be application/json")
      }
      if (Number(request.headers["content-length"] ?? 0) > Limits.bodyBytes) return yield* tooLarge()
      const body = yield* readBody(request)
      return yield* httpEffect.pipe(
        Effect.provideService(RequestBody, body),
        Effect.catchIf(HttpApiError.HttpApiSchemaError.is, (error) => {
          const problem = leadHeaderProblem({
            "x-service-dry-run": request.headers["x-service-dry-run"],
            "idempotency-key": request.headers["idempotency-key"]
          })
          return problem === undefined
            ? Effect.die(error)
            : fail("validation_error", problem.message, problem.field)
        })
      )
    })
  )
)
