import { spawn } from "node:child_process"
import { mkdir, readFile, writeFile } from "node:fs/promises"
import * as path from "node:path"
import { Effect, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { generateApiKey } from "../src/Domain/ApiKey.ts"
import { pgCtl, startPostmaster } from "../src/Sql/EmbeddedPostgres.ts"
import { numberOption, parseArgs } from "./lib/args.ts"
import { type CpuSnapshot, cpuShare, cpuSnapshot, waitForQuiet } from "./lib/cpu.ts"
import { provision, type ScratchDatabase, startScratchDatabase } from "./lib/database.ts"
import {
  type LoadPlan,
  type LoadResult,
  leadBody,
  phoneOf,
  type ScenarioName,
  scenarioNames
} from "./lib/load.ts"
import { type Cleanups, runMain } from "./lib/main.ts"
import { startRoundTripProxy } from "./lib/pgProxy.ts"
import { machine, megabytes, table } from "./lib/report.ts"
import { startServer } from "./lib/server.ts"

const usage = `npm run bench -- [options]
  --duration S        seconds per scenario (10)
  --connections N     concurrent keep-alive connections (32)
  --warmup S          unmeasured seconds of each scenario before it is measured (2)
  --scenarios a,b     subset of ${scenarioNames.join(",")}
  --origins N         origins provisioned, spread over the connections (32)
  --label TEXT        stored in the JSON (e.g. "before", "after")
  --out FILE          JSON results (bench-results/bench-<time>.json)
  --compare FILE      a previous JSON to print side by side
  --cpu-prof          write a V8 CPU profile of the server to bench-results/
  --node-flags "..."  extra Node/V8 flags for the server process
  --no-round-trips    skip counting database round trips per request
  --keep-data         keep the temporary PostgreSQL data directory
  --unix-socket       connect the server to PostgreSQL over a Unix socket instead of loopback TCP
  --quiet-wait S      before each scenario, wait up to S seconds for other work on the machine to end (60)`

const options = parseArgs(process.argv.slice(2))
if (options.has("help")) {
  process.stdout.write(`${usage}\n`)
  process.exit(0)
}
const duration = numberOption(options, "duration", 10)
const connections = numberOption(options, "connections", 32)
const warmup = options.has("warmup") ? Number(options.get("warmup")) : 2
const originCount = numberOption(options, "origins", 32)
const quietWait = options.has("quiet-wait") ? Number(options.get("quiet-wait")) : 60
const scenarios = (options.get("scenarios")?.split(",") ?? [...scenarioNames]) as Array<ScenarioName>
for (const scenario of scenarios) {
  if (!scenarioNames.includes(scenario)) {
    process.stderr.write(`unknown scenario ${scenario}; known: ${scenarioNames.join(", ")}\n`)
    process.exit(1)
  }
}
const stamp = new Date().toISOString().replace(/[:.]/g, "-")
const resultsDir = "bench-results"
const out = options.get("out") ?? path.join(resultsDir, `bench-${stamp}.json`)
const log = (line: string) => process.stderr.write(`${line}\n`)

/** Runs autocannon in a process of its own, so the load generator shares nothing with the server. */
const drive = (plan: LoadPlan) =>
  new Promise<LoadResult>((resolve, reject) => {
    const child = spawn(process.execPath, ["scripts/lib/load.ts"], { stdio: ["pipe", "pipe", "inherit"] })
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8")
    })
    child.on("exit", (code) =>
      code === 0
        ? resolve(JSON.parse(output) as LoadResult)
        : reject(new Error(`load process exited ${code}`))
    )
    child.stdin.end(JSON.stringify(plan))
  })

/** The request log is written after the answer: let the writer finish before reading counters. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 200))

const withClusterSql = <A>(
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
const useUnixSocket = async (database: ScratchDatabase) => {
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
      : sql<{ calls: number; totalMs: number; meanMs: number; query: string }>`
          SELECT calls::int AS calls, round(total_exec_time::numeric, 3)::float8 AS "totalMs",
                 round(mean_exec_time::numeric, 4)::float8 AS "meanMs",
                 left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 100) AS query
          FROM pg_stat_statements
          WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'lead_intake')
            AND query NOT ILIKE '%pg_stat_statements%'
          ORDER BY total_exec_time DESC
          LIMIT 12`
  )

/** CPU milliseconds per request from a share of one core (percent) at a rate. */
const cpuMs = (percent: number, requestsPerSecond: number) =>
  requestsPerSecond === 0 ? 0 : Math.round((percent / 100 / requestsPerSecond) * 1000 * 100) / 100

const post = async (url: string, key: string, body: string, headers: Record<string, string> = {}) => {
  const response = await fetch(`${url}/v1/leads`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...headers },
    body
  })
  const text = await response.text()
  if (response.status !== 201 && response.status !== 200) {
    throw new Error(`setup request answered ${response.status}: ${text}`)
  }
}

const inBatches = async <A>(items: ReadonlyArray<A>, size: number, run: (item: A) => Promise<void>) => {
  for (let start = 0; start < items.length; start += size) {
    await Promise.all(items.slice(start, start + size).map(run))
  }
}

