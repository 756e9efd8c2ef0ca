import { mkdir, writeFile } from "node:fs/promises"
import * as path from "node:path"
import { PgClient } from "@effect/sql-pg"
import { Layer, ManagedRuntime, Redacted, References } from "effect"
import { Reactivity } from "effect/reactivity"
import pg from "pg"
import { migrations } from "../migrations/index.ts"
import { runsOutsideTransaction } from "../migrations/outsideTransaction.ts"
import * as Migrations from "../src/Platform/Migrations.ts"
import { sessionSettings } from "../src/Platform/Sql/Sql.ts"
import { numberOption, parseArgs } from "./lib/args.ts"
import { startScratchCluster } from "./lib/database.ts"
import { startLockMonitor, type Window } from "./lib/lockMonitor.ts"
import {
  functionsAt,
  previousRelease,
  type Release,
  releaseAt,
  releaseThrough
} from "./lib/previousRelease.ts"
import { fill } from "./lib/rehearsalFill.ts"
import { type Probe, startLoad } from "./lib/rehearsalLoad.ts"
import { machine, megabytes, table } from "./lib/report.ts"

/**
 * Rehearses this checkout's migrations on a live database with data
 * (docs/sre.md#rehearsing-migrations-on-a-database-with-data). The database of the release before
 * them (the migrations through `--from`, then that release's SQL functions, read from git), filled
 * with `--leads` leads and what hangs on them, is brought up to this checkout one migration at a
 * time, each as `migrate` runs it, then this checkout's SQL functions, while the request path's
 * statements run beside it. For each step: how long it took, the longest any other session waited
 * for a lock the migration held (or was queued for), and the requests' latency and errors meanwhile;
 * a table on stdout, the same as JSON in bench-results/.
 *
 *   npm run rehearse:migrations -- [--from NNNN] [--release REV] [--leads 1000000] [--organizations 20]
 *     [--rate 100] [--workers 8] [--baseline 5] [--database-url URL] [--fill-only] [--keep]
 *
 * --from          the newest migration of the release to start from; by default the previous
 *                 release's (the main line before the commit that added this checkout's newest
 *                 migration, as test/e2e/production.test.ts finds it)
 * --release REV   that release's commit, when the history cannot tell it (a shallow clone)
 * --database-url  (or DATABASE_URL) an empty database to use; else a scratch embedded PostgreSQL
 * --rate, --workers  requests a second, and over how many pairs of connections
 * --fill-only     stop after the fill; --keep leaves the scratch cluster's files in place
 */
const options = parseArgs(process.argv.slice(2))
const leads = numberOption(options, "leads", 1_000_000)
const organizations = numberOption(options, "organizations", 20)
const rate = numberOption(options, "rate", 100)
const workers = numberOption(options, "workers", 8)
const baselineSeconds = numberOption(options, "baseline", 5)
const stamp = new Date().toISOString().replace(/[:.]/g, "-")
const resultsFile = path.join("bench-results", `rehearse-migrations-${stamp}.json`)
const migratorName = "lead-intake-rehearse/migrate"
const log = (line: string) => process.stderr.write(`${line}\n`)

const names = Object.keys(migrations) as Array<Migrations.MigrationName>
const idOf = (name: string) => Number(name.slice(0, 4))
const newest = Math.max(...names.map(idOf))

const cleanups: Array<() => Promise<unknown>> = []

