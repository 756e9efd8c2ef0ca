import { Clock, Context, Duration, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { availableOrFail, type StoreUnavailable } from "../Platform/Sql.ts"
import { ConsoleMemory, normalizeEmail } from "./Operators.ts"

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

const ThrottleRecords = Schema.Array(
  Schema.Struct({
    scope: Schema.Literals(["account", "address"]),
    window_start: Schema.Date,
    failures: Schema.Number
  })
)

const decodeThrottle = Schema.decodeUnknownEffect(ThrottleRecords)

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
    /**
     * `check` and `recordFailure` as one step, serialized per account and per address, so
     * concurrent attempts cannot all pass the check: 0 means admitted and counted as a failure
     * until `recordSuccess` says otherwise.
     */
    admit(attempt: Attempt): Effect.Effect<number, StoreUnavailable>
    /** A successful sign-in clears its account's count and takes itself off the address's. */
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
        const waitOf = (attempt: Attempt, now: number) => {
          return sql`
            SELECT scope, window_start, failures FROM login_throttle
            WHERE ((scope = 'account' AND subject = ${normalizeEmail(attempt.email)})
                   OR (scope = 'address' AND subject = ${attempt.ip}))
              AND window_start > ${new Date(now - windowMillis)}`.pipe(
            Effect.flatMap(decodeThrottle),
            Effect.map((rows) =>
              retryAfterOf(
                rows.map((row) => ({
                  scope: row.scope,
                  windowStart: row.window_start.getTime(),
                  failures: row.failures
                })),
                now,
                windowMillis,
                limitOf
              )
            )
          )
        }
        const countFailure = Effect.fnUntraced(function* (attempt: Attempt, millis: number) {
          const now = new Date(millis)
          const cutoff = new Date(millis - windowMillis)
          for (const [scope, subject] of subjectsOf(attempt)) {
            yield* sql`
              INSERT INTO login_throttle AS t (scope, subject, window_start, failures)
              VALUES (${scope}, ${subject}, ${now}, 1)
              ON CONFLICT (scope, subject) DO UPDATE SET
                failures = CASE WHEN t.window_start <= ${cutoff} THEN 1 ELSE t.failures + 1 END,
                window_start = CASE WHEN t.window_start <= ${cutoff} THEN ${now} ELSE t.window_start END`
          }
        })
        return LoginThrottle.of({
          check: Effect.fn("LoginThrottle.check")(function* (attempt) {
            const now = yield* Clock.currentTimeMillis
            return yield* waitOf(attempt, now).pipe(availableOrFail("LoginThrottle.check"))
          }),
          recordFailure: Effect.fn("LoginThrottle.recordFailure")(function* (attempt) {
            yield* countFailure(attempt, yield* Clock.currentTimeMillis).pipe(Effect.orDie)
          }),
          admit: Effect.fn("LoginThrottle.admit")(function* (attempt) {
            const now = yield* Clock.currentTimeMillis
            return yield* sql
              .withTransaction(
                Effect.gen(function* () {
                  // Always account first, then address: two attempts never wait for each other in a cycle.
                  for (const [scope, subject] of subjectsOf(attempt)) {
                    yield* sql`SELECT pg_advisory_xact_lock(hashtext(${`login:${scope}:${subject}`}))`
                  }
                  const wait = yield* waitOf(attempt, now)
                  if (wait === 0) yield* countFailure(attempt, now)
                  return wait
                })
              )
              .pipe(availableOrFail("LoginThrottle.admit"))
          }),
          recordSuccess: Effect.fn("LoginThrottle.recordSuccess")(function* (attempt) {
            yield* sql`DELETE FROM login_throttle WHERE scope = 'account' AND subject = ${normalizeEmail(attempt.email)}`.pipe(
              Effect.orDie
            )
            yield* sql`
              UPDATE login_throttle SET failures = greatest(failures - 1, 0)
              WHERE scope = 'address' AND subject = ${attempt.ip}`.pipe(Effect.orDie)
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
        const waitOf = (attempt: Attempt, now: number) => {
          const rows = subjectsOf(attempt).flatMap(([scope, subject]) => {
            const entry = state.throttle.get(slot(scope, subject))
            return entry === undefined || entry.windowStart <= now - windowMillis ? [] : [{ scope, ...entry }]
          })
          return retryAfterOf(rows, now, windowMillis, limitOf)
        }
        const countFailure = (attempt: Attempt, now: number) => {
          for (const [scope, subject] of subjectsOf(attempt)) {
            const entry = state.throttle.get(slot(scope, subject))
            state.throttle.set(
              slot(scope, subject),
              entry === undefined || entry.windowStart <= now - windowMillis
                ? { windowStart: now, failures: 1 }
                : { windowStart: entry.windowStart, failures: entry.failures + 1 }
            )
          }
        }
        return LoginThrottle.of({
          check: Effect.fn("LoginThrottle.check")(function* (attempt) {
            return waitOf(attempt, yield* Clock.currentTimeMillis)
          }),
          recordFailure: Effect.fn("LoginThrottle.recordFailure")(function* (attempt) {
            countFailure(attempt, yield* Clock.currentTimeMillis)
          }),
          admit: Effect.fn("LoginThrottle.admit")(function* (attempt) {
            const now = yield* Clock.currentTimeMillis
            const wait = waitOf(attempt, now)
            if (wait === 0) countFailure(attempt, now)
            return wait
          }),
          recordSuccess: Effect.fn("LoginThrottle.recordSuccess")(function* (attempt) {
            state.throttle.delete(slot("account", normalizeEmail(attempt.email)))
            const address = state.throttle.get(slot("address", attempt.ip))
            if (address !== undefined) address.failures = Math.max(address.failures - 1, 0)
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
