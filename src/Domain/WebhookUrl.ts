import { isIP } from "node:net"
import ipaddr from "ipaddr.js"

/**
 * Where a webhook may point. By default only `https://` to public addresses: every range of the
 * IANA IPv4 and IPv6 special-purpose address registries is refused (`specialRanges`), and so is
 * IPv6 outside global unicast; a NAT64 address (64:ff9b::/96) is judged by the IPv4 address it
 * carries. `allowPrivate` lifts both rules for development.
 */
export interface UrlPolicy {
  readonly allowPrivate: boolean
}

export type UrlCheck =
  | { readonly _tag: "Allowed"; readonly url: URL; readonly literal: string | undefined }
  | { readonly _tag: "Refused"; readonly reason: string }

const refused = (reason: string): UrlCheck => ({ _tag: "Refused", reason })

export const maxUrlLength = 2000

/** The URL's own rules, before any name is resolved. `literal` is set when the host is an IP address. */
export const checkUrl = (raw: string, policy: UrlPolicy): UrlCheck => {
  const text = raw.trim()
  if (text.length > maxUrlLength) return refused(`the URL is longer than ${maxUrlLength} characters`)
  const url = URL.parse(text)
  if (url === null)
    return refused("the URL is malformed (expected an absolute URL such as https://example.com/hooks)")
  if (url.protocol !== "https:" && !(policy.allowPrivate && url.protocol === "http:")) {
    return refused(policy.allowPrivate ? "the URL must use https:// or http://" : "the URL must use https://")
  }
  if (url.username !== "" || url.password !== "") return refused("the URL must not contain credentials")
  if (url.hash !== "") return refused("the URL must not contain a fragment (#…)")
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1")
  if (host === "") return refused("the URL has no host")
  const literal = isIP(host) === 0 ? undefined : host
  if (literal !== undefined) {
    const reason = addressRefusal(literal, policy)
    if (reason !== undefined) return refused(reason)
  } else if (!policy.allowPrivate && (host === "localhost" || host.endsWith(".localhost"))) {
    return refused(`the host ${host} is a loopback name`)
  }
  return { _tag: "Allowed", url, literal }
}

/** Why an address is not allowed, or `undefined` when it is a public address (or private ones are allowed). */
export const addressRefusal = (address: string, policy: UrlPolicy): string | undefined => {
  if (policy.allowPrivate) return undefined
  const found = classify(address)
  switch (found._tag) {
    case "Public":
      return undefined
    case "Invalid":
      return `the host resolves to ${address}, which is not an IP address`
    case "Special": {
      const carried = found.carried === undefined ? "" : `, which carries ${found.carried}`
      return `the host resolves to ${address}${carried}, a special-purpose address (${describe(found.range)})`
    }
  }
}

/** Every address a name resolves to must be allowed, or a rebinding name could alternate. */
export const addressesRefusal = (addresses: ReadonlyArray<string>, policy: UrlPolicy): string | undefined => {
  if (addresses.length === 0) return "the host resolves to no address"
  for (const address of addresses) {
    const reason = addressRefusal(address, policy)
    if (reason !== undefined) return reason
  }
  return undefined
}

/** A block of a special-purpose registry: its prefix, its registry name and the RFC that defines it. */
export interface SpecialRange {
  readonly cidr: string
  readonly name: string
  readonly rfc: string
}

export const describe = (range: SpecialRange) => `${range.name}, ${range.cidr}, ${range.rfc}`

/**
 * The IANA IPv4 Special-Purpose Address Registry (iana-ipv4-special-registry, 2025 edition), plus
 * multicast from the IPv4 Multicast Address Space Registry. Every entry is refused, the globally
 * reachable anycast ones too: none of them is a partner's web server.
 */
