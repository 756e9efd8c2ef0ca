import { type ChildProcess, spawn } from "node:child_process"
import { connect } from "node:net"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import {
  collect,
  type Env,
  freePort,
  freshDatabaseEnv,
  json,
  processTimeout,
  projectRoot,
  run
} from "./Processes.ts"

/**
 * Every process is probed, and `/readyz` says ready only once the process can do all it was
 * configured to: `serve` answers 200 only when the API, the console and the metrics listeners all
 * accept connections (polled from the moment the process starts, so the first 200 is caught), and
 * `worker` has probes of its own. Two instances run on one host with their own ports. `demo`, run in
 * an environment that knows nothing of the server's ports, prints the URLs the server announced.
 */

const children: Array<ChildProcess> = []

afterAll(() => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const start = (args: ReadonlyArray<string>, env: Env) => {
  const { PORT: _p, HOST: _h, DATABASE_URL: _d, PUBLIC_BASE_URL: _u, ...inherited } = process.env
  const child = spawn(process.execPath, [path.join(projectRoot, "src", "main.ts"), ...args], {
    cwd: projectRoot,
    env: { ...(inherited as Env), LOG_LEVEL: "Info", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.push(child)
  const { output, finished } = collect(child)
  return { child, output, exited: finished.then((result) => result.code) }
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: "127.0.0.1", port })
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

const readyz = (port: number) =>
  fetch(`http://127.0.0.1:${port}/readyz`).then(
    // biome-ignore lint/suspicious/noExplicitAny: the probe body is inspected field by field
    async (response) => ({ status: response.status, body: (await response.json()) as any }),
    () => ({ status: 0, body: null })
  )

/** Polls `/readyz` from the process's start until the first 200; returns every answer seen. */
const untilReady = async (port: number, process: ReturnType<typeof start>) => {
  const seen: Array<{ status: number; body: unknown }> = []
  const deadline = Date.now() + 40_000
  while (true) {
    expect(process.child.exitCode, process.output.stderr).toBeNull()
    expect(Date.now(), process.output.stderr).toBeLessThan(deadline)
    const answer = await readyz(port)
    seen.push(answer)
    if (answer.status === 200) return seen
    await sleep(10)
  }
}

const ports = async () => ({
  api: await freePort(),
  admin: await freePort(),
  metrics: await freePort(),
  health: await freePort()
})

const serveEnv = (database: Env, p: Awaited<ReturnType<typeof ports>>): Env => ({
  ...database,
  PORT: String(p.api),
  ADMIN_PORT: String(p.admin),
  METRICS_PORT: String(p.metrics),
  HEALTH_PORT: String(p.health),
  WEBHOOK_WORKER: "false"
})

describe("probes", { timeout: processTimeout * 2 }, () => {
  it("serve: /readyz is 200 only once the API, the console and the metrics listeners accept connections", async () => {
    const database = await freshDatabaseEnv()
    const p = await ports()
    const server = start(["serve"], serveEnv(database, p))
    const seen = await untilReady(p.health, server)
    // At the first 200, every configured listener accepts a connection and has said so.
    const [api, admin, metrics] = await Promise.all([accepts(p.api), accepts(p.admin), accepts(p.metrics)])
    expect({ api, admin, metrics }).toEqual({ api: true, admin: true, metrics: true })
    for (const listener of ["api", "admin", "metrics", "health"])
      expect(server.output.stdout).toContain(`"msg":"listening","listener":"${listener}"`)
    const ready = seen.at(-1)!.body
    expect(ready).toMatchObject({
      status: "ready",
      database: "ok",
      listeners: { api: "up", admin: "up", metrics: "up" }
    })
    // Every earlier answer was a 503 (or no answer yet), never a 200 with a listener down.
    for (const answer of seen.slice(0, -1)) expect([0, 503]).toContain(answer.status)
    process.stdout.write(
      `probes: ${seen.length} /readyz answers before the first 200 (${seen.filter((a) => a.status === 503).length} were 503)\n`
    )

    // A second instance on the same host: ports of its own (HEALTH_PORT too), the same database.
    const q = await ports()
    const second = start(["serve"], serveEnv(database, q))
    await untilReady(q.health, second)

    // `demo` run with nothing but the database: it names what the newest running server announced.
    const demo = json(await run(["demo", "--json"], { env: database }))
    expect(demo.url).toBe(`http://127.0.0.1:${q.api}`)
    expect(demo.console_url).toBe(`http://127.0.0.1:${q.admin}/`)
    expect(demo.curl).toContain(`http://127.0.0.1:${q.api}/v1/leads`)
    const created = await fetch(`${demo.url}/v1/leads`, {
      method: "POST",
      headers: { authorization: `Bearer ${demo.key}`, "content-type": "application/json" },
      body: JSON.stringify({
        nombre: "Ana López",
        telefono: "+52 55 1234 5678",
        propiedad: { codigo: "DEM-0001" }
      })
    })
    expect(created.status).toBe(201)
    // The configured public URL wins.
    const proxied = json(
      await run(["demo", "--json"], { env: { ...database, PUBLIC_BASE_URL: "https://leads.example.com" } })
    )
    expect(proxied.url).toBe("https://leads.example.com")

    second.child.kill("SIGTERM")
    expect(await second.exited, second.output.stderr).toBe(0)
    // Stopped, it no longer announces: the first instance's URLs are the running ones.
    expect(json(await run(["demo", "--json"], { env: database })).url).toBe(`http://127.0.0.1:${p.api}`)
    server.child.kill("SIGTERM")
    expect(await server.exited, server.output.stderr).toBe(0)
    // No server running: this environment's own defaults.
    expect(json(await run(["demo", "--json"], { env: database })).url).toBe("http://127.0.0.1:8080")
  })

  it("worker: /healthz and /readyz on its own HEALTH_PORT, beside a server on the same host", async () => {
    const database = await freshDatabaseEnv()
    const migrated = await run(["migrate"], { env: database })
    expect(migrated.code, migrated.stderr).toBe(0)
    const [health, metrics] = [await freePort(), await freePort()]
    const worker = start(["worker"], {
      ...database,
      HEALTH_PORT: String(health),
      METRICS_PORT: String(metrics)
    })
    const seen = await untilReady(health, worker)
    expect(seen.at(-1)!.body).toMatchObject({ status: "ready", database: "ok", listeners: { metrics: "up" } })
    expect(worker.output.stdout).toContain('"msg":"listening","listener":"health"')
    const live = await fetch(`http://127.0.0.1:${health}/healthz`)
    expect(live.status).toBe(200)
    expect(await live.json()).toEqual({ status: "ok" })
    worker.child.kill("SIGTERM")
    expect(await worker.exited, worker.output.stderr).toBe(0)
  })
})
