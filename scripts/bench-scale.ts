import { mkdir } from "node:fs/promises"
import * as path from "node:path"
import { generateApiKey } from "../src/Domain/ApiKey.ts"
import { numberOption, parseArgs } from "./lib/args.ts"
import { cpuShare, cpuSnapshot } from "./lib/cpu.ts"
import { provision, startScratchDatabase } from "./lib/database.ts"
import { drive } from "./lib/drive.ts"
import { seed } from "./lib/fixture.ts"
import type { LoadPlan, LoadResult } from "./lib/load.ts"
import { table } from "./lib/report.ts"
import { type ServerProcess, startServer } from "./lib/server.ts"

/**
 * Creates against one service instance, then against two instances on the same PostgreSQL at once
 * (the same total connections split between them): what an added instance buys on this machine.
 *   npm run bench:scale -- [--duration 10] [--connections 32] [--pool N]
 */
const options = parseArgs(process.argv.slice(2))
const duration = numberOption(options, "duration", 10)
const connections = numberOption(options, "connections", 32)
const pool = options.get("pool")
const stamp = new Date().toISOString().replace(/[:.]/g, "-")
const resultsDir = path.join("bench-results", `scale-${stamp}`)
const log = (line: string) => process.stderr.write(`${line}\n`)

const cleanups: Array<() => Promise<unknown>> = []

const main = async () => {
  await mkdir(resultsDir, { recursive: true })
  const database = await startScratchDatabase()
  cleanups.push(() => database.close())
  const fixture = await database.runtime.runPromise(provision({ origins: 32, rateLimit: 100_000_000 }))
  const keys = fixture.origins.map((origin) => origin.key)
  // Two instances on one host: only the API listens, or the second would find the first's console and probe ports.
  const env = {
    DATABASE_URL: database.url(),
    ADMIN_PORT: "off",
    HEALTH_PORT: "off",
    ...(pool === undefined ? {} : { DATABASE_POOL_SIZE: pool })
  }
  const instances: Array<ServerProcess> = []
  for (const name of ["a", "b"]) {
    const server = await startServer({ env, logFile: path.join(resultsDir, `${name}.log`) })
    cleanups.push(() => server.stop())
    instances.push(server)
  }
  const { existingPhones, replays } = await seed(instances[0]!.url, keys, fixture.propertyCodigo, connections)
  let phoneBase = 5_600_000_000
  const plan = (url: string, conns: number, seconds: number): LoadPlan => {
    phoneBase += 10_000_000
    return {
      url,
      scenario: "create",
      connections: conns,
      duration: seconds,
      keys,
      propertyCodigo: fixture.propertyCodigo,
      tag: `scale-${phoneBase}`,
      phoneBase,
      existingPhones,
      replays,
      unknownKey: generateApiKey().key
    }
  }
  const rows: Array<Array<string | number>> = [
    [
      "instances",
      "connections each",
      "creates/s total",
      "p50 ms",
      "p99 ms",
      "PostgreSQL % of a core",
      "creates per PostgreSQL core-second",
      "other processes % (contention)"
    ]
  ]
  // PostgreSQL's CPU (postmaster and backends) over each phase: creates per core of it.
  const measured = async (phase: () => Promise<ReadonlyArray<LoadResult>>) => {
    const before = cpuSnapshot(instances[0]!.pid, database.postmasterPid)
    const started = performance.now()
    const results = await phase()
    return {
      results,
      cpu: cpuShare(
        before,
        cpuSnapshot(instances[0]!.pid, database.postmasterPid),
        (performance.now() - started) / 1000
      )
    }
  }
  const record = (
    count: number,
    { results, cpu }: { results: ReadonlyArray<LoadResult>; cpu: ReturnType<typeof cpuShare> }
  ) => {
    const total = results.reduce((sum, r) => sum + r.requestsPerSecond, 0)
    rows.push([
      count,
      connections / count,
      total,
      Math.max(...results.map((r) => r.latencyMs.p50)),
      Math.max(...results.map((r) => r.latencyMs.p99)),
      cpu.postgres,
      cpu.postgres === 0 ? "-" : Math.round(total / (cpu.postgres / 100)),
      cpu.others
    ])
    return total
  }
  await Promise.all(instances.map((server) => drive(plan(server.url, connections / 2, 2))))
  log(`one instance: ${duration} s`)
  const one = record(
    1,
    await measured(async () => [await drive(plan(instances[0]!.url, connections, duration))])
  )
  log(`two instances: ${duration} s`)
  const two = record(
    2,
    await measured(() =>
      Promise.all(instances.map((server) => drive(plan(server.url, connections / 2, duration))))
    )
  )
  process.stdout.write(
    `\n${table(rows)}\n\nsecond instance: ${two - one >= 0 ? "+" : ""}${two - one} creates/s (${Math.round((two / one) * 100)} % of one)\n`
  )
}

await main()
  .catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exitCode = 1
  })
  .finally(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {})
  })
