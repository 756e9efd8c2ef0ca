import { Cause, Clock, Duration, Effect, Exit, Option } from "effect"
import { HttpRouter, HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import { isIdempotencyKey } from "../../Api/Api.ts"
import { errorCatalog, errorHeaders, isErrorCode, isWireError, type WireError } from "../../Api/Errors.ts"
import { routeTable } from "../../Api/Routes.ts"
import { isLivePrefix } from "../../Domain/ApiKey.ts"
import { AppConfig } from "../../Platform/Config.ts"
import { observeRequest, reportDefect } from "../../Platform/Observability/Request.ts"
import { AnswerBy, answerWithin } from "../../Platform/Sql.ts"
import { RequestLog } from "../RequestLog.ts"
import {
  addResponseHeaders,
  makeRequestContext,
  RequestContext,
  type RequestContextShape,
  wireError
} from "./RequestContext.ts"

const answerWithinMillis = Duration.toMillis(answerWithin)

const pathOf = (url: string) => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}

const isRouteNotFound = (cause: Cause.Cause<unknown>) =>
  cause.reasons.some(
    (reason) =>
      Cause.isFailReason(reason) &&
      HttpServerError.isHttpServerError(reason.error) &&
      reason.error.reason._tag === "RouteNotFound"
  )

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

/**
 * Wraps routing for every request: a fresh `X-Request-Id`, the contract's 404 and 405, a
 * last-resort 500 that records the defect but shows nothing of it to the caller; then, whatever the
 * answer, the headers its steps set (rate window, `Retry-After`, `WWW-Authenticate`), the metrics,
 * the span attributes and the log line, and for `POST /v1/leads` its row in the request log (a
 * log failure never changes the answer).
 */
export const layerGlobalMiddleware = HttpRouter.middleware(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const requestLog = yield* RequestLog
    const docsUrl = `${config.publicBaseUrl}/v1/docs`

    const journal = (
      request: HttpServerRequest.HttpServerRequest,
      context: RequestContextShape,
      status: number
    ) =>
      Clock.currentTimeMillis.pipe(
        Effect.flatMap((at) =>
          requestLog.record({
            requestId: context.requestId,
            at,
            originId: context.attribution.originId,
            keyPrefix: context.attribution.keyPrefix,
            status,
            outcome: context.outcome ?? "unknown",
            leadId: context.leadId,
            idempotencyKey: idempotencyKeyOf(request.headers),
            durationMs: performance.now() - context.startedAt,
            livemode: isLivePrefix(context.attribution.keyPrefix)
          })
        ),
        Effect.catchCause((cause) => Effect.logError("request log write failed", cause))
      )

    return (httpEffect) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const context = makeRequestContext(docsUrl)
        const path = pathOf(request.url)
        const allowed = routeTable.get(path)

        // The router also matches `/v1/`, `//v1` and `/V1`; the contract serves its exact paths only.
        const exit: Exit.Exit<HttpServerResponse.HttpServerResponse, unknown> =
          allowed === undefined
            ? Exit.fail(wireError(context, "not_found", `No route ${path}`))
            : yield* Effect.exit(
                httpEffect.pipe(
                  Effect.provideService(RequestContext, context),
                  Effect.provideService(AnswerBy, context.startedAt + answerWithinMillis)
                )
              )
        if (Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)) return yield* exit
        const response = Exit.isSuccess(exit) ? exit.value : yield* outsideHttpApi(exit.cause)
        yield* observeRequest(request, {
          requestId: context.requestId,
          startedAt: context.startedAt,
          route: allowed === undefined ? null : path,
          status: response.status,
          outcome: context.outcome ?? (response.status >= 400 ? "error" : "ok"),
          attribution: context.attribution,
          leadId: response.status >= 400 ? null : context.leadId
        })
        if (path === "/v1/leads" && request.method === "POST")
          yield* journal(request, context, response.status)
        return HttpServerResponse.setHeaders(response, {
          "x-request-id": context.requestId,
          ...context.headers,
          ...(context.outcome !== null && isErrorCode(context.outcome) ? errorHeaders(context.outcome) : {})
        })

        /** 404, 405 and the last-resort 500: the failures HttpApi leaves to the router. */
        function outsideHttpApi(cause: Cause.Cause<unknown>) {
          return Effect.gen(function* () {
            const failure = Cause.findErrorOption(cause)
            let error: WireError
            if (Option.isSome(failure) && isWireError(failure.value)) {
              error = failure.value
            } else if (allowed !== undefined && isRouteNotFound(cause)) {
              error = wireError(context, "method_not_allowed", `${request.method} is not allowed here`)
              addResponseHeaders(context, { allow: allowed.join(", ") })
            } else {
              yield* reportDefect(cause)
              error = wireError(context, "internal_error", "An unexpected error occurred")
            }
            context.outcome = error.error.code
            context.leadId = null
            return errorResponse(error)
          })
        }
      })
  }),
  { global: true }
)
