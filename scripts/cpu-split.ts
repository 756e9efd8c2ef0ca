// Where the server's CPU per request goes between user space and the kernel, and per statement on
// the PostgreSQL socket: the service (this checkout's bin, and optionally another checkout's) and the
// hand-written reference, each driven alone by the bench's create (or GET /v1) load in alternating
// rounds, with utime/stime of the server process from /proc and its socket writes counted by
// `/proc/<pid>/io` syscw. A write to a loopback socket does the receiver's TCP work and its wakeup
// inside the sender's syscall, so a statement costs the sender kernel time the profile shows as
// `writeBuffer`.
//
//   node scripts/cpu-split.ts [--seconds 5] [--rounds 2] [--scenario create|index] [--baseline DIR]
//                             [--service-env K=V,...] [--baseline-env K=V,...] [--node-flags "..."]
//                             [--perf FILE]
// --perf FILE: the service runs with --perf-basic-prof and `perf record` samples it on-CPU (unlike
// a V8 profile, time preempted by PostgreSQL is not counted) during its first measured load.
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { mkdir } from "node:fs/promises"
import * as path from "node:path"
import { generateApiKey } from "../src/Domain/ApiKey.ts"
import { numberOption, parseArgs } from "./lib/args.ts"
import { provision, startScratchDatabase } from "./lib/database.ts"
import { drive } from "./lib/drive.ts"
import { indexTemplate } from "./lib/fixture.ts"
import type { ScenarioName } from "./lib/load.ts"
import { memoryOf, type ServerProcess, startServer } from "./lib/server.ts"

const options = parseArgs(process.argv.slice(2), ["service-env", "baseline-env", "node-flags"])
const nodeFlags = (options.get("node-flags") ?? "").split(" ").filter((flag) => flag !== "")
const seconds = numberOption(options, "seconds", 5)
const rounds = numberOption(options, "rounds", 2)
const scenario = (options.get("scenario") ?? "create") as ScenarioName
const baselineDir = options.get("baseline")
const perfFile = options.get("perf")
const envOption = (name: string) =>
  Object.fromEntries(
    (options.get(name) ?? "")
      .split(",")
      .filter((pair) => pair.includes("="))
      .map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)])
  )
const extraEnv = envOption("service-env")
const baselineEnv = envOption("baseline-env")
const logDir = path.join("bench-results", `cpu-split-${new Date().toISOString().replace(/[:.]/g, "-")}`)
await mkdir(logDir, { recursive: true })

const ticks = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  const io = readFileSync(`/proc/${pid}/io`, "utf8")
  const writes = Number(/^syscw: (\d+)$/m.exec(io)?.[1] ?? 0)
  const reads = Number(/^syscr: (\d+)$/m.exec(io)?.[1] ?? 0)
  return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10, writes, reads }
}

const database = await startScratchDatabase()
const servers: Array<{ name: string; server: ServerProcess }> = []
try {
  const fixture = await database.runtime.runPromise(provision({ origins: 32, rateLimit: 100_000_000 }))
  const keys = fixture.origins.map((origin) => origin.key)
  const start = (name: string, cwd?: string) =>
    startServer({
      env: {
        DATABASE_URL: database.url(),
        ADMIN_PORT: "off",
        HEALTH_PORT: "off",
        ...(cwd ? baselineEnv : extraEnv)
      },
      logFile: path.join(logDir, `${name}.log`),
      ...(cwd === undefined
        ? { nodeOptions: [...nodeFlags, ...(perfFile === undefined ? [] : ["--perf-basic-prof"])] }
        : {}),
      ...(cwd === undefined ? {} : { cwd })
    })
  const service = await start("service")
  servers.push({ name: "service", server: service })
  if (baselineDir !== undefined)
    servers.push({ name: "baseline", server: await start("baseline", baselineDir) })
  const index = await indexTemplate(service.url)
  servers.push({
    name: scenario === "index" ? "raw node:http" : "reference",
    server: await startServer({
      command: [process.execPath, "scripts/reference-server.ts", ...(scenario === "index" ? ["--raw"] : [])],
      env: { DATABASE_URL: database.url(), INDEX_JSON: index },
      logFile: path.join(logDir, "reference.log")
    })
  })
  let phoneBase = 5_600_000_000
  const plan = (url: string, duration: number) => {
    phoneBase += 10_000_000
    return {
      url,
      scenario,
      connections: 32,
      duration,
      keys,
      propertyCodigo: fixture.propertyCodigo,
      tag: `${scenario}-${phoneBase}`,
      phoneBase,
      existingPhones: [],
      replays: [],
      unknownKey: generateApiKey().key
    }
  }
  process.stdout.write(
    `${"server".padEnd(16)}${"req/s".padStart(8)}${"p99".padStart(6)}${"user ms/req".padStart(13)}${"sys ms/req".padStart(12)}${"writes/req".padStart(12)}${"reads/req".padStart(11)}${"RSS MB".padStart(8)}\n`
  )
  for (let round = 0; round < rounds; round++) {
    for (const { name, server } of servers) {
      await drive(plan(server.url, 2))
      const before = ticks(server.pid)
      const recorder =
        perfFile !== undefined && round === 0 && name === "service"
          ? spawn(
              "perf",
              [
                "record",
                "-e",
                "cpu-clock",
                "-F",
                "1999",
                "-g",
                "-o",
                perfFile,
                "-p",
                String(server.pid),
                "--",
                "sleep",
                String(seconds)
              ],
              { stdio: "ignore" }
            )
          : undefined
      const result = await drive(plan(server.url, seconds))
      if (recorder !== undefined) await new Promise((resolve) => recorder.once("exit", resolve))
      const after = ticks(server.pid)
      const n = result.requests
      const per = (value: number) => (value / n).toFixed(3)
      const rss = Math.round(memoryOf(server.pid, "VmRSS") / 2 ** 20)
      process.stdout.write(
        `${name.padEnd(16)}${String(result.requestsPerSecond).padStart(8)}${String(result.latencyMs.p99).padStart(6)}${per(after.user - before.user).padStart(13)}${per(after.system - before.system).padStart(12)}${((after.writes - before.writes) / n).toFixed(1).padStart(12)}${((after.reads - before.reads) / n).toFixed(1).padStart(11)}${String(rss).padStart(8)}\n`
      )
    }
  }
} finally {
  for (const { server } of servers) await server.stop()
  await database.close()
}
