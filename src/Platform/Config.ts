import { readFileSync } from "node:fs"
import {
  Config,
  ConfigProvider,
  Context,
  Effect,
  Layer,
  type LogLevel,
  Option,
  Redacted,
  Schema,
  SchemaTransformation
} from "effect"
import { defaultHostNames, type HostName, parseHostList } from "../Domain/HostNames.ts"
import { defaultSchedule, parseDelay, parseSchedule } from "../Domain/WebhookRetry.ts"
import { parseTrustedProxies, type TrustedProxies } from "./TrustedProxies.ts"

export interface AppConfigShape {
  readonly port: number
  readonly host: string
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  readonly dataDir: string
  readonly publicBaseUrl: string
  readonly dashboardUrl: string
  readonly logLevel: LogLevel.LogLevel
  readonly metricsPort: Option.Option<number>
  /** `METRICS_HOST` (default 127.0.0.1): the Prometheus listener's address, apart from the API's. */
  readonly metricsHost: string
  readonly databasePoolSize: number
  /**
   * `DATABASE_PREPARE` (default true): the driver prepares named statements and reuses them per
   * connection; false behind a pooler that cannot keep them between transactions (PgBouncer in
   * transaction mode before 1.21), so every statement is parsed unnamed.
   */
  readonly databasePrepare: boolean
  readonly requestLogRetentionDays: number
  /** `REJECTED_RETENTION_DAYS`: how long a rejected body is kept for rescue (docs/contract.md#11-rejected-leads-are-kept-for-rescue). */
  readonly rejectedRetentionDays: number
  readonly adminHost: string
  /** `ADMIN_HOSTS`: the `Host` names the console answers; any other gets 421. */
  readonly adminHosts: ReadonlyArray<HostName>
  /** None when `ADMIN_PORT=off`: no console listener. */
  readonly adminPort: Option.Option<number>
  /** `HEALTH_HOST` (default 127.0.0.1) and `HEALTH_PORT` (default 8082; None when `off`): the probes' listener. */
  readonly healthHost: string
  readonly healthPort: Option.Option<number>
  /** `TRUSTED_PROXIES`: the peers whose `X-Forwarded-For`/`X-Forwarded-Proto` are believed. */
  readonly trustedProxies: TrustedProxies
  /** `NODE_ENV=production`: no embedded PostgreSQL, `DATABASE_URL` is required. */
  readonly production: boolean
  /** `MIGRATE_ON_START` (default true); `serve --no-migrate` sets it false. */
  readonly migrateOnStart: boolean
}

const HttpUrl = Schema.String.check(
  Schema.makeFilter((raw: string) => {
    const url = URL.parse(raw)
    return (
      (url !== null && (url.protocol === "http:" || url.protocol === "https:")) ||
      "Expected an absolute http(s) URL"
    )
  })
).pipe(
  Schema.decodeTo(
    Schema.String,
    SchemaTransformation.transform({ decode: (url) => url.replace(/\/+$/, ""), encode: (url) => url })
  )
)

const NonEmpty = Schema.String.check(Schema.isNonEmpty())

const PortOrOff = Schema.Union([
  Schema.Literal("off"),
  Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 65535 }))
])

const TrustedProxyList = Schema.String.check(
  Schema.makeFilter((raw: string) => {
    const parsed = parseTrustedProxies(raw)
    return typeof parsed !== "string" || parsed
  })
)

const configError = (message: string) => new Config.ConfigError(new ConfigProvider.SourceError({ message }))

/**
 * A secret setting: `NAME`, or the contents of the file `NAME_FILE` names (Docker and Kubernetes
 * secrets, systemd credentials), never both. The file's trailing newlines are dropped, as an
 * editor or `echo` adds one; an empty or unreadable file stops the start with its name.
 */
export const secret = (name: string): Config.Config<Option.Option<Redacted.Redacted>> =>
  Config.all({
    value: Config.option(Config.String(name)),
    file: Config.option(Config.String(`${name}_FILE`))
  }).pipe(
    Config.mapEffect(({ value, file }) => {
      if (Option.isNone(file)) return Effect.succeed(Option.map(value, (raw) => Redacted.make(raw)))
      if (Option.isSome(value))
        return Effect.fail(configError(`${name} and ${name}_FILE are both set; set one of them`))
      return Effect.try({
        try: () => readFileSync(file.value, "utf8").replace(/[\r\n]+$/, ""),
        catch: (error) =>
          configError(
            `${name}_FILE: cannot read ${file.value} (${(error as NodeJS.ErrnoException).code ?? String(error)})`
          )
      }).pipe(
        Effect.flatMap((contents) =>
          contents === ""
            ? Effect.fail(configError(`${name}_FILE: ${file.value} is empty`))
            : Effect.succeed(Option.some(Redacted.make(contents)))
        )
      )
    })
  )

