/**
 * Idle RSS of `serve` started from the sources and from the bundle, side by side in one run.
 *
 *   node scripts/rss.ts [--rounds N] [--console off] [src] [dist] [path/to/main.js ...]
 *
 * `src` and `dist` start the bin as a program (`bin/lead-intake.js serve`, what `npm start` runs) with
 * LEAD_INTAKE_ENTRY pinned; a path starts `node --max-semi-space-size=4 <path> serve` (a bundle built
 * elsewhere with `scripts/build.ts --out-dir`). Variants alternate, one round after another, on one
 * database: DATABASE_URL when set, else a scratch embedded PostgreSQL. RSS is read 2 s after the API
 * first answers (as `npm run bench` reads it), then again after one request to each of `/v1/docs`,
 * `/v1/openapi.json`, the console's sign-in page and a console asset.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { numberOption, parseArgs } from "./lib/args.ts"
import { startScratchDatabase } from "./lib/database.ts"
import { freePort, memoryOf, startServer } from "./lib/server.ts"

const argv = process.argv.slice(2)
const options = parseArgs(argv)
const rounds = numberOption(options, "rounds", 3)
const consoleOn = options.get("console") !== "off"
const variants = argv.filter(
  (argument, index) => !argument.startsWith("--") && !(argv[index - 1] ?? "").match(/^--(rounds|console)$/)
)
if (variants.length === 0) variants.push("src", "dist")

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const megabytes = (bytes: number) => (bytes / 1024 / 1024).toFixed(1)
const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor((sorted.length - 1) / 2)]!
}

const database =
  process.env.DATABASE_URL === undefined
    ? await startScratchDatabase()
    : { url: () => process.env.DATABASE_URL!, close: async () => {} }
const logDir = await mkdtemp(path.join(tmpdir(), "lead-intake-rss-"))

const measure = async (variant: string) => {
  const adminPort = await freePort()
  const entry = variant === "src" || variant === "dist" ? variant : undefined
  const server = await startServer({
    env: {
      DATABASE_URL: database.url(),
      ADMIN_PORT: consoleOn ? String(adminPort) : "off",
      ...(entry === undefined ? {} : { LEAD_INTAKE_ENTRY: entry })
    },
    logFile: path.join(logDir, `${path.basename(variant)}.log`),
    ...(entry === undefined
      ? { command: [process.execPath, "--max-semi-space-size=4", path.resolve(variant), "serve"] }
      : {})
  })
  try {
    await sleep(2_000)
    const idle = memoryOf(server.pid, "VmRSS")
    const pages = [`${server.url}/v1/docs`, `${server.url}/v1/openapi.json`]
    if (consoleOn)
      pages.push(`http://127.0.0.1:${adminPort}/login`, `http://127.0.0.1:${adminPort}/assets/app.js`)
    for (const page of pages) {
      const response = await fetch(page)
      await response.arrayBuffer()
      if (!response.ok) throw new Error(`${variant}: ${page} answered ${response.status}`)
    }
    await sleep(500)
    return { idle, used: memoryOf(server.pid, "VmRSS") }
  } finally {
    await server.stop()
  }
}

const results = new Map<string, Array<{ idle: number; used: number }>>(variants.map((v) => [v, []]))
try {
  for (let round = 1; round <= rounds; round++) {
    for (const variant of variants) {
      const result = await measure(variant)
      results.get(variant)!.push(result)
      process.stderr.write(
        `round ${round} ${variant}: idle ${megabytes(result.idle)} MB, after docs/console ${megabytes(result.used)} MB\n`
      )
    }
  }
  process.stdout.write(
    `\nserve, console ${consoleOn ? "on" : "off"}, ${rounds} rounds (MB RSS, each round / median)\n\n` +
      "| started from | idle after start | after docs, openapi.json, console page and asset |\n|---|---|---|\n"
  )
  for (const [variant, list] of results) {
    const idle = list.map((r) => r.idle)
    const used = list.map((r) => r.used)
    process.stdout.write(
      `| ${variant} | ${idle.map(megabytes).join(", ")} / **${megabytes(median(idle))}** | ${used.map(megabytes).join(", ")} / **${megabytes(median(used))}** |\n`
    )
  }
} finally {
  await database.close()
  await rm(logDir, { recursive: true, force: true })
}
