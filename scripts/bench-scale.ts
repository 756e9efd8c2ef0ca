import { execFile } from "node:child_process"
import { appendFile, mkdir, writeFile } from "node:fs/promises"
import * as path from "node:path"
import type pg from "pg"
import { generateApiKey } from "../src/Domain/ApiKey.ts"
import { sessionSettings } from "../src/Platform/Sql/Sql.ts"
import { numberOption, parseArgs } from "./lib/args.ts"
import { ensureBundle } from "./lib/bundle.ts"
import {
  type CiServer,
  openClient,
  pidIn,
  startCiServer,
  withClient,
  withDatabase,
  withHost
} from "./lib/clusters.ts"
import { treeCpuSnapshot } from "./lib/cpu.ts"
import { type Provisioned, provision, servicesOn } from "./lib/database.ts"
import { drive } from "./lib/drive.ts"
import type { LoadPlan, LoadResult } from "./lib/load.ts"
import { type Cleanups, helpRequested, runCleanups, runMain, sleep } from "./lib/main.ts"
import { machine, table } from "./lib/report.ts"
import { type ServerProcess, startServer } from "./lib/server.ts"

const targetIds = [
  "postgres",
  "postgres-2",
  "postgres-unkeyed",
  "citus",
  "citus-unkeyed",
  "pgbouncer",
  "pgbouncer-citus"
] as const
type TargetId = (typeof targetIds)[number]

const usage = `npm run bench:scale -- [options]
  Creates (POST /v1/leads, each a new lead with an Idempotency-Key) from the same connections for the
  same time on every target, in one run on this machine, round after round:
    postgres         Debian's PostgreSQL 15 (.ci/postgres), one instance of the service
    postgres-2       the same database, two instances (the connections split between them)
    postgres-unkeyed the same database and instance, creates without an Idempotency-Key
    citus            a Citus 13.2 cluster on PostgreSQL 15, a coordinator and two workers (.ci/citus)
    citus-unkeyed    the same database and instance, creates without an Idempotency-Key
    pgbouncer        PgBouncer 1.18, transaction mode (.ci/pgbouncer), in front of the PostgreSQL 15
    pgbouncer-citus  PgBouncer the same way in front of the Citus coordinator
  Each target but the variants (-2, -unkeyed) gets a database of its own, created on the server itself and migrated by
  \`lead-intake migrate\`, then served by \`serve --no-migrate\` (behind PgBouncer with
  DATABASE_PREPARE=false), with the same organizations and origins. Every database has the service's
  session settings and synchronous_commit=off as its defaults (PgBouncer ignores startup parameters;
  the clusters are throwaway ones, fsync off). Over each measurement the run reads the CPU of every
  process tree (each instance; each node's postmaster and all its children; PgBouncer), the machine's
  busy time, and each node's pg_stat_database.
  --duration S        measured seconds per target and round (10)
  --warmup S          unmeasured seconds of load on each target before the first round (2)
  Before the rounds, each single-instance target also answers creates one at a time (--serial): its
  latency and CPU per create without queueing, and the part of a create spent off every CPU measured
  (hops between processes and nodes, wake-ups).
  --idle S            seconds without load on any target, before the rounds: what the processes and
                      databases use anyway, subtracted from the CPU and statistics per create (5)
  --serial S          seconds of creates at one connection on each single-instance target (3)
  --rounds N          measure every target N times, in alternating order: medians of the rounds,
                      CPU and statistics pooled over them (2)
  --connections N     concurrent keep-alive connections on every target (32)
  --organizations N   organizations on each target, their origins spread over the connections (8)
  --origins N         origins in all (32)
  --pool N            DATABASE_POOL_SIZE of every instance (unset: the service's default)
  --only a,b          only these targets (${targetIds.join(", ")})
  --out FILE          JSON results (bench-results/scale-<time>/scale.json)`

const options = parseArgs(process.argv.slice(2))
helpRequested(options, usage)
const settings = {
  duration: numberOption(options, "duration", 10),
  warmup: numberOption(options, "warmup", 2),
  idle: numberOption(options, "idle", 5),
  serial: numberOption(options, "serial", 3),
  rounds: numberOption(options, "rounds", 2),
  connections: numberOption(options, "connections", 32),
  organizations: numberOption(options, "organizations", 8),
  origins: numberOption(options, "origins", 32),
  pool: options.get("pool"),
  only: (options.get("only")?.split(",") ?? [...targetIds]) as ReadonlyArray<TargetId>
}
for (const id of settings.only) {
  if (!targetIds.includes(id)) {
    process.stderr.write(`--only: unknown target ${id} (${targetIds.join(", ")})\n`)
    process.exit(1)
  }
}
if (settings.origins % settings.organizations !== 0 || settings.connections % 2 !== 0) {
  process.stderr.write("--origins must be a multiple of --organizations, and --connections even\n")
  process.exit(1)
}
const stamp = new Date().toISOString().replace(/[:.]/g, "-")
const resultsDir = path.join("bench-results", `scale-${stamp}`)
const serversLog = path.join(resultsDir, "servers.log")
const began = performance.now()
const log = (line: string) =>
  process.stderr.write(`[${Math.round((performance.now() - began) / 1000)} s] ${line}\n`)
