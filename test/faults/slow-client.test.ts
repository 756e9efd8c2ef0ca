import { type ChildProcess, spawn } from "node:child_process"
import { connect } from "node:net"
import * as path from "node:path"
import { type Effect, Layer, ManagedRuntime, Option, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { layerServices } from "../../src/Intake/Services.ts"
import { AppConfig } from "../../src/Platform/Config.ts"
import * as Migrations from "../../src/Platform/Migrations.ts"
import { type Fixture, seed } from "../support/Client.ts"
import { testConfig } from "../support/Database.ts"
import { freshDatabaseUrl, sleep } from "./support.ts"

const root = path.resolve(import.meta.dirname, "../..")

/** How long the server took to answer or hang up on a client, and what it said. */
interface CutOff {
  readonly afterMillis: number
  readonly status: number | null
  readonly bytesSent: number
}

/**
 * Slow clients against the real server process (`node src/main.ts serve`, the production
 * listener): a body or headers that trickle in are cut off after a bounded time, and meanwhile
 * the server keeps answering everyone else.
 */
describe("fault: slow clients", () => {
  let child: ChildProcess
  let port = 0
  let fixture: Fixture

  beforeAll(async () => {
    const url = await freshDatabaseUrl()
    const runtime = ManagedRuntime.make(
      layerServices.pipe(
        Layer.provideMerge(Migrations.layer),
        Layer.provide(
          Layer.succeed(AppConfig, { ...testConfig, databaseUrl: Option.some(Redacted.make(url)) })
        ),
        Layer.orDie
      )
    )
    fixture = await runtime.runPromise(seed({ rateLimit: 1_000_000 }) as unknown as Effect.Effect<Fixture>)
    await runtime.dispose()
    const { freePort } = await import("../../scripts/lib/server.ts")
    port = await freePort()
    const { DATABASE_URL: _, ...env } = process.env
    child = spawn(process.execPath, ["src/main.ts", "serve", "--port", String(port)], {
      cwd: root,
      env: { ...env, DATABASE_URL: url, LOG_LEVEL: "Error", HOST: "127.0.0.1" },
      stdio: ["ignore", "ignore", "inherit"]
    })
    const deadline = performance.now() + 30_000
    while (
      !(await fetch(`http://127.0.0.1:${port}/v1`).then(
        (r) => r.ok,
        () => false
      ))
    ) {
      if (performance.now() > deadline) throw new Error("the server did not start")
      await sleep(100)
    }
  }, 60_000)

  afterAll(() => {
    child?.kill("SIGTERM")
  })

  /** Sends `head` at once, then `trickle` one byte every `everyMillis`, until the server cuts it off. */
  const trickle = (head: string, trickled: string, everyMillis: number) =>
    new Promise<CutOff>((resolve) => {
      const started = performance.now()
      let bytesSent = 0
      let received = ""
      const socket = connect(port, "127.0.0.1", () => {
        socket.write(head)
        const timer = setInterval(() => {
          if (bytesSent >= trickled.length || socket.destroyed) return clearInterval(timer)
          socket.write(trickled[bytesSent++]!)
        }, everyMillis)
        socket.once("close", () => clearInterval(timer))
      })
      socket.setEncoding("latin1")
      socket.on("data", (chunk: string) => {
        received += chunk
      })
      socket.on("error", () => {})
      socket.on("close", () => {
        const match = /^HTTP\/1\.1 (\d{3})/.exec(received)
        resolve({
          afterMillis: performance.now() - started,
          status: match === null ? null : Number(match[1]),
          bytesSent
        })
      })
    })

  it("a trickling body, a trickling header block, and twenty of them at once: all cut off in bounded time", async () => {
    const body = JSON.stringify({ nombre: "Lento", telefono: "+52 55 9999 0001", mensaje: "x".repeat(2_000) })
    const bodyHead = [
      "POST /v1/leads HTTP/1.1",
      "Host: api.test",
      `Authorization: Bearer ${fixture.key}`,
      "Content-Type: application/json",
      `Content-Length: ${body.length}`,
      "",
      ""
    ].join("\r\n")
    const headersHead = "POST /v1/leads HTTP/1.1\r\nHost: api.test\r\n"
    const slowHeaders = `Authorization: Bearer ${fixture.key}\r\nX-Padding: ${"p".repeat(500)}\r\n\r\n`

    const started = performance.now()
    const clients = [
      ...Array.from({ length: 10 }, () => trickle(bodyHead, body, 200)),
      ...Array.from({ length: 10 }, () => trickle(headersHead, slowHeaders, 200))
    ]
    await sleep(2_000)
    const during: Array<number> = []
    for (let i = 0; i < 5; i++) {
      const t = performance.now()
      const response = await fetch(`http://127.0.0.1:${port}/v1`)
      expect(response.status).toBe(200)
      during.push(performance.now() - t)
    }
    const cut = await Promise.all(clients)
    const slowest = Math.max(...cut.map((c) => c.afterMillis))
    process.stdout.write(
      `[faults] slow clients cut off after ${Math.round(Math.min(...cut.map((c) => c.afterMillis)))}-${Math.round(slowest)} ms ` +
        `(statuses ${[...new Set(cut.map((c) => c.status))].join(",")}); GET /v1 meanwhile took ${Math.round(Math.max(...during))} ms at most\n`
    )
    for (const c of cut) {
      expect(c.bytesSent, "cut off before it finished sending").toBeLessThan(body.length)
      if (c.status !== null) expect([408, 400, 413]).toContain(c.status)
    }
    expect(slowest, "cut off within the bound").toBeLessThan(20_000)
    expect(Math.max(...during), "others are served meanwhile").toBeLessThan(500)
    expect(performance.now() - started).toBeLessThan(25_000)
  }, 60_000)
})
