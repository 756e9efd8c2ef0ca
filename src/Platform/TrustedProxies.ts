import { BlockList, isIP } from "node:net"

/**
 * `TRUSTED_PROXIES`: the addresses and CIDR ranges of the reverse proxies in front of the service.
 * Only a request whose TCP peer is one of them has its `X-Forwarded-For` and `X-Forwarded-Proto`
 * believed; from anyone else they are ignored, so a client cannot choose the address that login
 * throttling and the audit trail see, nor make a cookie `Secure` on plain HTTP.
 */
export interface TrustedProxies {
  /** The entries as configured, normalised (`10.0.0.0/8`, `127.0.0.1/32`), for the logs. */
  readonly entries: ReadonlyArray<string>
  readonly trusts: (address: string) => boolean
}

/** An IPv4 address as an IPv4-mapped IPv6 one (`::ffff:10.0.0.1`, how a dual-stack socket reports it) is matched as IPv4. */
const unmapped = (address: string) => {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  return mapped === null ? address : mapped[1]!
}

const familyOf = (address: string) => {
  const version = isIP(address)
  return version === 4 ? "ipv4" : version === 6 ? "ipv6" : undefined
}

/** One entry: an address (`10.0.0.1`, `::1`) or a range (`10.0.0.0/8`, `fd00::/8`); a string saying why not. */
const parseEntry = (raw: string): { readonly address: string; readonly prefix: number } | string => {
  const [rawAddress = "", rawPrefix, ...rest] = raw.split("/")
  const address = unmapped(rawAddress)
  const family = familyOf(address)
  if (family === undefined || rest.length > 0) return `"${raw}" is not an IP address or CIDR range`
  const bits = family === "ipv4" ? 32 : 128
  if (rawPrefix === undefined) return { address, prefix: bits }
  const prefix = /^\d{1,3}$/.test(rawPrefix) ? Number(rawPrefix) : Number.NaN
  if (!(prefix >= 0 && prefix <= bits)) return `"${raw}": the prefix length must be 0 to ${bits}`
  return { address, prefix }
}

/** Parses the comma-separated list; an error message naming the first bad entry otherwise. */
export const parseTrustedProxies = (raw: string): TrustedProxies | string => {
  const list = new BlockList()
  const entries: Array<string> = []
  for (const item of raw.split(",").map((entry) => entry.trim())) {
    if (item === "") continue
    const entry = parseEntry(item)
    if (typeof entry === "string") return entry
    list.addSubnet(entry.address, entry.prefix, familyOf(entry.address))
    entries.push(`${entry.address}/${entry.prefix}`)
  }
  return {
    entries,
    trusts: (address) => {
      if (entries.length === 0) return false
      const plain = unmapped(address)
      const family = familyOf(plain)
      return family !== undefined && list.check(plain, family)
    }
  }
}

export const trustNone: TrustedProxies = { entries: [], trusts: () => false }

type HeaderValue = string | ReadonlyArray<string> | undefined

const joined = (value: HeaderValue) =>
  value === undefined ? "" : typeof value === "string" ? value : value.join(",")

/**
 * The client's address: the TCP peer, unless the peer is a trusted proxy; then the right-most
 * `X-Forwarded-For` address that is not itself a trusted proxy (each proxy appends the address it
 * got the request from, so everything left of that was written by the client and proves nothing).
 */
export const clientAddress = (
  trusted: TrustedProxies,
  peer: string | undefined,
  forwardedFor: HeaderValue
): string | undefined => {
  if (peer === undefined || !trusted.trusts(peer)) return peer === undefined ? undefined : unmapped(peer)
  const hops = joined(forwardedFor)
    .split(",")
    .map((hop) => unmapped(hop.trim()))
  let client = unmapped(peer)
  for (let index = hops.length - 1; index >= 0; index--) {
    const hop = hops[index]!
    if (familyOf(hop) === undefined) break
    client = hop
    if (!trusted.trusts(hop)) break
  }
  return client
}

/** True when the client's request reached the proxy over HTTPS: `X-Forwarded-Proto` from a trusted peer only. */
export const forwardedHttps = (
  trusted: TrustedProxies,
  peer: string | undefined,
  forwardedProto: HeaderValue
) => {
  if (peer === undefined || !trusted.trusts(peer)) return false
  // A chain of proxies may list one protocol per hop: the left-most is the client's.
  const first = joined(forwardedProto).split(",")[0]?.trim().toLowerCase()
  return first === "https"
}