const urlHost = (host: string) => (host.includes(":") ? `[${host}]` : host)

/** A wildcard listening address is no address to link to: the console's links name the machine. */
const linkHost = (host: string) => (host === "0.0.0.0" || host === "::" ? "localhost" : urlHost(host))

export const appConfig = Config.all({
  port: Config.Port("PORT").pipe(Config.withDefault(8080)),
  host: Config.schema(NonEmpty, "HOST").pipe(Config.withDefault("127.0.0.1")),
  databaseUrl: secret("DATABASE_URL"),
  dataDir: Config.schema(NonEmpty, "LEAD_INTAKE_DATA_DIR").pipe(Config.withDefault(".data")),
  publicBaseUrl: Config.option(Config.schema(HttpUrl, "PUBLIC_BASE_URL")),
  dashboardUrl: Config.option(Config.schema(HttpUrl, "DASHBOARD_URL")),
  logLevel: Config.LogLevel("LOG_LEVEL").pipe(Config.withDefault("Info" as const)),
  metricsPort: Config.option(Config.Port("METRICS_PORT")),
  metricsHost: Config.schema(NonEmpty, "METRICS_HOST").pipe(Config.withDefault("127.0.0.1")),
  databasePoolSize: Config.schema(
    Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 200 })),
    "DATABASE_POOL_SIZE"
  ).pipe(Config.withDefault(16)),
  databasePrepare: Config.Boolean("DATABASE_PREPARE").pipe(Config.withDefault(true)),
  requestLogRetentionDays: Config.schema(
    Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 36_500 })),
    "REQUEST_LOG_RETENTION_DAYS"
  ).pipe(Config.withDefault(90)),
  rejectedRetentionDays: Config.schema(
    Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 36_500 })),
    "REJECTED_RETENTION_DAYS"
  ).pipe(Config.withDefault(30)),
  adminHost: Config.schema(NonEmpty, "ADMIN_HOST").pipe(Config.withDefault("127.0.0.1")),
  adminHosts: Config.option(
    Config.schema(
      Schema.String.check(
        Schema.makeFilter((raw: string) => {
          const parsed = parseHostList(raw)
          return typeof parsed !== "string" || parsed
        })
      ),
      "ADMIN_HOSTS"
    )
  ),
  adminPort: Config.schema(PortOrOff, "ADMIN_PORT").pipe(Config.withDefault(8081)),
  healthHost: Config.schema(NonEmpty, "HEALTH_HOST").pipe(Config.withDefault("127.0.0.1")),
  healthPort: Config.schema(PortOrOff, "HEALTH_PORT").pipe(Config.withDefault(8082)),
  trustedProxies: Config.schema(TrustedProxyList, "TRUSTED_PROXIES").pipe(Config.withDefault("")),
  nodeEnv: Config.option(Config.String("NODE_ENV")),
  migrateOnStart: Config.Boolean("MIGRATE_ON_START").pipe(Config.withDefault(true))
}).pipe(
  Config.map(({ nodeEnv, ...raw }): AppConfigShape => {
    const adminPort = raw.adminPort === "off" ? Option.none<number>() : Option.some(raw.adminPort)
    return {
      ...raw,
      adminPort,
      adminHosts: Option.match(raw.adminHosts, {
        onNone: () => defaultHostNames(raw.adminHost),
        onSome: (list) => parseHostList(list) as ReadonlyArray<HostName>
      }),
      healthPort: raw.healthPort === "off" ? Option.none() : Option.some(raw.healthPort),
      trustedProxies: parseTrustedProxies(raw.trustedProxies) as TrustedProxies,
      production: Option.getOrUndefined(nodeEnv) === "production",
      publicBaseUrl: Option.getOrElse(raw.publicBaseUrl, () => `http://${urlHost(raw.host)}:${raw.port}`),
      // Unset, a lead's `lead_url` is its page in this service's console (ADMIN_PORT=off: where it would be).
      dashboardUrl: Option.getOrElse(
        raw.dashboardUrl,
        () => `http://${linkHost(raw.adminHost)}:${Option.getOrElse(adminPort, () => 8081)}`
      )
    }
  })
)

/**
 * `lead-intake migrate` connects as the schema's owner: `MIGRATE_DATABASE_URL` where set (or its
 * `_FILE`), so `DATABASE_URL` can name the service's role, which may not change the schema.
 */
