import { Clock, Context, Duration, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { availableOrFail, type StoreUnavailable } from "../Platform/Sql/Sql.ts"
import { normalizeEmail } from "./Operators.ts"

export interface ThrottlePolicy {
  /** Failed sign-ins for one e-mail from one address before each further attempt waits. */
  readonly perPair: number
  /** Failed sign-ins from one address, whatever the e-mail, before each further attempt waits. */
  readonly perAddress: number
  /** The first wait; each further failure doubles it. */
  readonly firstDelay: Duration.Duration
  /** The longest wait. */
  readonly maxDelay: Duration.Duration
  /** Failures are forgotten after this long without one (longer than `maxDelay`). */
  readonly forgetAfter: Duration.Duration
}

export const defaultThrottlePolicy: ThrottlePolicy = {
  perPair: 5,
  perAddress: 30,
  firstDelay: Duration.seconds(1),
  maxDelay: Duration.minutes(15),
  forgetAfter: Duration.hours(1)
}

export interface Attempt {
  readonly email: string
  readonly ip: string
}

type Scope = "pair" | "address"

/**
 * Never per e-mail alone: whoever knows an operator's e-mail could lock the operator out. The
 * pair slows guessing one account from one address; the address slows trying many accounts.
 */
const subjectsOf = (attempt: Attempt): ReadonlyArray<readonly [Scope, string]> => [
  ["pair", JSON.stringify([normalizeEmail(attempt.email), attempt.ip])],
  ["address", attempt.ip]
]

interface Count {
  readonly scope: Scope
  readonly failures: number
  readonly lastFailureAt: number
}

/** Milliseconds after the last failure before the next attempt: none within the free ones, then doubling. */
export const backoffMillis = (policy: ThrottlePolicy, scope: Scope, failures: number) => {
  const free = scope === "pair" ? policy.perPair : policy.perAddress
  if (failures < free) return 0
  const doublings = Math.min(failures - free, 40)
  return Math.min(Duration.toMillis(policy.firstDelay) * 2 ** doublings, Duration.toMillis(policy.maxDelay))
}

/** Whole seconds until every count lets an attempt through; 0 when it may be made now. */
const waitOf = (policy: ThrottlePolicy, counts: ReadonlyArray<Count>, now: number) =>
  counts.reduce(
    (wait, count) =>
      Math.max(
        wait,
        Math.ceil((count.lastFailureAt + backoffMillis(policy, count.scope, count.failures) - now) / 1000)
      ),
    0
  )

const ThrottleRecords = Schema.Array(
  Schema.Struct({
    scope: Schema.Literals(["pair", "address"]),
    failures: Schema.Number,
    last_failure_at: Schema.Date
  })
)

const decodeThrottle = Schema.decodeUnknownEffect(ThrottleRecords)

/**
 * Failed sign-ins counted per (e-mail, address) pair (known e-mail or not, so the answer says
 * nothing about which exist) and per address; past the free ones each attempt waits a backoff
 * that doubles with every further failure, up to `maxDelay`. Shared by every instance.
 */
export class LoginThrottle extends Context.Service<
  LoginThrottle,
  {
    /** Seconds until the attempt may be made, or 0 when it may be made now. */
    check(attempt: Attempt): Effect.Effect<number, StoreUnavailable>
    recordFailure(attempt: Attempt): Effect.Effect<void>
    /**
     * `check` and `recordFailure` as one step, serialized per pair and per address, so concurrent
     * attempts cannot all pass the check: 0 means admitted and counted as a failure until
     * `recordSuccess` says otherwise.
     */
    admit(attempt: Attempt): Effect.Effect<number, StoreUnavailable>
    /** A successful sign-in clears its pair's count and takes itself off the address's. */
    recordSuccess(attempt: Attempt): Effect.Effect<void>
    /** Deletes the counts forgotten by now. */
    purge(): Effect.Effect<number>
  }
>()("lead-intake/LoginThrottle") {
  static readonly layerWith = (policy: ThrottlePolicy) =>
    Layer.effect(
      LoginThrottle,
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const forgetMillis = Duration.toMillis(policy.forgetAfter)
        const waitAt = (attempt: Attempt, now: number) => {
          const [[, pair], [, address]] = subjectsOf(attempt) as [[Scope, string], [Scope, string]]
          return sql`
            SELECT scope, failures, last_failure_at FROM login_throttle
            WHERE ((scope = 'pair' AND subject = ${pair}) OR (scope = 'address' AND subject = ${address}))
              AND last_failure_at > ${new Date(now - forgetMillis)}`.pipe(
            Effect.flatMap(decodeThrottle),
            Effect.map((rows) =>
              waitOf(
                policy,
                rows.map((row) => ({
                  scope: row.scope,
                  failures: row.failures,
                  lastFailureAt: row.last_failure_at.getTime()
                })),
                now
              )
            )
          )
        }
        const countFailure = Effect.fnUntraced(function* (attempt: Attempt, millis: number) {
          const now = new Date(millis)
          const forgotten = new Date(millis - forgetMillis)
          for (const [scope, subject] of subjectsOf(attempt)) {
            yield* sql`
              INSERT INTO login_throttle AS t (scope, subject, failures, last_failure_at)
              VALUES (${scope}, ${subject}, 1, ${now})
              ON CONFLICT (scope, subject) DO UPDATE SET
                failures = CASE WHEN t.last_failure_at <= ${forgotten} THEN 1 ELSE t.failures + 1 END,
                last_failure_at = ${now}`
          }
        })
        return LoginThrottle.of({
          check: Effect.fn("LoginThrottle.check")(function* (attempt) {
            const now = yield* Clock.currentTimeMillis
            return yield* waitAt(attempt, now).pipe(availableOrFail("LoginThrottle.check"))
          }),
          recordFailure: Effect.fn("LoginThrottle.recordFailure")(function* (attempt) {
            yield* countFailure(attempt, yield* Clock.currentTimeMillis).pipe(Effect.orDie)
          }),
          admit: Effect.fn("LoginThrottle.admit")(function* (attempt) {
            const now = yield* Clock.currentTimeMillis
            return yield* sql
              .withTransaction(
                Effect.gen(function* () {
                  // Always pair first, then address: two attempts never wait for each other in a cycle.
                  for (const [scope, subject] of subjectsOf(attempt)) {
                    yield* sql`SELECT pg_advisory_xact_lock(hashtext(${`login:${scope}:${subject}`}))`
                  }
                  const wait = yield* waitAt(attempt, now)
                  if (wait === 0) yield* countFailure(attempt, now)
                  return wait
                })
              )
              .pipe(availableOrFail("LoginThrottle.admit"))
          }),
          recordSuccess: Effect.fn("LoginThrottle.recordSuccess")(function* (attempt) {
            const [[, pair], [, address]] = subjectsOf(attempt) as [[Scope, string], [Scope, string]]
            yield* sql`DELETE FROM login_throttle WHERE scope = 'pair' AND subject = ${pair}`.pipe(
              Effect.orDie
            )
            yield* sql`
              UPDATE login_throttle SET failures = greatest(failures - 1, 0)
              WHERE scope = 'address' AND subject = ${address}`.pipe(Effect.orDie)
          }),
          purge: Effect.fn("LoginThrottle.purge")(function* () {
            const forgotten = new Date((yield* Clock.currentTimeMillis) - forgetMillis)
            const rows =
              yield* sql`DELETE FROM login_throttle WHERE last_failure_at <= ${forgotten} RETURNING scope`.pipe(
                Effect.orDie
              )
            return rows.length
          })
        })
      })
    )

  static readonly layer = LoginThrottle.layerWith(defaultThrottlePolicy)
}
