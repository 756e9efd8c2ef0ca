import { PgClient } from "@effect/sql-pg"
import { Cause, Effect, Exit, Layer, Option, Redacted, References, Schedule } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient } from "effect/sql"
import { inject } from "vitest"
import { defaultHostNames } from "../../src/Domain/HostNames.ts"
import { AppConfig, type AppConfigShape } from "../../src/Platform/Config.ts"
import * as Migrations from "../../src/Platform/Migrations.ts"
import { sessionSettings } from "../../src/Platform/Sql/Sql.ts"
import { trustNone } from "../../src/Platform/TrustedProxies.ts"

export const postgres = () => inject("postgres")

const hostOf = (host: string) => (host.includes(":") && !host.startsWith("[") ? `[${host}]` : host)

const urlOf = (server: { readonly host: string; readonly port: number }, database: string) => {
  const pg = postgres()
  return `postgres://${encodeURIComponent(pg.user)}:${encodeURIComponent(pg.password)}@${hostOf(server.host)}:${server.port}/${database}`
}

/** The URL the tests and the servers they start use: through the pooler when there is one. */
export const databaseUrl = (database: string) => urlOf(postgres(), database)

/** The server itself, for what needs a session of its own (`migrate`); `databaseUrl` without a pooler. */
export const directDatabaseUrl = (database: string) => urlOf(postgres().direct ?? postgres(), database)

/** Whether `url` goes through the run's pooler (tests with a cluster of their own do not). */
const throughPooler = (url: string) => {
  const pg = postgres()
  const parsed = URL.parse(url)
  return (
    pg.direct !== null &&
    parsed !== null &&
    parsed.hostname === hostOf(pg.host) &&
    Number(parsed.port === "" ? 5432 : parsed.port) === pg.port
  )
}

/** The server itself for a database's `databaseUrl`; any other URL unchanged. */
export const directUrlOf = (url: string) =>
  throughPooler(url) ? directDatabaseUrl(decodeURIComponent(new URL(url).pathname.slice(1))) : url

/**
 * What a server or operator command on `url` needs beyond `DATABASE_URL` when `url` goes through the
 * run's pooler (transaction mode): no named prepared statement, and `serve --no-migrate`, as an
 * operator runs them behind PgBouncer (the tests migrate on the server itself first).
 */
export const pooledEnvironment = (url: string): Record<string, string> =>
  throughPooler(url) ? { DATABASE_PREPARE: "false", MIGRATE_ON_START: "false" } : {}

export interface DatabaseOptions {
  /**
   * Commits wait for the WAL to reach the disk (`synchronous_commit`), as in production. Off by
   * default on the throwaway test databases: only a crash of PostgreSQL itself could tell the
   * difference, and the tests that crash PostgreSQL run their own cluster; a test of crashes
   * (of the server or of PostgreSQL) asks for durable commits all the same.
   */
  readonly durable?: boolean
  /**
   * A copy of `template0`: a plain PostgreSQL database, as one server without Citus has. On a Citus
   * cluster it is the coordinator's alone (no `citus` extension, nothing on the workers): Citus
   * copies no template but template1 to the workers, so its propagation is off for this one.
   */
  readonly plain?: boolean
}

/** The databases this test file created, dropped after it (`dropCreatedDatabases`). */
const created = new Set<string>()

/** An admin session on the run's server itself (not through its pooler), in `postgres`. */
const adminClient = () => {
  const pg = postgres()
  const server = pg.direct ?? pg
  return PgClient.makeClient({
    host: server.host,
    port: server.port,
    username: pg.user,
    password: Redacted.make(pg.password),
    database: "postgres"
  })
}

/**
 * Drops the databases this test file created, each with whatever still holds a session in it (a
 * server a test left running). On Citus every database keeps a maintenance process on each node
 * while it exists: a run that kept them all would spend its CPU on them.
 *
 * On a Citus cluster that gives its superuser (`TEST_CITUS_SUPERUSER_URLS`, `.ci/citus`'s) the
 * superuser drops them, trying again every 250 ms for at most 25 s in all (the hook has 60). As the
 * test role, `WITH (FORCE)` may not end the superuser's sessions that Citus's maintenance daemons
 * hold in a database's copies ("must be a superuser to terminate superuser process"), and a
 * propagated `DROP DATABASE` that meets one leaves the cluster in pieces: the coordinator's copy
 * invalid, the workers' there, each with a maintenance daemon that tries several times a second to
 * connect to the coordinator's invalid copy. A CI run that left twenty of them spent its later
 * files' CPU on that, and their writes timed out: docs/testing.md has the reproduction and the
 * reasons in Citus's source. Even the superuser's drop may fail ("being accessed by other users": a
 * connection still starting, which is no session to end yet, keeps it waiting 5 s), hence the tries;
 * one that failed half-way is finished node by node, with Citus's propagation off. A database still
 * there is named on stderr.
 */
