import { BlockList } from "node:net"
import { Config, Effect, Option } from "effect"
import { AppConfig, type AppConfigShape } from "./Config.ts"
import { missingDatabase, StartRefused } from "./Sql/Sql.ts"

/**
 * Addresses a partner cannot follow a link to: the loopback ranges and the unspecified address
 * (a link to `0.0.0.0` reaches, at best, the partner's own machine).
 */
const unreachable = new BlockList()
unreachable.addSubnet("127.0.0.0", 8, "ipv4")
unreachable.addAddress("0.0.0.0", "ipv4")
unreachable.addAddress("::1", "ipv6")
unreachable.addAddress("::", "ipv6")
unreachable.addSubnet("::ffff:127.0.0.0", 104, "ipv6")

/** `localhost` and its subdomains (RFC 6761), or an address above: no partner reaches it. */
export const isLoopbackUrl = (url: string): boolean => {
  const parsed = URL.parse(url)
  if (parsed === null) return false
  const host = parsed.hostname.toLowerCase().replace(/\.$/, "")
  if (host === "localhost" || host.endsWith(".localhost")) return true
  if (host.startsWith("[")) return unreachable.check(host.slice(1, -1), "ipv6")
  return /^\d+\.\d+\.\d+\.\d+$/.test(host) && unreachable.check(host, "ipv4")
}

/** The URLs this service hands to partners: what each becomes in an answer or a webhook. */
const partnerLinks = {
  PUBLIC_BASE_URL: {
    url: (config: AppConfigShape) => config.publicBaseUrl,
    link: (url: string) => `docs_url would be ${url}/v1/docs`
  },
  DASHBOARD_URL: {
    url: (config: AppConfigShape) => config.dashboardUrl,
    link: (url: string) => `lead_url (answers and webhooks) would be ${url}/leads/<id>`
  }
} as const

export type PartnerLink = keyof typeof partnerLinks

/**
 * What `serve` and `worker` check before anything starts, in production only: a database of
 * their own, and every URL they hand to partners (`links`) set and not on this machine. Unset, a
 * link defaults to this host's listener (`http://127.0.0.1:…`), which no partner can reach.
 */
export const refuseUnfitProduction = Effect.fn("ProductionStart.refuseUnfitProduction")(function* (
  links: ReadonlyArray<PartnerLink>
) {
  const config = yield* AppConfig
  if (!config.production) return
  if (Option.isNone(config.databaseUrl)) return yield* missingDatabase()
  const problems: Array<string> = []
  for (const name of links) {
    const { url, link } = partnerLinks[name]
    const set = yield* Config.option(Config.String(name))
    if (Option.isNone(set)) problems.push(`${name} is unset, so ${link(url(config))}`)
    else if (isLoopbackUrl(url(config))) problems.push(`${name} is on this machine, so ${link(url(config))}`)
  }
  if (problems.length === 0) return
  return yield* new StartRefused({
    message: `NODE_ENV=production needs URLs partners can reach: ${problems.join("; ")}`
  })
})
