import { ByteSize, Cause, Effect, Layer, Schedule } from "effect"
import {
  HttpEffect,
  HttpIncomingMessage,
  HttpRouter,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse
} from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { AdminApi } from "../../AdminApi/AdminApi.ts"
import { isAllowedHost } from "../../Domain/HostNames.ts"
import { Rescues } from "../../Intake/Rescue.ts"
import { PersonalData } from "../../PersonalData/PersonalData.ts"
import { AppConfig, WebhookConfig } from "../../Platform/Config.ts"
import { layerListener } from "../../Platform/Listening.ts"
import { isRouteNotFound } from "../../Platform/RouteNotFound.ts"
import { WebhookAttempts } from "../../Webhooks/Attempts.ts"
import { WebhookDeliveries } from "../../Webhooks/Deliveries.ts"
import { WebhookEndpoints } from "../../Webhooks/Endpoints.ts"
import { Audit } from "../AuditLog.ts"
import { AdminRequest, clientOf, errorResponse, pathOf } from "../Http/RequestContext.ts"
import { LoginThrottle } from "../LoginThrottle.ts"
import { Operators } from "../Operators.ts"
import { Preferences } from "../Preferences.ts"
import { Sessions } from "../Sessions.ts"
import { layerAdminHandlers } from "./Handlers.ts"
import { layerAdminSchemaErrors, layerOperatorSession } from "./Middleware.ts"
import { layerPages } from "./Pages.ts"

/** Set on every answer unless the route chose its own (pages their CSP with a nonce, assets their caching). */
const defaultHeaders: Record<string, string> = {
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'; base-uri 'none'",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin"
}

const maxBodySize = ByteSize.kibibytes(64)

/** How reading the body failed, wherever in the cause it surfaced (a typed failure or a defect). */
const bodyFailure = (cause: Cause.Cause<unknown>) => {
  for (const reason of cause.reasons) {
    const error = Cause.isFailReason(reason)
      ? reason.error
      : Cause.isDieReason(reason)
        ? reason.defect
        : undefined
    const parse = HttpServerError.isHttpServerError(error) ? error.reason : error
    if (parse instanceof HttpServerError.RequestParseError)
      return parse.reason === "BodyTooLarge" ? "too_large" : "unreadable"
  }
  return undefined
}

const readOnlyMethods = new Set(["GET", "HEAD", "OPTIONS"])

/** Probes address the listener by whatever name or address reaches it; they read nothing of the console. */

/** A browser names the page that sent a request; one from another origin changes nothing here, sign-in included. */
const isCrossOrigin = (request: HttpServerRequest.HttpServerRequest) => {
  const origin = request.headers.origin
  if (origin === undefined) return request.headers["sec-fetch-site"] === "cross-site"
  const host = request.headers.host
  return origin === "null" || host === undefined || URL.parse(origin)?.host !== host
}

/** Forms can post `text/plain` across sites without a preflight; the API reads JSON bodies only. */
const hasNonJsonBody = (request: HttpServerRequest.HttpServerRequest) => {
  const type = request.headers["content-type"]
  if (type !== undefined) return type.split(";")[0]!.trim().toLowerCase() !== "application/json"
  const length = request.headers["content-length"]
  return (length !== undefined && length !== "0") || request.headers["transfer-encoding"] !== undefined
}

/**
 * Only the configured host names (`ADMIN_HOSTS`) first; then request id, the client's address and
 * protocol (forwarding headers believed from `TRUSTED_PROXIES` only), security headers, a body
 * limit, JSON 404 under /api, and a last-resort 500 that shows nothing of the defect.
 */
