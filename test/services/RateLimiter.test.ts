import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { KeyStore } from "../../src/Accounts/KeyStore.ts"
import { generateApiKey } from "../../src/Domain/ApiKey.ts"
import { RateLimiter } from "../../src/Intake/RateLimiter.ts"
import { seed } from "../support/Client.ts"
import { acrossLayers, expectFailure, setClock } from "./Suite.ts"

const minute = Date.parse("2026-05-04T09:30:00.000Z")

/** An origin whose key allows `limit` requests a minute. */
const originWithLimit = (limit: number) =>
  Effect.gen(function* () {
    const fixture = yield* seed()
    yield* (yield* KeyStore).setRateLimit(fixture.originId, limit)
    return fixture
  })

/** The request path's admission: the key names the caller, then the request counts in its window. */
const admit = (key: string) =>
  Effect.gen(function* () {
    const caller = yield* (yield* KeyStore).authenticate(key)
    return yield* (yield* RateLimiter).consume(caller)
  })

const admitWindow = (key: string) =>
  admit(key).pipe(Effect.catchTag("RateLimitExceeded", (exceeded) => Effect.succeed(exceeded.window)))

const admitTimes = (key: string, times: number) =>
  Effect.forEach(Array.from({ length: times }), () => admitWindow(key))

acrossLayers("RateLimiter", (it) => {
  it.effect("admits the limit within a Unix minute, then refuses, with the window in every answer", () =>
    Effect.gen(function* () {
      const { key } = yield* originWithLimit(60)
      yield* setClock("2026-05-04T09:30:15.000Z")

      const allowed = yield* admitTimes(key, 60)
      assert.deepStrictEqual(
        allowed,
        Array.from({ length: 60 }, (_, i) => ({
          allowed: true,
          limit: 60,
          remaining: 59 - i,
          resetAt: (minute + 60_000) / 1000,
          retryAfter: 45
        }))
      )

      yield* TestClock.adjust("44500 millis")
      assert.deepStrictEqual(yield* admitWindow(key), {
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
      const { key, originId } = yield* originWithLimit(3)
      yield* setClock("2026-05-04T09:30:00.000Z")
      yield* admitTimes(key, 3)
      const refused = yield* admitTimes(key, 5)
      const resetAt = (minute + 60_000) / 1000
      assert.deepStrictEqual(
        refused,
        Array.from({ length: 5 }, () => ({ allowed: false, limit: 3, remaining: 0, resetAt, retryAfter: 60 }))
      )

      // Had the refusals counted, a limit of 4 would still refuse.
      yield* (yield* KeyStore).setRateLimit(originId, 4)
      const afterRaise = yield* admitWindow(key)
      assert.deepStrictEqual(afterRaise, { allowed: true, limit: 4, remaining: 0, resetAt, retryAfter: 60 })
      assert.isFalse((yield* admitWindow(key)).allowed)
    })
  )

  it.effect("a refused key counts nothing in its origin's window", () =>
    Effect.gen(function* () {
      const { key, originId } = yield* originWithLimit(2)
      yield* setClock("2026-05-04T09:34:00.000Z")
      const forged = `${key.slice(0, -6)}${generateApiKey().key.slice(-6)}`
      for (let attempt = 0; attempt < 3; attempt++) {
        const error = yield* expectFailure(admit(forged))
        assert.strictEqual(error._tag, "KeyRejected")
      }
      const resetAt = (minute + 300_000) / 1000
      assert.deepStrictEqual(yield* admitTimes(key, 2), [
        { allowed: true, limit: 2, remaining: 1, resetAt, retryAfter: 60 },
        { allowed: true, limit: 2, remaining: 0, resetAt, retryAfter: 60 }
      ])
      yield* (yield* KeyStore).revoke(originId)
      const revoked = yield* expectFailure(admit(key))
      assert.deepStrictEqual(revoked._tag === "KeyRejected" ? [revoked.reason, revoked.originId] : [], [
        "revoked",
        originId
      ])
    })
  )

  it.effect("starts a new window at the next Unix minute, not 60 s after the first request", () =>
    Effect.gen(function* () {
      const { key } = yield* originWithLimit(2)
      yield* setClock("2026-05-04T09:30:59.999Z")
      yield* admitTimes(key, 2)
      const last = yield* admitWindow(key)
      assert.deepStrictEqual(last, {
        allowed: false,
        limit: 2,
        remaining: 0,
        resetAt: (minute + 60_000) / 1000,
        retryAfter: 1
      })

      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(yield* admitWindow(key), {
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
      const first = yield* originWithLimit(5)
      const second = yield* originWithLimit(5)
      yield* setClock("2026-05-04T09:31:10.000Z")
      yield* admitTimes(first.key, 5)
      assert.isFalse((yield* admitWindow(first.key)).allowed)
      const other = yield* admitWindow(second.key)
      assert.deepStrictEqual(other, {
        allowed: true,
        limit: 5,
        remaining: 4,
        resetAt: (minute + 120_000) / 1000,
        retryAfter: 50
      })
    })
  )

  it.effect("applies a changed limit to the current window", () =>
    Effect.gen(function* () {
      const { key, originId } = yield* originWithLimit(60)
      yield* setClock("2026-05-04T09:32:00.000Z")
      yield* admitTimes(key, 10)

      yield* (yield* KeyStore).setRateLimit(originId, 5)
      const lowered = yield* admitWindow(key)
      const resetAt = (minute + 180_000) / 1000
      assert.deepStrictEqual(lowered, { allowed: false, limit: 5, remaining: 0, resetAt, retryAfter: 60 })

      yield* (yield* KeyStore).setRateLimit(originId, 100)
      const raised = yield* admitWindow(key)
      assert.deepStrictEqual(raised, { allowed: true, limit: 100, remaining: 89, resetAt, retryAfter: 60 })
    })
  )

  it.effect("never admits more than the limit under concurrent requests", () =>
    Effect.gen(function* () {
      const { key } = yield* originWithLimit(60)
      yield* setClock("2026-05-04T09:33:20.000Z")
      const windows = yield* Effect.forEach(Array.from({ length: 80 }), () => admitWindow(key), {
        concurrency: 20
      })
      assert.strictEqual(windows.filter((window) => window.allowed).length, 60)
      assert.deepStrictEqual(
        windows
          .filter((window) => window.allowed)
          .map((window) => window.remaining)
          .sort((a, b) => a - b),
        Array.from({ length: 60 }, (_, i) => i)
      )
    })
  )
})