const ipv4Special: ReadonlyArray<SpecialRange> = [
  { cidr: "0.0.0.0/8", name: "this network", rfc: "RFC 791" },
  { cidr: "0.0.0.0/32", name: "this host on this network", rfc: "RFC 1122" },
  { cidr: "10.0.0.0/8", name: "private-use", rfc: "RFC 1918" },
  { cidr: "100.64.0.0/10", name: "shared address space (CGNAT)", rfc: "RFC 6598" },
  { cidr: "127.0.0.0/8", name: "loopback", rfc: "RFC 1122" },
  { cidr: "169.254.0.0/16", name: "link-local", rfc: "RFC 3927" },
  { cidr: "172.16.0.0/12", name: "private-use", rfc: "RFC 1918" },
  { cidr: "192.0.0.0/24", name: "IETF protocol assignments", rfc: "RFC 6890" },
  { cidr: "192.0.0.0/29", name: "IPv4 service continuity prefix", rfc: "RFC 7335" },
  { cidr: "192.0.0.8/32", name: "IPv4 dummy address", rfc: "RFC 7600" },
  { cidr: "192.0.0.9/32", name: "port control protocol anycast", rfc: "RFC 7723" },
  { cidr: "192.0.0.10/32", name: "TURN anycast", rfc: "RFC 8155" },
  { cidr: "192.0.0.170/31", name: "NAT64/DNS64 discovery", rfc: "RFC 8880" },
  { cidr: "192.0.2.0/24", name: "documentation (TEST-NET-1)", rfc: "RFC 5737" },
  { cidr: "192.31.196.0/24", name: "AS112-v4", rfc: "RFC 7535" },
  { cidr: "192.52.193.0/24", name: "AMT", rfc: "RFC 7450" },
  { cidr: "192.88.99.0/24", name: "deprecated 6to4 relay anycast", rfc: "RFC 7526" },
  { cidr: "192.168.0.0/16", name: "private-use", rfc: "RFC 1918" },
  { cidr: "192.175.48.0/24", name: "direct delegation AS112 service", rfc: "RFC 7534" },
  { cidr: "198.18.0.0/15", name: "benchmarking", rfc: "RFC 2544" },
  { cidr: "198.51.100.0/24", name: "documentation (TEST-NET-2)", rfc: "RFC 5737" },
  { cidr: "203.0.113.0/24", name: "documentation (TEST-NET-3)", rfc: "RFC 5737" },
  { cidr: "224.0.0.0/4", name: "multicast", rfc: "RFC 5771" },
  { cidr: "240.0.0.0/4", name: "reserved", rfc: "RFC 1112" },
  { cidr: "255.255.255.255/32", name: "limited broadcast", rfc: "RFC 919" }
]

/**
 * The IANA IPv6 Special-Purpose Address Registry (iana-ipv6-special-registry, 2025 edition), plus
 * multicast, the deprecated site-local block and the IETF-reserved ::/8 (IPv4-compatible and
 * IPv4-translated forms) from the IPv6 Address Space registry. Anything outside 2000::/3 is
 * refused as well (`globalUnicast`); `nat64` is the one block judged by what it carries.
 */
const ipv6Special: ReadonlyArray<SpecialRange> = [
  { cidr: "::/8", name: "reserved by the IETF (IPv4-compatible and -translated forms)", rfc: "RFC 4291" },
  { cidr: "::/128", name: "unspecified", rfc: "RFC 4291" },
  { cidr: "::1/128", name: "loopback", rfc: "RFC 4291" },
  { cidr: "::ffff:0:0/96", name: "IPv4-mapped", rfc: "RFC 4291" },
  { cidr: "::ffff:0:0:0/96", name: "IPv4-translated", rfc: "RFC 2765" },
  { cidr: "64:ff9b:1::/48", name: "local-use IPv4/IPv6 translation", rfc: "RFC 8215" },
  { cidr: "100::/64", name: "discard-only", rfc: "RFC 6666" },
  { cidr: "100:0:0:1::/64", name: "dummy IPv6 prefix", rfc: "RFC 9780" },
  { cidr: "2001::/23", name: "IETF protocol assignments", rfc: "RFC 2928" },
  { cidr: "2001::/32", name: "Teredo", rfc: "RFC 4380" },
  { cidr: "2001:1::1/128", name: "port control protocol anycast", rfc: "RFC 7723" },
  { cidr: "2001:1::2/128", name: "TURN anycast", rfc: "RFC 8155" },
  { cidr: "2001:1::3/128", name: "DNS-SD service registration protocol anycast", rfc: "RFC 9665" },
  { cidr: "2001:2::/48", name: "benchmarking", rfc: "RFC 5180" },
  { cidr: "2001:3::/32", name: "AMT", rfc: "RFC 7450" },
  { cidr: "2001:4:112::/48", name: "AS112-v6", rfc: "RFC 7535" },
  { cidr: "2001:10::/28", name: "deprecated ORCHID", rfc: "RFC 4843" },
  { cidr: "2001:20::/28", name: "ORCHIDv2", rfc: "RFC 7343" },
  { cidr: "2001:30::/28", name: "drone remote ID entity tags", rfc: "RFC 9374" },
  { cidr: "2001:db8::/32", name: "documentation", rfc: "RFC 3849" },
  { cidr: "2002::/16", name: "6to4", rfc: "RFC 3056" },
  { cidr: "2620:4f:8000::/48", name: "direct delegation AS112 service", rfc: "RFC 7534" },
  { cidr: "3fff::/20", name: "documentation", rfc: "RFC 9637" },
  { cidr: "5f00::/16", name: "segment routing (SRv6) SIDs", rfc: "RFC 9602" },
  { cidr: "fc00::/7", name: "unique-local", rfc: "RFC 4193" },
  { cidr: "fe80::/10", name: "link-local", rfc: "RFC 4291" },
  { cidr: "fec0::/10", name: "deprecated site-local", rfc: "RFC 3879" },
  { cidr: "ff00::/8", name: "multicast", rfc: "RFC 4291" }
]

