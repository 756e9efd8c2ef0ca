import { readFile } from "node:fs/promises"
import * as path from "node:path"
import { Effect, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { pgCtl, startPostmaster } from "../../src/Platform/EmbeddedPostgres.ts"
import { cpuShare, cpuSnapshot } from "./cpu.ts"
import type { ScratchDatabase } from "./database.ts"
import type { LoadPlan, LoadResult } from "./load.ts"
import { startRoundTripProxy } from "./pgProxy.ts"
import { startServer } from "./server.ts"

export interface Statement {
  readonly calls: number
  readonly totalMs: number
  readonly meanMs: number
  readonly query: string
}

export interface PerRequest {
  readonly roundTrips: number
  readonly serverCpuMs: number
  readonly postgresCpuMs: number
  readonly statements: ReadonlyArray<Statement>
}

/** The request log is written after the answer: let the writer finish before reading counters. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 200))

export const withClusterSql = <A>(
  database: ScratchDatabase,
  use: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>
) =>
  database.runtime.runPromise(
    Effect.flatMap(SqlClient.SqlClient, use).pipe(
      Effect.retry({ times: 20, schedule: Schedule.spaced("250 millis") }),
      Effect.orDie
    ) as Effect.Effect<A, never, SqlClient.SqlClient>
  )

/** Restarts the scratch cluster with pg_stat_statements (nested statements too, so PL/pgSQL bodies show). */
const enableStatementStatistics = async (database: ScratchDatabase) => {
  await withClusterSql(database, (sql) =>
    Effect.all([
      sql.unsafe("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'"),
      sql.unsafe("ALTER SYSTEM SET pg_stat_statements.track = 'all'")
    ])
  )
  const clusterDir = path.join(database.dataDir, "pg")
  await pgCtl([
    "restart",
    "-D",
    clusterDir,
    "-m",
    "fast",
    "-w",
    "-t",
    "60",
    "-l",
    path.join(clusterDir, "server.log")
  ])
  database.postmasterPid = Number(
    (await readFile(path.join(database.dataDir, "pg", "postmaster.pid"), "utf8")).split("\n")[0]
  )
  await withClusterSql(database, (sql) => sql.unsafe("CREATE EXTENSION IF NOT EXISTS pg_stat_statements"))
}

/** Restarts the scratch cluster listening on a Unix socket in its data directory too; returns a URL through it. */
export const useUnixSocket = async (database: ScratchDatabase) => {
  const clusterDir = path.join(database.dataDir, "pg")
  await pgCtl(["stop", "-D", clusterDir, "-m", "fast", "-w", "-t", "60"])
  await startPostmaster(clusterDir, database.port, clusterDir)
  database.postmasterPid = Number(
    (await readFile(path.join(clusterDir, "postmaster.pid"), "utf8")).split("\n")[0]
  )
  await withClusterSql(database, (sql) => sql.unsafe("SELECT 1"))
  return `${database.url()}?host=${encodeURIComponent(clusterDir)}`
}

const statementStatistics = (database: ScratchDatabase, action: "reset" | "read") =>
  withClusterSql(database, (sql) =>
    action === "reset"
      ? Effect.as(sql.unsafe("SELECT pg_stat_statements_reset()"), [])
      : sql<Statement>`
          SELECT calls::int AS calls, round(total_exec_time::numeric, 3)::float8 AS "totalMs",
                 round(mean_exec_time::numeric, 4)::float8 AS "meanMs",
                 left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 100) AS query
          FROM pg_stat_statements
          WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'lead_intake')
            AND query NOT ILIKE '%pg_stat_statements%'
          ORDER BY total_exec_time DESC
          LIMIT 12`
  )

/**
 * Per-request costs of each scenario, one connection at a time, through a proxy that counts
 * round trips to PostgreSQL, with pg_stat_statements on. Restarts the cluster.
 */
export const measurePerRequest = async (
  database: ScratchDatabase,
  scenarios: ReadonlyArray<LoadResult["scenario"]>,
  plan: (scenario: LoadResult["scenario"], overrides: Partial<LoadPlan>) => LoadPlan,
  drive: (plan: LoadPlan) => Promise<LoadResult>,
  logFile: string
) => {
  await enableStatementStatistics(database)
  const proxy = await startRoundTripProxy(database.port)
  const counted = await startServer({ env: { DATABASE_URL: database.url(proxy.port) }, logFile })
  const measured = new Map<string, PerRequest>()
  try {
    for (const scenario of scenarios) {
      const sample = scenario === "index" ? 5_000 : 800
      const countPlan = (amount: number) => ({
        ...plan(scenario, { connections: 1, amount }),
        url: counted.url
      })
      await drive(countPlan(50))
      await settle()
      await statementStatistics(database, "reset")
      proxy.reset()
      const before = cpuSnapshot(counted.pid, database.postmasterPid)
      const started = performance.now()
      await drive(countPlan(sample))
      await settle()
      const seconds = (performance.now() - started) / 1000
      const cpu = cpuShare(before, cpuSnapshot(counted.pid, database.postmasterPid), seconds)
      const perRequestMs = (percent: number) =>
        Math.round(((percent / 100) * seconds * 1000 * 1000) / sample) / 1000
      measured.set(scenario, {
        roundTrips: Math.round((proxy.count() / sample) * 100) / 100,
        serverCpuMs: perRequestMs(cpu.server),
        postgresCpuMs: perRequestMs(cpu.postgres),
        statements: (await statementStatistics(database, "read")).map((row) => ({
          ...row,
          calls: Math.round((row.calls / sample) * 100) / 100,
          totalMs: Math.round((row.totalMs / sample) * 1000) / 1000
        }))
      })
    }
  } finally {
    await counted.stop()
    await proxy.close()
  }
  return measured
}
