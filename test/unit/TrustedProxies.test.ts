import { describe, expect, it } from "vitest"
import {
  clientAddress,
  forwardedHttps,
  parseTrustedProxies,
  type TrustedProxies,
  trustNone
} from "../../src/Platform/TrustedProxies.ts"

const trust = (raw: string) => {
  const parsed = parseTrustedProxies(raw)
  if (typeof parsed === "string") throw new Error(parsed)
  return parsed
}

describe("TRUSTED_PROXIES", () => {
  it("parses addresses and CIDR ranges, IPv4 and IPv6, and normalises them", () => {
    expect(trust(" 10.0.0.0/8, 192.168.1.7 ,fd00::/8,::1").entries).toEqual([
      "10.0.0.0/8",
      "192.168.1.7/32",
      "fd00::/8",
      "::1/128"
    ])
    expect(trust("").entries).toEqual([])
  })

  it("refuses what is not an address or range, naming the entry", () => {
    expect(parseTrustedProxies("10.0.0.0/8, proxy.internal")).toBe(
      '"proxy.internal" is not an IP address or CIDR range'
    )
    expect(parseTrustedProxies("10.0.0.0/33")).toBe('"10.0.0.0/33": the prefix length must be 0 to 32')
    expect(parseTrustedProxies("::/129")).toBe('"::/129": the prefix length must be 0 to 128')
    expect(parseTrustedProxies("10.0.0.1/8/1")).toMatch(/not an IP address/)
    expect(parseTrustedProxies("10.0.0.0/x")).toMatch(/prefix length/)
  })

  it("matches ranges, and an IPv4-mapped IPv6 peer as IPv4", () => {
    const list = trust("10.0.0.0/8, fd00::/8")
    expect(list.trusts("10.200.3.4")).toBe(true)
    expect(list.trusts("::ffff:10.1.2.3")).toBe(true)
    expect(list.trusts("11.0.0.1")).toBe(false)
    expect(list.trusts("fd12::1")).toBe(true)
    expect(list.trusts("fe80::1")).toBe(false)
    expect(list.trusts("not an address")).toBe(false)
  })
})

describe("the client's address and protocol", () => {
  const proxies: TrustedProxies = trust("10.0.0.0/8")

  it("is the peer when no proxy is trusted or the peer is not one, whatever the headers say", () => {
    expect(clientAddress(trustNone, "203.0.113.5", "1.2.3.4")).toBe("203.0.113.5")
    expect(clientAddress(proxies, "203.0.113.5", "1.2.3.4")).toBe("203.0.113.5")
    expect(clientAddress(proxies, "::ffff:203.0.113.5", undefined)).toBe("203.0.113.5")
    expect(forwardedHttps(proxies, "203.0.113.5", "https")).toBe(false)
    expect(clientAddress(proxies, undefined, "1.2.3.4")).toBeUndefined()
  })

  it("behind trusted proxies, is the right-most X-Forwarded-For address that is not a trusted proxy", () => {
    expect(clientAddress(proxies, "10.0.0.2", "198.51.100.1")).toBe("198.51.100.1")
    // The client wrote 192.0.2.66 itself: only what the proxies appended counts.
    expect(clientAddress(proxies, "10.0.0.2", "192.0.2.66, 198.51.100.1, 10.0.0.9")).toBe("198.51.100.1")
    expect(clientAddress(proxies, "10.0.0.2", ["192.0.2.66", "198.51.100.1"])).toBe("198.51.100.1")
    // Every hop a trusted proxy: the left-most is as far back as it goes.
    expect(clientAddress(proxies, "10.0.0.2", "10.0.0.8, 10.0.0.9")).toBe("10.0.0.8")
    // No header, or garbage where the proxy's entry should be: the proxy's own address (or the last good hop).
    expect(clientAddress(proxies, "10.0.0.2", undefined)).toBe("10.0.0.2")
    expect(clientAddress(proxies, "10.0.0.2", "198.51.100.1, garbage")).toBe("10.0.0.2")
  })

  it("is HTTPS when a trusted proxy says the client's hop was", () => {
    expect(forwardedHttps(proxies, "10.0.0.2", "https")).toBe(true)
    expect(forwardedHttps(proxies, "10.0.0.2", "HTTPS, http")).toBe(true)
    expect(forwardedHttps(proxies, "10.0.0.2", "http")).toBe(false)
    expect(forwardedHttps(proxies, "10.0.0.2", undefined)).toBe(false)
  })
})
