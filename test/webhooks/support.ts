import { type ChildProcess, spawn } from "node:child_process"
import { once } from "node:events"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import { Effect, Layer, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import { KeyStore } from "../../src/Accounts/KeyStore.ts"
import { Organizations } from "../../src/Accounts/Organizations.ts"
import { type EventType, eventTypes } from "../../src/Domain/WebhookPayload.ts"
import { WebhookConfig, type WebhookConfigShape } from "../../src/Platform/Config.ts"
import { WebhookAttempts } from "../../src/Webhooks/Attempts.ts"
import { WebhookDeliveries } from "../../src/Webhooks/Deliveries.ts"
import { WebhookEndpoints } from "../../src/Webhooks/Endpoints.ts"
import { freePort } from "../cluster/support.ts"
import { directUrlOf, layerMigratedDatabase, pooledEnvironment } from "../support/Database.ts"

const root = path.resolve(import.meta.dirname, "../..")
const main = path.join(root, "src/main.ts")

export const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis))

/** What every process in these tests runs with: private receivers allowed, short timeouts and retries. */
export const webhookEnv = (
  databaseUrl: string,
  extra: Record<string, string> = {}
): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined) env[name] = value
  for (const name of ["PORT", "HOST", "LEAD_INTAKE_DATA_DIR", "PUBLIC_BASE_URL", "METRICS_PORT"])
    delete env[name]
  for (const name of Object.keys(env))
    if (name.startsWith("OTEL_") || name.startsWith("WEBHOOK_")) delete env[name]
  return {
    ...env,
    DATABASE_URL: databaseUrl,
    ...pooledEnvironment(databaseUrl),
    LOG_LEVEL: "Info",
    WEBHOOK_ALLOW_PRIVATE: "true",
    WEBHOOK_TIMEOUT: "1s",
    WEBHOOK_RETRY_SCHEDULE: "300ms,300ms",
    DASHBOARD_URL: "https://crm.test",
    ...extra
  }
}

export interface CliResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

export const runCli = async (
  env: Record<string, string>,
  args: ReadonlyArray<string>
): Promise<CliResult> => {
  const child = spawn(process.execPath, [main, ...args], { env, cwd: root })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (chunk) => (stdout += chunk))
  child.stderr.on("data", (chunk) => (stderr += chunk))
  const started = Date.now()
  const [code] = (await once(child, "exit")) as [number | null]
  if (process.env.DEBUG_CLI) console.error("CLI", args.join(" "), Date.now() - started, code)
  return { code, stdout, stderr }
}

// biome-ignore lint/suspicious/noExplicitAny: tests read the JSON the CLI printed field by field
export const cliJson = async (env: Record<string, string>, args: ReadonlyArray<string>): Promise<any> => {
  const result = await runCli(env, [...args, "--json"])
  if (result.code !== 0)
    throw new Error(`lead-intake ${args.join(" ")} exited ${result.code}: ${result.stderr}`)
  return JSON.parse(result.stdout)
}

export interface RunningProcess {
  readonly url: string
  readonly child: ChildProcess
  readonly logs: () => ReadonlyArray<Record<string, unknown>>
  readonly stop: (signal?: NodeJS.Signals) => Promise<number | null>
}