const main = async (cleanups: Cleanups) => {
  await mkdir(resultsDir, { recursive: true })
  log("starting a scratch embedded PostgreSQL")
  const database = await startScratchDatabase()
  cleanups.push(() => database.close())
  const fixture = await database.runtime.runPromise(
    provision({ origins: originCount, rateLimit: 100_000_000 })
  )
  const keys = fixture.origins.map((origin) => origin.key)
  const postgresVersion = await database.runtime.runPromise(
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ server_version: string }>`SHOW server_version`).pipe(
      Effect.map((rows) => rows[0]?.server_version ?? "unknown"),
      Effect.orDie
    )
  )
  const cpuProfile = options.has("cpu-prof")
  const serverDatabaseUrl = options.has("unix-socket") ? await useUnixSocket(database) : database.url()
  const server = await startServer({
    env: { DATABASE_URL: serverDatabaseUrl },
    logFile: path.join(resultsDir, `server-${stamp}.log`),
    nodeOptions: [
      ...(options
        .get("node-flags")
        ?.split(" ")
        .filter((flag) => flag !== "") ?? []),
      ...(cpuProfile ? ["--cpu-prof", `--cpu-prof-dir=${resultsDir}`] : [])
    ]
  })
  cleanups.push(() => server.stop())
  log(`server pid ${server.pid} at ${server.url}`)

  const existingPhones = Array.from({ length: 2_000 }, (_, index) => phoneOf(5_510_000_000 + index))
  await inBatches(existingPhones, 32, (telefono) =>
    post(
      server.url,
      keys[existingPhones.indexOf(telefono) % keys.length]!,
      leadBody(0, telefono, fixture.propertyCodigo)
    )
  )
  const replays = Array.from({ length: connections }, (_, index) => ({
    key: keys[index % keys.length]!,
    idempotencyKey: `replay-${index}`,
    body: leadBody(index, phoneOf(5_520_000_000 + index), fixture.propertyCodigo)
  }))
  await inBatches(replays, 32, (replay) =>
    post(server.url, replay.key, replay.body, { "idempotency-key": replay.idempotencyKey })
  )

  let phoneBase = 5_600_000_000
  const plan = (scenario: ScenarioName, overrides: Partial<LoadPlan>): LoadPlan => {
    phoneBase += 10_000_000
    return {
      url: server.url,
      scenario,
      connections,
      duration,
      keys,
      propertyCodigo: fixture.propertyCodigo,
      tag: `${scenario}-${phoneBase}`,
      phoneBase,
      existingPhones,
      replays,
      unknownKey: generateApiKey().key,
      ...overrides
    }
  }

  const results: Array<
    LoadResult & {
      peakRssBytes: number
      cpu: ReturnType<typeof cpuShare>
      quiet: boolean
      roundTrips?: number
      perRequest?: {
        serverCpuMs: number
        postgresCpuMs: number
        statements: ReadonlyArray<{ calls: number; totalMs: number; meanMs: number; query: string }>
      }
    }
  > = []
  for (const scenario of scenarios) {
    const quiet = await waitForQuiet(quietWait, log)
    if (warmup > 0) await drive(plan(scenario, { duration: warmup }))
    log(`${scenario}: ${duration} s, ${connections} connections`)
    const sampler = server.sampleRss()
    const before: CpuSnapshot = cpuSnapshot(server.pid, database.postmasterPid)
    const result = await drive(plan(scenario, {}))
    const cpu = cpuShare(before, cpuSnapshot(server.pid, database.postmasterPid), result.durationSeconds)
    results.push({ ...result, peakRssBytes: sampler.stop(), cpu, quiet })
  }
  const serverPeakRss = (await import("./lib/server.ts")).memoryOf(server.pid, "VmHWM")
  await server.stop()

  if (!options.has("no-round-trips")) {
    log(
      "per-request costs: one connection at a time, through a round-trip counting proxy, with pg_stat_statements"
    )
    await enableStatementStatistics(database)
    const proxy = await startRoundTripProxy(database.port)
    const counted = await startServer({
      env: { DATABASE_URL: database.url(proxy.port) },
      logFile: path.join(resultsDir, `server-${stamp}-round-trips.log`)
    })
    cleanups.push(
      () => counted.stop(),
      () => proxy.close()
    )
    for (const entry of results) {
      const sample = entry.scenario === "index" ? 5_000 : 800
      const countPlan = (amount: number) =>
        ({ ...plan(entry.scenario, { connections: 1, amount }), url: counted.url }) satisfies LoadPlan
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
      entry.roundTrips = Math.round((proxy.count() / sample) * 100) / 100
      entry.perRequest = {
        serverCpuMs: perRequestMs(cpu.server),
        postgresCpuMs: perRequestMs(cpu.postgres),
        statements: (await statementStatistics(database, "read")).map((row) => ({
          ...row,
          calls: Math.round((row.calls / sample) * 100) / 100,
          totalMs: Math.round((row.totalMs / sample) * 1000) / 1000
        }))
      }
    }
    await counted.stop()
    await proxy.close()
  }

  await database.close({ keep: options.has("keep-data") })

  const report = {
    label: options.get("label") ?? null,
    at: new Date().toISOString(),
    machine: machine(postgresVersion),
    settings: {
      duration,
      connections,
      warmup,
      origins: originCount,
      nodeFlags: options.get("node-flags") ?? "",
      load: "autocannon, separate process"
    },
    serverPeakRssBytes: serverPeakRss,
    results
  }
  await writeFile(out, `${JSON.stringify(report, null, 2)}\n`)

  const rows: Array<Array<string | number>> = [
    [
      "scenario",
      "req/s",
      "p50 ms",
      "p90 ms",
      "p99 ms",
      "max ms",
      "errors",
      "non-2xx",
      "unexpected",
      "peak RSS MB",
      "DB trips/req",
      "CPU ms/req srv+pg",
      "CPU% srv/pg/load/others"
    ]
  ]
  for (const r of results) {
    rows.push([
      r.scenario,
      r.requestsPerSecond,
      r.latencyMs.p50,
      r.latencyMs.p90,
      r.latencyMs.p99,
      r.latencyMs.max,
      r.errors + r.timeouts,
      r.non2xx,
      r.unexpected,
      megabytes(r.peakRssBytes),
      r.roundTrips ?? "-",
      `${cpuMs(r.cpu.server, r.requestsPerSecond)}+${cpuMs(r.cpu.postgres, r.requestsPerSecond)}`,
      `${r.cpu.server}/${r.cpu.postgres}/${r.cpu.load}/${r.cpu.others}`
    ])
  }
  const m = report.machine
  process.stdout.write(
    `\n${m.cores} x ${m.cpu}, ${m.memoryGiB} GiB, Linux ${m.kernel}, Node ${m.node}, PostgreSQL ${m.postgres}\n` +
      `${connections} connections, ${duration} s per scenario after ${warmup} s warm-up; ${originCount} origins\n\n` +
      `${table(rows)}\n\nserver peak RSS over the run: ${megabytes(serverPeakRss)} MB\nresults: ${out}\n`
  )
  for (const r of results) {
    if (r.perRequest === undefined || r.perRequest.statements.length === 0) continue
    process.stdout.write(`\n${r.scenario}: statements per request (pg_stat_statements, nested included)\n`)
    process.stdout.write(
      `${table([
        ["calls/req", "exec ms/req", "mean ms", "statement"],
        ...r.perRequest.statements.map((st) => [st.calls, st.totalMs, st.meanMs, st.query])
      ])}\n`
    )
  }

  const compare = options.get("compare")
  if (compare !== undefined) {
    const previous = JSON.parse(await readFile(compare, "utf8")) as typeof report
    const before = new Map(previous.results.map((r) => [r.scenario, r]))
    const deltas: Array<Array<string | number>> = [
      [
        "scenario",
        `req/s ${previous.label ?? "before"}`,
        "req/s now",
        `p99 ${previous.label ?? "before"}`,
        "p99 now",
        "trips before",
        "trips now"
      ]
    ]
    for (const r of results) {
      const b = before.get(r.scenario)
      deltas.push([
        r.scenario,
        b?.requestsPerSecond ?? "-",
        r.requestsPerSecond,
        b?.latencyMs.p99 ?? "-",
        r.latencyMs.p99,
        b?.roundTrips ?? "-",
        r.roundTrips ?? "-"
      ])
    }
    process.stdout.write(`\ncompared with ${compare}\n\n${table(deltas)}\n`)
  }

  const failures = targets(results, serverPeakRss)
  process.stdout.write(
    failures.length === 0
      ? "\nall targets met\n"
      : `\ntargets missed:\n${failures.map((f) => `  - ${f}`).join("\n")}\n`
  )
}