export const migrateConfig = Config.all({ config: appConfig, owner: secret("MIGRATE_DATABASE_URL") }).pipe(
  Config.map(
    ({ config, owner }): AppConfigShape => ({
      ...config,
      databaseUrl: Option.orElse(owner, () => config.databaseUrl)
    })
  )
)

export class AppConfig extends Context.Service<AppConfig, AppConfigShape>()("lead-intake/AppConfig") {
  static readonly layer = Layer.effect(AppConfig, appConfig)
  static readonly layerMigrate = Layer.effect(AppConfig, migrateConfig)
  static readonly layerWith = (overrides: Partial<AppConfigShape>) =>
    Layer.effect(
      AppConfig,
      Effect.map(appConfig, (config) => ({ ...config, ...overrides }))
    )
}

export const redactedDatabaseUrl = (url: Redacted.Redacted): string => {
  const parsed = URL.parse(Redacted.value(url))
  if (parsed === null) return "<unparseable DATABASE_URL>"
  if (parsed.password !== "") parsed.password = "****"
  return parsed.toString()
}

export interface WebhookConfigShape {
  /** `WEBHOOK_ALLOW_PRIVATE`: http:// and private addresses allowed (development and tests only). */
  readonly allowPrivate: boolean
  readonly timeoutMillis: number
  readonly retrySchedule: ReadonlyArray<number>
  readonly retentionDays: number
  /** Attempts in flight per instance, in total and per endpoint. */
  readonly concurrency: number
  readonly concurrencyPerEndpoint: number
  /** How often the worker looks for due retries when no NOTIFY woke it. */
  readonly pollIntervalMillis: number
  /** `WEBHOOK_WORKER=false` keeps `serve` from delivering (a separate `lead-intake worker` does). */
  readonly workerInServe: boolean
  /**
   * `WEBHOOK_DISABLE_AFTER`: an endpoint with no successful attempt for this long, and at least three
   * failed ones in that time, is disabled (docs/webhooks.md#when-an-endpoint-keeps-failing).
   */
  readonly disableAfterMillis: number
}

const parsedString = <A>(name: string, parse: (raw: string) => A | string, fallback: string) =>
  Config.schema(
    Schema.String.check(
      Schema.makeFilter((raw: string) => {
        const parsed = parse(raw)
        return typeof parsed !== "string" || parsed
      })
    ),
    name
  ).pipe(
    Config.withDefault(fallback),
    Config.map((raw) => parse(raw) as A)
  )

const positiveDelay = (raw: string) => {
  const millis = parseDelay(raw)
  return millis === 0 ? "expected a delay above 0" : millis
}

const longestDisableAfterMillis = 365 * 86_400_000

/** Like a retry delay (`90m`, `5d`), but up to a year: a retry delay stops at 7 days. */
const disableAfter = (raw: string) => {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/.exec(raw)
  if (match === null) return `"${raw.trim()}" is not a duration (a number followed by ms, s, m, h or d)`
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as "ms"]
  const millis = Math.round(Number(match[1]) * unit)
  if (millis <= 0) return "expected a duration above 0"
  return millis > longestDisableAfterMillis ? `"${raw.trim()}" is longer than 365 days` : millis
}

const intBetween = (name: string, minimum: number, maximum: number, fallback: number) =>
  Config.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })), name).pipe(
    Config.withDefault(fallback)
  )

export const webhookConfig: Config.Config<WebhookConfigShape> = Config.all({
  allowPrivate: Config.Boolean("WEBHOOK_ALLOW_PRIVATE").pipe(Config.withDefault(false)),
  timeoutMillis: parsedString("WEBHOOK_TIMEOUT", positiveDelay, "15s"),
  retrySchedule: parsedString("WEBHOOK_RETRY_SCHEDULE", parseSchedule, defaultSchedule),
  retentionDays: intBetween("WEBHOOK_RETENTION_DAYS", 1, 3650, 30),
  concurrency: intBetween("WEBHOOK_CONCURRENCY", 1, 1000, 32),
  concurrencyPerEndpoint: intBetween("WEBHOOK_CONCURRENCY_PER_ENDPOINT", 1, 100, 4),
  pollIntervalMillis: parsedString("WEBHOOK_POLL_INTERVAL", positiveDelay, "1s"),
  workerInServe: Config.Boolean("WEBHOOK_WORKER").pipe(Config.withDefault(true)),
  disableAfterMillis: parsedString("WEBHOOK_DISABLE_AFTER", disableAfter, "5d")
})

export class WebhookConfig extends Context.Service<WebhookConfig, WebhookConfigShape>()(
  "lead-intake/WebhookConfig"
) {
  static readonly layer = Layer.effect(WebhookConfig, webhookConfig)
}
