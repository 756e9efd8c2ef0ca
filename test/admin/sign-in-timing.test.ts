import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectError, type Harness, makeHarness, send } from "./support.ts"

/**
 * The one test of the console's API that compares answer times: in the `timed` list of
 * vitest.config.ts (run alone), apart from test/admin/api.test.ts, which runs beside other files.
 */
describe("sign-in answer times", { timeout: 120_000 }, () => {
  let harness: Harness

  beforeAll(async () => {
    harness = await makeHarness()
  }, 120_000)

  afterAll(() => harness?.close())

  it("answers a wrong password and an unknown e-mail alike, in comparable time (no enumeration)", async () => {
    const timed = async (email: string) => {
      const started = performance.now()
      const answer = await send(harness.admin, "POST", "/api/session", {
        body: { email, password: "wrong-password" }
      })
      return { answer, millis: performance.now() - started }
    }
    const median = (values: Array<number>) => values.sort((x, y) => x - y)[Math.floor(values.length / 2)]!
    const wrongTimes: Array<number> = []
    const unknownTimes: Array<number> = []
    let wrong = await timed(harness.b.viewer.email)
    let unknown = await timed(`nobody-${crypto.randomUUID()}@example.com`)
    for (let i = 0; i < 3; i++) {
      wrong = await timed(harness.b.viewer.email)
      unknown = await timed(`nobody-${crypto.randomUUID()}@example.com`)
      wrongTimes.push(wrong.millis)
      unknownTimes.push(unknown.millis)
    }
    for (const { answer } of [wrong, unknown]) {
      expectError(answer, 401, "unauthenticated")
      expect(answer.body.error.message).toBe("Invalid email or password")
      expect(answer.headers.get("set-cookie")).toBeNull()
    }
    expect(unknown.answer.body.error).toEqual(wrong.answer.body.error)
    // Both ran scrypt: neither answer comes in a fraction of the other's time.
    expect(median(unknownTimes)).toBeGreaterThan(median(wrongTimes) / 3)
    expect(median(wrongTimes)).toBeGreaterThan(median(unknownTimes) / 3)
  })
})