const targets = (results: ReadonlyArray<LoadResult & { peakRssBytes: number }>, peakRss: number) => {
  const failures: Array<string> = []
  const of = (scenario: ScenarioName) => results.find((r) => r.scenario === scenario)
  const atLeast = (scenario: ScenarioName, rate: number) => {
    const r = of(scenario)
    if (r !== undefined && r.requestsPerSecond < rate)
      failures.push(`${scenario}: ${r.requestsPerSecond}/s < ${rate}/s`)
  }
  atLeast("create", 800)
  atLeast("replay", 1_500)
  atLeast("dry-run", 1_500)
  atLeast("index", 10_000)
  const create = of("create")
  if (create !== undefined && create.latencyMs.p99 > 80)
    failures.push(`create: p99 ${create.latencyMs.p99} ms > 80 ms`)
  for (const r of results) {
    if (r.errors + r.timeouts + r.unexpected > 0) {
      failures.push(
        `${r.scenario}: ${r.errors} errors, ${r.timeouts} timeouts, ${r.unexpected} unexpected statuses ${JSON.stringify(r.statusCodes)}`
      )
    }
  }
  if (peakRss > 200 * 2 ** 20) failures.push(`server peak RSS ${megabytes(peakRss)} MB > 200 MB`)
  return failures
}

await runMain(main)
