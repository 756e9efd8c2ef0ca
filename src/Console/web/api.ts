import { Cause, Effect, Exit, Schema, type SchemaIssue } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import {
  AdminApi,
  type AdminErrorCode,
  adminErrorCatalog,
  csrfHeaderName,
  type Organization,
  type OrganizationSettings,
  type SessionInfo
} from "../../AdminApi/AdminApi.ts"
import { t } from "./i18n.ts"

/**
 * The console's JSON API, typed from `AdminApi` itself (Effect's `HttpApiClient`): a renamed field,
 * a changed payload or a new error in the contract fails `npm run check` here and in every page.
 */

export type Operator = (typeof SessionInfo.Type)["operator"]
export type OrganizationItem = typeof Organization.Type
export type Settings = typeof OrganizationSettings.Type

export const session: {
  operator: Operator | null
  csrfToken: string | null
  /** Platform administrators choose the organization they look at; everyone else has exactly one. */
  org: string | null
  organizations: ReadonlyArray<OrganizationItem>
  /** The organization looked at: its country and the time zone its times are shown in. */
  settings: Settings | null
} = { operator: null, csrfToken: null, org: null, organizations: [], settings: null }

export const isPlatformAdmin = () => session.operator !== null && session.operator.organization_id === null
export const canChange = () => session.operator?.role === "admin"

export type ErrorCode = AdminErrorCode | "network_error" | "http_error" | "unknown"

/**
 * An answer the console shows: the API's code, field and request id, and the operator's words for
 * it (`message`, from the catalogs by code; the server's own text only for a code they do not know).
 */
export class ApiError extends Error {
  override readonly name = "ApiError"
  readonly status: number
  readonly code: ErrorCode
  readonly field: string | undefined
  readonly requestId: string | undefined
  /** What the server said, in English: for the browser's console, never shown on the page. */
  readonly serverMessage: string | undefined
  constructor(
    status: number,
    code: ErrorCode,
    message: string,
    field?: string,
    requestId?: string,
    serverMessage?: string
  ) {
    super(message)
    this.status = status
    this.code = code
    this.field = field
    this.requestId = requestId
    this.serverMessage = serverMessage
  }
  /** The words above the message, in the operator's language. */
  get title(): string {
    return t.errors[this.code]
  }
}

const unscoped = /^\/api\/(session|organizations)(\/|$)/

/** Every request: the CSRF header on changes, the chosen organization for a platform administrator. */
const withSession = (request: HttpClientRequest.HttpClientRequest) => {
  let next = request
  if (request.method !== "GET" && session.csrfToken !== null)
    next = HttpClientRequest.setHeader(next, csrfHeaderName, session.csrfToken)
  const path = new URL(request.url, location.origin).pathname
  if (isPlatformAdmin() && session.org !== null && !unscoped.test(path))
    next = HttpClientRequest.setUrlParam(next, "org", session.org)
  return next
}

export type AdminClient = HttpApiClient.ForApi<typeof AdminApi>

const client: AdminClient = Effect.runSync(
  HttpApiClient.make(AdminApi, {
    baseUrl: location.origin,
    transformClient: HttpClient.mapRequest(withSession)
  }).pipe(Effect.provide(FetchHttpClient.layer))
)

export type AdminUrls = HttpApiClient.UrlBuilder<typeof AdminApi>

const urls: AdminUrls = HttpApiClient.urlBuilder(AdminApi, { baseUrl: location.origin })

/**
 * The URL of a GET the browser makes itself, such as a file it saves as it arrives (a CSV export,
 * streamed to disk rather than held by the page): built from `AdminApi` as `call` builds requests, so
 * a renamed filter fails the type check, with the organization a platform administrator chose.
 */
export const apiUrl = (build: (urls: AdminUrls) => string): string => {
  const url = new URL(build(urls))
  if (isPlatformAdmin() && session.org !== null && !unscoped.test(url.pathname))
    url.searchParams.set("org", session.org)
  return url.href
}

const Envelope = Schema.Struct({
  error: Schema.Struct({
    code: Schema.String,
    message: Schema.String,
    field: Schema.optionalKey(Schema.String)
  }),
  request_id: Schema.optionalKey(Schema.String)
})
const isEnvelope = Schema.is(Envelope)

const isKnownCode = (code: string): code is AdminErrorCode => Object.hasOwn(adminErrorCatalog, code)