/** `serve` (waits until it answers) or `worker` (waits for its start line), logging JSON on stdout. */
export const startProcess = async (
  kind: "serve" | "worker",
  env: Record<string, string>
): Promise<RunningProcess> => {
  const port = await freePort()
  const args = kind === "serve" ? ["serve", "--port", String(port)] : ["worker"]
  const child = spawn(process.execPath, [main, ...args], {
    env,
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout?.on("data", (chunk) => (stdout += chunk))
  child.stderr?.on("data", (chunk) => (stderr += chunk))
  const logs = () =>
    stdout
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 30_000
  while (true) {
    if (child.exitCode !== null) throw new Error(`${kind} exited ${child.exitCode}: ${stderr}`)
    const ready =
      kind === "serve"
        ? await fetch(`${url}/v1`).then(
            (response) => response.ok,
            () => false
          )
        : logs().some((line) => line.msg === "webhook worker started")
    if (ready) break
    if (Date.now() > deadline) throw new Error(`${kind} did not start: ${stderr}`)
    await sleep(100)
  }
  return {
    url,
    child,
    logs,
    stop: async (signal = "SIGTERM") => {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode
      child.kill(signal)
      const [code] = (await once(child, "exit")) as [number | null]
      return code
    }
  }
}

export interface Received {
  readonly headers: IncomingMessage["headers"]
  readonly body: string
  readonly at: number
  readonly path: string
}

export type Answer =
  | { readonly status: number; readonly headers?: Record<string, string>; readonly delayMillis?: number }
  | "hang"
  | "close"

export interface Receiver {
  readonly url: (path?: string) => string
  readonly received: Array<Received>
  answer: (request: Received, index: number) => Answer
  /** The most requests left hanging at once (until the client gave up on them). */
  readonly mostHanging: () => number
  readonly close: () => Promise<void>
}

/** A webhook receiver on 127.0.0.1 that records every POST and answers as told. */
export const startReceiver = async (
  answer: Receiver["answer"] = () => ({ status: 200 })
): Promise<Receiver> => {
  const hanging = new Set<ServerResponse>()
  let mostHanging = 0
  const receiver: Receiver = {
    mostHanging: () => mostHanging,
    url: (path = "/hook") => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    received: [],
    answer,
    close: async () => {
      for (const response of hanging) response.destroy()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  }
  const server = createServer((request, response) => {
    let body = ""
    request.setEncoding("utf8")
    request.on("data", (chunk) => (body += chunk))
    request.on("end", () => {
      const record = { headers: request.headers, body, at: Date.now(), path: request.url ?? "" }
      const index = receiver.received.push(record) - 1
      const reply = receiver.answer(record, index)
      if (reply === "hang") {
        hanging.add(response)
        mostHanging = Math.max(mostHanging, hanging.size)
        response.on("close", () => hanging.delete(response))
        return
      }
      if (reply === "close") {
        request.socket.destroy()
        return
      }
      const send = () => {
        response.writeHead(reply.status, reply.headers ?? {})
        response.end()
      }
      if (reply.delayMillis === undefined) send()
      else setTimeout(send, reply.delayMillis)
    })
  })
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  return receiver
}

export const waitFor = async (
  condition: () => boolean | Promise<boolean>,
  timeoutMillis: number,
  what: string
) => {
  const deadline = Date.now() + timeoutMillis
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(50)
  }
}

/** An organization with an origin whose key may send many leads. */
export const provision = async (env: Record<string, string>) => {
  await cliJson({ ...env, DATABASE_URL: directUrlOf(env.DATABASE_URL!) }, ["migrate"])
  const organization = (await cliJson(env, ["org", "create", "--name", "Webhooks"])).id as string
  const origin = await cliJson(env, [
    "origin",
    "create",
    "--org",
    organization,
    "--label",
    "web",
    "--rate-limit",
    "100000"
  ])
  return { organization, key: origin.key as string, originId: origin.id as string }
}

let phone = 1000
export const newLead = (extra: Record<string, unknown> = {}) => ({
  nombre: `Webhook ${phone}`,
  telefono: `+52 81 5${String(process.pid % 1000).padStart(3, "0")} ${phone++}`,
  ...extra
})

export const postLead = async (url: string, key: string, body: unknown) => {
  const response = await fetch(`${url}/v1/leads`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  // biome-ignore lint/suspicious/noExplicitAny: tests read response bodies field by field
  return { status: response.status, body: (await response.json()) as any }
}

/**
 * The services in this test process, on the same database as the processes under test: seeding and
 * reading state this way costs a query, where a CLI process costs seconds on a loaded machine.
 */
export const inProcess = (databaseUrl: string) => {
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(
      WebhookEndpoints.layer,
      WebhookDeliveries.layer,
      WebhookAttempts.layer,
      Organizations.layer,
      KeyStore.layer
    ).pipe(
      Layer.provide(Layer.succeed(WebhookConfig, { ...testWebhookConfig, allowPrivate: true })),
      Layer.provideMerge(layerMigratedDatabase(databaseUrl, 4)),
      Layer.orDie
    )
  )
  const run = <A, E>(effect: Effect.Effect<A, E, ManagedRuntime.ManagedRuntime.Services<typeof runtime>>) =>
    runtime.runPromise(effect)
  return {
    run,
    provision: () =>
      run(
        Effect.gen(function* () {
          const organization = yield* (yield* Organizations).create({ name: "Webhooks", country: "MX" })
          const origin = yield* (yield* KeyStore).createOrigin({
            organizationId: organization.id,
            label: "web",
            rateLimit: 100_000
          })
          return { organization: organization.id, key: origin.key, originId: origin.id }
        })
      ),
    addEndpoint: (organizationId: string, url: string, events: ReadonlyArray<EventType> = eventTypes) =>
      run(WebhookEndpoints.use((e) => e.add({ organizationId, url, events }))),
    deliveries: (endpointId: string) => run(WebhookDeliveries.use((d) => d.list(endpointId, 1000))),
    attempts: (endpointId: string, eventId: string) =>
      run(WebhookAttempts.use((a) => a.list(endpointId, eventId))),
    sql: <A extends object>(query: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<A>, unknown>) =>
      run(SqlClient.SqlClient.use(query)),
    close: () => runtime.dispose()
  }
}

export const testWebhookConfig: WebhookConfigShape = {
  allowPrivate: true,
  timeoutMillis: 1000,
  retrySchedule: [300, 300],
  retentionDays: 30,
  concurrency: 32,
  concurrencyPerEndpoint: 4,
  pollIntervalMillis: 1000,
  workerInServe: true,
  disableAfterMillis: 5 * 86_400_000
}
