import { Cause, Duration, Effect, Exit, Ref } from "effect"
import { HttpRouter, HttpServerError, HttpServerRequest, type HttpServerResponse } from "effect/http"
import { routeTable } from "../Api/Routes.ts"
import type { WireError } from "../Api.ts"
import { AppConfig } from "../Config.ts"
import { observeRequest, reportDefect } from "../Observability/Request.ts"
import { AnswerBy, answerWithin } from "../Sql.ts"
import { handoffOf } from "./Handoff.ts"
import { errorResponse, RequestContext, setResponseHeaders, unsettled, wireError } from "./RequestContext.ts"

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

/**
 * Wraps routing for every request: a fresh `X-Request-Id`, the contract's 404 and 405, a
 * last-resort 500 that records the defect but shows nothing of it to the caller, and the
 * request's metrics, span attributes and log line.
 */
export const layerGlobalMiddleware = HttpRouter.middleware(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const docsUrl = `${config.publicBaseUrl}/v1/docs`
    return (httpEffect) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const handoff = handoffOf(request)
        const context = {
          requestId: handoff?.requestId ?? crypto.randomUUID(),
          docsUrl,
          startedAt: handoff?.startedAt ?? performance.now(),
          facts: yield* Ref.make(unsettled)
        }
        yield* setResponseHeaders({ "x-request-id": context.requestId })
        const path = pathOf(request.url)
        const allowed = routeTable.get(path)

        const answer = (response: HttpServerResponse.HttpServerResponse, failure?: WireError) =>
          Effect.gen(function* () {
            const facts = yield* Ref.get(context.facts)
            yield* observeRequest(request, {
              requestId: context.requestId,
              startedAt: context.startedAt,
              route: allowed === undefined ? null : path,
              status: response.status,
              outcome: failure?.error.code ?? facts.outcome ?? (response.status >= 400 ? "error" : "ok"),
              attribution: facts.attribution,
              leadId: failure === undefined ? facts.leadId : null
            })
            return response
          })
        const fallback = (error: WireError, headers?: Readonly<Record<string, string>>) =>
          answer(errorResponse(error, headers), error)

        // The router also matches `/v1/`, `//v1` and `/V1`; the contract serves its exact paths only.
        if (allowed === undefined) return yield* fallback(wireError(context, "not_found", `No route ${path}`))
        const exit = yield* Effect.exit(
          httpEffect.pipe(
            Effect.provideService(RequestContext, context),
            Effect.provideService(AnswerBy, context.startedAt + Duration.toMillis(answerWithin))
          )
        )
        if (Exit.isSuccess(exit)) return yield* answer(exit.value)
        if (isRouteNotFound(exit.cause)) {
          const error = wireError(context, "method_not_allowed", `${request.method} is not allowed here`)
          return yield* fallback(error, { allow: allowed.join(", ") })
        }
        if (Cause.hasInterruptsOnly(exit.cause)) return yield* exit
        yield* reportDefect(exit.cause)
        return yield* fallback(wireError(context, "internal_error", "An unexpected error occurred"))
      })
  }),
  { global: true }
)
