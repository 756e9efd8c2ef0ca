import { Clock, Context, Effect, Layer, Schema } from "effect"
import { SqlSchema } from "effect/sql"
import { type RateWindowShape, windowIndexOf, windowOf, windowStartOf } from "../Domain/RateWindow.ts"
import { MemoryStore, rateWindowSlot } from "../Platform/MemoryStore.ts"
import { step } from "../Platform/Observability/Steps.ts"
import { pipelinedSql, type StoreUnavailable } from "../Platform/Sql/Sql.ts"

/** The origin's window is full: nothing was counted. */
export class RateLimitExceeded extends Schema.TaggedError<RateLimitExceeded>()("RateLimitExceeded", {
  window: Schema.Struct({
    allowed: Schema.Boolean,
    limit: Schema.Number,
    remaining: Schema.Number,
    resetAt: Schema.Number,
    retryAfter: Schema.Number
  })
}) {}

export interface RateSubject {
  readonly originId: string
  /** A test key counts in its own window, with the origin's limit (docs/contract.md#10-test-mode). */
  readonly livemode: boolean
  /** Requests per minute. */
  readonly rateLimit: number
}

/**
 * The per-origin request window of docs/contract.md#4-rate-limit: fixed 60-second windows aligned to Unix
 * minutes, counted in the database so every instance shares one count. A request over the limit
 * counts nothing. effect's `RateLimiter` (effect/persistence) was the first candidate; its
 * "fixed-window" is a counter that drains one token per `window / limit`, not a calendar minute,
 * and its store interface couples token buckets and adaptive limits that the contract has no use
 * for, so the window is counted here in one statement.
 */
export class RateLimiter extends Context.Service<
  RateLimiter,
  {
    consume(subject: RateSubject): Effect.Effect<RateWindowShape, RateLimitExceeded | StoreUnavailable>
  }
>()("lead-intake/RateLimiter") {
  /**
   * One UPSERT per request on its own short statement: the counter row is hot for its origin, so it
   * is never held inside the lead's transaction (docs/performance.md#where-the-time-goes). The windows
   * live in a table the node the service connects to keeps to itself (`rate_windows`, migration 0027),
   * so counting makes no trip to a Citus worker.
   */
  static readonly layer = Layer.effect(
    RateLimiter,
    Effect.gen(function* () {
      // Pipelined with other requests' statements, its commit not waiting for the WAL flush: a count
      // needs neither cancelling alone nor surviving a crash of PostgreSQL (`Sql.PipelinedSql`).
      const { sql, orFail } = yield* pipelinedSql
      const fn = yield* step
      const count = SqlSchema.findAll({
        Request: Schema.Struct({
          originId: Schema.String,
          livemode: Schema.Boolean,
          windowStart: Schema.Date,
          limit: Schema.Number
        }),
        Result: Schema.Struct({ count: Schema.Number }),
        execute: ({ originId, livemode, windowStart, limit }) => sql`
          INSERT INTO rate_windows AS w (origin_id, livemode, window_start, count)
          VALUES (${originId}, ${livemode}, ${windowStart}, 1)
          ON CONFLICT (origin_id, livemode, window_start) DO UPDATE SET count = w.count + 1
          WHERE w.count < ${limit}
          RETURNING count`
      })
      return RateLimiter.of({
        consume: fn("RateLimiter.consume")(function* ({ originId, livemode, rateLimit }) {
          const now = yield* Clock.currentTimeMillis
          const [row] = yield* count({
            originId,
            livemode,
            windowStart: windowStartOf(now),
            limit: rateLimit
          }).pipe(orFail("RateLimiter.consume"))
          return yield* decide(windowOf(now, rateLimit, row?.count ?? null))
        })
      })
    })
  )

  static readonly layerMemory = Layer.effect(
    RateLimiter,
    Effect.gen(function* () {
      const store = yield* MemoryStore
      return RateLimiter.of({
        consume: Effect.fn("RateLimiter.consume")(function* ({ originId, livemode, rateLimit }) {
          const now = yield* Clock.currentTimeMillis
          const slot = rateWindowSlot(originId, livemode, windowIndexOf(now))
          const counted = store.windows.get(slot) ?? 0
          if (counted < rateLimit) store.windows.set(slot, counted + 1)
          return yield* decide(windowOf(now, rateLimit, counted < rateLimit ? counted + 1 : null))
        })
      })
    })
  )
}

const decide = (window: RateWindowShape) =>
  Effect.gen(function* () {
    yield* Effect.annotateCurrentSpan({
      "ratelimit.remaining": window.remaining,
      "ratelimit.allowed": window.allowed
    })
    return window.allowed ? window : yield* new RateLimitExceeded({ window })
  })
