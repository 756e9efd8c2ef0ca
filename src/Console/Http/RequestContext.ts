import { Context, Effect, Option } from "effect"
import { HttpEffect, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { type AdminErrorCode, adminErrorCatalog, adminErrorClasses } from "../../AdminApi/AdminApi.ts"
import { clientAddress, forwardedHttps, type TrustedProxies } from "../../Platform/TrustedProxies.ts"

export interface AdminRequestShape {
  readonly requestId: string
  /** The client's address: the peer's, or what a trusted proxy forwarded (`TRUSTED_PROXIES`). */
  readonly ip: string
  /** Whether the browser's connection is HTTPS: only a trusted proxy's `X-Forwarded-Proto` says so. */
  readonly https: boolean
}

export const AdminRequest = Context.Reference<AdminRequestShape>("lead-intake/admin/AdminRequest", {
  defaultValue: () => ({ requestId: "none", ip: "unknown", https: false })
})

/** Who sent the request and over what, believing forwarding headers from `TRUSTED_PROXIES` only. */
export const clientOf = (request: HttpServerRequest.HttpServerRequest, trusted: TrustedProxies) => {
  const peer = Option.getOrUndefined(request.remoteAddress)
  return {
    ip: clientAddress(trusted, peer, request.headers["x-forwarded-for"]) ?? "unknown",
    https:
      request.url.startsWith("https:") || forwardedHttps(trusted, peer, request.headers["x-forwarded-proto"])
  }
}

/** The request's path, whether the server saw an origin-form target or an absolute URL. */
export const pathOf = (request: HttpServerRequest.HttpServerRequest) =>
  URL.parse(request.url, "http://admin.invalid")?.pathname ?? "/"

export const envelope = (requestId: string, code: AdminErrorCode, message: string, field?: string) => ({
  error: { code, message, ...(field === undefined ? {} : { field }) },
  request_id: requestId
})

/** An error answered outside HttpApi's typed errors (routing, defects). */
export const errorResponse = (requestId: string, code: AdminErrorCode, message: string) =>
  HttpServerResponse.jsonUnsafe(envelope(requestId, code, message), {
    status: adminErrorCatalog[code].status
  })

export const setResponseHeaders = (headers: Record<string, string>) =>
  HttpEffect.appendPreResponseHandler((_, response) =>
    Effect.succeed(HttpServerResponse.setHeaders(response, headers))
  )

type ErrorOf<Code extends AdminErrorCode> = InstanceType<(typeof adminErrorClasses)[Code]>

/** The admin API's error for `code`, in its envelope, with this request's id. */
export const adminError = <const Code extends AdminErrorCode>(code: Code, message: string, field?: string) =>
  Effect.gen(function* () {
    const context = yield* AdminRequest
    const ErrorClass = adminErrorClasses[code] as unknown as new (
      fields: ReturnType<typeof envelope>
    ) => ErrorOf<Code>
    return new ErrorClass(envelope(context.requestId, code, message, field))
  })

export const adminFail = <const Code extends AdminErrorCode>(code: Code, message: string, field?: string) =>
  Effect.flatMap(adminError(code, message, field), Effect.fail)