/** Long enough for the request log's batches and PostgreSQL's statistics (flushed at most every second) to land. */
const settleMillis = 1_500

type Role = "server" | "coordinator" | "worker1" | "worker2" | "pgbouncer"
const roles: ReadonlyArray<Role> = ["server", "coordinator", "worker1", "worker2", "pgbouncer"]

/** A process tree whose CPU is read: a PostgreSQL node (with its URL, `postgres` database) or PgBouncer. */
interface Node {
  readonly role: Role
  readonly pid: number
  readonly url?: string
}

/** A database created and migrated for the run, with its fixture. */
interface Prepared {
  readonly name: string
  readonly migrateSeconds: number
  readonly catalog: Record<string, unknown> | null
  readonly keys: ReadonlyArray<string>
  readonly propertyCodigo: string
}

interface Target {
  readonly id: TargetId
  readonly name: string
  /** Creates carry an Idempotency-Key (a keyed create is a CALL; one without, a SELECT of a function). */
  readonly keyed: boolean
  readonly database: Prepared
  readonly instances: ReadonlyArray<ServerProcess>
  readonly nodes: ReadonlyArray<Node>
  /** A session in the target's database on each PostgreSQL node, for its statistics. */
  readonly sessions: ReadonlyArray<readonly [Role, pg.Client]>
}

const counters = ["commits", "rowsWritten", "functionMs"] as const
type Counter = (typeof counters)[number]

interface NodeStatistics extends Record<Counter, number> {
  readonly backends: number
  /** `track_functions` is on there: `functionMs` is the time spent in PL/pgSQL functions and triggers. */
  readonly tracksFunctions: boolean
  /** Each function's calls and self time (ms), by name. */
  readonly functions: Readonly<Record<string, readonly [number, number]>>
}

type Part = Role | "service"

/** What a target's processes and databases did over an interval: CPU seconds by part, statistics by node. */
interface Usage {
  readonly cpu: Partial<Record<Part, number>>
  readonly cpuSeconds: number
  readonly statistics: Partial<Record<Role, NodeStatistics>>
  readonly statisticsSeconds: number
}

interface Window extends Usage {
  readonly round: number
  readonly results: ReadonlyArray<LoadResult>
  readonly creates: number
  readonly unexpected: number
  readonly createsPerSecond: number
  readonly p50: number
  readonly p99: number
  /** Connections × seconds / requests: the mean time a request took, from the client. */
  readonly meanMs: number
  readonly loadPercent: number
  readonly othersPercent: number
}

const names: Record<TargetId, string> = {
  postgres: "PostgreSQL 15",
  "postgres-2": "PostgreSQL 15, 2 instances",
  "postgres-unkeyed": "PostgreSQL 15, no Idempotency-Key",
  "citus-unkeyed": "Citus, no Idempotency-Key",
  citus: "Citus, coordinator + 2 workers",
  pgbouncer: "PgBouncer -> PostgreSQL 15",
  "pgbouncer-citus": "PgBouncer -> Citus coordinator"
}

const wanted = (...ids: ReadonlyArray<TargetId>) => ids.some((id) => settings.only.includes(id))

const runMigrate = (url: string) =>
  new Promise<void>((resolve, reject) => {
    const { MIGRATE_DATABASE_URL: _, ...inherited } = process.env
    execFile(
      "bin/lead-intake.js",
      ["migrate"],
      { env: { ...inherited, DATABASE_URL: url } },
      (error, stdout, stderr) => {
        void appendFile(
          serversLog,
          `$ lead-intake migrate (${new URL(url).pathname})\n${stdout}${stderr}`
        ).finally(() =>
          error === null ? resolve() : reject(new Error(`lead-intake migrate failed; see ${serversLog}`))
        )
      }
    )
  })

/** What `migrate` made of the database on Citus (none of it on plain PostgreSQL): read, never acted on. */
const citusCatalog = (client: pg.Client) =>
  client
    .query<{ citus: boolean }>("SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') AS citus")
    .then(async ({ rows }) => {
      if (!rows[0]!.citus) return null
      const tables = await client.query<{ type: string; count: number }>(
        "SELECT citus_table_type AS type, count(*)::int AS count FROM citus_tables GROUP BY 1 ORDER BY 1"
      )
      const functions = await client.query<{ count: number }>(
        "SELECT count(*)::int AS count FROM pg_dist_object WHERE distribution_argument_index IS NOT NULL"
      )
      const local = await client.query<{ count: number }>(
        `SELECT count(*)::int AS count FROM pg_tables
         WHERE schemaname = 'public' AND NOT EXISTS (SELECT FROM citus_tables WHERE table_name::text = tablename)`
      )
      return {
        tables: Object.fromEntries(tables.rows.map((row) => [row.type, row.count])),
        localTables: local.rows[0]!.count,
        distributedFunctions: functions.rows[0]!.count
      }
    })
    .catch((error: unknown) => ({ unreadable: String(error) }))

