/** The request's place in its origin's rate-limit window. */
export interface RateWindowShape {
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  /** Unix seconds at which the next window starts. */
  readonly resetAt: number
  /** Seconds until then, at least 1. */
  readonly retryAfter: number
}

const windowMillis = 60_000

/** The index of the Unix minute `nowMillis` falls in: the window a request counts in. */
export const windowIndexOf = (nowMillis: number) => Math.floor(nowMillis / windowMillis)

/** The start of that minute, as the database stores it. */
export const windowStartOf = (nowMillis: number) => new Date(windowIndexOf(nowMillis) * windowMillis)

/** The window after a request was counted (`count`), or refused (`null`: over the limit, nothing counted). */
export const windowOf = (nowMillis: number, limit: number, count: number | null): RateWindowShape => {
  const reset = (windowIndexOf(nowMillis) + 1) * windowMillis
  return {
    allowed: count !== null,
    limit,
    remaining: count === null ? 0 : Math.max(0, limit - count),
    resetAt: reset / 1000,
    retryAfter: Math.max(1, Math.ceil((reset - nowMillis) / 1000))
  }
}
