import { PgClient } from "@effect/sql-pg"
import { Context, Duration, Effect, Layer, Option, Redacted, Schema } from "effect"
import { Reactivity } from "effect/reactivity"
import { Migrator, SqlClient, type SqlError } from "effect/sql"
import { migrations } from "../migrations/index.ts"
import { AppConfig, redactedDatabaseUrl } from "./Config.ts"
import { acquireEmbeddedCluster } from "./Sql/EmbeddedPostgres.ts"

/** The store could not be reached in bounded time: the request may be retried, nothing was written. */
export class StoreUnavailable extends Schema.TaggedError<StoreUnavailable>()("StoreUnavailable", {
  operation: Schema.String
}) {}

const unavailableReasons = new Set(["ConnectionError", "AuthenticationError", "StatementTimeoutError"])

/**
 * A server shutting down, starting up (crash recovery), out of connections, or a statement cancelled
 * (a pipelined read shares its connection's cancel with its neighbours): an outage, not a bug.
 */
const unavailableStates = new Set(["57P01", "57P02", "57P03", "53300", "57014"])

const isOutage = (error: SqlError.SqlError) =>
  unavailableReasons.has(error.reason._tag) ||
  unavailableStates.has(String((error.reason.cause as { code?: unknown } | undefined)?.code))

export const statementTimeout = Duration.seconds(2)

/**
 * Connection loss and timeouts become `StoreUnavailable` (503); every other SQL failure is a
 * defect (500), because it means a bug or a broken schema rather than a transient outage.
 */
export const availableOrFail =
  (operation: string) =>
  <A, E, R>(
    self: Effect.Effect<A, E | SqlError.SqlError, R>
  ): Effect.Effect<A, Exclude<E, SqlError.SqlError> | StoreUnavailable, R> =>
    self.pipe(
      Effect.timeoutOrElse({
        duration: statementTimeout,
        orElse: () => Effect.fail(new StoreUnavailable({ operation }))
      }),
      Effect.catchIf(
        (error): error is SqlError.SqlError => isSqlError(error),
        (error) => (isOutage(error) ? Effect.fail(new StoreUnavailable({ operation })) : Effect.die(error))
      )
    ) as never

const isSqlError = (error: unknown): error is SqlError.SqlError =>
  typeof error === "object" && error !== null && (error as { _tag?: unknown })._tag === "SqlError"

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
      ...poolOptions(maxConnections)
    })
    const read = yield* PgClient.make({ ...connect, database: "lead_intake", ...readOptions })
    return {
      client,
      read,
      description: `embedded PostgreSQL at 127.0.0.1:${cluster.port}, data in ${cluster.clusterDir}`
    }
  })

/** Names this process's connections in `pg_stat_activity`, which is where the pool gauge counts them. */
export const instanceId = crypto.randomUUID().slice(0, 8)
export const applicationName = `lead-intake/${instanceId}`

const poolOptions = (maxConnections: number) => ({
  maxConnections,
  minConnections: 1,
  connectTimeout: Duration.millis(1500),
  idleTimeout: Duration.minutes(5),
  applicationName
})

/**
 * The read-only statements of the request path (property lookup, phone match) pipelined on a
 * client of their own: they need no connection of the pool to themselves, so writes queue less.
 * Writes never go there: a pipelined statement cannot be cancelled alone, and a write answered 503
 * could then still commit. Its connections are named apart, so the pool gauge counts the pool only.
 */
const readOptions = {
  maxConnections: 2,
  minConnections: 1,
  connectTimeout: Duration.millis(1500),
  idleTimeout: Duration.minutes(5),
  applicationName: `${applicationName}/read`,
  multiplex: true
}

/** The multiplexed client for read-only statements; unset (tests, CLI), they use the `SqlClient`. */
export const ReadSql = Context.Reference<SqlClient.SqlClient | undefined>("lead-intake/ReadSql", {
  defaultValue: () => undefined
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

/** PgClient + SqlClient on `DATABASE_URL`, or on the embedded cluster under the data directory. */
export const layerClient = Layer.effectContext(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const { client, read, description } = yield* Option.match(config.databaseUrl, {
      onNone: () => embeddedClient(config.dataDir, config.databasePoolSize),
      onSome: (url) =>
        Effect.all({
          client: PgClient.make({ url, ...spanTargetOf(url), ...poolOptions(config.databasePoolSize) }),
          read: PgClient.make({ url, ...spanTargetOf(url), ...readOptions }),
          description: Effect.succeed(`PostgreSQL at ${redactedDatabaseUrl(url)}`)
        })
    })
    return Context.make(PgClient.PgClient, client).pipe(
      Context.add(SqlClient.SqlClient, client),
      Context.add(ReadSql, read),
      Context.add(Database, { description })
    )
  })
).pipe(Layer.provide(Reactivity.layer))

const migrationLockKey = 4_812_775_001

const runMigrations = Migrator.make({})

/** Applies pending migrations; an advisory lock makes concurrent starts wait for each other. */
export const migrate = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return yield* sql.withTransaction(
    Effect.andThen(
      sql`SELECT pg_advisory_xact_lock(${migrationLockKey})`,
      runMigrations({ loader: Migrator.fromRecord(migrations), table: "schema_migrations" })
    )
  )
}).pipe(
  Effect.map((applied) => applied.map(([id, name]) => `${String(id).padStart(4, "0")}_${name}`)),
  Effect.withSpan("Sql.migrate")
)

export const layerMigrated = Layer.effectDiscard(
  Effect.gen(function* () {
    const applied = yield* migrate
    if (applied.length > 0) yield* Effect.logInfo("migrations applied").pipe(Effect.annotateLogs({ applied }))
  }).pipe(Effect.orDie)
)

/** The client with the schema brought up to date: what the server and the CLI run on. */
export const layer = layerMigrated.pipe(Layer.provideMerge(layerClient))
