import { spawn } from "node:child_process"
import { once } from "node:events"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { Effect, Layer } from "effect"
import { WebhookConfig, webhookConfig } from "../src/Platform/Config.ts"
import { WebhookEndpoints } from "../src/Webhooks/Endpoints.ts"
import { numberOption, parseArgs } from "./lib/args.ts"
import { provision, startScratchDatabase } from "./lib/database.ts"
import { table } from "./lib/report.ts"
import { startServer } from "./lib/server.ts"

/**
 * Webhook delivery figures against a local receiver: latency from the event's write to the POST's
 * arrival (p50/p99) with leads sent one at a time, and deliveries per second while a worker drains
 * a backlog. The event's `timestamp` is taken when its write starts, before the commit, so the
 * latency includes the commit itself.
 */
const options = parseArgs(process.argv.slice(2))
if (options.has("help")) {
  process.stdout.write(
    "node scripts/webhook-bench.ts [--leads 200] [--rate 20] [--backlog 1000] [--per-endpoint 4]\n"
  )
  process.exit(0)
}
const leads = numberOption(options, "leads", 200)
const rate = numberOption(options, "rate", 20)
const backlog = numberOption(options, "backlog", 1000)
const perEndpoint = numberOption(options, "per-endpoint", 4)
const log = (line: string) => process.stderr.write(`${line}\n`)
const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis))

const arrivals = new Map<string, { at: number; sentAt: number }>()
const receiver = createServer((request, response) => {
  let body = ""
  request.on("data", (chunk) => (body += chunk))
  request.on("end", () => {
    const id = request.headers["webhook-id"] as string
    if (!arrivals.has(id))
      arrivals.set(id, { at: Date.now(), sentAt: Date.parse(JSON.parse(body).timestamp) })
    response.writeHead(204).end()
  })
})
receiver.listen(0, "127.0.0.1")
await once(receiver, "listening")
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`

log("starting a scratch PostgreSQL")
const database = await startScratchDatabase()
const provisioned = await database.runtime.runPromise(provision({ origins: 4, rateLimit: 10_000_000 }))
await database.runtime.runPromise(
  WebhookEndpoints.use((endpoints) =>
    endpoints.add({
      organizationId: provisioned.organizationId,
      url: receiverUrl,
      events: ["lead.created", "lead.enriched"]
    })
  ).pipe(
    Effect.provide(
      WebhookEndpoints.layer.pipe(
        Layer.provide(
          Layer.effect(
            WebhookConfig,
            Effect.map(webhookConfig, (c) => ({ ...c, allowPrivate: true }))
          )
        )
      )
    ),
    Effect.orDie
  )
)
const env = {
  DATABASE_URL: database.url(),
  WEBHOOK_ALLOW_PRIVATE: "true",
  WEBHOOK_CONCURRENCY_PER_ENDPOINT: String(perEndpoint)
}
const logFile = path.join(tmpdir(), `webhook-bench-${process.pid}.log`)

let phone = 0
const post = async (url: string) => {
  const origin = provisioned.origins[phone % provisioned.origins.length]!
  const n = phone++
  const response = await fetch(`${url}/v1/leads`, {
    method: "POST",
    headers: { authorization: `Bearer ${origin.key}`, "content-type": "application/json" },
    body: JSON.stringify({
      nombre: `Bench ${n}`,
      telefono: `+52 55 ${String(10_000_000 + n).slice(0, 4)} ${String(10_000_000 + n).slice(4)}`
    })
  })
  if (response.status !== 201) throw new Error(`POST /v1/leads answered ${response.status}`)
  await response.arrayBuffer()
}

const waitForArrivals = async (count: number, timeoutMillis: number) => {
  const deadline = Date.now() + timeoutMillis
  while (arrivals.size < count) {
    if (Date.now() > deadline) throw new Error(`only ${arrivals.size} of ${count} deliveries arrived`)
    await sleep(10)
  }
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!

log(`latency: ${leads} leads at ${rate}/s through serve (worker inside)`)
const server = await startServer({ env, logFile })
for (let i = 0; i < leads; i++) {
  const started = Date.now()
  await post(server.url)
  await sleep(Math.max(0, 1000 / rate - (Date.now() - started)))
}
await waitForArrivals(leads, 30_000)
const latencies = [...arrivals.values()].map((a) => a.at - a.sentAt).sort((a, b) => a - b)
await server.stop()

log(`throughput: a backlog of ${backlog} events drained by \`lead-intake worker\``)
const writer = await startServer({ env: { ...env, WEBHOOK_WORKER: "false" }, logFile })
const before = arrivals.size
const posters = Array.from({ length: 8 }, async () => {
  while (phone - leads < backlog) await post(writer.url)
})
await Promise.all(posters)
const queued = phone - leads
const workerStarted = Date.now()
const worker = spawn(process.execPath, ["src/main.ts", "worker"], {
  // The worker has probes of its own now; the server beside it holds HEALTH_PORT's default.
  env: { ...process.env, ...env, LOG_LEVEL: "Warn", HEALTH_PORT: "off" },
  stdio: ["ignore", "ignore", "inherit"]
})
await waitForArrivals(before + queued, 120_000)
const startSeconds = (Date.now() - workerStarted) / 1000
const drained = [...arrivals.values()].slice(before).map((a) => a.at)
const drainSeconds = (Math.max(...drained) - Math.min(...drained)) / 1000
worker.kill("SIGTERM")
await once(worker, "exit")
await writer.stop()

process.stdout.write(
  `${table([
    ["measure", "value"],
    ["latency p50 (write → POST received)", `${percentile(latencies, 50)} ms`],
    ["latency p90", `${percentile(latencies, 90)} ms`],
    ["latency p99", `${percentile(latencies, 99)} ms`],
    ["latency max", `${latencies.at(-1)} ms`],
    ["deliveries", String(latencies.length)],
    [
      `throughput (${queued} queued, ${perEndpoint} in flight per endpoint)`,
      `${Math.round(queued / drainSeconds)} deliveries/s`
    ],
    ["drain time (first to last delivery)", `${drainSeconds.toFixed(1)} s`],
    ["worker start to last delivery", `${startSeconds.toFixed(1)} s`]
  ])}\n`
)
receiver.close()
await database.close()
