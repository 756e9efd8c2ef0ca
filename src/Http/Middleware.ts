import { Cause, Clock, Context, Effect, Exit, Layer, Option, Redacted, Ref } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiError } from "effect/http-api"
import { Limits } from "../Api/LeadRequest.ts"
import {
  Admission,
  Caller,
  type ErrorCode,
  errorCatalog,
  errorHeaders,
  isIdempotencyKey,
  isWireError,
  Journal,
  leadHeaderProblem,
  type RateWindowShape,
  ValidLead
} from "../Api.ts"
import { requestFingerprint } from "../Domain/Fingerprint.ts"
import { decodeLeadInput } from "../Domain/LeadRequest.ts"
import { KeyCheck, type KeyRejected } from "../KeyCheck.ts"
import { type AcceptError, type Accepted, admitOnly, type Draft, LeadIntake } from "../LeadIntake.ts"
import { step } from "../Observability/Steps.ts"
import { RequestLog } from "../RequestLog.ts"
import type { OutcomeUnknown } from "../Sql.ts"
import { isJsonMediaType, readBody, readJson, tooLarge } from "./Body.ts"
import { type Handoff, handoffOf } from "./Handoff.ts"
import { attribute, fail, RequestContext, setResponseHeaders, settle } from "./RequestContext.ts"

const unavailable = () =>
  fail("temporarily_unavailable", "The database could not be reached; nothing was written")

/** 500, as the contract says: the write may have been saved, a retry with the same Idempotency-Key tells. */
const outcomeUnknown = (error: OutcomeUnknown) => Effect.die(error)

/** What a 401 for a refused key says, whichever path answers it. */
export const refusedKeyMessage = (rejected: KeyRejected) => `The API key is ${rejected.reason}`

/** The Idempotency-Key a request carried, when it is one the request could use. */
export const idempotencyKeyOf = (headers: Readonly<Record<string, string | undefined>>) => {
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

/** What steps 9-11 of a write answered, in the admission's round trip; `undefined` for a dry run. */
export const Written = Context.Reference<Exit.Exit<Accepted, AcceptError> | undefined>(
  "lead-intake/Written",
  {
    defaultValue: () => undefined
  }
)

/** The rate-limit headers every answer past the key check carries. */
export const rateLimitHeaders = (window: RateWindowShape): Record<string, string> => ({
  "x-ratelimit-limit": String(window.limit),
  "x-ratelimit-remaining": String(window.remaining),
  "x-ratelimit-reset": String(window.resetAt),
  "ratelimit-policy": `"default";q=${window.limit};w=60`,
  ratelimit: `"default";r=${window.remaining};t=${window.retryAfter}`,
  ...(window.allowed ? {} : { "retry-after": String(window.retryAfter) })
})

/** Contract order 3: the window was counted with the key check; this answers 429 past the limit. */
const limit = (window: RateWindowShape) =>
  Effect.gen(function* () {
    yield* setResponseHeaders(rateLimitHeaders(window))
    if (!window.allowed) {
      return yield* fail("rate_limited", `More than ${window.limit} requests this minute for this key`)
    }
  })

/**
 * Contract order 2-7, answered in that order. The checks that need no database (4-7) run first
 * and keep their answer, so that a write that passes them all is admitted, counted and written in
 * one round trip (`LeadIntake.admitAndAccept`); any other request takes the key check alone.
 */
export const layerAdmission = Layer.effect(
  Admission,
  Effect.gen(function* () {
    const keys = yield* KeyCheck
    const intake = yield* LeadIntake
    const fn = yield* step

    /** Contract order 7, the fields: the first that fails answers, with its name. */
    const validate = fn("LeadRequest.validate")(function* (parsed: unknown) {
      const result = decodeLeadInput(parsed)
      if (result.ok) return result.value
      yield* Effect.annotateCurrentSpan({ "validation.field": result.problem.field })
      return yield* fail("validation_error", result.problem.message, result.problem.field)
    })

    /** Contract order 4-7: media type, size, then the headers, then the body. */
    const check = Effect.fnUntraced(function* (
      request: HttpServerRequest.HttpServerRequest,
      handoff: Handoff | undefined
    ) {
      const { headers } = request
      if (!isJsonMediaType(headers["content-type"])) {
        return yield* fail("unsupported_media_type", "Content-Type must be application/json")
      }
      if (Number(headers["content-length"] ?? 0) > Limits.bodyBytes) return yield* tooLarge()
      const body = handoff === undefined ? yield* readBody(request) : handoff.body
      if (body.length > Limits.bodyBytes) return yield* tooLarge()
      const problem = leadHeaderProblem({
        "x-service-dry-run": headers["x-service-dry-run"],
        "idempotency-key": headers["idempotency-key"]
      })
      if (problem !== undefined) return yield* fail("validation_error", problem.message, problem.field)
      const parsed = yield* readJson(body)
      return { parsed, input: yield* validate(parsed) }
    })

    /**
     * Contract order 2: the key, counted in its rate window; with a write, steps 9-11 as well (or
     * what the direct create's round trip already answered for them).
     */
    const admit = Effect.fnUntraced(function* (
      token: string,
      write: Draft | undefined,
      handoff: Handoff | undefined
    ) {
      if (token === "") return yield* fail("invalid_key", "Send the API key as Authorization: Bearer <key>")
      const admission = yield* (
        handoff?.admission ??
        (write === undefined ? admitOnly(keys, token) : intake.admitAndAccept(token, write))
      ).pipe(
        Effect.catchTags({
          KeyRejected: (rejected) =>
            Effect.andThen(
              attribute({ keyPrefix: rejected.prefix, originId: rejected.originId }),
              fail("invalid_key", refusedKeyMessage(rejected))
            ),
          StoreUnavailable: unavailable,
          OutcomeUnknown: outcomeUnknown
        })
      )
      yield* attribute({ keyPrefix: admission.caller.prefix, originId: admission.caller.originId })
      return admission
    })

    return Admission.of({
      bearer: (httpEffect, { credential }) =>
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const { requestId } = yield* RequestContext
          const handoff = handoffOf(request)
          const checked = yield* Effect.exit(check(request, handoff))
          const key = request.headers["idempotency-key"]
          const write =
            Exit.isSuccess(checked) && request.headers["x-service-dry-run"] === undefined
              ? {
                  input: checked.value.input,
                  requestId,
                  idempotency:
                    key === undefined ? null : { key, fingerprint: requestFingerprint(checked.value.parsed) }
                }
              : undefined
          const { caller, window, accepted } = yield* admit(Redacted.value(credential), write, handoff)
          yield* limit(window)
          const { input } = yield* checked
          return yield* httpEffect.pipe(
            Effect.provideService(Caller, caller),
            Effect.provideService(ValidLead, input),
            Effect.provideService(Written, accepted),
            // Step 6 checked the headers by the rules their schema declares: it cannot refuse them.
            Effect.catchIf(HttpApiError.HttpApiSchemaError.is, (error) => Effect.die(error))
          )
        })
    })
  })
)
