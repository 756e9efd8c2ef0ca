import { readFileSync } from "node:fs"
import type { ConnectionOptions } from "node:tls"
import { PgClient } from "@effect/sql-pg"
import { Context, Duration, Effect, Layer, Option, Redacted, Schema } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient } from "effect/sql"
import { AppConfig, redactedDatabaseUrl } from "../Config.ts"
import { acquireEmbeddedCluster } from "../EmbeddedPostgres.ts"
import { availableOrFail, pipelinedOrFail } from "./Outcome.ts"

export * from "./Decode.ts"
export * from "./Outcome.ts"

/**
 * Set on every connection of the service (startup parameters), so PostgreSQL gives up on work its
 * client abandoned: a statement stops after `statement_timeout` (and at once, thawed after a
 * freeze, once that much time has passed), `client_connection_check_interval` stops one whose
 * socket is gone, and an idle transaction or a lost client (TCP keepalive) ends its session.
 * Migrations lift the statement and lock limits for their own transaction.
 */
export const sessionSettings = {
  statement_timeout: "10s",
  lock_timeout: "5s",
  idle_in_transaction_session_timeout: "10s",
  client_connection_check_interval: "1s",
  tcp_keepalives_idle: "10",
  tcp_keepalives_interval: "2",
  tcp_keepalives_count: "5"
} as const

/** Client-side TCP keepalive: an idle pooled connection to a host that vanished fails in about 20 s. */
const keepAlive = Duration.seconds(10)

export interface DatabaseLocation {
  readonly description: string
}

export class Database extends Context.Service<Database, DatabaseLocation>()("lead-intake/Database") {}

const log = (line: string) => process.stderr.write(`${line}\n`)

const embeddedClient = (dataDir: string, maxConnections: number) =>
  Effect.gen(function* () {
    const cluster = yield* Effect.acquireRelease(
      Effect.promise(() => acquireEmbeddedCluster(dataDir, log)),
      (cluster) => Effect.promise(() => cluster.release())
    )
    const connect = {
      host: "127.0.0.1",
      port: cluster.port,
      username: cluster.user,
      password: Redacted.make(cluster.password)
    }
    yield* ensureDatabase(connect, "lead_intake")
    const client = yield* PgClient.make({
      ...connect,
      database: "lead_intake",
      ...poolOptions(maxConnections, true)
    })
    const pipelined = yield* PgClient.make({ ...connect, database: "lead_intake", ...pipelinedOptions(true) })
    return {
      client,
      pipelined,
      description: `embedded PostgreSQL at 127.0.0.1:${cluster.port}, data in ${cluster.clusterDir}`
    }
  })

/** Names this process's connections in `pg_stat_activity`, which is where the pool gauge counts them. */
export const instanceId = crypto.randomUUID().slice(0, 8)
export const applicationName = `lead-intake/${instanceId}`

const poolOptions = (maxConnections: number, prepare: boolean) => ({
  maxConnections,
  prepare,
  minConnections: 1,
  connectTimeout: Duration.millis(1500),
  idleTimeout: Duration.minutes(5),
  keepAlive,
  startupParameters: sessionSettings,
  applicationName
})

/**
 * The request path's statements that may share a connection with other requests' (pipelined on a
 * client of their own, so they need no connection of the pool and writes queue less): the reads
 * (key check, property, phone match) and the rate window's count. A pipelined statement cannot be
 * cancelled alone, so no write whose 503 promises "nothing was written" goes here: the count is the
 * one write that may, since a count that commits after its request answered 503 still counts an
 * authenticated request, which docs/contract.md#4-rate-limit counts whatever its outcome. For the same reason its
 * commit does not wait for the WAL flush (`synchronous_commit=off` on these sessions, which reads
 * ignore): a crash of PostgreSQL may forget the last fraction of a second of counts, never a lead.
 * A statement there waits at most a second for a lock (`lock_timeout`; past it, 503): a count for
 * its window's row held elsewhere, a read for a table a migration holds, so neither stalls the
 * statements queued behind it for long. Its connections are named
 * apart, so the pool gauge counts the pool only.
 */
