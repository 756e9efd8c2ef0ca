import { describe, expect, it } from "vitest"
import { addressesRefusal, checkUrl, classify, specialRanges } from "../../src/Domain/WebhookUrl.ts"

const strict = { allowPrivate: false }
const lax = { allowPrivate: true }

const reason = (raw: string, policy = strict) => {
  const check = checkUrl(raw, policy)
  return check._tag === "Refused" ? check.reason : undefined
}

const urlOf = (address: string) =>
  address.includes(":") ? `https://[${address}]/hook` : `https://${address}/hook`

/** Each block of the IANA special-purpose registries (and what else is refused), with an address inside it. */
const refusedRanges: ReadonlyArray<readonly [cidr: string, example: string]> = [
  ["0.0.0.0/8", "0.1.2.3"],
  ["0.0.0.0/32", "0.0.0.0"],
  ["10.0.0.0/8", "10.1.2.3"],
  ["100.64.0.0/10", "100.127.255.255"],
  ["127.0.0.0/8", "127.255.0.9"],
  ["169.254.0.0/16", "169.254.169.254"],
  ["172.16.0.0/12", "172.31.255.255"],
  ["192.0.0.0/24", "192.0.0.200"],
  ["192.0.0.0/29", "192.0.0.1"],
  ["192.0.0.8/32", "192.0.0.8"],
  ["192.0.0.9/32", "192.0.0.9"],
  ["192.0.0.10/32", "192.0.0.10"],
  ["192.0.0.170/31", "192.0.0.171"],
  ["192.0.2.0/24", "192.0.2.10"],
  ["192.31.196.0/24", "192.31.196.1"],
  ["192.52.193.0/24", "192.52.193.1"],
  ["192.88.99.0/24", "192.88.99.1"],
  ["192.168.0.0/16", "192.168.1.1"],
  ["192.175.48.0/24", "192.175.48.6"],
  ["198.18.0.0/15", "198.19.255.1"],
  ["198.51.100.0/24", "198.51.100.7"],
  ["203.0.113.0/24", "203.0.113.99"],
  ["224.0.0.0/4", "239.255.255.250"],
  ["240.0.0.0/4", "250.1.2.3"],
  ["255.255.255.255/32", "255.255.255.255"],
  ["::/8", "::7f00:1"],
  ["::/128", "::"],
  ["::1/128", "::1"],
  ["::ffff:0:0/96", "::ffff:127.0.0.1"],
  ["::ffff:0:0:0/96", "::ffff:0:10.0.0.1"],
  ["64:ff9b:1::/48", "64:ff9b:1::808:808"],
  ["100::/64", "100::1"],
  ["100:0:0:1::/64", "100:0:0:1::5"],
  ["2001::/23", "2001:100::1"],
  ["2001::/32", "2001:0:4136:e378:8000:63bf:3fff:fdd2"],
  ["2001:1::1/128", "2001:1::1"],
  ["2001:1::2/128", "2001:1::2"],
  ["2001:1::3/128", "2001:1::3"],
  ["2001:2::/48", "2001:2::1"],
  ["2001:3::/32", "2001:3::1"],
  ["2001:4:112::/48", "2001:4:112::1"],
  ["2001:10::/28", "2001:10::1"],
  ["2001:20::/28", "2001:20::1"],
  ["2001:30::/28", "2001:30::1"],
  ["2001:db8::/32", "2001:db8::1"],
  ["2002::/16", "2002:c0a8:101::1"],
  ["2620:4f:8000::/48", "2620:4f:8000::1"],
  ["3fff::/20", "3fff:fff::1"],
  ["5f00::/16", "5f00::1"],
  ["fc00::/7", "fd12:3456:789a::1"],
  ["fe80::/10", "fe80::1"],
  ["fec0::/10", "fec0::1"],
  ["ff00::/8", "ff02::1"],
  ["outside 2000::/3", "4000::1"]
]

