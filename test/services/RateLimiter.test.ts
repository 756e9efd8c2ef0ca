import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { RateLimiter } from "../../src/RateLimiter.ts"
import { seed } from "../support/Client.ts"
import { acrossLayers, setClock } from "./Suite.ts"

const minute = Date.parse("2026-05-04T09:30:00.000Z")

const consumeTimes = (originId: string, limit: number, times: number) =>
  Effect.gen(function* () {
    const limiter = yield* RateLimiter
    return yield* Effect.forEach(Array.from({ length: times }), () => limiter.consume(originId, limit))
  })

acrossLayers("RateLimiter", (it) => {
  it.effect("allows the limit within a Unix minute, then refuses, with the window in every answer", () =>
    Effect.gen(function* () {
      const limiter = yield* RateLimiter
      const { originId } = yield* seed()
      yield* setClock("2026-05-04T09:30:15.000Z")

      const allowed = yield* consumeTimes(originId, 60, 60)
      assert.deepStrictEqual(
        allowed.map((state) => state.remaining),
        Array.from({ length: 60 }, (_, i) => 59 - i)
      )
      for (const state of allowed) {
        assert.deepStrictEqual(
          {
            allowed: state.allowed,
            limit: state.limit,
            resetAt: state.resetAt,
            retryAfter: state.retryAfter
          },
          { allowed: true, limit: 60, resetAt: (minute + 60_000) / 1000, retryAfter: 45 }
        )
      }

      yield* TestClock.adjust("44500 millis")
      assert.deepStrictEqual(yield* limiter.consume(originId, 60), {
        allowed: false,
        limit: 60,
        remaining: 0,
        resetAt: (minute + 60_000) / 1000,
        retryAfter: 1
      })
    })
  )

  it.effect("refused requests consume nothing", () =>
    Effect.gen(function* () {
      const limiter = yield* RateLimiter
      const { originId } = yield* seed()
      yield* setClock("2026-05-04T09:30:00.000Z")
      yield* consumeTimes(originId, 3, 3)
      const refused = yield* consumeTimes(originId, 3, 5)
      assert.isTrue(refused.every((state) => !state.allowed))

      // Had the refusals counted, a limit of 4 would still refuse.
      const afterRaise = yield* limiter.consume(originId, 4)
      assert.deepStrictEqual([afterRaise.allowed, afterRaise.remaining], [true, 0])
      assert.isFalse((yield* limiter.consume(originId, 4)).allowed)
    })
  )

  it.effect("starts a new window at the next Unix minute, not 60 s after the first request", () =>
    Effect.gen(function* () {
      const limiter = yield* RateLimiter
      const { originId } = yield* seed()
      yield* setClock("2026-05-04T09:30:59.999Z")
      yield* consumeTimes(originId, 2, 2)
      const last = yield* limiter.consume(originId, 2)
      assert.deepStrictEqual(
        [last.allowed, last.retryAfter, last.resetAt],
        [false, 1, (minute + 60_000) / 1000]
      )

      yield* TestClock.adjust("1 millis")
      const fresh = yield* limiter.consume(originId, 2)
      assert.deepStrictEqual(fresh, {
        allowed: true,
        limit: 2,
        remaining: 1,
        resetAt: (minute + 120_000) / 1000,
        retryAfter: 60
      })
    })
  )

  it.effect("counts each origin on its own", () =>
    Effect.gen(function* () {
      const limiter = yield* RateLimiter
      const first = yield* seed()
      const second = yield* seed()
      yield* setClock("2026-05-04T09:31:10.000Z")
      yield* consumeTimes(first.originId, 5, 5)
      assert.isFalse((yield* limiter.consume(first.originId, 5)).allowed)
      const other = yield* limiter.consume(second.originId, 5)
      assert.deepStrictEqual([other.allowed, other.remaining], [true, 4])
    })
  )

  it.effect("applies a changed limit to the current window", () =>
    Effect.gen(function* () {
      const limiter = yield* RateLimiter
      const { originId } = yield* seed()
      yield* setClock("2026-05-04T09:32:00.000Z")
      yield* consumeTimes(originId, 60, 10)

      const lowered = yield* limiter.consume(originId, 5)
      assert.deepStrictEqual([lowered.allowed, lowered.limit, lowered.remaining], [false, 5, 0])

      const raised = yield* limiter.consume(originId, 100)
      assert.deepStrictEqual([raised.allowed, raised.limit, raised.remaining], [true, 100, 89])
    })
  )

  it.effect("never allows more than the limit under concurrent requests", () =>
    Effect.gen(function* () {
      const limiter = yield* RateLimiter
      const { originId } = yield* seed()
      yield* setClock("2026-05-04T09:33:20.000Z")
      const states = yield* Effect.forEach(Array.from({ length: 80 }), () => limiter.consume(originId, 60), {
        concurrency: 20
      })
      assert.strictEqual(states.filter((state) => state.allowed).length, 60)
      assert.deepStrictEqual(
        states
          .filter((state) => state.allowed)
          .map((state) => state.remaining)
          .sort((a, b) => a - b),
        Array.from({ length: 60 }, (_, i) => i)
      )
    })
  )
})
