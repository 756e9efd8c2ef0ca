import { request as httpRequest } from "node:http"
import { Duration } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { defaultSessionPolicy } from "../../src/Console/Sessions.ts"
import { type Harness, makeHarness, offsetClock, send, signIn } from "./support.ts"

const attempt = (harness: Harness, email: string, password: string) =>
  send(harness.admin, "POST", "/api/session", { body: { email, password } })

interface Reply {
  readonly status: number
  readonly retryAfter: number
  // biome-ignore lint/suspicious/noExplicitAny: tests inspect response bodies field by field
  readonly body: any
}

/** A sign-in over a real socket from `localAddress` (any of 127.0.0.0/8), the peer address the throttle sees. */
const signInFrom = (port: number, localAddress: string, email: string, password: string) =>
  new Promise<Reply>((resolve, reject) => {
    const request = httpRequest(
      {
        host: "127.0.0.1",
        port,
        localAddress,
        method: "POST",
        path: "/api/session",
        headers: { "content-type": "application/json" }
      },
      (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            retryAfter: Number(response.headers["retry-after"] ?? 0),
            body: JSON.parse(Buffer.concat(chunks).toString("utf8"))
          })
        )
      }
    )
    request.on("error", reject)
    request.end(JSON.stringify({ email, password }))
  })

const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis))

describe("login throttling through the real router, on PostgreSQL", { timeout: 120_000 }, () => {
  let harness: Harness
  let listener: { readonly port: number; readonly close: () => Promise<void> }

  beforeAll(async () => {
    harness = await makeHarness({
      throttle: {
        perPair: 3,
        perAddress: 7,
        // Each failed sign-in spends ~0.3 s or more hashing: a first wait well above that.
        firstDelay: Duration.seconds(4),
        maxDelay: Duration.minutes(15),
        forgetAfter: Duration.hours(1)
      }
    })
    listener = await harness.listen()
  }, 120_000)
  afterAll(async () => {
    await listener?.close()
    await harness?.close()
  })

  it("guessing from one address stays throttled with a growing backoff; the owner elsewhere signs in at once; the audit trail shows it", async () => {
    const owner = harness.a.viewer
    const from = (address: string, password: string) =>
      signInFrom(listener.port, address, owner.email, password)
    for (let i = 0; i < 3; i++) expect((await from("127.0.0.1", "wrong")).status).toBe(401)
    const refused = await from("127.0.0.1", owner.password)
    expect(refused.status, JSON.stringify(refused.body)).toBe(429)
    expect(refused.body.error.code).toBe("rate_limited")
    expect(refused.retryAfter).toBeGreaterThanOrEqual(2)
    expect(refused.retryAfter).toBeLessThanOrEqual(4)
    for (let i = 0; i < 5; i++) {
      const hammering = await from("127.0.0.1", "guess")
      expect(hammering.status, "refused attempts change nothing").toBe(429)
      expect(hammering.retryAfter).toBeGreaterThan(0)
    }

    const elsewhere = await from("127.0.0.2", owner.password)
    expect(elsewhere.status, "the owner from another address is not locked out").toBe(200)

    await sleep((await from("127.0.0.1", "wrong")).retryAfter * 1000 + 100)
    expect((await from("127.0.0.1", "wrong")).status, "admitted after the backoff").toBe(401)
    const longer = await from("127.0.0.1", owner.password)
    expect(longer.status).toBe(429)
    expect(longer.retryAfter, "the backoff doubled").toBeGreaterThanOrEqual(6)
    expect(longer.retryAfter).toBeLessThanOrEqual(8)
    await sleep(longer.retryAfter * 1000 + 100)
    expect((await from("127.0.0.1", owner.password)).status, "the owner signs in after the backoff").toBe(200)
    expect((await from("127.0.0.1", "wrong")).status, "a success cleared the pair").toBe(401)

    const admin = await signIn(harness, harness.a.admin)
    const audit = await admin.call("GET", "/api/audit")
    const throttled = audit.body.items.filter(
      (entry: { action: string }) => entry.action === "session.sign_in_throttled"
    )
    expect(throttled.length).toBeGreaterThanOrEqual(2)
    expect(throttled[0]).toMatchObject({ operator_email: owner.email, ip: "127.0.0.1" })
    expect(
      throttled.map((entry: { target: string }) => entry.target.replace(/in \d+ s$/, "in N s"))
    ).toContain(`${owner.email} from 127.0.0.1: next attempt in N s`)
  })

  it("throttles an unknown e-mail exactly like a known one (no enumeration)", async () => {
    const ghost = `ghost-${crypto.randomUUID()}@example.com`
    const answers = []
    for (let i = 0; i < 4; i++) answers.push(await attempt(harness, ghost, "wrong"))
    expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 429])
    expect(answers[3]!.body.error.message).not.toContain(ghost)
  })

  it("one address trying many accounts is throttled after 7 failures, whatever the account; other addresses are not", async () => {
    for (let i = 0; i < 7; i++) {
      const reply = await signInFrom(
        listener.port,
        "127.0.0.3",
        `x-${crypto.randomUUID()}@example.com`,
        "wrong"
      )
      expect(reply.status).toBe(401)
    }
    const refused = await signInFrom(
      listener.port,
      "127.0.0.3",
      harness.b.admin.email,
      harness.b.admin.password
    )
    expect(refused.status).toBe(429)
    expect(refused.body.error.message).not.toContain(harness.b.admin.email)
    const other = await signInFrom(
      listener.port,
      "127.0.0.4",
      harness.b.admin.email,
      harness.b.admin.password
    )
    expect(other.status).toBe(200)
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

describe("idle expiry at the default 30 minutes, the clock driven by the test, through the real router", {
  timeout: 120_000
}, () => {
  const time = offsetClock()
  let harness: Harness

  beforeAll(async () => {
    harness = await makeHarness({ clock: time.clock })
  }, 120_000)
  afterAll(() => harness?.close())

  it("a session lives while used within 30 minutes, ends after 30 idle minutes, and after 12 hours however busy", async () => {
    expect(Duration.toMillis(defaultSessionPolicy.idle)).toBe(30 * 60_000)
    const idle = await signIn(harness, harness.a.admin)
    const busy = await signIn(harness, harness.a.viewer)
    const live = async (session: typeof idle) => (await session.call("GET", "/api/session")).status
    let elapsed = 0
    const advance = (minutes: number) => {
      time.advance(Duration.minutes(minutes))
      elapsed += minutes
    }
    advance(29)
    expect(await live(idle), "29 minutes").toBe(200)
    expect(await live(busy)).toBe(200)
    advance(29)
    expect(await live(idle), "slid by the last use").toBe(200)
    expect(await live(busy)).toBe(200)
    advance(15)
    expect(await live(busy)).toBe(200)
    advance(15)
    const expired = await idle.call("GET", "/api/origins")
    expect(expired.status, "30 idle minutes").toBe(401)
    expect(expired.body.error.code).toBe("unauthenticated")
    expect(await live(idle), "for good").toBe(401)
    expect(await live(busy), "the other session, used 15 minutes ago").toBe(200)

    while (elapsed + 20 < 12 * 60) {
      advance(20)
      expect(await live(busy), `used every 20 minutes, ${elapsed} min after sign-in`).toBe(200)
    }
    advance(20)
    expect(await live(busy), "12 hours since sign-in").toBe(401)
    expect((await signIn(harness, harness.a.viewer)).csrf, "signing in again works").toEqual(
      expect.any(String)
    )
  })
})
