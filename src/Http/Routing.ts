import { Cause, Effect } from "effect"
import { HttpRouter, HttpServerRequest } from "effect/http"
import { HttpApi } from "effect/http-api"
import { Api } from "../Api.ts"
import { AppConfig } from "../Config.ts"
import { observeRequest, reportDefect } from "../Observability/Request.ts"
import { errorResponse, RequestContext, setResponseHeaders } from "./RequestContext.ts"

/** Every route of the contract with the methods it accepts, from the HttpApi itself. */
export const routeTable: ReadonlyMap<string, ReadonlyArray<string>> = (() => {
  const table = new Map<string, Array<string>>()
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      const methods = table.get(endpoint.path) ?? []
      methods.push(endpoint.method)
      if (endpoint.method === "GET") methods.push("HEAD")
      table.set(endpoint.path, methods)
    }
  })
  return table
})()

export const endpointList = [...routeTable].flatMap(([path, methods]) =>
  methods.filter((method) => method !== "HEAD").map((method) => `${method} ${path}`)
)

const pathOf = (url: string) => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}

const isRouteNotFound = (cause: Cause.Cause<unknown>) =>
  cause.reasons.some(
    (reason) =>
      Cause.isFailReason(reason) &&
      typeof reason.error === "object" &&
      reason.error !== null &&
      (reason.error as { reason?: { _tag?: string } }).reason?._tag === "RouteNotFound"
  )

/**
 * Wraps routing for every request: a fresh `X-Request-Id`, the contract's 404 and 405, and a
 * last-resort 500 that records the defect but shows nothing of it to the caller.
 */
export const layerGlobalMiddleware = HttpRouter.middleware(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const docsUrl = `${config.publicBaseUrl}/v1/docs`
    return (httpEffect) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const context = {
          requestId: crypto.randomUUID(),
          docsUrl,
          startedAt: performance.now(),
          journal: { keyPrefix: null, originId: null, outcome: null, leadId: null, idempotencyKey: null }
        }
        yield* setResponseHeaders({ "x-request-id": context.requestId })
        const path = pathOf(request.url)
        const allowed = routeTable.get(path)
        yield* observeRequest(request, context, allowed === undefined ? null : path)
        // The router also matches `/v1/`, `//v1` and `/V1`; the contract serves its exact paths only.
        if (allowed === undefined) return errorResponse(context, "not_found", `No route ${path}`)
        return yield* httpEffect.pipe(
          Effect.provideService(RequestContext, context),
          Effect.catchCause((cause) => {
            if (isRouteNotFound(cause)) {
              return Effect.succeed(
                errorResponse(context, "method_not_allowed", `${request.method} is not allowed here`, {
                  allow: allowed.join(", ")
                })
              )
            }
            if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
            return Effect.as(
              reportDefect(cause),
              errorResponse(context, "internal_error", "An unexpected error occurred")
            )
          })
        )
      })
  }),
  { global: true }
)