describe("webhook URL rules", () => {
  it("accepts https URLs to names and public addresses", () => {
    for (const url of [
      "https://hooks.example.com/leads",
      "https://hooks.example.com:8443/a?b=c",
      "https://93.184.216.34/x",
      "https://[2606:4700::1111]/x",
      "https://[64:ff9b::808:808]/x"
    ]) {
      expect(reason(url), url).toBeUndefined()
    }
    const check = checkUrl("https://93.184.216.34/x", strict)
    expect(check._tag === "Allowed" && check.literal).toBe("93.184.216.34")
  })

  it("refuses malformed URLs, other schemes, credentials and fragments with a reason", () => {
    expect(reason("not a url")).toMatch(/malformed/)
    expect(reason("http://hooks.example.com")).toBe("the URL must use https://")
    expect(reason("ftp://hooks.example.com", lax)).toBe("the URL must use https:// or http://")
    expect(reason("https://user:pw@hooks.example.com")).toBe("the URL must not contain credentials")
    expect(reason("https://hooks.example.com/#x")).toMatch(/fragment/)
    expect(reason(`https://hooks.example.com/${"a".repeat(2000)}`)).toMatch(/longer than 2000/)
    expect(reason("https://localhost/x")).toMatch(/loopback/)
  })

  it.each(refusedRanges)("refuses %s (for example %s), naming the block", (cidr, example) => {
    const found = classify(example)
    expect(found._tag).toBe("Special")
    expect(found._tag === "Special" && found.range.cidr).toBe(cidr)
    expect(reason(urlOf(example))).toContain(`${cidr}, RFC `)
    expect(reason(urlOf(example), lax)).toBeUndefined()
  })

  it("lists every block of the registries in the table above", () => {
    const tested = new Set(refusedRanges.map(([cidr]) => cidr))
    for (const range of specialRanges) expect(tested.has(range.cidr), range.cidr).toBe(true)
  })

  it("judges a NAT64 address by the IPv4 address it carries", () => {
    expect(classify("64:ff9b::8.8.8.8")._tag).toBe("Public")
    expect(reason(urlOf("64:ff9b::192.168.0.1"))).toBe(
      "the host resolves to 64:ff9b::c0a8:1, which carries 192.168.0.1, a special-purpose address (private-use, 192.168.0.0/16, RFC 1918)"
    )
    expect(reason(urlOf("64:ff9b::203.0.113.5"))).toMatch(
      /carries 203\.0\.113\.5, a special-purpose address \(documentation \(TEST-NET-3\)/
    )
  })

  it("leaves the neighbours of those ranges public", () => {
    for (const address of [
      "172.15.255.255",
      "172.32.0.0",
      "100.63.255.255",
      "100.128.0.0",
      "169.253.0.1",
      "192.169.0.1",
      "192.0.1.1",
      "192.0.3.1",
      "198.17.255.255",
      "198.20.0.0",
      "198.51.101.1",
      "203.0.114.1",
      "11.0.0.1",
      "223.255.255.255",
      "1.1.1.1",
      "8.8.8.8",
      "2001:4860:4860::8888",
      "2001:200::1",
      "2606:4700::1111",
      "2001:db9::1",
      "2003::1",
      "3ffe::1"
    ]) {
      expect(classify(address), address).toEqual({ _tag: "Public" })
      expect(reason(urlOf(address)), address).toBeUndefined()
    }
  })

  it("normalises IPv4 written in hex, decimal, shorthand or inside IPv6 before checking it", () => {
    for (const url of [
      "https://0x7f000001/",
      "https://2130706433/",
      "https://127.1/",
      "https://0177.0.0.1/",
      "https://[::ffff:127.0.0.1]/",
      "https://[::ffff:7f00:1]/",
      "https://[0:0:0:0:0:ffff:127.0.0.1]/"
    ]) {
      expect(reason(url), url).toMatch(/127\.0\.0\.0\/8|::ffff:0:0\/96/)
    }
    expect(reason("https://[::ffff:8.8.8.8]/")).toMatch(/IPv4-mapped/)
    // ipaddr.js reads the deprecated IPv4-compatible "::a.b.c.d" (what inet_ntop prints) as mapped: refused either way.
    expect(classify("::127.0.0.1")._tag).toBe("Special")
    expect(classify("::8.8.8.8")._tag).toBe("Special")
  })

  it("refuses a name when any address it resolves to is not public", () => {
    expect(addressesRefusal(["93.184.216.34"], strict)).toBeUndefined()
    expect(addressesRefusal(["93.184.216.34", "10.0.0.1"], strict)).toBe(
      "the host resolves to 10.0.0.1, a special-purpose address (private-use, 10.0.0.0/8, RFC 1918)"
    )
    expect(addressesRefusal(["2606:4700::1111", "fe80::1%eth0"], strict)).toMatch(/link-local/)
    expect(addressesRefusal([], strict)).toMatch(/no address/)
    expect(addressesRefusal(["127.0.0.1"], lax)).toBeUndefined()
    expect(classify("not-an-ip")).toEqual({ _tag: "Invalid" })
  })

  it("allows http and private addresses only with WEBHOOK_ALLOW_PRIVATE", () => {
    expect(reason("http://127.0.0.1:9999/hook", lax)).toBeUndefined()
    expect(reason("http://localhost:9999/hook", lax)).toBeUndefined()
    expect(reason("http://127.0.0.1:9999/hook")).toBe("the URL must use https://")
  })
})
