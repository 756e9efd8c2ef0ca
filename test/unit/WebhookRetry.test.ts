import { describe, expect, it } from "vitest"
import {
  defaultSchedule,
  nextRetryDelay,
  parseRetryAfter,
  parseSchedule,
  scheduledDelay
} from "../../src/Domain/WebhookRetry.ts"

const minute = 60_000
const hour = 60 * minute

describe("the retry schedule", () => {
  it("parses the default schedule", () => {
    expect(parseSchedule(defaultSchedule)).toEqual([
      5000,
      5 * minute,
      30 * minute,
      2 * hour,
      5 * hour,
      10 * hour,
      10 * hour
    ])
  })

  it("accepts ms, s, m, h, d, decimals and spaces", () => {
    expect(parseSchedule("200ms, 1.5s ,2m,1h,1d")).toEqual([200, 1500, 2 * minute, hour, 24 * hour])
  })

  it("names the bad part of a malformed schedule", () => {
    expect(parseSchedule("")).toMatch(/comma-separated/)
    expect(parseSchedule("5s,soon")).toBe('"soon" is not a delay (a number followed by ms, s, m, h or d)')
    expect(parseSchedule("5")).toMatch(/"5" is not a delay/)
    expect(parseSchedule("5s,,5m")).toMatch(/"" is not a delay/)
    expect(parseSchedule("-5s")).toMatch(/not a delay/)
    expect(parseSchedule("8d")).toBe('"8d" is longer than 7 days')
    expect(parseSchedule(Array.from({ length: 51 }, () => "1s").join(","))).toBe("at most 50 retries")
  })

  it("adds at most 10 % jitter to each delay and ends after the last", () => {
    const schedule = parseSchedule("5s,5m") as ReadonlyArray<number>
    expect(scheduledDelay(schedule, 1, 0)).toBe(5000)
    expect(scheduledDelay(schedule, 1, 0.999999)).toBe(5500)
    expect(scheduledDelay(schedule, 2, 0.5)).toBe(5 * minute * 1.05)
    expect(scheduledDelay(schedule, 3, 0)).toBeUndefined()
    for (let i = 0; i < 1000; i++) {
      const delay = scheduledDelay(schedule, 2, Math.random())!
      expect(delay).toBeGreaterThanOrEqual(5 * minute)
      expect(delay).toBeLessThanOrEqual(5.5 * minute)
    }
  })

  it("honours a longer Retry-After on 429 and 503 only, capped at a day", () => {
    const schedule = [5000, 10_000]
    const failed = (status: number | null, retryAfterMillis: number | undefined) => ({
      failedAttempts: 1,
      status,
      retryAfterMillis
    })
    expect(nextRetryDelay(schedule, failed(503, 60_000), 0)).toBe(60_000)
    expect(nextRetryDelay(schedule, failed(429, 60_000), 0)).toBe(60_000)
    expect(nextRetryDelay(schedule, failed(503, 1000), 0)).toBe(5000)
    expect(nextRetryDelay(schedule, failed(500, 60_000), 0)).toBe(5000)
    expect(nextRetryDelay(schedule, failed(null, undefined), 0)).toBe(5000)
    expect(nextRetryDelay(schedule, failed(503, 10 * 86_400_000), 0)).toBe(86_400_000)
    expect(
      nextRetryDelay(schedule, { failedAttempts: 3, status: 503, retryAfterMillis: 1000 }, 0)
    ).toBeUndefined()
  })

  it("reads Retry-After as seconds or an HTTP date", () => {
    const now = Date.parse("2026-11-23T10:00:00Z")
    expect(parseRetryAfter("120", now)).toBe(120_000)
    expect(parseRetryAfter(" 0 ", now)).toBe(0)
    expect(parseRetryAfter("Mon, 23 Nov 2026 10:05:00 GMT", now)).toBe(5 * minute)
    expect(parseRetryAfter("Mon, 23 Nov 2026 09:05:00 GMT", now)).toBe(0)
    expect(parseRetryAfter(undefined, now)).toBeUndefined()
    expect(parseRetryAfter("soon", now)).toBeUndefined()
    expect(parseRetryAfter("-5", now)).toBeUndefined()
    expect(parseRetryAfter("1.5", now)).toBeUndefined()
  })
})
