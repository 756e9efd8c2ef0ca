import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { type MemoryState, MemoryStore } from "./MemoryStore.ts"
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

/** The start of the Unix minute `nowMillis` falls in: the window a request counts in. */
export const windowStartOf = (nowMillis: number) =>
  new Date(Math.floor(nowMillis / windowMillis) * windowMillis)

/** The window state after a request was counted (`count`), or refused (`null`: over the limit, nothing counted). */
export const windowOf = (nowMillis: number, limit: number, count: number | null): WindowState => {
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

/** The in-memory store's counting, shared by the fakes that count requests. */
export const countInMemory = (store: MemoryState, originId: string, limit: number, nowMillis: number) => {
  const slot = `${originId}@${Math.floor(nowMillis / windowMillis)}`
  const count = store.windows.get(slot) ?? 0
  if (count >= limit) return windowOf(nowMillis, limit, null)
  store.windows.set(slot, count + 1)
  return windowOf(nowMillis, limit, count + 1)
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
          const windowStart = windowStartOf(now)
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
          return countInMemory(store, originId, limit, yield* Clock.currentTimeMillis)
        })
      })
    })
  )
}