/** The release to start from, and its newest migration as this checkout names it. */
const startingPoint = async () => {
  const named = options.get("release")
  const through = options.has("from") ? Number.parseInt(options.get("from")!, 10) : undefined
  let release: Release | undefined
  if (named !== undefined) release = await releaseAt(named)
  else if (through === undefined) release = await previousRelease(newest)
  else release = await releaseThrough(through)
  const last = through ?? release?.newestMigration ?? newest
  const from = names.filter((name) => idOf(name) <= last).at(-1)
  if (release === undefined || from === undefined || idOf(from) >= newest)
    throw new Error(
      `--from ${String(last).padStart(4, "0")}: this checkout has no migration after it (or none up to it)`
    )
  return { from, release }
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!

/** What the requests that started during a step saw. */
const loadDuring = (probes: ReadonlyArray<Probe>) => {
  const sorted = probes.map((probe) => probe.ms).sort((a, b) => a - b)
  const failed = probes.filter((probe) => probe.error !== undefined)
  const slowest = probes.reduce<Probe | undefined>(
    (worst, probe) => (worst === undefined || probe.ms > worst.ms ? probe : worst),
    undefined
  )
  return {
    requests: probes.length,
    errors: failed.length,
    errorSamples: [...new Set(failed.map((probe) => probe.error!))].slice(0, 3),
    p50Ms: Math.round(percentile(sorted, 50)),
    p99Ms: Math.round(percentile(sorted, 99)),
    maxMs: Math.round(sorted.at(-1) ?? 0),
    slowestStatement:
      slowest === undefined ? undefined : { name: slowest.slowest, ms: Math.round(slowest.slowestMs) }
  }
}

interface MeasuredStep {
  readonly step: string
  readonly how: string
  readonly started: number
  readonly ended: number
  readonly window: Window
}

const stepReport = ({ window, ...step }: MeasuredStep, probes: ReadonlyArray<Probe>) => ({
  step: step.step,
  how: step.how,
  seconds: Math.round((step.ended - step.started) / 100) / 10,
  longestBlockingWait:
    window.longest === undefined ? undefined : { ...window.longest, ms: Math.round(window.longest.ms) },
  migrationWaited:
    window.migratorWaitedFor === undefined
      ? undefined
      : { ms: Math.round(window.migratorWaitedMs), for: window.migratorWaitedFor },
  load: loadDuring(probes.filter((probe) => probe.at >= step.started && probe.at < step.ended)),
  monitor: { polls: window.polls, failedPolls: window.failedPolls }
})

type StepReport = ReturnType<typeof stepReport>

const stepsTable = (steps: ReadonlyArray<StepReport>) =>
  table([
    ["step", "how", "s", "longest wait ms", "requests", "errors", "p50 ms", "p99 ms", "max ms"],
    ...steps.map((step) => [
      step.step,
      step.how,
      step.seconds,
      step.longestBlockingWait?.ms ?? 0,
      step.load.requests,
      step.load.errors,
      step.load.p50Ms,
      step.load.p99Ms,
      step.load.maxMs
    ])
  ])

const stepDetails = (step: StepReport) => {
  const wait = step.longestBlockingWait
  const lines = [
    wait &&
      `  longest wait: ${wait.ms} ms for ${wait.lock}${wait.direct ? "" : " (queued behind a session the migration held up)"}: ${wait.waiter}`,
    wait && `  the migration was running: ${wait.migratorStatement}`,
    step.migrationWaited &&
      `  the migration itself waited ${step.migrationWaited.ms} ms for ${step.migrationWaited.for}`,
    step.load.slowestStatement &&
      `  slowest request: ${step.load.maxMs} ms, of which ${step.load.slowestStatement.ms} ms in ${step.load.slowestStatement.name}`,
    ...step.load.errorSamples.map((sample) => `  error: ${sample}`)
  ].filter((line) => typeof line === "string")
  return lines.length === 0 ? "" : `\n${step.step}\n${lines.join("\n")}\n`
}

const main = async () => {
  const { from, release } = await startingPoint()
  const startFunctions = await functionsAt(release.commit)
  const given = options.get("database-url") ?? process.env.DATABASE_URL
  let url = given
  if (url === undefined) {
    const cluster = await startScratchCluster()
    cleanups.push(() => cluster.close({ keep: options.has("keep") }))
    if (options.has("keep")) log(`the scratch cluster's files stay in ${cluster.dataDir}`)
    url = cluster.url()
  }
  const client = new pg.Client({ connectionString: url, application_name: "lead-intake-rehearse/fill" })
  await client.connect()
  cleanups.push(() => client.end())
  const [existing] = (
    await client.query<{ migrated: boolean }>(
      "SELECT to_regclass('schema_migrations') IS NOT NULL AS migrated"
    )
  ).rows
  if (existing?.migrated === true)
    throw new Error("the database is migrated already: the rehearsal needs an empty one")
  const [version] = (await client.query<{ server_version: string }>("SHOW server_version")).rows

  // The migrator's session, named so the lock monitor knows it, with the settings `lead-intake migrate` has.
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(
      PgClient.layer({
        url: Redacted.make(url),
        applicationName: migratorName,
        startupParameters: sessionSettings,
        maxConnections: 2
      }),
      Layer.succeed(References.MinimumLogLevel, "Warn")
    ).pipe(Layer.provide(Reactivity.layer), Layer.orDie)
  )
  cleanups.push(() => runtime.dispose())

  log(
    `starting from ${release.commit} (its newest migration: ${String(release.newestMigration).padStart(4, "0")}): migrations through ${from}, its SQL functions`
  )
  await runtime.runPromise(Migrations.migrateThrough(from, startFunctions))
  log(`filling ${leads.toLocaleString("en")} leads over ${organizations} organizations`)
  const fillStarted = performance.now()
  const phases = await fill(client, { leads, organizations, log })
  const fillSeconds = (performance.now() - fillStarted) / 1000
  const vacuumStarted = performance.now()
  // As autovacuum leaves a live database: hint bits set, the visibility map and statistics current.
  await client.query("VACUUM (ANALYZE)")
  const vacuumSeconds = (performance.now() - vacuumStarted) / 1000
  const tables = (
    await client.query<{ table: string; rows: string; bytes: string }>(`
      SELECT c.relname AS table, c.reltuples::bigint AS rows, pg_total_relation_size(c.oid) AS bytes
      FROM pg_class c
      WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace AND c.reltuples > 0
      ORDER BY pg_total_relation_size(c.oid) DESC`)
  ).rows.map((row) => ({ table: row.table, rows: Number(row.rows), megabytes: megabytes(Number(row.bytes)) }))
  const report = {
    date: new Date().toISOString(),
    machine: machine(version?.server_version ?? "unknown"),
    database: given === undefined ? "scratch embedded PostgreSQL" : "given (--database-url)",
    release: release.commit,
    from,
    leads,
    organizations,
    fill: {
      seconds: Math.round(fillSeconds),
      vacuumAnalyzeSeconds: Math.round(vacuumSeconds),
      phases: phases.map((phase) => ({ ...phase, seconds: Math.round(phase.seconds * 10) / 10 })),
      tables
    },
    load: { rate, workers, writes: "" },
    steps: [] as Array<StepReport>
  }
  process.stdout.write(
    `\nfill: ${fillSeconds.toFixed(1)} s, then VACUUM (ANALYZE) ${vacuumSeconds.toFixed(1)} s\n${table([
      ["phase", "s"],
      ...report.fill.phases.map((phase) => [phase.phase, phase.seconds])
    ])}\n\n${table([["table", "rows (estimate)", "MB with indexes"], ...tables.map((t) => [t.table, t.rows, t.megabytes])])}\n`
  )
  await mkdir("bench-results", { recursive: true })
  if (!options.has("fill-only")) {
    const load = await startLoad({ url, rate, workers })
    cleanups.push(() => load.stop())
    const monitor = await startLockMonitor({ url, migrator: migratorName, intervalMs: 20 })
    cleanups.push(() => monitor.stop())
    report.load.writes = load.writes
    log(
      `load: ${rate} requests/s over ${workers} workers (${load.writes}); ${baselineSeconds} s before migrating`
    )

    const steps: Array<MeasuredStep> = []
    const step = async (name: string, how: string, run: () => Promise<unknown>) => {
      monitor.take()
      const started = performance.now()
      await run()
      const ended = performance.now()
      const window = monitor.take()
      steps.push({ step: name, how, started, ended, window })
      log(
        `${name}: ${((ended - started) / 1000).toFixed(1)} s, longest blocking wait ${Math.round(window.longest?.ms ?? 0)} ms`
      )
    }
    await step(
      "(before migrating)",
      "load only",
      () => new Promise((resolve) => setTimeout(resolve, baselineSeconds * 1000))
    )
    for (const name of names.filter((name) => idOf(name) > idOf(from)))
      await step(
        name,
        runsOutsideTransaction(migrations[name]) ? "outside a transaction" : "in a transaction",
        () => runtime.runPromise(Migrations.migrateThrough(name))
      )
    await step("SQL functions", "this checkout's, by checksum", () => runtime.runPromise(Migrations.migrate))
    await load.stop()
    await monitor.stop()
    report.steps = steps.map((measured) => stepReport(measured, load.probes))
    process.stdout.write(`\n${stepsTable(report.steps)}\n${report.steps.map(stepDetails).join("")}`)
  }
  await writeFile(resultsFile, `${JSON.stringify(report, null, 2)}\n`)
  log(`\nwritten: ${resultsFile}`)
}

const cleanUp = async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {})
}
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => {
    void cleanUp().finally(() => process.exit(130))
  })

await main()
  .catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exitCode = 1
  })
  .finally(cleanUp)
