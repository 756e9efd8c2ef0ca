import { Effect, Option } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import {
  AdminApi,
  CurrentOperator,
  type OperatorIdentity,
  sessionCookieName,
  sessionSecurity
} from "../../AdminApi/AdminApi.ts"
import type { AuditAction } from "../../AdminApi/Audit.ts"
import { Audit } from "../AuditLog.ts"
import {
  AdminRequest,
  type AdminRequestShape,
  adminFail,
  setResponseHeaders
} from "../Http/RequestContext.ts"
import { LoginThrottle } from "../LoginThrottle.ts"
import type { Operator } from "../Operators.ts"
import { normalizeEmail, Operators } from "../Operators.ts"
import { type OperatorPreferences, Preferences } from "../Preferences.ts"
import { Sessions } from "../Sessions.ts"

const sessionView = (operator: Operator, preferences: OperatorPreferences, csrfToken: string) => ({
  operator: {
    id: operator.id,
    email: operator.email,
    role: operator.role,
    organization_id: operator.organizationId,
    language: preferences.language
  },
  organization: preferences.organization,
  csrf_token: csrfToken
})

/** `Secure` when the browser's connection is HTTPS (behind a proxy: as a trusted proxy says). */
const cookieOptions = (request: AdminRequestShape) => ({
  httpOnly: true,
  sameSite: "strict" as const,
  path: "/",
  secure: request.https
})

export const layerSessionHandlers = HttpApiBuilder.group(
  AdminApi,
  "session",
  Effect.fn(function* (handlers) {
    const operators = yield* Operators
    const sessions = yield* Sessions
    const throttle = yield* LoginThrottle
    const audit = yield* Audit
    const preferences = yield* Preferences
    const preferencesOf = (operatorId: string) =>
      preferences
        .ofOperator(operatorId)
        .pipe(
          Effect.catchTag("StoreUnavailable", () =>
            adminFail("temporarily_unavailable", "The database could not be reached")
          )
        )
    const signedOut = Effect.gen(function* () {
      const { sameSite, path, secure, httpOnly } = cookieOptions(yield* AdminRequest)
      return yield* HttpServerResponse.empty({ status: 204 }).pipe(
        HttpServerResponse.expireCookie(sessionCookieName, { sameSite, path, secure, httpOnly })
      )
    }).pipe(Effect.orDie)
    const record = (operator: OperatorIdentity, action: AuditAction, target: string | null = null) =>
      audit.record({
        organizationId: operator.organizationId,
        operatorId: operator.id,
        operatorEmail: operator.email,
        action,
        target,
        ip: operator.ip
      })
    /** A failure that makes the next attempt wait is audited (the refusals while it waits are not: they cost nothing). */
    const auditThrottling = Effect.fnUntraced(function* (attempt: {
      readonly email: string
      readonly ip: string
    }) {
      const wait = yield* throttle.check(attempt).pipe(Effect.orElseSucceed(() => 0))
      if (wait === 0) return
      const account = yield* operators.find(attempt.email)
      const email = normalizeEmail(attempt.email)
      yield* audit.record({
        organizationId: Option.match(account, { onNone: () => null, onSome: (o) => o.organizationId }),
        operatorId: Option.match(account, { onNone: () => null, onSome: (o) => o.id }),
        operatorEmail: email,
        action: "session.sign_in_throttled",
        target: `${email} from ${attempt.ip}: next attempt in ${wait} s`,
        ip: attempt.ip
      })
    })
    /** Ends this session, or every session of the operator, audited; the browser's cookie goes too. */
    const signOut = Effect.fn("Admin.signOut")(function* (which: "this session" | "everywhere") {
      const operator = yield* CurrentOperator
      if (which === "everywhere") yield* sessions.revokeAll(operator.id)
      else yield* sessions.revoke(operator.sessionId)
      yield* record(operator, which === "everywhere" ? "session.sign_out_everywhere" : "session.sign_out")
      return yield* signedOut
    })

    return handlers
      .handle(
        "login",
        Effect.fn("Admin.login")(function* ({ payload }) {
          const { ip } = yield* AdminRequest
          const attempt = { email: payload.email, ip }
          const wait = yield* throttle
            .admit(attempt)
            .pipe(
              Effect.catchTag("StoreUnavailable", () =>
                adminFail("temporarily_unavailable", "The database could not be reached")
              )
            )
          if (wait > 0) {
            yield* setResponseHeaders({ "retry-after": String(wait) })
            return yield* adminFail("rate_limited", "Too many failed sign-ins; try again later")
          }
          const operator = yield* operators.authenticate(payload.email, payload.password)
          if (Option.isNone(operator)) {
            yield* auditThrottling(attempt)
            return yield* adminFail("unauthenticated", "Invalid email or password")
          }
          yield* throttle.recordSuccess(attempt)
          const session = yield* sessions.create({ operatorId: operator.value.id, ip })
          yield* HttpApiBuilder.securitySetCookie(
            sessionSecurity,
            session.token,
            cookieOptions(yield* AdminRequest)
          )
          yield* audit.record({
            organizationId: operator.value.organizationId,
            operatorId: operator.value.id,
            operatorEmail: operator.value.email,
            action: "session.sign_in",
            target: null,
            ip
          })
          return sessionView(operator.value, yield* preferencesOf(operator.value.id), session.csrfToken)
        })
      )
      .handle(
        "current",
        Effect.fn("Admin.currentSession")(function* () {
          const operator = yield* CurrentOperator
          return sessionView(operator, yield* preferencesOf(operator.id), operator.csrfToken)
        })
      )
      .handle(
        "setLanguage",
        Effect.fn("Admin.setLanguage")(function* ({ payload }) {
          const operator = yield* CurrentOperator
          yield* preferences.setLanguage(operator.id, payload.language)
          yield* record(operator, "operator.set_language", `language ${payload.language ?? "unset"}`)
          return sessionView(operator, yield* preferencesOf(operator.id), operator.csrfToken)
        })
      )
      .handle("logout", () => signOut("this session"))
      .handle("revokeAll", () => signOut("everywhere"))
  })
)
