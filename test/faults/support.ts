import { mkdtemp, readdir, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { PgClient } from "@effect/sql-pg"
import { type Context, Effect, Layer, ManagedRuntime, Option, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient } from "effect/sql"
import { layerServices } from "../../src/Intake/Services.ts"
import { AppConfig } from "../../src/Platform/Config.ts"
import { acquireEmbeddedCluster, pgCtl, startPostmaster } from "../../src/Platform/EmbeddedPostgres.ts"
import * as Migrations from "../../src/Platform/Migrations.ts"
import { type FuzzTarget, leadPost, startTarget, utf8 } from "../fuzz/support.ts"
import type { layerMemoryServices, seed as seedOrganization } from "../support/Client.ts"
import { createDatabase, databaseUrl, testConfig } from "../support/Database.ts"

/**
 * An embedded PostgreSQL of the test's own, in a temporary directory, that the test may stop
 * (as a crash: `immediate`) and start again on the same port while the service keeps running.
 */
export interface DedicatedCluster {
  readonly port: number
  readonly url: (database: string) => string
  readonly createDatabase: (name: string) => Promise<void>
  readonly stop: (mode?: "fast" | "immediate") => Promise<void>
  readonly start: () => Promise<void>
  /** SIGSTOP to the postmaster, then to each of its children: a frozen host that keeps its sockets open. */
  readonly freeze: () => Promise<ReadonlyArray<number>>
  /** SIGCONT to every process `freeze` stopped. */
  readonly thaw: () => void
  readonly release: () => Promise<void>
}

export const startDedicatedCluster = async (): Promise<DedicatedCluster> => {
  const dataDir = await mkdtemp(path.join(tmpdir(), "lead-intake-faults-"))
  const cluster = await acquireEmbeddedCluster(dataDir, () => {})
  const url = (database: string) =>
    `postgres://${cluster.user}:${cluster.password}@127.0.0.1:${cluster.port}/${database}`
  let frozen: Array<number> = []
  const thaw = () => {
    for (const pid of frozen.reverse()) {
      try {
        process.kill(pid, "SIGCONT")
      } catch {
        // Gone already.
      }
    }
    frozen = []
  }
  return {
    port: cluster.port,
    url,
    createDatabase: (name) =>
      withSql(url("postgres"), (sql) => sql.unsafe(`CREATE DATABASE ${name}`)).then(() => {}),
    stop: (mode = "immediate") => pgCtl(["stop", "-D", cluster.clusterDir, "-m", mode, "-w", "-t", "30"]),
    start: () => startPostmaster(cluster.clusterDir, cluster.port),
    freeze: async () => {
      const postmaster = await postmasterPid(cluster.clusterDir)
      // The postmaster first, so it forks no child after the children are listed.
      process.kill(postmaster, "SIGSTOP")
      frozen.push(postmaster)
      for (const child of await childrenOf(postmaster)) {
        process.kill(child, "SIGSTOP")
        frozen.push(child)
      }
      return [...frozen]
    },
    thaw,
    release: async () => {
      thaw()
      await cluster.release().catch(() => {})
      // The test restarted the postmaster itself, so make sure it is gone whatever the lease says.
      await pgCtl(["stop", "-D", cluster.clusterDir, "-m", "immediate", "-w", "-t", "30"]).catch(() => {})
      await rm(dataDir, { recursive: true, force: true })
    }
  }
}

/** The postmaster's PID: the first line of `postmaster.pid` in the data directory. */
const postmasterPid = async (clusterDir: string) =>
  Number((await readFile(path.join(clusterDir, "postmaster.pid"), "utf8")).split("\n")[0])

/** The processes whose parent is `parent`, from `/proc/<pid>/stat` (field 4; the name in parentheses may hold spaces). */
const childrenOf = async (parent: number) => {
  const children: Array<number> = []
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "")
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
    if (ppid === parent) children.push(Number(entry))
  }
  return children
}

/** Runs one SQL effect on a short-lived connection of its own (never the service's pool). */
export const withSql = <A>(url: string, use: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(
    Effect.scoped(Effect.flatMap(PgClient.makeClient({ url: Redacted.make(url) }), (sql) => use(sql))).pipe(
      Effect.provide(Reactivity.layer),
      Effect.orDie
    ) as Effect.Effect<A>
  )

/** A connection for the test to inspect and tamper with the database, outside the service's pool. */
export const inspector = (url: string) => {
  const runtime = ManagedRuntime.make(
    PgClient.layer({ url: Redacted.make(url), maxConnections: 3 }).pipe(
      Layer.provide(Reactivity.layer),
      Layer.orDie
    )
  )
  const query = <Row extends object = Record<string, unknown>>(
    text: string,
    params: ReadonlyArray<unknown> = []
  ) =>
    runtime.runPromise(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<Row>(text, params as Array<never>)).pipe(
        Effect.orDie
      )
    )
  /** Runs the statements in one transaction on one connection (to hold a lock for a while). */
  const transaction = (statements: ReadonlyArray<string>) =>
    runtime.runPromise(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql.withTransaction(
          Effect.forEach(statements, (statement) => sql.unsafe(statement), { discard: true })
        )
      ).pipe(Effect.orDie)
    )
  return { runtime, query, transaction, close: () => runtime.dispose() }
}

/** A fresh database in the run's shared cluster (for faults that do not stop the database). */
export const freshDatabaseUrl = async () => databaseUrl(await Effect.runPromise(createDatabase("faults")))

