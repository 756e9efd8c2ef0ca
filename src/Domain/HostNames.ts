/** One accepted `Host`: a name (an IPv6 address in brackets) and, when given, the only port it may carry. */
export interface HostName {
  readonly name: string
  readonly port: number | undefined
}

const hostPattern =
  /^(\[[0-9a-f:.]+\]|[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*)(:([0-9]{1,5}))?$/

/** `name`, `name:port`, `[v6]` or `[v6]:port`, case-insensitive; undefined for anything else. */
export const parseHostName = (raw: string): HostName | undefined => {
  const match = hostPattern.exec(raw.trim().toLowerCase())
  if (match === null) return undefined
  const port = match[6] === undefined ? undefined : Number(match[6])
  if (port !== undefined && (port < 1 || port > 65535)) return undefined
  return { name: match[1]!, port }
}

/** A bare address as a `Host` names it: IPv6 in brackets. */
export const hostNameOf = (address: string): string => (address.includes(":") ? `[${address}]` : address)

/** `ADMIN_HOSTS`: comma-separated names, each with or without a port; a string says what is wrong. */
export const parseHostList = (raw: string): ReadonlyArray<HostName> | string => {
  const entries = raw
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")
  if (entries.length === 0) return "expected at least one host name"
  const parsed: Array<HostName> = []
  for (const entry of entries) {
    const host = parseHostName(entry)
    if (host === undefined) return `"${entry}" is not a host name, host:port, [IPv6] or [IPv6]:port`
    parsed.push(host)
  }
  return parsed
}

/** The console's names when `ADMIN_HOSTS` is not set: the address it listens on and `localhost`, on any port. */
export const defaultHostNames = (adminHost: string): ReadonlyArray<HostName> => [
  { name: hostNameOf(adminHost.toLowerCase()), port: undefined },
  { name: "localhost", port: undefined }
]

/**
 * Whether a request's `Host` header names one of the allowed hosts. A page rebound by DNS to this
 * address still sends its own name, so it is refused here before anything else runs.
 */
export const isAllowedHost = (header: string | undefined, allowed: ReadonlyArray<HostName>): boolean => {
  if (header === undefined) return false
  const host = parseHostName(header)
  if (host === undefined) return false
  return allowed.some(
    (entry) => entry.name === host.name && (entry.port === undefined || entry.port === host.port)
  )
}
