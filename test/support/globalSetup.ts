import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted, References } from "effect"
import type { TestProject } from "vitest/node"
import { ensureConsole } from "../../scripts/build.ts"
import { acquireEmbeddedCluster } from "../../src/Platform/EmbeddedPostgres.ts"
import * as Migrations from "../../src/Platform/Migrations.ts"

declare module "vitest" {
  export interface ProvidedContext {
    postgres: {
      readonly host: string
      readonly port: number
      readonly user: string
      readonly password: string
      /** "embedded" for the run's own cluster (the user is its superuser), else the server's version. */
      readonly server: string
      /** A login role with no rights of its own, for tests of a DML-only `serve` (TEST_DML_ROLE). */
      readonly dmlRole: { readonly user: string; readonly password: string } | null
      /**
       * The server itself when the tests' connections go through a pooler in transaction mode
       * (`TEST_DIRECT_DATABASE_URL`, PgBouncer): databases are created and migrated there, as an
       * operator runs `migrate` against PostgreSQL. Null when `host`/`port` is the server.
       */
      readonly direct: { readonly host: string; readonly port: number } | null
      /** The workers of a Citus cluster whose coordinator is the server (`TEST_CITUS_WORKERS`), else null. */
      readonly citus: {
        readonly workers: ReadonlyArray<{ readonly host: string; readonly port: number }>
        /**
         * Each node's superuser URL and log file, the coordinator first, then the workers in the
         * order above (`TEST_CITUS_SUPERUSER_URLS`, `TEST_CITUS_LOGS`): for tests that inspect the
         * nodes (log levels, backends' memory); null when the cluster does not say.
         */
        readonly inspection: ReadonlyArray<{ readonly superuserUrl: string; readonly log: string }> | null
      } | null
      /**
       * A database migrated once for the run, which `createMigratedDatabase` copies (`CREATE
       * DATABASE ... TEMPLATE`). Null with `TEST_DATABASE_TEMPLATE=off` and on Citus (a copy is not
       * distributed to the workers): each database is then migrated from nothing.
       */
      readonly template: string | null
    }
  }
}

/** `user:password`, as `TEST_DML_ROLE` gives a role the CI script created. */
const dmlRoleOf = (raw: string | undefined) => {
  if (raw === undefined || raw === "") return null
  const at = raw.indexOf(":")
  if (at <= 0) throw new Error("TEST_DML_ROLE: expected user:password")
  return { user: raw.slice(0, at), password: raw.slice(at + 1) }
}

const postgresUrlOf = (name: string, raw: string) => {
  const url = URL.parse(raw)
  if (url === null || !url.protocol.startsWith("postgres")) throw new Error(`${name}: not a postgres:// URL`)
  return url
}

const portOf = (url: URL) => Number(url.port === "" ? 5432 : url.port)

/** `host:port,host:port`, as `TEST_CITUS_WORKERS` lists a Citus cluster's workers. */
const citusOf = (raw: string | undefined) => {
  if (raw === undefined || raw === "") return null
  const workers = raw.split(",").map((worker) => {
    const at = worker.lastIndexOf(":")
    const port = Number(worker.slice(at + 1))
    if (at <= 0 || !Number.isInteger(port))
      throw new Error("TEST_CITUS_WORKERS: expected host:port,host:port")
    return { host: worker.slice(0, at), port }
  })
  return { workers, inspection: inspectionOf(workers.length) }
}

/** `TEST_CITUS_SUPERUSER_URLS` and `TEST_CITUS_LOGS`, one per node, the coordinator first. */
const inspectionOf = (workers: number) => {
  const urls = process.env.TEST_CITUS_SUPERUSER_URLS
  const logs = process.env.TEST_CITUS_LOGS
  if (urls === undefined || urls === "" || logs === undefined || logs === "") return null
  const pairs = urls.split(",").map((superuserUrl, i) => ({ superuserUrl, log: logs.split(",")[i] ?? "" }))
  if (pairs.length !== workers + 1 || pairs.some((pair) => pair.log === ""))
    throw new Error(
      "TEST_CITUS_SUPERUSER_URLS, TEST_CITUS_LOGS: expected one per node, the coordinator first"
    )
  return pairs
}

/**
 * Every test file makes its own database in one PostgreSQL for the whole run: the server at
 * `TEST_DATABASE_URL` when it is set (as a role with CREATEDB; CI runs Debian's PostgreSQL so), else
 * an embedded one started here. Tests that stop or freeze the server start their own embedded one.
 */