const nat64: SpecialRange = { cidr: "64:ff9b::/96", name: "NAT64 well-known prefix", rfc: "RFC 6052" }

const globalUnicast = ipaddr.IPv6.parseCIDR("2000::/3")

const outsideGlobalUnicast: SpecialRange = {
  cidr: "outside 2000::/3",
  name: "IPv6 space that is not global unicast",
  rfc: "RFC 4291"
}

/** Every block this module refuses, for tests and documentation. */
export const specialRanges: ReadonlyArray<SpecialRange> = [...ipv4Special, ...ipv6Special]

const parsedV4 = ipv4Special.map((range) => ({ range, cidr: ipaddr.IPv4.parseCIDR(range.cidr) }))
const parsedV6 = ipv6Special.map((range) => ({ range, cidr: ipaddr.IPv6.parseCIDR(range.cidr) }))
const parsedNat64 = ipaddr.IPv6.parseCIDR(nat64.cidr)

export type Classification =
  | { readonly _tag: "Public" }
  | { readonly _tag: "Special"; readonly range: SpecialRange; readonly carried?: string }
  | { readonly _tag: "Invalid" }

const isPublic: Classification = { _tag: "Public" }

/** The most specific block that holds `address`, so 0.0.0.0 reads as "this host", not "this network". */
const narrowest = <Address extends ipaddr.IPv4 | ipaddr.IPv6>(
  address: Address,
  blocks: ReadonlyArray<{ readonly range: SpecialRange; readonly cidr: [Address, number] }>
): SpecialRange | undefined => {
  let best: { readonly range: SpecialRange; readonly cidr: [Address, number] } | undefined
  for (const block of blocks) {
    if (address.match(block.cidr) && (best === undefined || block.cidr[1] > best.cidr[1])) best = block
  }
  return best?.range
}

const classifyV4 = (address: ipaddr.IPv4): Classification => {
  const range = narrowest(address, parsedV4)
  return range === undefined ? isPublic : { _tag: "Special", range }
}

const classifyV6 = (address: ipaddr.IPv6): Classification => {
  if (address.match(parsedNat64)) {
    const carried = new ipaddr.IPv4(address.toByteArray().slice(12))
    const inner = classifyV4(carried)
    return inner._tag === "Special" ? { ...inner, carried: carried.toString() } : isPublic
  }
  const range = narrowest(address, parsedV6)
  if (range !== undefined) return { _tag: "Special", range }
  return address.match(globalUnicast) ? isPublic : { _tag: "Special", range: outsideGlobalUnicast }
}

/** Where `address` (an IPv4 or IPv6 literal in the form `node:net` accepts) falls. */
export const classify = (address: string): Classification => {
  const version = isIP(address)
  if (version === 4) return classifyV4(ipaddr.IPv4.parse(address))
  if (version === 6) return classifyV6(ipaddr.IPv6.parse(address))
  return { _tag: "Invalid" }
}