/**
 * `CREATE DATABASE` copies template1, which no other session may hold: on a Citus cluster that has
 * just started, the coordinator may still be syncing its metadata into the workers' template1 for
 * a while (SQLSTATE 55006, object in use), so that is tried again.
 */
const createDatabase = async (serverUrl: string, name: string) => {
  const deadline = performance.now() + 60_000
  while (true) {
    try {
      return await withClient(serverUrl, (client) => client.query(`CREATE DATABASE ${name}`))
    } catch (error) {
      if ((error as { code?: string }).code !== "55006" || performance.now() > deadline) throw error
      await sleep(500)
    }
  }
}

/**
 * A database of its own on `serverUrl`'s server: created there, migrated by the service's own
 * `migrate`, given the session defaults every target shares, and provisioned through the services.
 */
const prepareDatabase = async (serverUrl: string, name: string): Promise<Prepared> => {
  log(`${name}: creating and migrating`)
  await createDatabase(serverUrl, name)
  const url = withDatabase(serverUrl, name)
  const started = performance.now()
  await runMigrate(url)
  const migrateSeconds = Math.round((performance.now() - started) / 100) / 10
  const catalog = await withClient(url, async (client) => {
    for (const [setting, value] of Object.entries({ ...sessionSettings, synchronous_commit: "off" }))
      await client.query(`ALTER DATABASE ${name} SET ${setting} = '${value}'`)
    return citusCatalog(client)
  })
  const runtime = servicesOn(url, { migrate: false })
  try {
    const perOrganization = settings.origins / settings.organizations
    const fixtures: Array<Provisioned> = []
    for (let index = 0; index < settings.organizations; index++)
      fixtures.push(
        await runtime.runPromise(
          provision({ origins: perOrganization, rateLimit: 100_000_000, name: `Bench Realty ${index + 1}` })
        )
      )
    // Origin-major order, so consecutive connections land on different organizations.
    const keys = Array.from({ length: perOrganization }, (_, origin) =>
      fixtures.map((fixture) => fixture.origins[origin]!.key)
    ).flat()
    return { name, migrateSeconds, catalog, keys, propertyCodigo: fixtures[0]!.propertyCodigo }
  } finally {
    await runtime.dispose()
  }
}

const startInstance = async (url: string, name: string, pooled: boolean, cleanups: Cleanups) => {
  const server = await startServer({
    env: {
      DATABASE_URL: url,
      MIGRATE_ON_START: "false",
      // Several instances on one host: only the API listens.
      ADMIN_PORT: "off",
      HEALTH_PORT: "off",
      ...(pooled ? { DATABASE_PREPARE: "false" } : {}),
      ...(settings.pool === undefined ? {} : { DATABASE_POOL_SIZE: settings.pool })
    },
    logFile: path.join(resultsDir, `${name}.log`)
  })
  cleanups.push(() => server.stop())
  return server
}

let phoneBase = 5_600_000_000
const plan = (target: Target, instance: number, overrides: Partial<LoadPlan>): LoadPlan => {
  phoneBase += 1_000_000
  const share = settings.connections / target.instances.length
  // Each instance's connections take the next keys, so every organization gets the same share.
  const keys = target.database.keys
  const rotated = [...keys.slice(instance * share), ...keys.slice(0, instance * share)]
  return {
    url: target.instances[instance]!.url,
    scenario: "create",
    connections: share,
    duration: settings.duration,
    keys: rotated,
    propertyCodigo: target.database.propertyCodigo,
    tag: `scale-${target.id}-${phoneBase}`,
    phoneBase,
    existingPhones: [],
    replays: [],
    unknownKey: generateApiKey().key,
    idempotencyKeys: target.keyed,
    ...overrides
  }
}

const load = (target: Target, overrides: Partial<LoadPlan>) =>
  Promise.all(target.instances.map((_, instance) => drive(plan(target, instance, overrides))))

/**
 * Each node's counters for the target's database: transactions committed, rows written, time in
 * PL/pgSQL functions and triggers (where the node tracks it: where a create's SQL runs), its
 * connections other than this session.
 */