export default async function setup(project: TestProject) {
  // Servers started from src/ serve the console from dist/console: built here when stale.
  if (await ensureConsole()) process.stderr.write("[console] built dist/console\n")
  const external = process.env.TEST_DATABASE_URL
  if (external !== undefined && external !== "") {
    const url = postgresUrlOf("TEST_DATABASE_URL", external)
    const rawDirect = process.env.TEST_DIRECT_DATABASE_URL
    const direct =
      rawDirect === undefined || rawDirect === ""
        ? null
        : postgresUrlOf("TEST_DIRECT_DATABASE_URL", rawDirect)
    const citus = citusOf(process.env.TEST_CITUS_WORKERS)
    const server = await serverVersion(external)
    const through = direct === null ? "" : ` through ${process.env.TEST_PGBOUNCER ?? "a pooler"}`
    const workers = citus === null ? "" : `, Citus workers ${process.env.TEST_CITUS_WORKERS}`
    process.stderr.write(
      `[postgres] tests on ${url.hostname}:${url.port}${through} as ${url.username}: ${server}${workers}\n`
    )
    const user = decodeURIComponent(url.username)
    const password = decodeURIComponent(url.password)
    // A Citus cluster copies template1 only: `.ci/citus` migrates it (the schema placed on the workers)
    // and says so (TEST_CITUS_TEMPLATE=template1); a session here would keep it from being copied.
    const template =
      citus === null
        ? await makeTemplate({
            ...(direct === null
              ? { host: url.hostname, port: portOf(url) }
              : { host: direct.hostname, port: portOf(direct) }),
            user,
            password
          })
        : process.env.TEST_CITUS_TEMPLATE === "template1"
          ? { name: "template1", drop: () => undefined }
          : undefined
    project.provide("postgres", {
      host: url.hostname,
      port: portOf(url),
      user,
      password,
      server,
      dmlRole: dmlRoleOf(process.env.TEST_DML_ROLE),
      direct: direct === null ? null : { host: direct.hostname, port: portOf(direct) },
      citus,
      template: template?.name ?? null
    })
    return () => template?.drop()
  }
  const dataDir = await mkdtemp(path.join(tmpdir(), "lead-intake-test-"))
  const cluster = await acquireEmbeddedCluster(dataDir, (line) => {
    if (!line.startsWith("stopping")) process.stderr.write(`[postgres] ${line}\n`)
  })
  const template = await makeTemplate({
    host: "127.0.0.1",
    port: cluster.port,
    user: cluster.user,
    password: cluster.password
  })
  project.provide("postgres", {
    host: "127.0.0.1",
    port: cluster.port,
    user: cluster.user,
    password: cluster.password,
    server: "embedded",
    dmlRole: dmlRoleOf(process.env.TEST_DML_ROLE),
    direct: null,
    citus: null,
    template: template?.name ?? null
  })
  return async () => {
    await cluster.release()
    await rm(dataDir, { recursive: true, force: true })
  }
}

interface Connection {
  readonly host: string
  readonly port: number
  readonly user: string
  readonly password: string
}

/**
 * The run's template database, on the server itself: created and migrated once here, so that each
 * test's database is a copy rather than every migration run again (`TEST_DATABASE_TEMPLATE=off`:
 * none).
 */
const makeTemplate = async (connection: Connection) => {
  const setting = process.env.TEST_DATABASE_TEMPLATE ?? "on"
  if (setting === "off") return undefined
  if (setting !== "on") throw new Error(`TEST_DATABASE_TEMPLATE: expected on or off, got ${setting}`)
  const name = `template_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`
  const { default: pg } = await import("pg")
  const admin = async <A>(use: (client: InstanceType<typeof pg.Client>) => Promise<A>) => {
    const client = new pg.Client({ ...connection, database: "postgres" })
    await client.connect()
    try {
      return await use(client)
    } finally {
      await client.end()
    }
  }
  await admin((client) => client.query(`CREATE DATABASE ${name}`))
  const host = connection.host.includes(":") ? `[${connection.host}]` : connection.host
  const url = `postgres://${encodeURIComponent(connection.user)}:${encodeURIComponent(connection.password)}@${host}:${connection.port}/${name}`
  await Effect.runPromise(
    Migrations.migrate.pipe(
      Effect.provide(
        PgClient.layer({ url: Redacted.make(url), maxConnections: 1, connectTimeout: "10 seconds" })
      ),
      Effect.provideService(References.MinimumLogLevel, "Warn")
    )
  )
  return {
    name,
    drop: () => admin((client) => client.query(`DROP DATABASE IF EXISTS ${name}`)).then(() => undefined)
  }
}

const serverVersion = async (url: string) => {
  const { default: pg } = await import("pg")
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const result = await client.query<{ version: string }>("SELECT version()")
    return result.rows[0]!.version
  } finally {
    await client.end()
  }
}
