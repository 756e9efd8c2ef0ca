import { isUtf8 } from "node:buffer"
import { ByteSize, Cause, Clock, Context, Deferred, Duration, Effect, Exit, Option, Record } from "effect"
import { HttpIncomingMessage, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { isIdempotencyKey } from "../../Api/Api.ts"
import {
  type ErrorCode,
  errorCatalog,
  errorHeaders,
  fixedMessages,
  isErrorCode,
  isWireError,
  type WireError
} from "../../Api/Errors.ts"
import { Limits } from "../../Api/LeadRequest.ts"
import { routeTable } from "../../Api/Routes.ts"
import { isLivePrefix } from "../../Domain/ApiKey.ts"
import { AppConfig } from "../../Platform/Config.ts"
import { makeRequestObserver, reportDefect, unattributed } from "../../Platform/Observability/Request.ts"
import { isRouteNotFound } from "../../Platform/RouteNotFound.ts"
import { AnswerBy, answerWithin } from "../../Platform/Sql/Sql.ts"
import { RequestLog } from "../RequestLog.ts"
import { CurrentRequest, type CurrentRequestShape, type Settlement, wireError } from "./Outcome.ts"

const answerWithinMillis = Duration.toMillis(answerWithin)

export const pathOf = (url: string) => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}

/** The response for a wire error answered outside HttpApi (404, 405, the last-resort 500). */
const errorResponse = (error: WireError) =>
  HttpServerResponse.jsonUnsafe(
    { error: error.error, request_id: error.request_id },
    { status: errorCatalog[error.error.code].status }
  )

/** The Idempotency-Key a write carried, when it is one the request could use (a dry run uses none). */
const idempotencyKeyOf = (headers: Readonly<Record<string, string | undefined>>) => {
  const key = headers["idempotency-key"]
  return headers["x-service-dry-run"] === undefined && key !== undefined && isIdempotencyKey(key) ? key : null
}

/** The answers whose body is kept for rescue (docs/contract.md#11-rejected-leads-are-kept-for-rescue). */
const keptOutcomes: ReadonlySet<string> = new Set(["validation_error", "property_not_found"])

/**
 * The body of an authenticated write refused as invalid, as received, to keep for rescue; nothing
 * for other answers or a dry run. Only such an answer reads it again (the bytes the request already
 * read, cached by the request): a success does no work here. Bytes that are not UTF-8, and text with
 * NUL (which PostgreSQL's text cannot hold), are not kept.
 */
const keptBodyOf = (request: HttpServerRequest.HttpServerRequest, settlement: Settlement) => {
  if (
    settlement.attribution?.originId == null ||
    request.method !== "POST" ||
    request.headers["x-service-dry-run"] !== undefined
  )
    return Effect.succeed(undefined)
  return request.arrayBuffer.pipe(
    Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(Limits.bodyBytes)),
    Effect.map((bytes) => {
      if (bytes.byteLength > Limits.bodyBytes || !isUtf8(bytes)) return undefined
      const text = new TextDecoder().decode(bytes)
      return text.includes("\u0000") ? undefined : text
    }),
    Effect.orElseSucceed(() => undefined)
  )
}

/**
 * Wraps routing for every request: a fresh `X-Request-Id`, the contract's 404 and 405, a
 * last-resort 500 that records the defect but shows nothing of it to the caller; then, whatever the
 * answer, the metrics, the span attributes and the log line. An operation with a request log
 * (`POST /v1/leads`) settles its request: what it settled (outcome, attribution, lead, headers such
 * as the rate window or `Retry-After`) is recorded, with its row in the request log (a log failure
 * never changes the answer), and its headers are added to the response, error responses included.
 */