const statisticsOf = async (target: Target) => {
  const entries = await Promise.all(
    target.sessions.map(([role, session]) =>
      session
        .query<NodeStatistics>(
          `SELECT xact_commit::float8 AS commits,
                  (tup_inserted + tup_updated + tup_deleted)::float8 AS "rowsWritten",
                  (SELECT coalesce(sum(self_time), 0) FROM pg_stat_user_functions)::float8 AS "functionMs",
                  numbackends - 1 AS backends,
                  current_setting('track_functions') <> 'none' AS "tracksFunctions",
                  (SELECT coalesce(json_object_agg(funcname, json_build_array(calls, self_time)), '{}')
                   FROM pg_stat_user_functions) AS functions
           FROM pg_stat_database WHERE datname = current_database()`
        )
        .then(({ rows }) => [role, rows[0]!] as const)
    )
  )
  return Object.fromEntries(entries) as Partial<Record<Role, NodeStatistics>>
}

/** One target after the other: targets on one database share their sessions. */
const statisticsOfEach = async (targets: ReadonlyArray<Target>) => {
  const all: Array<Partial<Record<Role, NodeStatistics>>> = []
  for (const target of targets) all.push(await statisticsOf(target))
  return all
}

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

const rootsOf = (target: Target) => [
  ...target.instances.map((instance) => instance.pid),
  ...target.nodes.map((node) => node.pid)
]

/**
 * Runs `during` and reads what each target used meanwhile: CPU from its start to its end, the
 * databases' statistics from a moment before to a moment after (they are flushed at most every
 * second), with the machine's busy time and the load generator's CPU.
 */
const observe = async <A>(targets: ReadonlyArray<Target>, during: () => Promise<A>) => {
  const roots = [...new Set(targets.flatMap(rootsOf))]
  await sleep(settleMillis)
  const statisticsBefore = await statisticsOfEach(targets)
  const statisticsStarted = performance.now()
  const before = treeCpuSnapshot(roots)
  const started = performance.now()
  const value = await during()
  const after = treeCpuSnapshot(roots)
  const cpuSeconds = (performance.now() - started) / 1000
  await sleep(settleMillis)
  const statisticsAfter = await statisticsOfEach(targets)
  const statisticsSeconds = (performance.now() - statisticsStarted) / 1000
  const used = (pid: number) => (after.trees.get(pid) ?? 0) - (before.trees.get(pid) ?? 0)
  const usages = targets.map((target, index): Usage => {
    const cpu: Usage["cpu"] = {
      service: target.instances.reduce((sum, instance) => sum + used(instance.pid), 0)
    }
    for (const node of target.nodes) cpu[node.role] = used(node.pid)
    const statistics: Usage["statistics"] = {}
    for (const [role, end] of Object.entries(statisticsAfter[index]!) as Array<[Role, NodeStatistics]>) {
      const start = statisticsBefore[index]![role]!
      statistics[role] = {
        commits: end.commits - start.commits,
        rowsWritten: end.rowsWritten - start.rowsWritten,
        functionMs: end.functionMs - start.functionMs,
        backends: end.backends,
        tracksFunctions: end.tracksFunctions,
        functions: Object.fromEntries(
          Object.entries(end.functions).map(([name, [calls, selfMs]]) => {
            const [startCalls, startMs] = start.functions[name] ?? [0, 0]
            return [name, [calls - startCalls, selfMs - startMs] as const]
          })
        )
      }
    }
    return { cpu, cpuSeconds, statistics, statisticsSeconds }
  })
  const percent = (seconds: number) => Math.round((seconds / cpuSeconds) * 100)
  const ours = roots.reduce((sum, pid) => sum + used(pid), 0)
  const loadGenerator = after.load - before.load
  return {
    value,
    usages,
    loadPercent: percent(loadGenerator),
    othersPercent: Math.max(0, percent(after.busy - before.busy - ours - loadGenerator))
  }
}

const measure = async (target: Target, round: number, overrides: Partial<LoadPlan> = {}): Promise<Window> => {
  const {
    value: results,
    usages,
    loadPercent,
    othersPercent
  } = await observe([target], () => load(target, overrides))
  const requests = results.reduce((sum, result) => sum + result.requests, 0)
  const connectionSeconds = results.reduce(
    (sum, result) =>
      sum + (overrides.connections ?? settings.connections / results.length) * result.durationSeconds,
    0
  )
  return {
    round,
    ...usages[0]!,
    results,
    creates: results.reduce((sum, result) => sum + (result.statusCodes["201"] ?? 0), 0),
    unexpected: results.reduce((sum, result) => sum + result.unexpected, 0),
    createsPerSecond: Math.round(
      results.reduce((sum, result) => sum + (result.statusCodes["201"] ?? 0) / result.durationSeconds, 0)
    ),
    p50: Math.max(...results.map((result) => result.latencyMs.p50)),
    p99: Math.max(...results.map((result) => result.latencyMs.p99)),
    meanMs: requests === 0 ? 0 : Math.round(((connectionSeconds * 1000) / requests) * 100) / 100,
    loadPercent,
    othersPercent
  }
}