const dropBudgetMillis = 25_000

export const dropCreatedDatabases = Effect.gen(function* () {
  if (created.size === 0) return
  const nodes = postgres().citus?.inspection ?? null
  // Every try of every database ends by then, well within the hook's 60 s (a try that meets a
  // connection starting waits 5 s before it fails).
  const deadline = Date.now() + dropBudgetMillis
  /**
   * Runs `statements` on a session of their own, again every 250 ms until they succeed (at most
   * `times` more, and none past the deadline).
   */
  const tried = (url: string | null, times: number, ...statements: ReadonlyArray<string>) =>
    Effect.scoped(
      Effect.gen(function* () {
        const admin =
          url === null ? yield* adminClient() : yield* PgClient.makeClient({ url: Redacted.make(url) })
        for (const statement of statements) yield* admin.unsafe(statement)
      })
    ).pipe(
      Effect.timeout("10 seconds"),
      Effect.retry({ schedule: Schedule.spaced("250 millis"), times, while: () => Date.now() < deadline }),
      Effect.exit
    )
  for (const name of created) {
    const drop = `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`
    let dropped = yield* tried(nodes?.[0]?.superuserUrl ?? null, nodes === null ? 0 : 20, drop)
    // What a propagated drop that failed half-way left, each node's copy by itself.
    if (Exit.isFailure(dropped) && nodes !== null && Date.now() < deadline) {
      dropped = Exit.void
      for (const node of nodes) {
        const alone = yield* tried(
          node.superuserUrl,
          20,
          "SET citus.enable_create_database_propagation = off",
          drop
        )
        if (Exit.isFailure(alone)) dropped = alone
      }
    }
    if (Exit.isFailure(dropped)) {
      // The innermost cause is PostgreSQL's own message.
      let error = Cause.squash(dropped.cause)
      while (error instanceof Error && error.cause instanceof Error) error = error.cause
      const reason = error instanceof Error ? error.message : String(error)
      process.stderr.write(`test database ${name} not dropped: ${reason}\n`)
    }
    created.delete(name)
  }
}).pipe(Effect.provide(Reactivity.layer), Effect.ignore)

/**
 * A new database in the run's cluster, empty or a copy of `template`. Behind a pooler, which
 * ignores the service's startup parameters, the database gets them as its own defaults.
 */
const make = (prefix: string, template: string | null, options: DatabaseOptions) => {
  const pg = postgres()
  const name = `${prefix}_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`
  return Effect.scoped(
    Effect.gen(function* () {
      const admin = yield* adminClient()
      // The admin client is one session: a setting holds for its next statements.
      if (options.plain === true && pg.citus !== null)
        yield* admin.unsafe("SET citus.enable_create_database_propagation = off")
      yield* admin.unsafe(
        options.plain === true
          ? `CREATE DATABASE ${name} TEMPLATE template0`
          : template === null
            ? `CREATE DATABASE ${name}`
            : `CREATE DATABASE ${name} TEMPLATE ${template}`
      )
      created.add(name)
      if (options.durable !== true) yield* admin.unsafe(`ALTER DATABASE ${name} SET synchronous_commit = off`)
      if (pg.direct !== null)
        for (const [setting, value] of Object.entries(sessionSettings))
          yield* admin.unsafe(`ALTER DATABASE ${name} SET ${setting} = '${value}'`)
    })
  ).pipe(Effect.provide(Reactivity.layer), Effect.orDie, Effect.as(name))
}

/**
 * Creates an empty database in the run's cluster and returns its name. (On a Citus cluster whose
 * template1 holds the schema, `.ci/citus`'s, it is a migrated one: the tests of migrating run elsewhere.)
 */
export const createDatabase = Effect.fn("test.createDatabase")(function* (
  prefix = "t",
  options: DatabaseOptions = {}
) {
  return yield* make(prefix, null, options)
})

/**
 * Creates a database without the service's schema and returns its name. On a Citus cluster whose
 * template1 holds the schema (`.ci/citus`), a copy of template1 (a Citus database: the extension, the
 * workers) emptied of it: its tables, routines and sequences dropped, on the workers too. Not
 * `DROP SCHEMA public CASCADE`: Citus keeps views of its own there (`citus_tables`), so that would
 * drop the extension, which only a superuser may.
 */
