import { Duration } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { defaultThrottlePolicy } from "../../src/Console/LoginThrottle.ts"
import { parseTrustedProxies, type TrustedProxies } from "../../src/Platform/TrustedProxies.ts"
import { type Account, type Harness, makeHarness } from "./support.ts"

const trust = (raw: string) => parseTrustedProxies(raw) as TrustedProxies

/**
 * The console on a real socket, so every request has a TCP peer (127.0.0.1): with that peer
 * trusted (`TRUSTED_PROXIES=127.0.0.1`) it plays a reverse proxy; with only 10.0.0.0/8 trusted it
 * plays a client that writes the forwarding headers itself.
 */
describe("the console behind a reverse proxy (TRUSTED_PROXIES), on a real socket", {
  timeout: 120_000
}, () => {
  let harness: Harness
  let proxied: { url: string; close: () => Promise<void> }
  let direct: { url: string; close: () => Promise<void> }

  beforeAll(async () => {
    harness = await makeHarness({
      throttle: { ...defaultThrottlePolicy, perPair: 100, perAddress: 3, firstDelay: Duration.minutes(15) }
    })
    proxied = await harness.listen({ trustedProxies: trust("127.0.0.1, ::1") })
    direct = await harness.listen({ trustedProxies: trust("10.0.0.0/8") })
  }, 120_000)
  afterAll(async () => {
    await proxied?.close()
    await direct?.close()
    await harness?.close()
  })

  const signIn = (
    base: string,
    account: { email: string; password: string },
    headers: Record<string, string>
  ) =>
    fetch(`${base}/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ email: account.email, password: account.password })
    })

  /** The address the audit trail recorded for the account's latest sign-in. */
  const auditedAddress = async (base: string, account: Account, answer: Response) => {
    const cookie = answer.headers.get("set-cookie")!.split(";")[0]!
    const audit = await fetch(`${base}/api/audit`, { headers: { cookie } })
    expect(audit.status).toBe(200)
    const { items } = (await audit.json()) as {
      items: Array<{ action: string; operator_email: string; ip: string }>
    }
    return items.find((item) => item.action === "session.sign_in" && item.operator_email === account.email)
      ?.ip
  }

  it("from an untrusted peer, X-Forwarded-For and X-Forwarded-Proto change nothing", async () => {
    const spoofed = { "x-forwarded-for": "203.0.113.9", "x-forwarded-proto": "https" }
    const answer = await signIn(direct.url, harness.b.admin, spoofed)
    expect(answer.status).toBe(200)
    expect(answer.headers.get("set-cookie")).not.toMatch(/; Secure/)
    expect(await auditedAddress(direct.url, harness.b.admin, answer)).toBe("127.0.0.1")

    // A new made-up address per attempt does not escape the per-address limit (3): the peer is counted.
    const statuses: Array<number> = []
    for (let i = 1; i <= 4; i++) {
      const wrong = { email: `ghost-${i}@example.com`, password: "wrong" }
      statuses.push((await signIn(direct.url, wrong, { "x-forwarded-for": `198.51.100.${i}` })).status)
    }
    expect(statuses).toEqual([401, 401, 401, 429])
  })

  it("from a trusted proxy, the right-most untrusted X-Forwarded-For address and X-Forwarded-Proto are used", async () => {
    // The client wrote 192.0.2.1 itself; the proxy appended the address it really saw.
    const forwarded = { "x-forwarded-for": "192.0.2.1, 198.51.100.77", "x-forwarded-proto": "https" }
    const answer = await signIn(proxied.url, harness.a.admin, forwarded)
    expect(answer.status).toBe(200)
    expect(answer.headers.get("set-cookie")).toMatch(/; Secure/)
    expect(await auditedAddress(proxied.url, harness.a.admin, answer)).toBe("198.51.100.77")

    const plain = await signIn(proxied.url, harness.a.viewer, { "x-forwarded-for": "198.51.100.78" })
    expect(plain.headers.get("set-cookie"), "http behind the proxy: no Secure").not.toMatch(/; Secure/)

    // Each client behind the proxy has its own per-address budget: 198.51.100.20 is refused, .21 is not.
    const statuses: Array<number> = []
    for (let i = 1; i <= 4; i++) {
      const wrong = { email: `nobody-${i}@example.com`, password: "wrong" }
      statuses.push((await signIn(proxied.url, wrong, { "x-forwarded-for": "198.51.100.20" })).status)
    }
    expect(statuses).toEqual([401, 401, 401, 429])
    const other = await signIn(
      proxied.url,
      { email: "nobody-5@example.com", password: "wrong" },
      {
        "x-forwarded-for": "198.51.100.21"
      }
    )
    expect(other.status).toBe(401)
  })
})
