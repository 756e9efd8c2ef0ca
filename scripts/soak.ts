import { mkdir, writeFile } from "node:fs/promises"
import * as path from "node:path"
import { Effect } from "effect"
import { KeyStore } from "../src/Accounts/KeyStore.ts"
import { numberOption, parseArgs } from "./lib/args.ts"
import { provision, startScratchDatabase } from "./lib/database.ts"
import { type Cleanups, helpRequested, log, runMain } from "./lib/main.ts"
import { megabytes } from "./lib/report.ts"
import { memoryOf, startServer } from "./lib/server.ts"
import { consistency } from "./soak/consistency.ts"
import { printReport, soakReport } from "./soak/report.ts"
import { runTraffic } from "./soak/traffic.ts"

const usage = `npm run soak -- --minutes N [--workers N] [--out FILE] [--keep-data]
  Mixed traffic against the real server on a scratch embedded PostgreSQL (creates, enrichments in
  other spellings, concurrent duplicates, retries and replays, conflicts, dry-runs, invalid bodies,
  bad keys, unknown properties, a rate-limited origin), then a consistency check of the database.
  Exit status 1 when any check fails.`

const options = parseArgs(process.argv.slice(2))
helpRequested(options, usage)
const minutes = numberOption(options, "minutes", 1)
const workers = numberOption(options, "workers", 16)
const stamp = new Date().toISOString().replace(/[:.]/g, "-")
const out = options.get("out") ?? path.join("bench-results", `soak-${stamp}.json`)

/** A scratch database with eight ordinary origins and one limited to 30 requests a minute. */
const prepare = async (cleanups: Cleanups) => {
  log("starting a scratch embedded PostgreSQL")
  const database = await startScratchDatabase()
  cleanups.push(() => database.close())
  const fixture = await database.runtime.runPromise(provision({ origins: 8, rateLimit: 1_000_000 }))
  const limited = await database.runtime.runPromise(
    Effect.flatMap(KeyStore, (keys) =>
      keys.createOrigin({ organizationId: fixture.organizationId, label: "limited", rateLimit: 30 })
    ).pipe(Effect.orDie)
  )
  const keys = [...fixture.origins.map((origin) => origin.key), limited.key]
  return { database, keys, propertyCodigo: fixture.propertyCodigo }
}

await runMain(async (cleanups) => {
  await mkdir("bench-results", { recursive: true })
  const { database, keys, propertyCodigo } = await prepare(cleanups)
  const server = await startServer({
    env: { DATABASE_URL: database.url() },
    logFile: path.join("bench-results", `soak-server-${stamp}.log`)
  })
  cleanups.push(() => server.stop())
  const rssAtStart = memoryOf(server.pid, "VmRSS")
  log(`server pid ${server.pid} at ${server.url}; ${workers} workers for ${minutes} min`)

  const { answers, elapsed } = await runTraffic({
    target: { url: server.url, keys, propertyCodigo },
    workers,
    minutes,
    progress: (seconds, requests) =>
      log(`  ${seconds} s: ${requests} requests, server RSS ${megabytes(memoryOf(server.pid, "VmRSS"))} MB`)
  })
  const memory = {
    rssAtStart,
    rssAtEnd: memoryOf(server.pid, "VmRSS"),
    peakRss: memoryOf(server.pid, "VmHWM")
  }
  const exitCode = await server.stop()
  log(`traffic done: ${answers.length} requests in ${Math.round(elapsed)} s; server exited ${exitCode}`)

  const checks = await database.runtime.runPromise(consistency(answers).pipe(Effect.orDie))
  await database.close({ keep: options.has("keep-data") })

  const report = soakReport({ minutes, workers, answers, elapsed, memory, exitCode, checks })
  await writeFile(out, `${JSON.stringify(report, null, 2)}\n`)
  printReport(report, out)
  if (!checks.every((c) => c.ok) || exitCode !== 0) process.exitCode = 1
})