export const createEmptyDatabase = Effect.fn("test.createEmptyDatabase")(function* (
  prefix = "t",
  options: DatabaseOptions = {}
) {
  const name = yield* make(prefix, null, options)
  if (postgres().citus === null || postgres().template === null) return name
  yield* Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const tables = [
      ...Migrations.referenceTables,
      ...Migrations.distributedTables,
      ...Migrations.coordinatorTables
    ]
    yield* sql.unsafe(`DROP TABLE IF EXISTS ${tables.join(", ")} CASCADE`)
    // Not the extension's own (`citus_tables`): `deptype = 'e'` marks an extension's members.
    const routines = yield* sql<{ name: string }>`
      SELECT p.oid::regprocedure::text AS name FROM pg_proc p
      WHERE p.pronamespace = current_schema()::regnamespace
        AND NOT EXISTS (SELECT 1 FROM pg_depend d
                        WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')`
    if (routines.length > 0)
      yield* sql.unsafe(`DROP ROUTINE ${routines.map((routine) => routine.name).join(", ")} CASCADE`)
    const sequences = yield* sql<{ name: string }>`
      SELECT c.oid::regclass::text AS name FROM pg_class c
      WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'S'
        AND NOT EXISTS (SELECT 1 FROM pg_depend d
                        WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')`
    if (sequences.length > 0)
      yield* sql.unsafe(`DROP SEQUENCE ${sequences.map((sequence) => sequence.name).join(", ")}`)
  }).pipe(
    Effect.provide(
      PgClient.layer({
        url: Redacted.make(directDatabaseUrl(name)),
        maxConnections: 1,
        connectTimeout: "10 seconds"
      })
    ),
    Effect.orDie
  )
  return name
})

/**
 * Creates a database with every migration applied and returns its name: a copy of the run's
 * template database (globalSetup migrates it once), or, without one (`TEST_DATABASE_TEMPLATE=off`,
 * Citus), an empty one migrated here. Tests of migrating itself start from `createDatabase`.
 */
export const createMigratedDatabase = Effect.fn("test.createMigratedDatabase")(function* (
  prefix = "t",
  options: DatabaseOptions = {}
) {
  const { template } = postgres()
  if (template !== null) return yield* make(prefix, template, options)
  const name = yield* make(prefix, null, options)
  yield* Migrations.migrate.pipe(
    Effect.provide(
      PgClient.layer({
        url: Redacted.make(directDatabaseUrl(name)),
        maxConnections: 1,
        connectTimeout: "10 seconds"
      })
    ),
    Effect.provideService(References.MinimumLogLevel, "Warn"),
    Effect.orDie
  )
  return name
})

/**
 * `SqlClient` + `PgClient` on a test database's URL, migrated first: behind the run's pooler, on the
 * server itself (migrations hold a session: an advisory lock), and the client prepares nothing.
 */
export const layerMigratedDatabase = (url: string, maxConnections: number) => {
  const client = PgClient.layer({
    url: Redacted.make(url),
    maxConnections,
    connectTimeout: "2 seconds",
    ...(throughPooler(url) ? { prepare: false } : {})
  })
  if (!throughPooler(url)) return Migrations.layerMigrated.pipe(Layer.provideMerge(client))
  const migrated = Layer.build(
    Migrations.layerMigrated.pipe(
      Layer.provide(PgClient.layer({ url: Redacted.make(directUrlOf(url)), maxConnections: 2 }))
    )
  ).pipe(Effect.scoped)
  return Layer.unwrap(Effect.as(migrated, client))
}

/**
 * A fresh, migrated database for one test file (or one test), as `SqlClient` + `PgClient`. The
 * migrations still run on it: with nothing left to apply they only check that nothing is.
 */
export const layerFreshDatabase = Layer.unwrap(
  Effect.map(createMigratedDatabase(), (name) => layerMigratedDatabase(databaseUrl(name), 30))
).pipe(Layer.orDie)

/**
 * The same with commits that wait for the WAL flush (`durable`), as in production: what a test
 * needs whose outcome depends on it, such as a shard move by logical replication on Citus.
 */
export const layerFreshDurableDatabase = Layer.unwrap(
  Effect.map(createMigratedDatabase("t", { durable: true }), (name) =>
    layerMigratedDatabase(databaseUrl(name), 30)
  )
).pipe(Layer.orDie)

export const testConfig: AppConfigShape = {
  port: 0,
  host: "127.0.0.1",
  databaseUrl: Option.none(),
  dataDir: ".data",
  publicBaseUrl: "http://api.test",
  dashboardUrl: "https://crm.test",
  logLevel: "Warn",
  metricsPort: Option.none(),
  metricsHost: "127.0.0.1",
  databasePoolSize: 10,
  databasePrepare: true,
  requestLogRetentionDays: 90,
  rejectedRetentionDays: 30,
  adminHost: "127.0.0.1",
  adminHosts: defaultHostNames("127.0.0.1"),
  adminPort: Option.none(),
  healthHost: "127.0.0.1",
  healthPort: Option.none(),
  trustedProxies: trustNone,
  production: false,
  migrateOnStart: true
}

export const layerTestConfig = Layer.succeed(AppConfig, testConfig)