/**
 * Medians of the rounds; CPU and statistics per create pooled over them (total over total), less
 * what the same processes and databases do with no load at all (`idle`: pollers, Citus's
 * maintenance, the other targets' idle instances on the same cluster), which is given apart.
 */
const summarise = (windows: ReadonlyArray<Window>, idle: Usage) => {
  const creates = windows.reduce((sum, window) => sum + window.creates, 0)
  const perCreate = (value: number, scale: number) =>
    creates === 0 ? null : Math.round((Math.max(0, value) / creates) * scale * 100) / 100
  const busy = (window: Window, part: Part) =>
    (window.cpu[part] ?? 0) - ((idle.cpu[part] ?? 0) / idle.cpuSeconds) * window.cpuSeconds
  const parts = (["service", ...roles] as const).filter((part) => windows[0]!.cpu[part] !== undefined)
  const cpuMsPerCreate: Partial<Record<Part | "total", number | null>> = {}
  for (const part of parts)
    cpuMsPerCreate[part] = perCreate(
      windows.reduce((sum, window) => sum + busy(window, part), 0),
      1000
    )
  cpuMsPerCreate.total = perCreate(
    windows.reduce((sum, window) => sum + parts.reduce((all, part) => all + busy(window, part), 0), 0),
    1000
  )
  const idlePercent: Partial<Record<Part, number>> = {}
  for (const part of parts)
    idlePercent[part] = Math.round(((idle.cpu[part] ?? 0) / idle.cpuSeconds) * 1000) / 10
  const perNode: Partial<Record<Role, Record<Counter, number | null> & { backends: number }>> = {}
  /** Per node, the functions that took most of a create's time there: calls and self ms per create. */
  const functions: Partial<Record<Role, ReadonlyArray<{ name: string; calls: number; selfMs: number }>>> = {}
  for (const role of Object.keys(windows[0]!.statistics) as Array<Role>) {
    const total = (field: Counter) =>
      windows.reduce(
        (sum, window) =>
          sum +
          (window.statistics[role]?.[field] ?? 0) -
          ((idle.statistics[role]?.[field] ?? 0) / idle.statisticsSeconds) * window.statisticsSeconds,
        0
      )
    perNode[role] = {
      commits: perCreate(total("commits"), 1),
      rowsWritten: perCreate(total("rowsWritten"), 1),
      functionMs:
        windows[0]!.statistics[role]?.tracksFunctions === true ? perCreate(total("functionMs"), 1) : null,
      backends: Math.max(...windows.map((window) => window.statistics[role]?.backends ?? 0))
    }
    const idleFunctions = idle.statistics[role]?.functions ?? {}
    const names = new Set(windows.flatMap((window) => Object.keys(window.statistics[role]?.functions ?? {})))
    const perFunction = [...names].map((name) => {
      const total = (index: 0 | 1) =>
        windows.reduce(
          (sum, window) =>
            sum +
            (window.statistics[role]?.functions[name]?.[index] ?? 0) -
            ((idleFunctions[name]?.[index] ?? 0) / idle.statisticsSeconds) * window.statisticsSeconds,
          0
        )
      return { name, calls: perCreate(total(0), 1) ?? 0, selfMs: perCreate(total(1), 1) ?? 0 }
    })
    functions[role] = perFunction
      .filter((entry) => entry.selfMs >= 0.01)
      .sort((a, b) => b.selfMs - a.selfMs)
      .slice(0, 5)
  }
  return {
    createsPerSecond: Math.round(median(windows.map((window) => window.createsPerSecond))),
    p50: median(windows.map((window) => window.p50)),
    p99: median(windows.map((window) => window.p99)),
    meanMs: median(windows.map((window) => window.meanMs)),
    unexpected: windows.reduce((sum, window) => sum + window.unexpected, 0),
    cpuMsPerCreate,
    idlePercent,
    perNode,
    functions,
    loadPercent: median(windows.map((window) => window.loadPercent)),
    othersPercent: median(windows.map((window) => window.othersPercent))
  }
}

type Summary = ReturnType<typeof summarise>

const cell = (value: number | null | undefined) => (value === null || value === undefined ? "-" : value)
const signed = (value: number) => `${value >= 0 ? "+" : ""}${Math.round(value * 100) / 100}`

const parts = ["service", "server", "coordinator", "worker1", "worker2", "pgbouncer"] as const
const cpuHeader = [
  "CPU ms/create: service",
  "server or coordinator",
  "worker1",
  "worker2",
  "pgbouncer",
  "all"
]
const cpuCells = (cpu: Summary["cpuMsPerCreate"]) => [
  cell(cpu.service),
  cell(cpu.server ?? cpu.coordinator),
  cell(cpu.worker1),
  cell(cpu.worker2),
  cell(cpu.pgbouncer),
  cell(cpu.total)
]
const sumOf = (cpu: Summary["cpuMsPerCreate"], of: ReadonlyArray<(typeof parts)[number]>) =>
  of.reduce((sum, part) => sum + (cpu[part] ?? 0), 0)
