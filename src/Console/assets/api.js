// The admin JSON API client: session state, CSRF header on changes, 401 → sign-in page, errors as ApiError.

export const session = {
  operator: null,
  csrfToken: null,
  /** Platform administrators choose the organization they look at; everyone else has exactly one. */
  org: null,
  organizations: []
}

export const isPlatformAdmin = () => session.operator !== null && session.operator.organization_id === null
export const canChange = () => session.operator?.role === "admin"

export class ApiError extends Error {
  constructor(status, body, fallback) {
    const error = body?.error ?? {}
    super(error.message ?? fallback ?? `The server answered ${status}.`)
    this.status = status
    this.code = error.code ?? "http_error"
    this.field = error.field
    this.requestId = body?.request_id
    this.title = titles[this.code] ?? "Request failed"
  }
}

const titles = {
  validation_error: "Check this field:",
  not_found: "Not found:",
  forbidden: "Not allowed:",
  csrf_failed: "Not allowed:",
  conflict: "Conflict:",
  rate_limited: "Too many attempts:",
  temporarily_unavailable: "Temporarily unavailable:",
  internal_error: "Server error:",
  unauthenticated: "Signed out:",
  network_error: "No connection:"
}

let onUnauthenticated = () => {}
export const setUnauthenticatedHandler = (handler) => {
  onUnauthenticated = handler
}

const withOrg = (path, scoped) => {
  if (!scoped || !isPlatformAdmin() || !session.org) return path
  const url = new URL(path, location.origin)
  if (!url.searchParams.has("org")) url.searchParams.set("org", session.org)
  return url.pathname + url.search
}

/** Builds a query string, leaving out empty values. */
export const query = (params) => {
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") search.set(name, String(value))
  }
  const text = search.toString()
  return text ? `?${text}` : ""
}

export const request = async (method, path, body, { scoped = true, signal } = {}) => {
  const headers = { accept: "application/json" }
  if (body !== undefined) headers["content-type"] = "application/json"
  if (method !== "GET" && session.csrfToken) headers["x-csrf-token"] = session.csrfToken
  let response
  try {
    response = await fetch(withOrg(path, scoped), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "same-origin",
      cache: "no-store",
      signal
    })
  } catch (cause) {
    if (cause?.name === "AbortError") throw cause
    const error = new ApiError(0, {
      error: {
        code: "network_error",
        message: "The console could not reach the server. Check your connection."
      }
    })
    throw error
  }
  if (response.status === 204) return null
  const text = await response.text()
  let json = null
  try {
    json = text ? JSON.parse(text) : null
  } catch {
    json = null
  }
  if (!response.ok) {
    const error = new ApiError(response.status, json)
    if (response.status === 401 && path !== "/api/session") onUnauthenticated(error)
    throw error
  }
  return json
}

export const api = {
  get: (path, options) => request("GET", path, undefined, options),
  post: (path, body, options) => request("POST", path, body ?? {}, options),
  patch: (path, body, options) => request("PATCH", path, body, options),
  delete: (path, options) => request("DELETE", path, undefined, options)
}
