/**
 * When a failed attempt is tried again: `WEBHOOK_RETRY_SCHEDULE` lists the delay after each failed
 * attempt; each delay gets up to 10 % jitter so a receiver coming back is not hit by a synchronised
 * wave, and a longer `Retry-After` on 429/503 wins. Past the schedule's end the delivery is failed.
 */
export type RetrySchedule = ReadonlyArray<number>

export const defaultSchedule = "5s,5m,30m,2h,5h,10h,10h"

const unitMillis: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

const longestDelayMillis = 7 * 86_400_000

/** `500ms`, `5s`, `2h`: milliseconds, or a message naming the bad text. */
export const parseDelay = (part: string): number | string => {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/.exec(part)
  if (match === null) return `"${part.trim()}" is not a delay (a number followed by ms, s, m, h or d)`
  const millis = Math.round(Number(match[1]) * unitMillis[match[2]!]!)
  if (millis > longestDelayMillis) return `"${part.trim()}" is longer than 7 days`
  return millis
}

/** `5s,5m,30m,2h` into milliseconds; a message naming the bad part otherwise. */
export const parseSchedule = (raw: string): RetrySchedule | string => {
  if (raw.trim() === "") return "expected a comma-separated list of delays such as 5s,5m,30m"
  const delays: Array<number> = []
  for (const part of raw.split(",")) {
    const millis = parseDelay(part)
    if (typeof millis === "string") return millis
    delays.push(millis)
  }
  if (delays.length > 50) return "at most 50 retries"
  return delays
}

export const jitterFraction = 0.1

/** The schedule's delay after `failedAttempts` failures, stretched by `random` ∈ [0, 1) times 10 %. */
export const scheduledDelay = (
  schedule: RetrySchedule,
  failedAttempts: number,
  random: number
): number | undefined => {
  const delay = schedule[failedAttempts - 1]
  return delay === undefined ? undefined : Math.round(delay * (1 + jitterFraction * random))
}

/** `Retry-After` as delta-seconds or an HTTP date, in milliseconds from `now`. */
export const parseRetryAfter = (header: string | undefined, now: number): number | undefined => {
  if (header === undefined) return undefined
  const value = header.trim()
  if (/^\d+$/.test(value)) return Number(value) * 1000
  const date = Date.parse(value)
  if (Number.isNaN(date) || !/[a-z]/i.test(value)) return undefined
  return Math.max(0, date - now)
}

const honoursRetryAfter = new Set([429, 503])

/** A receiver cannot park a delivery for longer than a day. */
export const longestRetryAfterMillis = 86_400_000

export interface FailedAttempt {
  /** Failures so far, this one included, since the delivery was (re)queued. */
  readonly failedAttempts: number
  readonly status: number | null
  readonly retryAfterMillis: number | undefined
}

/** Milliseconds until the next attempt, or `undefined` when the schedule is spent. */
export const nextRetryDelay = (
  schedule: RetrySchedule,
  attempt: FailedAttempt,
  random: number
): number | undefined => {
  const delay = scheduledDelay(schedule, attempt.failedAttempts, random)
  if (delay === undefined) return undefined
  if (
    attempt.status !== null &&
    honoursRetryAfter.has(attempt.status) &&
    attempt.retryAfterMillis !== undefined
  ) {
    return Math.max(delay, Math.min(attempt.retryAfterMillis, longestRetryAfterMillis))
  }
  return delay
}
