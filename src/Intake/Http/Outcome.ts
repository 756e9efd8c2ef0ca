import { Cause, Context, Data, Effect, Exit } from "effect"
import type { KeyRejected } from "../../Accounts/KeyStore.ts"
import {
  type ErrorCode,
  fixedMessages,
  type InternalError,
  type InvalidKey,
  makeWireError,
  type PropertyNotFound,
  type RateLimited,
  type TemporarilyUnavailable,
  type WireErrorOf
} from "../../Api/Errors.ts"
import type { RateWindowShape } from "../../Domain/RateWindow.ts"
import type { Attribution } from "../../Platform/Observability/Request.ts"
import type { OutcomeUnknown, StoreUnavailable } from "../../Platform/Sql/Sql.ts"
import type { IdempotencyConflict, IdempotencyInProgress } from "../LeadIntake.ts"
import type { UnknownProperty } from "../PropertyCatalog.ts"
import type { RateLimitExceeded } from "../RateLimiter.ts"

/** How an answered request ended: its error's code, or what it did to its lead. */
export type Outcome = ErrorCode | "created" | "enriched" | "dry_run" | "replay"

/**
 * What an operation with a request log (`POST /v1/leads`) concluded, handed once to the routing
 * middleware by the step that concludes it: the request log, the metrics and the log line record
 * it, and the response carries its headers (error responses included).
 */
export interface Settlement {
  readonly outcome: Outcome
  readonly attribution?: Attribution
  readonly leadId: string | null
  readonly headers: Readonly<Record<string, string>>
}

/** One request as the routing middleware opened it; the same value for every step that answers it. */
export interface CurrentRequestShape {
  readonly requestId: string
  readonly docsUrl: string
  readonly startedAt: number
  readonly settle: (settlement: Settlement) => Effect.Effect<void>
}

/** Set by the routing middleware for every request; the default only serves code run outside one. */
export const CurrentRequest = Context.Reference<CurrentRequestShape>("lead-intake/CurrentRequest", {
  defaultValue: () => ({ requestId: "", docsUrl: "", startedAt: 0, settle: () => Effect.void })
})

/** A step refused the request on the contract's terms (docs/contract.md#3-order-of-checks). */
export class Refused<Code extends ErrorCode = ErrorCode> extends Data.TaggedError("Refused")<{
  readonly code: Code
  readonly message: string
  readonly field?: string | undefined
}> {}

export const refuse = <const Code extends ErrorCode>(code: Code, message: string, field?: string) =>
  Effect.fail(new Refused({ code, message, field }))

/** Every way a step of the request path fails. */
export type StepFailure =
  | Refused
  | KeyRejected
  | RateLimitExceeded
  | UnknownProperty
  | IdempotencyConflict
  | IdempotencyInProgress
  | StoreUnavailable
  | OutcomeUnknown

/** The wire error each failure is answered with. */
export type WireErrorFor<F extends StepFailure> =
  F extends Refused<infer Code>
    ? WireErrorOf<Code>
    : F extends KeyRejected
      ? InvalidKey
      : F extends RateLimitExceeded
        ? RateLimited
        : F extends UnknownProperty
          ? PropertyNotFound
          : F extends IdempotencyConflict
            ? WireErrorOf<"idempotency_conflict">
            : F extends IdempotencyInProgress
              ? WireErrorOf<"idempotency_in_progress">
              : F extends StoreUnavailable
                ? TemporarilyUnavailable
                : F extends OutcomeUnknown
                  ? InternalError
                  : never

const keyRefusals = {
  missing: "Send the API key as Authorization: Bearer <key>",
  malformed: "The API key is malformed",
  unknown: "The API key is unknown",
  revoked: "The API key is revoked"
} as const