/** The catalog's words for an error of the API: by field where the catalog has them, else by code. */
export const errorText = (code: AdminErrorCode, field: string | undefined) => {
  if (code === "validation_error")
    return (
      (field === undefined ? undefined : t.errorTexts.fields[field]) ??
      t.errorTexts.validation_error(field ?? "")
    )
  return t.errorTexts[code]
}

const toApiError = (failure: unknown): ApiError => {
  if (isEnvelope(failure)) {
    const { code, message, field } = failure.error
    return isKnownCode(code)
      ? new ApiError(
          adminErrorCatalog[code].status,
          code,
          errorText(code, field),
          field,
          failure.request_id,
          message
        )
      : new ApiError(0, "unknown", message, field, failure.request_id, message)
  }
  if (typeof failure === "object" && failure !== null && "_tag" in failure) {
    if (failure._tag === "HttpClientError" && "reason" in failure) {
      const reason = failure.reason as { _tag: string; response?: { status: number } }
      if (reason._tag === "TransportError") return new ApiError(0, "network_error", t.errorMessages.network)
      if (reason.response !== undefined) {
        const status = reason.response.status
        return new ApiError(status, "http_error", t.errorMessages.status(status))
      }
    }
  }
  return new ApiError(0, "http_error", t.errorMessages.unreadable)
}

let onUnauthenticated: (error: ApiError) => void = () => {}
export const setUnauthenticatedHandler = (handler: (error: ApiError) => void) => {
  onUnauthenticated = handler
}

export interface CallOptions {
  readonly signal?: AbortSignal | undefined
  /** A 401 is the answer itself (sign-in, the session check), not a session that ended. */
  readonly expectUnauthenticated?: boolean
}

const abortError = () => new DOMException("The page moved on.", "AbortError")

/**
 * Runs one call of the typed client: `await call((api) => api.origins.origins({}), { signal })`.
 * Fails with an `ApiError` (a 401 also sends the operator to sign in), or an `AbortError` when the
 * page that asked was left.
 */
export const call = async <A, E>(
  request: (api: AdminClient) => Effect.Effect<A, E>,
  options: CallOptions = {}
): Promise<A> => {
  if (options.signal?.aborted) throw abortError()
  const exit = await Effect.runPromiseExit(request(client), { signal: options.signal })
  if (Exit.isSuccess(exit)) return exit.value
  if (Cause.hasInterruptsOnly(exit.cause) || options.signal?.aborted) throw abortError()
  const failure = Cause.findErrorOption(exit.cause)
  const error = toApiError(failure._tag === "Some" ? failure.value : Cause.squash(exit.cause))
  if (error.code === "unauthenticated" && options.expectUnauthenticated !== true) onUnauthenticated(error)
  throw error
}

export const isAbort = (error: unknown) => error instanceof DOMException && error.name === "AbortError"

/**
 * A form's rules are the contract's: the payload is decoded with the endpoint's own schema before it
 * is sent, and the first failing field is named as the API would name it.
 */
export const validate = <S extends Schema.Decoder<unknown>>(
  schema: S,
  input: unknown,
  /** The page's words for a field that fails (the rule is the schema's). */
  messages: Readonly<Record<string, string>> = {}
): { readonly ok: true; readonly value: S["Type"] } | { readonly ok: false; readonly error: ApiError } => {
  const exit = Schema.decodeUnknownExit(schema)(input)
  if (Exit.isSuccess(exit)) return { ok: true, value: exit.value }
  const failure = Cause.findErrorOption(exit.cause)
  const issue = failure._tag === "Some" ? failure.value.issue : undefined
  const field = issue === undefined ? undefined : firstPath(issue)
  return {
    ok: false,
    error: new ApiError(
      400,
      "validation_error",
      (field === undefined ? undefined : messages[field]) ?? t.errorMessages.invalidField(field ?? ""),
      field === undefined || field === "" ? undefined : field
    )
  }
}

const firstPath = (issue: SchemaIssue.Issue): string | undefined => {
  const path: Array<PropertyKey> = []
  let current: SchemaIssue.Issue | undefined = issue
  for (let depth = 0; current !== undefined && depth < 20; depth++) {
    switch (current._tag) {
      case "Pointer":
        path.push(...current.path)
        current = current.issue
        break
      case "Composite":
      case "AnyOf":
        current = current.issues[0]
        break
      case "Filter":
      case "Encoding":
        current = current.issue
        break
      default:
        current = undefined
    }
  }
  return path.map(String).join(".")
}
