import { Clock, Context, Duration, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { ConsoleMemory, normalizeEmail } from "./Operators.ts"
import { availableOrFail, type StoreUnavailable } from "./Sql.ts"

export interface ThrottlePolicy {
  readonly window: Duration.Duration
  /** Failed sign-ins for one e-mail within the window before it is refused. */
  readonly perAccount: number
  /** Failed sign-ins from one address within the window before it is refused. */
  readonly perAddress: number
}

export const defaultThrottlePolicy: ThrottlePolicy = {
  window: Duration.minutes(15),
  perAccount: 5,
  perAddress: 30
}

export interface Attempt {
  readonly email: string
  readonly ip: string
}

type Scope = "account" | "address"

const subjectsOf = (attempt: Attempt): ReadonlyArray<readonly [Scope, string]> => [
  ["account", normalizeEmail(attempt.email)],
  ["address", attempt.ip]
]

/**
 * Failed sign-ins counted per e-mail (known or not, so the answer says nothing about which exist)
 * and per address, in fixed windows that start at the first failure; shared by every instance.
 */
export class LoginThrottle extends Context.Service<
  LoginThrottle,
  {
    /** Seconds until the attempt may be made, or 0 when it may be made now. */
    check(attempt: Attempt): Effect.Effect<number, StoreUnavailable>
    recordFailure(attempt: Attempt): Effect.Effect<void>
    /** A successful sign-in clears its account's count (not the address's). */
    recordSuccess(attempt: Attempt): Effect.Effect<void>
    /** Deletes the counts whose window has ended. */
    purge(): Effect.Effect<number>
  }
>()("lead-intake/LoginThrottle") {
  static readonly layerWith = (policy: ThrottlePolicy) =>
    Layer.effect(
      LoginThrottle,
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const windowMillis = Duration.toMillis(policy.window)
        const limitOf = (scope: Scope) => (scope === "account" ? policy.perAccount : policy.perAddress)
        return LoginThrottle.of({
          check: Effect.fn("LoginThrottle.check")(function* (attempt) {
            const now = yield* Clock.currentTimeMillis
            const [account, address] = subjectsOf(attempt)
            const rows = yield* sql<{ scope: Scope; window_start: Date; failures: number }>`
              SELECT scope, window_start, failures FROM login_throttle
              WHERE ((scope = 'account' AND subject = ${account![1]}) OR (scope = 'address' AND subject = ${address![1]}))
                AND window_start > ${new Date(now - windowMillis)}`.pipe(
              availableOrFail("LoginThrottle.check")
            )
            return retryAfterOf(
              rows.map((row) => ({
                scope: row.scope,
                windowStart: row.window_start.getTime(),
                failures: row.failures
              })),
              now,
              windowMillis,
              limitOf
            )
          }),
          recordFailure: Effect.fn("LoginThrottle.recordFailure")(function* (attempt) {
            const now = new Date(yield* Clock.currentTimeMillis)
            const cutoff = new Date(now.getTime() - windowMillis)
            for (const [scope, subject] of subjectsOf(attempt)) {
              yield* sql`
                INSERT INTO login_throttle AS t (scope, subject, window_start, failures)
                VALUES (${scope}, ${subject}, ${now}, 1)
                ON CONFLICT (scope, subject) DO UPDATE SET
                  failures = CASE WHEN t.window_start <= ${cutoff} THEN 1 ELSE t.failures + 1 END,
                  window_start = CASE WHEN t.window_start <= ${cutoff} THEN ${now} ELSE t.window_start END`.pipe(
                Effect.orDie
              )
            }
          }),
          recordSuccess: Effect.fn("LoginThrottle.recordSuccess")(function* (attempt) {
            yield* sql`DELETE FROM login_throttle WHERE scope = 'account' AND subject = ${normalizeEmail(attempt.email)}`.pipe(
              Effect.orDie
            )
          }),
          purge: Effect.fn("LoginThrottle.purge")(function* () {
            const cutoff = new Date((yield* Clock.currentTimeMillis) - windowMillis)
            const rows =
              yield* sql`DELETE FROM login_throttle WHERE window_start <= ${cutoff} RETURNING scope`.pipe(
                Effect.orDie
              )
            return rows.length
          })
        })
      })
    )

  static readonly layer = LoginThrottle.layerWith(defaultThrottlePolicy)

  static readonly layerMemoryWith = (policy: ThrottlePolicy) =>
    Layer.effect(
      LoginThrottle,
      Effect.gen(function* () {
        const state = yield* ConsoleMemory
        const windowMillis = Duration.toMillis(policy.window)
        const limitOf = (scope: Scope) => (scope === "account" ? policy.perAccount : policy.perAddress)
        const slot = (scope: Scope, subject: string) => `${scope}\u0000${subject}`
        return LoginThrottle.of({
          check: Effect.fn("LoginThrottle.check")(function* (attempt) {
            const now = yield* Clock.currentTimeMillis
            const rows = subjectsOf(attempt).flatMap(([scope, subject]) => {
              const entry = state.throttle.get(slot(scope, subject))
              return entry === undefined || entry.windowStart <= now - windowMillis
                ? []
                : [{ scope, ...entry }]
            })
            return retryAfterOf(rows, now, windowMillis, limitOf)
          }),
          recordFailure: Effect.fn("LoginThrottle.recordFailure")(function* (attempt) {
            const now = yield* Clock.currentTimeMillis
            for (const [scope, subject] of subjectsOf(attempt)) {
              const entry = state.throttle.get(slot(scope, subject))
              state.throttle.set(
                slot(scope, subject),
                entry === undefined || entry.windowStart <= now - windowMillis
                  ? { windowStart: now, failures: 1 }
                  : { windowStart: entry.windowStart, failures: entry.failures + 1 }
              )
            }
          }),
          recordSuccess: Effect.fn("LoginThrottle.recordSuccess")(function* (attempt) {
            state.throttle.delete(slot("account", normalizeEmail(attempt.email)))
          }),
          purge: Effect.fn("LoginThrottle.purge")(function* () {
            const cutoff = (yield* Clock.currentTimeMillis) - windowMillis
            let purged = 0
            for (const [key, entry] of state.throttle) {
              if (entry.windowStart <= cutoff) {
                state.throttle.delete(key)
                purged++
              }
            }
            return purged
          })
        })
      })
    )

  static readonly layerMemory = LoginThrottle.layerMemoryWith(defaultThrottlePolicy)
}

const retryAfterOf = (
  rows: ReadonlyArray<{ readonly scope: Scope; readonly windowStart: number; readonly failures: number }>,
  now: number,
  windowMillis: number,
  limitOf: (scope: Scope) => number
) =>
  rows
    .filter((row) => row.failures >= limitOf(row.scope))
    .reduce((wait, row) => Math.max(wait, Math.ceil((row.windowStart + windowMillis - now) / 1000)), 0)