export const layerAdminGlobalMiddleware = HttpRouter.middleware(
  Effect.map(
    Effect.service(AppConfig),
    ({ adminHosts, trustedProxies }) =>
      (httpEffect) =>
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const context = { requestId: crypto.randomUUID(), ...clientOf(request, trustedProxies) }
          yield* HttpEffect.appendPreResponseHandler((_, response) =>
            Effect.succeed(
              HttpServerResponse.setHeaders(response, {
                ...Object.fromEntries(
                  Object.entries(defaultHeaders).filter(([name]) => !(name in response.headers))
                ),
                "x-request-id": context.requestId
              })
            )
          )
          const path = pathOf(request)
          if (!isAllowedHost(request.headers.host, adminHosts)) {
            return errorResponse(
              context.requestId,
              "misdirected_request",
              "This console does not answer for that host name (see ADMIN_HOSTS)"
            )
          }
          const isApi = path.startsWith("/api/") || path === "/api"
          if (isApi && !readOnlyMethods.has(request.method)) {
            if (isCrossOrigin(request)) {
              return errorResponse(
                context.requestId,
                "csrf_failed",
                "Requests from another origin are refused"
              )
            }
            if (hasNonJsonBody(request)) {
              return errorResponse(
                context.requestId,
                "unsupported_media_type",
                "Send the body as application/json"
              )
            }
          }
          return yield* httpEffect.pipe(
            Effect.provideService(AdminRequest, context),
            Effect.provideService(HttpIncomingMessage.MaxBodySize, maxBodySize),
            Effect.catchCause((cause) => {
              if (isRouteNotFound(cause)) {
                return Effect.succeed(
                  isApi
                    ? errorResponse(context.requestId, "not_found", `No route ${request.method} ${path}`)
                    : HttpServerResponse.text("Not found", { status: 404 })
                )
              }
              if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
              const body = bodyFailure(cause)
              if (body !== undefined) {
                return Effect.succeed(
                  body === "too_large"
                    ? errorResponse(context.requestId, "payload_too_large", "The body is over 64 KiB")
                    : errorResponse(context.requestId, "validation_error", "The body could not be read")
                )
              }
              return Effect.as(
                Effect.logError("admin request failed", cause),
                errorResponse(context.requestId, "internal_error", "An unexpected error occurred")
              )
            })
          )
        })
  ),
  { global: true }
)

/** The console's services on PostgreSQL; need a `SqlClient` (and, for handlers, the domain services). */
export const layerAdminServices = Layer.mergeAll(
  Operators.layer,
  Sessions.layer,
  Preferences.layer,
  Audit.layer,
  LoginThrottle.layer,
  PersonalData.layer,
  WebhookDeliveries.layer,
  WebhookAttempts.layer,
  WebhookEndpoints.layer.pipe(Layer.provide(WebhookConfig.layer)),
  Rescues.layer
)

/** The admin API, the pages and the assets; needs the domain and console services. The probes have their own listener (HEALTH_PORT). */
export const layerAdminApp = Layer.mergeAll(
  HttpApiBuilder.layer(AdminApi).pipe(
    Layer.provide(layerAdminHandlers),
    Layer.provide([layerOperatorSession, layerAdminSchemaErrors])
  ),
  layerPages,
  layerAdminGlobalMiddleware
)

/** Dead sessions and ended throttle windows are deleted every 10 minutes; nothing reads them after. */
export const layerConsoleHousekeeping = Layer.effectDiscard(
  Effect.gen(function* () {
    const sessions = yield* Sessions
    const throttle = yield* LoginThrottle
    const sweep = Effect.all([sessions.purge(), throttle.purge()]).pipe(
      Effect.catchCause((cause) => Effect.logWarning("console housekeeping failed", cause))
    )
    yield* Effect.forkScoped(Effect.repeat(sweep, Schedule.spaced("10 minutes")))
  })
)

/** The console's own listener (ADMIN_HOST:ADMIN_PORT), or nothing when ADMIN_PORT=off. */
export const layerAdminServer = Layer.unwrap(
  Effect.gen(function* () {
    const config = yield* AppConfig
    return layerListener(
      HttpRouter.serve(layerAdminApp, { disableLogger: true, disableListenLog: true }).pipe(
        Layer.merge(layerConsoleHousekeeping)
      ),
      {
        listener: "admin",
        host: config.adminHost,
        port: config.adminPort,
        disabled: "console disabled (ADMIN_PORT=off)",
        limits: {
          requestTimeout: 15_000,
          headersTimeout: 10_000,
          keepAliveTimeout: 5_000,
          maxHeaderSize: 16_384,
          connectionsCheckingInterval: 1_000
        },
        gracefulShutdownTimeout: "10 seconds"
      }
    )
  })
).pipe(Layer.provide(layerAdminServices))