const round2 = (value: number) => Math.round(value * 100) / 100

const report = (
  targets: ReadonlyArray<Target>,
  summaries: ReadonlyMap<TargetId, Summary>,
  serial: ReadonlyMap<TargetId, Summary>
) => {
  const lines: Array<string> = [
    `At ${settings.connections} connections: creates/s and latency; CPU ms per create above idle, by process tree; others: the rest of the machine, % of a core`,
    table([
      ["target", "creates/s", "p50 ms", "p99 ms", "not 201", ...cpuHeader, "others %"],
      ...targets.map((target) => {
        const summary = summaries.get(target.id)!
        return [
          target.name,
          summary.createsPerSecond,
          summary.p50,
          summary.p99,
          summary.unexpected,
          ...cpuCells(summary.cpuMsPerCreate),
          summary.othersPercent
        ]
      })
    ]),
    "",
    "At one connection (no queueing): mean ms per create, CPU ms per create above idle, and the rest of the mean: off every CPU measured (hops, wake-ups, the load generator)",
    table([
      ["target", "creates/s", "mean ms", ...cpuHeader, "off CPU ms", "others %"],
      ...targets.flatMap((target) => {
        const summary = serial.get(target.id)
        if (summary === undefined) return []
        return [
          [
            target.name,
            summary.createsPerSecond,
            summary.meanMs,
            ...cpuCells(summary.cpuMsPerCreate),
            round2(summary.meanMs - (summary.cpuMsPerCreate.total ?? 0)),
            summary.othersPercent
          ]
        ]
      })
    ]),
    "",
    "Idle: CPU with no load on any target, % of a core (subtracted above and below; other targets' idle instances on the same cluster included)",
    table([
      ["target", "service", "server or coordinator", "worker1", "worker2", "pgbouncer"],
      ...targets.map((target) => {
        const idle = summaries.get(target.id)!.idlePercent
        return [
          target.name,
          cell(idle.service),
          cell(idle.server ?? idle.coordinator),
          cell(idle.worker1),
          cell(idle.worker2),
          cell(idle.pgbouncer)
        ]
      })
    ]),
    "",
    `At ${settings.connections} connections, per create on each node, above idle (the target's database): transactions committed, rows written, ms in PL/pgSQL functions and triggers (where track_functions is on: where a create's SQL runs); its connections at the end`,
    table([
      [
        "target",
        ...(["commits", "rows written", "function ms", "connections"] as const).flatMap((what) => [
          `${what}: server or coordinator`,
          "worker1",
          "worker2"
        ])
      ],
      ...targets.map((target) => {
        const nodes = summaries.get(target.id)!.perNode
        const byNode = [nodes.server ?? nodes.coordinator, nodes.worker1, nodes.worker2]
        return [
          target.name,
          ...(["commits", "rowsWritten", "functionMs", "backends"] as const).flatMap((field) =>
            byNode.map((node) => cell(node?.[field]))
          )
        ]
      })
    ])
  ]
  const traced = targets.filter((target) =>
    Object.values(summaries.get(target.id)!.functions).some((list) => list.length > 0)
  )
  if (traced.length > 0) {
    lines.push(
      "",
      `Where a create's SQL ran, at ${settings.connections} connections (nodes with track_functions on): per node, the functions with most self time, ms (calls) per create`
    )
    for (const target of traced) {
      const functions = summaries.get(target.id)!.functions
      for (const [role, list] of Object.entries(functions))
        lines.push(
          `  ${target.name}, ${role}: ${list.length === 0 ? "none" : list.map((entry) => `${entry.name} ${entry.selfMs} (${entry.calls})`).join(", ")}`
        )
    }
  }
  const compared = targets.flatMap((target) => {
    const baseId: TargetId = target.keyed ? "postgres" : "postgres-unkeyed"
    const base = summaries.get(baseId)
    return target.id === baseId || base === undefined
      ? []
      : [{ target, base, baseSerial: serial.get(baseId) }]
  })
  if (compared.length > 0) {
    lines.push(
      "",
      `Where the extra time goes, against PostgreSQL 15 with the same creates (keyed or not): at one connection, the mean's difference and its CPU and off-CPU parts; at ${settings.connections} connections, the CPU per create by where it is spent`,
      table([
        [
          "target",
          "creates/s",
          "1 conn: mean ms",
          "CPU",
          "off CPU",
          `${settings.connections} conns: CPU service`,
          "server or coordinator",
          "workers",
          "pgbouncer"
        ],
        ...compared.map(({ target, base, baseSerial }) => {
          const summary = summaries.get(target.id)!
          const cpu = summary.cpuMsPerCreate
          const one = serial.get(target.id)
          const offCpu = (of: Summary) => of.meanMs - (of.cpuMsPerCreate.total ?? 0)
          const oneCells =
            one === undefined || baseSerial === undefined
              ? ["-", "-", "-"]
              : [
                  signed(one.meanMs - baseSerial.meanMs),
                  signed((one.cpuMsPerCreate.total ?? 0) - (baseSerial.cpuMsPerCreate.total ?? 0)),
                  signed(offCpu(one) - offCpu(baseSerial))
                ]
          return [
            target.name,
            `${Math.round((summary.createsPerSecond / base.createsPerSecond) * 100)} %`,
            ...oneCells,
            signed((cpu.service ?? 0) - (base.cpuMsPerCreate.service ?? 0)),
            signed((cpu.server ?? cpu.coordinator ?? 0) - (base.cpuMsPerCreate.server ?? 0)),
            signed(sumOf(cpu, ["worker1", "worker2"])),
            signed(cpu.pgbouncer ?? 0)
          ]
        })
      ])
    )
  }
  lines.push("")
  for (const target of targets) {
    if (target.id === "postgres-2" || !target.keyed) continue
    const catalog = target.database.catalog
    lines.push(
      `${target.name}: migrate ${target.database.migrateSeconds} s${catalog === null ? "" : `; Citus catalog after migrate: ${JSON.stringify(catalog)}`}`
    )
  }
  return lines.join("\n")
}

