import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { MemoryStore } from "./MemoryStore.ts"
import { availableOrFail, type StoreUnavailable } from "./Sql.ts"

export interface WindowState {
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  /** Unix seconds at which the next window starts. */
  readonly resetAt: number
  /** Seconds until then, at least 1. */
  readonly retryAfter: number
}

const windowMillis = 60_000

const windowOf = (nowMillis: number, limit: number, count: number | null): WindowState => {
  const start = Math.floor(nowMillis / windowMillis) * windowMillis
  const reset = start + windowMillis
  return {
    allowed: count !== null,
    limit,
    remaining: count === null ? 0 : Math.max(0, limit - count),
    resetAt: reset / 1000,
    retryAfter: Math.max(1, Math.ceil((reset - nowMillis) / 1000))
  }
}

/**
 * Fixed windows aligned to Unix minutes, counted in the database so every instance shares one
 * count per origin. A refused request consumes nothing.
 */
export class RateLimiter extends Context.Service<
  RateLimiter,
  {
    consume(originId: string, limit: number): Effect.Effect<WindowState, StoreUnavailable>
  }
>()("lead-intake/RateLimiter") {
  static readonly layer = Layer.effect(
    RateLimiter,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      return RateLimiter.of({
        consume: Effect.fn("RateLimiter.consume")(function* (originId, limit) {
          const now = yield* Clock.currentTimeMillis
          const windowStart = new Date(Math.floor(now / windowMillis) * windowMillis)
          const rows = yield* sql<{ count: number }>`
            INSERT INTO rate_limit_windows AS w (origin_id, window_start, count)
            VALUES (${originId}, ${windowStart}, 1)
            ON CONFLICT (origin_id, window_start) DO UPDATE SET count = w.count + 1 WHERE w.count < ${limit}
            RETURNING count`.pipe(availableOrFail("RateLimiter.consume"))
          const state = windowOf(now, limit, rows[0]?.count ?? null)
          yield* Effect.annotateCurrentSpan({
            "ratelimit.remaining": state.remaining,
            "ratelimit.allowed": state.allowed
          })
          return state
        })
      })
    })
  )

  static readonly layerMemory = Layer.effect(
    RateLimiter,
    Effect.gen(function* () {
      const store = yield* MemoryStore
      return RateLimiter.of({
        consume: Effect.fn("RateLimiter.consume")(function* (originId, limit) {
          const now = yield* Clock.currentTimeMillis
          const slot = `${originId}@${Math.floor(now / windowMillis)}`
          const count = store.windows.get(slot) ?? 0
          if (count >= limit) return windowOf(now, limit, null)
          store.windows.set(slot, count + 1)
          return windowOf(now, limit, count + 1)
        })
      })
    })
  )
}
