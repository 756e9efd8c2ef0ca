import * as path from "node:path"
import { parseArgs } from "./lib/args.ts"
import { cpuSnapshot } from "./lib/cpu.ts"
import { provision, startScratchDatabase } from "./lib/database.ts"
import { drive } from "./lib/drive.ts"
import type { LoadPlan } from "./lib/load.ts"
import { table } from "./lib/report.ts"
import { memoryOf, startServer } from "./lib/server.ts"

const usage = `node scripts/heap-growth.ts [--duration S] [--flags "A|B|…"]
  Starts \`lead-intake serve\` (through the bin, as npm start does) once per V8 flag set given in
  LEAD_INTAKE_HEAP_FLAGS, drives creates at it, and prints the server's RSS idle and after the load
  and its CPU per create: how the heap-growth default in bin/lead-intake.js was chosen.
  --flags    flag sets separated by "|" ("" is V8's default)
             (default "|--heap-growing-percent=100|--heap-growing-percent=60|--heap-growing-percent=30")
  --duration measured seconds per flag set (10), after 3 s of warm-up`

const options = parseArgs(process.argv.slice(2))
if (options.has("help")) {
  process.stdout.write(`${usage}\n`)
  process.exit(0)
}
const duration = Number(options.get("duration") ?? 10)
const flagSets = (
  options.get("flags") ?? "|--heap-growing-percent=100|--heap-growing-percent=60|--heap-growing-percent=30"
).split("|")

const mb = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MB`

const database = await startScratchDatabase()
try {
  const fixture = await database.runtime.runPromise(provision({ origins: 32, rateLimit: 1_000_000 }))
  const rows: Array<ReadonlyArray<string>> = []
  let phoneBase = 5_800_000_000
  for (const flags of flagSets) {
    const server = await startServer({
      env: { DATABASE_URL: database.url(), ADMIN_PORT: "off", LEAD_INTAKE_HEAP_FLAGS: flags },
      logFile: path.join("bench-results", "heap-growth.log")
    })
    try {
      await new Promise((resolve) => setTimeout(resolve, 2_000))
      const idle = memoryOf(server.pid, "VmRSS")
      const plan = (seconds: number): LoadPlan => {
        phoneBase += 10_000_000
        return {
          url: server.url,
          scenario: "create",
          connections: 32,
          duration: seconds,
          keys: fixture.origins.map((origin) => origin.key),
          propertyCodigo: fixture.propertyCodigo,
          tag: `heap-${phoneBase}`,
          phoneBase,
          existingPhones: [],
          replays: [],
          unknownKey: "lk_live_unknown"
        }
      }
      await drive(plan(3))
      const before = cpuSnapshot(server.pid, database.postmasterPid).server
      const result = await drive(plan(duration))
      const cpu = ((cpuSnapshot(server.pid, database.postmasterPid).server - before) * 1000) / result.requests
      rows.push([
        flags === "" ? "(V8 default)" : flags,
        mb(idle),
        mb(memoryOf(server.pid, "VmRSS")),
        `${result.requestsPerSecond}/s`,
        `${cpu.toFixed(2)} ms`
      ])
    } finally {
      await server.stop()
    }
  }
  const header = ["LEAD_INTAKE_HEAP_FLAGS", "RSS idle", "RSS after load", "creates", "server CPU/create"]
  process.stdout.write(`${table([header, ...rows])}\n`)
} finally {
  await database.close()
}