const pipelinedOptions = (prepare: boolean) => ({
  maxConnections: 2,
  prepare,
  minConnections: 1,
  connectTimeout: Duration.millis(1500),
  idleTimeout: Duration.minutes(5),
  keepAlive,
  startupParameters: { ...sessionSettings, lock_timeout: "1s", synchronous_commit: "off" },
  applicationName: `${applicationName}/pipelined`,
  multiplex: true
})

/** The multiplexed client for the statements above; unset (tests, CLI), they use the `SqlClient`. */
export const PipelinedSql = Context.Reference<SqlClient.SqlClient | undefined>("lead-intake/PipelinedSql", {
  defaultValue: () => undefined
})

/** The client for those statements, and how one of them is bounded on it. */
export interface Pipelined {
  readonly sql: SqlClient.SqlClient
  /** `pipelinedOrFail` on the pipelined client; on the pool, `availableOrFail` (its statements drain when interrupted). */
  readonly orFail: typeof availableOrFail
}

/** The client a service runs those statements on: `PipelinedSql` where it is set, else the `SqlClient`. */
export const pipelinedSql: Effect.Effect<Pipelined, never, SqlClient.SqlClient> = Effect.gen(function* () {
  const pipelined = yield* PipelinedSql
  return pipelined === undefined
    ? { sql: yield* SqlClient.SqlClient, orFail: availableOrFail }
    : { sql: pipelined, orFail: pipelinedOrFail }
})

/**
 * SQL spans take `db.namespace`/`server.address` from explicit options only; read them from the URL
 * when it states them plainly (query parameters can override, so then leave the driver's defaults).
 */
const spanTargetOf = (url: Redacted.Redacted) => {
  const parsed = URL.parse(Redacted.value(url))
  if (parsed === null || parsed.hostname === "" || [...parsed.searchParams.keys()].length > 0) return {}
  let database: string
  let host: string
  try {
    database = decodeURIComponent(parsed.pathname.slice(1))
    host = decodeURIComponent(parsed.hostname.replace(/^\[(.*)\]$/, "$1"))
  } catch {
    return {}
  }
  return {
    host,
    ...(parsed.port === "" ? {} : { port: Number(parsed.port) }),
    ...(database === "" ? {} : { database })
  }
}

const ensureDatabase = (
  connect: { host: string; port: number; username: string; password: Redacted.Redacted },
  database: string
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const admin = yield* PgClient.makeClient({ ...connect, database: "postgres" })
      const rows = yield* admin<{
        exists: boolean
      }>`SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = ${database}) AS exists`
      if (rows[0]?.exists !== true) {
        yield* admin.unsafe(`CREATE DATABASE ${database}`).pipe(
          Effect.catchIf(
            (error) => error.reason._tag === "UniqueViolation",
            () => Effect.void
          )
        )
      }
    })
  )

/**
 * The service cannot run as configured (`NODE_ENV=production` without `DATABASE_URL`, a schema
 * older than the code): one line for the operator, exit status 1.
 */
export class StartRefused extends Schema.TaggedError<StartRefused>()("StartRefused", {
  message: Schema.String
}) {}

/** `NODE_ENV=production` without `DATABASE_URL`: no embedded PostgreSQL in production. */
export const missingDatabase = () =>
  new StartRefused({
    message:
      "NODE_ENV=production needs DATABASE_URL (postgres://user:password@host:port/database); the embedded PostgreSQL is for development only"
  })

/**
 * Where `DATABASE_URL` points, as `host:port/database` (the user and password left out); the whole
 * URL with its password masked when it does not parse that way (a socket directory, parameters).
 */
export const databaseLocation = (url: Redacted.Redacted): string => {
  const parsed = URL.parse(Redacted.value(url))
  if (parsed === null || parsed.hostname === "" || [...parsed.searchParams.keys()].length > 0)
    return redactedDatabaseUrl(url)
  return `${parsed.hostname}:${parsed.port === "" ? "5432" : parsed.port}${parsed.pathname}`
}

