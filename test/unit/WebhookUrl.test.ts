import { describe, expect, it } from "vitest"
import { addressesRefusal, checkUrl, classify, parseV6 } from "../../src/Domain/WebhookUrl.ts"

const strict = { allowPrivate: false }
const lax = { allowPrivate: true }

const reason = (raw: string, policy = strict) => {
  const check = checkUrl(raw, policy)
  return check._tag === "Refused" ? check.reason : undefined
}

describe("webhook URL rules", () => {
  it("accepts https URLs to names and public addresses", () => {
    for (const url of [
      "https://hooks.example.com/leads",
      "https://hooks.example.com:8443/a?b=c",
      "https://93.184.216.34/x",
      "https://[2606:4700::1111]/x"
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

  it("refuses every private, loopback, link-local, CGNAT, multicast and unspecified address", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["127.0.0.1", "loopback"],
      ["127.255.0.9", "loopback"],
      ["10.1.2.3", "private"],
      ["172.16.0.1", "private"],
      ["172.31.255.255", "private"],
      ["192.168.1.1", "private"],
      ["169.254.169.254", "link-local"],
      ["100.64.0.1", "CGNAT"],
      ["100.127.255.255", "CGNAT"],
      ["224.0.0.1", "multicast"],
      ["239.255.255.250", "multicast"],
      ["0.0.0.0", "unspecified"],
      ["255.255.255.255", "reserved"],
      ["::", "unspecified"],
      ["::1", "loopback"],
      ["fc00::1", "private"],
      ["fd12:3456:789a::1", "private"],
      ["fe80::1", "link-local"],
      ["ff02::1", "multicast"],
      ["::ffff:127.0.0.1", "loopback"],
      ["::ffff:7f00:1", "loopback"],
      ["::ffff:10.0.0.1", "private"],
      ["::ffff:a9fe:a9fe", "link-local"],
      ["::127.0.0.1", "loopback"],
      ["64:ff9b::192.168.0.1", "private"]
    ]
    for (const [address, kind] of cases) {
      expect(classify(address), address).toBe(kind)
      const host = address.includes(":") ? `[${address}]` : address
      expect(reason(`https://${host}/hook`), address).toMatch(new RegExp(`a ${kind} address`))
    }
  })

  it("leaves the neighbours of those ranges public", () => {
    for (const address of [
      "172.15.255.255",
      "172.32.0.0",
      "100.63.255.255",
      "100.128.0.0",
      "169.253.0.1",
      "192.169.0.1",
      "11.0.0.1",
      "223.255.255.255",
      "1.1.1.1",
      "2001:4860:4860::8888",
      "::ffff:8.8.8.8",
      "fbff::1"
    ]) {
      expect(classify(address), address).toBe("public")
    }
  })

  it("normalises IPv4 written in hex or shorthand before checking it", () => {
    expect(reason("https://0x7f000001/")).toMatch(/loopback/)
    expect(reason("https://2130706433/")).toMatch(/loopback/)
    expect(reason("https://127.1/")).toMatch(/loopback/)
    expect(reason("https://[::ffff:127.0.0.1]/")).toMatch(/loopback/)
  })

  it("refuses a name when any address it resolves to is not public", () => {
    expect(addressesRefusal(["93.184.216.34"], strict)).toBeUndefined()
    expect(addressesRefusal(["93.184.216.34", "10.0.0.1"], strict)).toMatch(/10\.0\.0\.1, a private address/)
    expect(addressesRefusal([], strict)).toMatch(/no address/)
    expect(addressesRefusal(["127.0.0.1"], lax)).toBeUndefined()
  })

  it("allows http and private addresses only with WEBHOOK_ALLOW_PRIVATE", () => {
    expect(reason("http://127.0.0.1:9999/hook", lax)).toBeUndefined()
    expect(reason("http://localhost:9999/hook", lax)).toBeUndefined()
    expect(reason("http://127.0.0.1:9999/hook")).toBe("the URL must use https://")
  })

  it("expands IPv6 forms", () => {
    expect(parseV6("::")).toEqual([0, 0, 0, 0, 0, 0, 0, 0])
    expect(parseV6("1::")).toEqual([1, 0, 0, 0, 0, 0, 0, 0])
    expect(parseV6("::ffff:1.2.3.4")).toEqual([0, 0, 0, 0, 0, 0xffff, 0x102, 0x304])
    expect(parseV6("1:2:3:4:5:6:7:8")).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
    expect(parseV6("1:2:3")).toBeUndefined()
    expect(parseV6("1::2::3")).toBeUndefined()
    expect(classify("not-an-ip")).toBe("invalid")
  })
})
