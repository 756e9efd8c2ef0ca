import { timingSafeEqual } from "node:crypto"
import { Effect, Layer, Option, Redacted, type Schema, type SchemaIssue } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiMiddleware } from "effect/http-api"
import {
  AdminSchemaErrors,
  CurrentOperator,
  csrfHeaderName,
  OperatorSession
} from "../../AdminApi/AdminApi.ts"
import { AdminRequest, adminFail } from "../Http/RequestContext.ts"
import { Sessions } from "../Sessions.ts"

const readOnlyMethods = new Set(["GET", "HEAD"])

const sameToken = (sent: string | undefined, expected: string) => {
  if (sent === undefined) return false
  const a = Buffer.from(sent, "utf8")
  const b = Buffer.from(expected, "utf8")
  return a.length === b.length && timingSafeEqual(a, b)
}

/**
 * Cookie → live session → operator. A state change also needs the session's CSRF token, and a
 * viewer may change nothing but its own sign-in (the `session` group: sign out, sign out everywhere).
 */
export const layerOperatorSession = Layer.effect(
  OperatorSession,
  Effect.gen(function* () {
    const sessions = yield* Sessions
    return OperatorSession.of({
      session: (httpEffect, { credential, group }) =>
        Effect.gen(function* () {
          const token = Redacted.value(credential)
          if (token === "") return yield* adminFail("unauthenticated", "Sign in first")
          const session = yield* sessions
            .resolve(token)
            .pipe(
              Effect.catchTag("StoreUnavailable", () =>
                adminFail("temporarily_unavailable", "The database could not be reached")
              )
            )
          if (Option.isNone(session))
            return yield* adminFail("unauthenticated", "The session ended; sign in again")
          const request = yield* HttpServerRequest.HttpServerRequest
          const changes = !readOnlyMethods.has(request.method)
          if (changes && !sameToken(request.headers[csrfHeaderName], session.value.csrfToken)) {
            return yield* adminFail("csrf_failed", "Missing or wrong X-CSRF-Token header")
          }
          const { operator } = session.value
          if (changes && operator.role === "viewer" && group.identifier !== "session") {
            return yield* adminFail("forbidden", "Viewers cannot change anything")
          }
          const { ip } = yield* AdminRequest
          return yield* Effect.provideService(httpEffect, CurrentOperator, {
            ...operator,
            sessionId: session.value.id,
            csrfToken: session.value.csrfToken,
            ip
          })
        })
    })
  })
)

const pathOf = (issue: SchemaIssue.Issue): Array<string> => {
  const path: Array<string> = []
  let current: SchemaIssue.Issue | undefined = issue
  while (current !== undefined) {
    if (current._tag === "Pointer") {
      path.push(...current.path.map(String))
      current = current.issue
    } else if (current._tag === "Composite" || current._tag === "AnyOf") {
      current = current.issues[0]
    } else if (current._tag === "Filter" || current._tag === "Encoding") {
      current = current.issue
    } else {
      current = undefined
    }
  }
  return path
}

const firstLine = (text: string) => text.split("\n")[0]?.trim() ?? ""

const describe = (kind: string, error: Schema.SchemaError) => {
  const path = pathOf(error.issue)
  const field =
    path.length > 0 ? path.join(".") : kind === "Payload" || kind === "Body" ? "body" : kind.toLowerCase()
  return { field, message: `${field}: ${firstLine(error.message)}` }
}

/** Every decoding failure of a query, path or body becomes `validation_error` naming the field. */
export const layerAdminSchemaErrors = HttpApiMiddleware.layerSchemaErrorTransform(
  AdminSchemaErrors,
  (error) => {
    const { field, message } = describe(error.kind, error.cause)
    return adminFail("validation_error", message, field)
  }
)
