import { Duration } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Harness, makeHarness, send, signIn } from "./support.ts"

const attempt = (harness: Harness, email: string, password: string) =>
  send(harness.admin, "POST", "/api/session", { body: { email, password } })

describe("login throttling through the real router, on PostgreSQL", { timeout: 120_000 }, () => {
  let harness: Harness

  beforeAll(async () => {
    harness = await makeHarness({
      throttle: { window: Duration.minutes(15), perAccount: 3, perAddress: 7 }
    })
  }, 120_000)
  afterAll(() => harness?.close())

  it("refuses an account after 3 failures, even with the right password, with Retry-After; others still sign in", async () => {
    for (let i = 0; i < 3; i++) {
      expect((await attempt(harness, harness.a.viewer.email, "wrong")).status).toBe(401)
    }
    const refused = await attempt(harness, harness.a.viewer.email, harness.a.viewer.password)
    expect(refused.status, refused.text).toBe(429)
    expect(refused.body.error.code).toBe("rate_limited")
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(800)
    expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(900)
    expect(refused.headers.get("set-cookie")).toBeNull()
    expect((await signIn(harness, harness.a.admin)).csrf).toEqual(expect.any(String))
  })

  it("throttles an unknown e-mail exactly like a known one (no enumeration)", async () => {
    const ghost = `ghost-${crypto.randomUUID()}@example.com`
    const answers = []
    for (let i = 0; i < 4; i++) answers.push(await attempt(harness, ghost, "wrong"))
    expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 429])
  })

  it("refuses the address after 7 failures across accounts, whatever the account", async () => {
    // 3 + 3 failures so far from this (single) address in this file, plus one more
    expect((await attempt(harness, `x-${crypto.randomUUID()}@example.com`, "wrong")).status).toBe(401)
    const refused = await attempt(harness, harness.b.admin.email, harness.b.admin.password)
    expect(refused.status, refused.text).toBe(429)
    expect(refused.body.error.message).not.toContain(harness.b.admin.email)
  })
})

describe("session expiry through the real router, on PostgreSQL", { timeout: 120_000 }, () => {
  let harness: Harness

  beforeAll(async () => {
    harness = await makeHarness({
      sessions: { idle: Duration.millis(2000), absolute: Duration.millis(5000) }
    })
  }, 120_000)
  afterAll(() => harness?.close())

  const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis))

  it("ends a session left idle; each use slides it; the absolute limit ends it however busy", async () => {
    const idle = await signIn(harness, harness.a.admin)
    const busy = await signIn(harness, harness.a.viewer)
    const signedInAt = performance.now()
    for (let i = 0; i < 3; i++) {
      await sleep(1000)
      expect((await busy.call("GET", "/api/session")).status, "used within the idle time").toBe(200)
    }
    const expired = await idle.call("GET", "/api/origins")
    expect(expired.status, "3 s idle").toBe(401)
    expect(expired.body.error.code).toBe("unauthenticated")
    while (performance.now() - signedInAt < 4000) {
      await sleep(500)
      expect((await busy.call("GET", "/api/session")).status).toBe(200)
    }
    await sleep(Math.max(0, 5200 - (performance.now() - signedInAt)))
    expect((await busy.call("GET", "/api/session")).status, "over 5 s since sign-in").toBe(401)
  })
})