type Services = Layer.Success<typeof layerMemoryServices>

/**
 * The router in-process on the service's real PostgreSQL layers, wired as `serve` wires them
 * (pool, connect timeout, statement timeout, migrations), seeded with an organization.
 */
export const startPostgresTarget = (url: string, poolSize = 10): Promise<FuzzTarget> =>
  startTarget(
    layerServices.pipe(
      Layer.provideMerge(Migrations.layer),
      Layer.provide(
        Layer.succeed(AppConfig, {
          ...testConfig,
          databaseUrl: Option.some(Redacted.make(url)),
          databasePoolSize: poolSize
        })
      ),
      Layer.orDie
    ) as unknown as Layer.Layer<Services>
  )

export interface Sent {
  readonly phone: string
  readonly key: string
  readonly body: Uint8Array
  readonly status: number
  /** The answer's `X-Request-Id`: its request-log row's id. */
  readonly requestId: string | null
  readonly json: { [key: string]: unknown; error?: { code: string } }
  readonly retryAfter: string | null
  readonly startedAt: number
  readonly elapsed: number
}

let phoneCounter = 0

/** A new lead's request: a phone and an Idempotency-Key never used before in this process. */
export const newLead = (tag: string) => {
  phoneCounter++
  const phone = `+52 55 ${String(Math.floor(Math.random() * 1e4)).padStart(4, "0")} ${String(phoneCounter).padStart(4, "0")}`
  return {
    phone,
    key: `${tag}-${crypto.randomUUID()}`,
    body: utf8(
      JSON.stringify({
        nombre: tag,
        telefono: phone,
        mensaje: `lead ${phoneCounter}`,
        extras: { n: phoneCounter }
      })
    )
  }
}

/** Sends one create through the router with the fixture's key (or `fixture`'s) and the lead's Idempotency-Key. */
export const sendLead = async (
  target: FuzzTarget,
  lead: { readonly phone: string; readonly key: string; readonly body: Uint8Array },
  hangMillis = 10_000,
  fixture: FuzzTarget["fixture"] = target.fixture
): Promise<Sent> => {
  const startedAt = performance.now()
  const { exchange } = await import("../fuzz/support.ts")
  const answer = await exchange(
    target,
    leadPost(fixture, lead.body, [["idempotency-key", lead.key]]),
    hangMillis
  )
  return {
    ...lead,
    status: answer.status,
    requestId: answer.headers.get("x-request-id"),
    json: JSON.parse(answer.text),
    retryAfter: answer.headers.get("retry-after"),
    startedAt,
    elapsed: performance.now() - startedAt
  }
}

export const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis))

/**
 * The service on a real socket, on its PostgreSQL layers, with the listener `serve` uses (its
 * timeouts), so client disconnects and slow clients reach it the way they would in production.
 */
export const startPostgresServer = async (
  url: string,
  poolSize = 10,
  options: {
    readonly seed?: Parameters<typeof seedOrganization>[0]
    /** Collects the service's JSON log lines (level Info and up) instead of discarding them. */
    readonly logLines?: Array<string>
  } = {}
) => {
  const { NodeHttpServer } = await import("@effect/platform-node")
  const { HttpRouter, HttpServer } = await import("effect/http")
  const { Logger, References, Scope, Exit } = await import("effect")
  const { makeJsonLogger } = await import("../../src/Platform/Observability/Observability.ts")
  const { layerApp } = await import("../../src/Intake/Http/App.ts")
  const { makeListener } = await import("../../src/Server.ts")
  const { seed } = await import("../support/Client.ts")
  const { layerTestConfig } = await import("../support/Database.ts")
  const scope = Effect.runSync(Scope.make())
  const config = { ...testConfig, databaseUrl: Option.some(Redacted.make(url)), databasePoolSize: poolSize }
  const lines = options.logLines
  const layerLogs =
    lines === undefined
      ? Layer.succeed(References.MinimumLogLevel, "Error")
      : Layer.merge(
          Logger.layer([makeJsonLogger((line) => lines.push(line))]),
          Layer.succeed(References.MinimumLogLevel, "Info")
        )
  const built = await Effect.runPromise(
    Scope.provide(scope)(
      Effect.gen(function* () {
        const services = yield* Layer.build(
          layerServices.pipe(
            Layer.provideMerge(Migrations.layer),
            Layer.provideMerge(Layer.succeed(AppConfig, config)),
            Layer.provideMerge(layerLogs),
            // As `serve` without an OpenTelemetry endpoint.
            Layer.provideMerge(Layer.succeed(References.TracerEnabled, false)),
            Layer.orDie
          )
        )
        const context = yield* Layer.build(
          HttpRouter.serve(layerApp, { disableLogger: true }).pipe(
            Layer.provideMerge(NodeHttpServer.layer(makeListener, { port: 0, host: "127.0.0.1" })),
            Layer.provide(Layer.succeedContext(services)),
            Layer.provide(layerTestConfig),
            Layer.provide(layerLogs)
          )
        )
        const server = yield* HttpServer.HttpServer.pipe(Effect.provide(Layer.succeedContext(context)))
        const fixture = yield* seed(options.seed ?? { rateLimit: 1_000_000 }).pipe(
          Effect.provide(Layer.succeedContext(services as never))
        )
        return {
          port: "port" in server.address ? server.address.port : 0,
          fixture,
          services: services as unknown as Context.Context<Services>
        }
      })
    )
  )
  return { ...built, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}
