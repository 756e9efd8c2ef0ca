import { isIP } from "node:net"

/**
 * Where a webhook may point. By default only `https://` to public addresses: loopback, private
 * (RFC 1918, RFC 4193), link-local, CGNAT, multicast, unspecified and reserved addresses are
 * refused, IPv4 written inside IPv6 (mapped, compatible, NAT64) included. `allowPrivate` lifts
 * both rules for development.
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
  const kind = classify(address)
  return kind === "public" ? undefined : `the host resolves to ${address}, a ${kind} address`
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

export type AddressKind =
  | "public"
  | "loopback"
  | "private"
  | "link-local"
  | "CGNAT"
  | "multicast"
  | "unspecified"
  | "reserved"
  | "invalid"

export const classify = (address: string): AddressKind => {
  const version = isIP(address)
  if (version === 4) return classifyV4(parseV4(address)!)
  if (version === 6) {
    const groups = parseV6(address)
    return groups === undefined ? "invalid" : classifyV6(groups)
  }
  return "invalid"
}

const parseV4 = (address: string): [number, number, number, number] | undefined => {
  const parts = address.split(".").map(Number)
  return parts.length === 4 && parts.every((part) => Number.isInteger(part) && part >= 0 && part <= 255)
    ? (parts as [number, number, number, number])
    : undefined
}

const classifyV4 = ([a, b, c]: readonly [number, number, number, number]): AddressKind => {
  if (a === 0) return "unspecified"
  if (a === 127) return "loopback"
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return "private"
  if (a === 169 && b === 254) return "link-local"
  if (a === 100 && b >= 64 && b <= 127) return "CGNAT"
  if (a >= 224 && a <= 239) return "multicast"
  if (a >= 240) return "reserved"
  if ((a === 192 && b === 0 && c === 0) || (a === 198 && (b === 18 || b === 19))) return "reserved"
  return "public"
}

/** Eight 16-bit groups, with `::` expanded and a trailing dotted quad folded in. */
export const parseV6 = (address: string): ReadonlyArray<number> | undefined => {
  let text = address.toLowerCase().split("%")[0]!
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted !== null) {
    const v4 = parseV4(dotted[1]!)
    if (v4 === undefined) return undefined
    text = `${text.slice(0, dotted.index)}${((v4[0] << 8) | v4[1]).toString(16)}:${((v4[2] << 8) | v4[3]).toString(16)}`
  }
  const halves = text.split("::")
  if (halves.length > 2) return undefined
  const groupsOf = (part: string) => (part === "" ? [] : part.split(":"))
  const head = groupsOf(halves[0]!)
  const tail = halves.length === 2 ? groupsOf(halves[1]!) : []
  const missing = 8 - head.length - tail.length
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined
  const all = [...head, ...Array.from({ length: halves.length === 2 ? missing : 0 }, () => "0"), ...tail]
  const groups = all.map((group) => (/^[0-9a-f]{1,4}$/.test(group) ? Number.parseInt(group, 16) : Number.NaN))
  return groups.some(Number.isNaN) ? undefined : groups
}

const embeddedV4 = (groups: ReadonlyArray<number>): [number, number, number, number] => [
  groups[6]! >> 8,
  groups[6]! & 0xff,
  groups[7]! >> 8,
  groups[7]! & 0xff
]

const classifyV6 = (groups: ReadonlyArray<number>): AddressKind => {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number
  ]
  const zeroPrefix = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0
  if (zeroPrefix && g5 === 0 && g6 === 0 && g7 === 0) return "unspecified"
  if (zeroPrefix && g5 === 0 && g6 === 0 && g7 === 1) return "loopback"
  if (zeroPrefix && (g5 === 0xffff || g5 === 0)) return classifyV4(embeddedV4(groups))
  if (g0 === 0x64 && g1 === 0xff9b) return classifyV4(embeddedV4(groups))
  if ((g0 & 0xfe00) === 0xfc00) return "private"
  if ((g0 & 0xffc0) === 0xfe80 || (g0 & 0xffc0) === 0xfec0) return "link-local"
  if ((g0 & 0xff00) === 0xff00) return "multicast"
  if (g0 === 0x2001 && g1 === 0xdb8) return "reserved"
  return "public"
}