export const layerGlobalMiddleware = HttpRouter.middleware(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const requestLog = yield* RequestLog
    const observeRequest = yield* makeRequestObserver
    const docsUrl = `${config.publicBaseUrl}/v1/docs`

    const journal = (
      request: HttpServerRequest.HttpServerRequest,
      current: CurrentRequestShape,
      settlement: Settlement,
      status: number
    ) =>
      Clock.currentTimeMillis.pipe(
        Effect.flatMap((at) => {
          const attribution = settlement.attribution ?? unattributed
          const row = {
            requestId: current.requestId,
            at,
            originId: attribution.originId,
            keyPrefix: attribution.keyPrefix,
            status,
            outcome: settlement.outcome,
            leadId: status >= 400 ? null : settlement.leadId,
            idempotencyKey: idempotencyKeyOf(request.headers),
            durationMs: performance.now() - current.startedAt,
            livemode: isLivePrefix(attribution.keyPrefix)
          }
          return keptOutcomes.has(settlement.outcome)
            ? Effect.flatMap(keptBodyOf(request, settlement), (keptBody) => requestLog.record(row, keptBody))
            : requestLog.record(row)
        }),
        Effect.catchCause((cause) => Effect.logError("request log write failed", cause))
      )

    return (httpEffect) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const settled = yield* Deferred.make<Settlement>()
        const current: CurrentRequestShape = {
          requestId: crypto.randomUUID(),
          docsUrl,
          startedAt: performance.now(),
          settle: (settlement) => Effect.asVoid(Deferred.succeed(settled, settlement))
        }
        const path = pathOf(request.url)
        const allowed = routeTable.get(path)

        // The router also matches `/v1/`, `//v1` and `/V1`; the contract serves its exact paths only.
        const exit: Exit.Exit<HttpServerResponse.HttpServerResponse, unknown> =
          allowed === undefined
            ? Exit.fail(wireError(current, "not_found", `No route ${path}`))
            : yield* Effect.exit(
                // Added, not merged: `Context.add` layers the two over the request's context, where
                // `Context.merge` (or `provideContext`) copies the whole context first.
                Effect.updateContext(httpEffect, (context: Context.Context<never>) =>
                  context.pipe(
                    Context.add(CurrentRequest, current),
                    Context.add(AnswerBy, current.startedAt + answerWithinMillis)
                  )
                )
              )
        if (Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)) return yield* exit
        const settledWith = yield* Deferred.poll(settled)
        const settlement = Option.isSome(settledWith) ? yield* settledWith.value : undefined
        let response: HttpServerResponse.HttpServerResponse
        let outcome: string
        let headers: Readonly<Record<string, string>> = settlement?.headers ?? {}
        if (Exit.isSuccess(exit)) {
          response = exit.value
          outcome = settlement?.outcome ?? (response.status >= 400 ? "error" : "ok")
        } else {
          const error = yield* outsideHttpApi(exit.cause)
          response = errorResponse(error)
          outcome = error.error.code
          if (error.error.code === "method_not_allowed" && allowed !== undefined)
            headers = { ...headers, allow: allowed.join(", ") }
        }
        const failed = isErrorCode(outcome)
        const attribution = settlement?.attribution ?? unattributed
        yield* observeRequest(request, {
          requestId: current.requestId,
          startedAt: current.startedAt,
          route: allowed === undefined ? null : path,
          status: response.status,
          outcome,
          failed,
          attribution,
          leadId: response.status >= 400 ? null : (settlement?.leadId ?? null)
        })
        if (settlement !== undefined)
          yield* journal(
            request,
            current,
            { ...settlement, outcome: outcome as Settlement["outcome"] },
            response.status
          )
        const identified = HttpServerResponse.setHeader(response, "x-request-id", current.requestId)
        const added = failed ? { ...headers, ...errorHeaders(outcome as ErrorCode) } : headers
        // Most answers add nothing else, and `setHeaders` costs a copy of its input and of the headers.
        return Record.isEmptyRecord(added) ? identified : HttpServerResponse.setHeaders(identified, added)

        /** 404, 405 and the last-resort 500: the failures HttpApi leaves to the router. */
        function outsideHttpApi(cause: Cause.Cause<unknown>) {
          return Effect.gen(function* () {
            const failure = Cause.findErrorOption(cause)
            if (Option.isSome(failure) && isWireError(failure.value)) return failure.value
            if (allowed !== undefined && isRouteNotFound(cause))
              return wireError(current, "method_not_allowed", `${request.method} is not allowed here`)
            yield* reportDefect(cause)
            return wireError(current, "internal_error", fixedMessages.internal_error)
          })
        }
      })
  }),
  { global: true }
)