/**
 * TLS as libpq reads it from the URL's parameters, which the driver knows only in part:
 * `sslmode=require` encrypts without checking the server (libpq's meaning), `verify-ca` checks its
 * certificate against `sslrootcert` (a PEM file; unset or `system`, the system's CAs), and
 * `verify-full` checks the host name too; `sslcert`/`sslkey` present a client certificate.
 * `disable`, `allow`, `prefer` and no `sslmode` are left to the driver.
 */
export const tlsOptions = (
  url: Redacted.Redacted
): Effect.Effect<{ ssl?: ConnectionOptions }, StartRefused> =>
  Effect.gen(function* () {
    const parameters = URL.parse(Redacted.value(url))?.searchParams ?? new URLSearchParams()
    const mode = parameters.get("sslmode")
    if (mode !== "require" && mode !== "verify-ca" && mode !== "verify-full") return {}
    const file = (name: string) =>
      Effect.try({
        try: () => readFileSync(parameters.get(name)!),
        catch: (error) =>
          new StartRefused({
            message: `DATABASE_URL's ${name}=${parameters.get(name)} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`
          })
      })
    const rootCert = parameters.get("sslrootcert")
    const ca =
      mode === "require" || rootCert === null || rootCert === "system"
        ? {}
        : { ca: yield* file("sslrootcert") }
    const client = parameters.has("sslcert")
      ? { cert: yield* file("sslcert"), key: yield* file("sslkey") }
      : {}
    if (mode === "require") return { ssl: { rejectUnauthorized: false, ...client } }
    return {
      ssl: {
        rejectUnauthorized: true,
        ...ca,
        ...client,
        ...(mode === "verify-ca" ? { checkServerIdentity: () => undefined } : {})
      }
    }
  })

/**
 * A connection error caused by the TLS check of PostgreSQL's certificate, as one line that says
 * which check failed and what to fix (Node's own message advises installing the CA system-wide).
 */
export const certificateRefusal = (error: unknown): string | undefined => {
  for (let current = error, depth = 0; current instanceof Error && depth < 6; depth++) {
    const code = (current as NodeJS.ErrnoException).code
    if (typeof code === "string" && /CERT|SIGNATURE|ISSUER|ALTNAME|SELF_SIGNED/.test(code)) {
      const message = `${current.message.replace(/; if the root CA is installed locally.*$/, "")} (${code})`
      return code === "ERR_TLS_CERT_ALTNAME_INVALID"
        ? `PostgreSQL's certificate does not name the host DATABASE_URL connects to (sslmode=verify-full): ${message}`
        : `PostgreSQL's certificate is not signed by the CA of DATABASE_URL's sslrootcert (the system's CAs when unset): ${message}`
    }
    current = current.cause
  }
  return undefined
}

/** PgClient + SqlClient on `DATABASE_URL`, or on the embedded cluster under the data directory. */
export const layerClient = Layer.effectContext(
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (config.production && Option.isNone(config.databaseUrl)) {
      return yield* missingDatabase()
    }
    const { client, pipelined, description } = yield* Option.match(config.databaseUrl, {
      onNone: () => embeddedClient(config.dataDir, config.databasePoolSize),
      onSome: (url) =>
        Effect.gen(function* () {
          const tls = yield* tlsOptions(url)
          return {
            client: yield* PgClient.make({
              url,
              ...tls,
              ...spanTargetOf(url),
              ...poolOptions(config.databasePoolSize, config.databasePrepare)
            }),
            pipelined: yield* PgClient.make({
              url,
              ...tls,
              ...spanTargetOf(url),
              ...pipelinedOptions(config.databasePrepare)
            }),
            description: `PostgreSQL at ${databaseLocation(url)}`
          }
        })
    })
    return Context.make(PgClient.PgClient, client).pipe(
      Context.add(SqlClient.SqlClient, client),
      Context.add(PipelinedSql, pipelined),
      Context.add(Database, { description })
    )
  })
).pipe(Layer.provide(Reactivity.layer))