await runMain(async (cleanups) => {
  await mkdir(resultsDir, { recursive: true })
  const entry = await ensureBundle(".")
  log(`entry ${entry}`)
  const nodeOf = async (role: Role, pidFile: string, url?: string): Promise<Node> => ({
    role,
    pid: await pidIn(pidFile),
    ...(url === undefined ? {} : { url })
  })
  const sessions = new Map<string, ReadonlyArray<readonly [Role, pg.Client]>>()
  const sessionsOn = async (nodes: ReadonlyArray<Node>, database: string) => {
    const key = `${nodes.map((node) => node.pid).join(",")}/${database}`
    if (!sessions.has(key)) {
      const opened: Array<readonly [Role, pg.Client]> = []
      for (const node of nodes)
        if (node.url !== undefined)
          opened.push([node.role, await openClient(withDatabase(node.url, database), cleanups)])
      sessions.set(key, opened)
    }
    return sessions.get(key)!
  }
  const versions: Array<string> = []
  const targets: Array<Target> = []

  const add = async (
    id: TargetId,
    database: Prepared,
    instances: ReadonlyArray<ServerProcess>,
    nodes: ReadonlyArray<Node>
  ) => {
    if (!wanted(id)) return
    const keyed = !id.endsWith("-unkeyed")
    const sessionsNow = await sessionsOn(nodes, database.name)
    targets.push({ id, name: names[id], keyed, database, instances, nodes, sessions: sessionsNow })
  }
  /** A fresh database on `upstream` served through PgBouncer in front of it, with one instance. */
  const behindPgBouncer = async (
    id: TargetId,
    upstream: CiServer,
    databaseName: string,
    nodes: ReadonlyArray<Node>
  ) => {
    const database = await prepareDatabase(upstream.env.TEST_DATABASE_URL!, databaseName)
    log(`starting PgBouncer in front of ${new URL(upstream.env.TEST_DATABASE_URL!).host}`)
    const pooler = await startCiServer("pgbouncer", {
      env: { TEST_DATABASE_URL: upstream.env.TEST_DATABASE_URL!, TEST_DML_ROLE: upstream.env.TEST_DML_ROLE! },
      logFile: serversLog,
      cleanups
    })
    if (!versions.includes(pooler.env.TEST_PGBOUNCER!)) versions.push(pooler.env.TEST_PGBOUNCER!)
    const instance = await startInstance(
      withDatabase(pooler.env.TEST_DATABASE_URL!, database.name),
      id,
      true,
      cleanups
    )
    await add(
      id,
      database,
      [instance],
      [...nodes, await nodeOf("pgbouncer", path.join(pooler.dir, "pgbouncer.pid"))]
    )
  }

  if (wanted("postgres", "postgres-2", "postgres-unkeyed", "pgbouncer")) {
    log("starting PostgreSQL 15 (.ci/postgres)")
    const postgres = await startCiServer("postgres", { logFile: serversLog, cleanups })
    const url = postgres.env.TEST_DATABASE_URL!
    versions.push(postgres.env.TEST_POSTGRES_VERSION!)
    const nodes = [await nodeOf("server", path.join(postgres.dir, "data", "postmaster.pid"), url)]
    if (wanted("postgres", "postgres-2", "postgres-unkeyed")) {
      const database = await prepareDatabase(url, "bench_postgres")
      const first = await startInstance(withDatabase(url, database.name), "postgres-a", false, cleanups)
      await add("postgres", database, [first], nodes)
      await add("postgres-unkeyed", database, [first], nodes)
      if (wanted("postgres-2")) {
        const second = await startInstance(withDatabase(url, database.name), "postgres-b", false, cleanups)
        await add("postgres-2", database, [first, second], nodes)
      }
    }
    if (wanted("pgbouncer")) await behindPgBouncer("pgbouncer", postgres, "bench_pgbouncer", nodes)
  }

  if (wanted("citus", "citus-unkeyed", "pgbouncer-citus")) {
    log("starting Citus: a coordinator and two workers (.ci/citus)")
    // Each database is migrated here by the service's migrate, not copied from a migrated template1.
    const citus = await startCiServer("citus", {
      env: { CITUS_TEMPLATE_SCHEMA: "off" },
      logFile: serversLog,
      cleanups
    })
    const url = citus.env.TEST_DATABASE_URL!
    versions.push(citus.env.TEST_POSTGRES_VERSION!)
    const workers = citus.env.TEST_CITUS_WORKERS!.split(",")
    const nodes = [
      await nodeOf("coordinator", path.join(citus.dir, "coordinator", "postmaster.pid"), url),
      await nodeOf("worker1", path.join(citus.dir, "worker1", "postmaster.pid"), withHost(url, workers[0]!)),
      await nodeOf("worker2", path.join(citus.dir, "worker2", "postmaster.pid"), withHost(url, workers[1]!))
    ]
    if (wanted("citus", "citus-unkeyed")) {
      const database = await prepareDatabase(url, "bench_citus")
      const instance = await startInstance(withDatabase(url, database.name), "citus", false, cleanups)
      await add("citus", database, [instance], nodes)
      await add("citus-unkeyed", database, [instance], nodes)
    }
    if (wanted("pgbouncer-citus"))
      await behindPgBouncer("pgbouncer-citus", citus, "bench_pgbouncer_citus", nodes)
  }
  targets.sort((a, b) => targetIds.indexOf(a.id) - targetIds.indexOf(b.id))

  for (const target of targets) {
    log(`warm-up: ${target.name}, ${settings.warmup} s`)
    await load(target, { duration: settings.warmup })
  }
  log(`idle: ${settings.idle} s without load, for what every process and database does anyway`)
  const idle = await observe(targets, () => sleep(settings.idle * 1000))
  const idleOf = new Map(targets.map((target, index) => [target.id, idle.usages[index]!]))
  const oneConnection = new Map<TargetId, Window>()
  for (const target of targets) {
    if (target.instances.length > 1) continue
    log(`one connection: ${target.name}, ${settings.serial} s`)
    oneConnection.set(target.id, await measure(target, -1, { connections: 1, duration: settings.serial }))
  }
  const windows = new Map<TargetId, Array<Window>>(targets.map((target) => [target.id, []]))
  for (let round = 0; round < settings.rounds; round++) {
    for (const target of round % 2 === 0 ? targets : [...targets].reverse()) {
      log(`round ${round + 1}: ${target.name}, ${settings.duration} s`)
      windows.get(target.id)!.push(await measure(target, round))
    }
  }
  const summaries = new Map(
    targets.map((target) => [target.id, summarise(windows.get(target.id)!, idleOf.get(target.id)!)])
  )
  const serial = new Map(
    [...oneConnection].map(([id, window]) => [id, summarise([window], idleOf.get(id)!)] as const)
  )
  await runCleanups(cleanups)

  const m = machine(versions.join("; "))
  const out = options.get("out") ?? path.join(resultsDir, "scale.json")
  await writeFile(
    out,
    `${JSON.stringify(
      {
        at: new Date().toISOString(),
        machine: m,
        settings,
        entry,
        targets: targets.map((target) => ({
          id: target.id,
          name: target.name,
          database: {
            name: target.database.name,
            migrateSeconds: target.database.migrateSeconds,
            catalog: target.database.catalog
          },
          instances: target.instances.length,
          summary: summaries.get(target.id),
          oneConnection: serial.get(target.id) ?? null,
          oneConnectionWindow: oneConnection.get(target.id) ?? null,
          idle: idleOf.get(target.id),
          windows: windows.get(target.id)
        }))
      },
      null,
      2
    )}\n`
  )
  process.stdout.write(
    [
      "",
      `${m.cores} x ${m.cpu}, ${m.memoryGiB} GiB, Linux ${m.kernel}, Node ${m.node}`,
      m.postgres,
      `${settings.connections} connections and ${settings.duration} s on every target, ${settings.rounds} round(s) in alternating order (medians; CPU per create pooled over the rounds), after ${settings.warmup} s of warm-up; ${settings.organizations} organizations, ${settings.origins} origins; ${entry}`,
      "",
      report(targets, summaries, serial),
      "",
      `JSON and the servers' logs: ${resultsDir}`,
      ""
    ].join("\n")
  )
})