/** The rate-limit headers every answer past the key check carries (docs/contract.md#4-rate-limit). */
export const rateLimitHeaders = (window: RateWindowShape): Record<string, string> => ({
  "x-ratelimit-limit": String(window.limit),
  "x-ratelimit-remaining": String(window.remaining),
  "x-ratelimit-reset": String(window.resetAt),
  "ratelimit-policy": `"default";q=${window.limit};w=60`,
  ratelimit: `"default";r=${window.remaining};t=${window.retryAfter}`,
  ...(window.allowed ? {} : { "retry-after": String(window.retryAfter) })
})

/** How the contract answers a failure, and what the failure tells the request log and the response. */
export interface Refusal {
  readonly code: ErrorCode
  readonly message: string
  readonly field?: string | undefined
  /** A refused key's origin, when its prefix named one. */
  readonly attribution?: Attribution
  /** A spent window's headers. */
  readonly headers?: Readonly<Record<string, string>>
}

/** The one place a step's failure becomes the contract's answer. */
export const refusalOf = (failure: StepFailure): Refusal => {
  switch (failure._tag) {
    case "Refused":
      return failure
    case "KeyRejected":
      return {
        code: "invalid_key",
        message: keyRefusals[failure.reason],
        attribution: { keyPrefix: failure.prefix, originId: failure.originId }
      }
    case "RateLimitExceeded":
      return {
        code: "rate_limited",
        message: `More than ${failure.window.limit} requests this minute for this key`,
        headers: rateLimitHeaders(failure.window)
      }
    case "UnknownProperty":
      return { code: "property_not_found", message: failure.message, field: failure.field }
    case "IdempotencyConflict":
      return { code: "idempotency_conflict", message: fixedMessages.idempotency_conflict }
    case "IdempotencyInProgress":
      return { code: "idempotency_in_progress", message: fixedMessages.idempotency_in_progress }
    case "StoreUnavailable":
      return {
        code: "temporarily_unavailable",
        message: fixedMessages.temporarily_unavailable
      }
    case "OutcomeUnknown":
      return {
        code: "internal_error",
        message:
          "The database stopped answering after the write was sent; retry with the same Idempotency-Key"
      }
  }
}

/** The wire error for `code`, in the envelope, with this request's id. */
export const wireError = <const Code extends ErrorCode>(
  request: Pick<CurrentRequestShape, "requestId" | "docsUrl">,
  code: Code,
  message: string,
  field?: string
) =>
  makeWireError({
    error: {
      code,
      message,
      ...(field === undefined ? {} : { field }),
      docs_url: `${request.docsUrl}#${code}`
    },
    request_id: request.requestId
  })

export const toWireError = <F extends StepFailure>(
  request: Pick<CurrentRequestShape, "requestId" | "docsUrl">,
  failure: F
): WireErrorFor<F> => {
  const refusal = refusalOf(failure)
  return wireError(request, refusal.code, refusal.message, refusal.field) as WireErrorFor<F>
}

/**
 * A step's failures, answered as the contract's errors: the step that fails concludes the request,
 * so it settles it (an operation without a request log has nothing to settle with).
 */
export const answered = <A, F extends StepFailure, R>(
  self: Effect.Effect<A, F, R>
): Effect.Effect<A, WireErrorFor<F>, R> =>
  Effect.catch(self, (failure) =>
    Effect.flatMap(Effect.service(CurrentRequest), (request) => {
      const refusal = refusalOf(failure)
      return Effect.andThen(
        request.settle({
          outcome: refusal.code,
          leadId: null,
          headers: refusal.headers ?? {},
          ...(refusal.attribution === undefined ? {} : { attribution: refusal.attribution })
        }),
        Effect.fail(toWireError(request, failure))
      )
    })
  )

/** A defect settles the request as the last-resort 500, unless a step settled it first. */
export const settledOnDefect =
  (request: CurrentRequestShape) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.onExit(self, (exit) =>
      Exit.isFailure(exit) && Cause.hasDies(exit.cause)
        ? request.settle({ outcome: "internal_error", leadId: null, headers: {} })
        : Effect.void
    )
