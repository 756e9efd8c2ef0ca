import { randomBytes } from "node:crypto"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sourceSignature } from "../../bin/entry.js"
import { type Collector, startCollector } from "../../scripts/collector.ts"
import {
  type Env,
  freePort,
  freshDatabaseEnv,
  json,
  postLead,
  processTimeout,
  projectRoot,
  type RunningServer,
  run,
  startServer
} from "./Processes.ts"

/**
 * The bundle `npm run build` makes, built here into a directory of its own inside the package (where
 * it finds package.json, src/Console/, docs/ and node_modules as dist/ does) and run as the bin runs
 * dist/main.js: every asset found, the lazily loaded parts (server, OpenTelemetry SDK, embedded
 * PostgreSQL's binaries) present, the CLI whole.
 */
describe("the bundle (scripts/build.ts)", { timeout: processTimeout }, () => {
  const outDir = path.join(projectRoot, ".test-data", `bundle-${randomBytes(4).toString("hex")}`)
  const main = path.join(outDir, "main.js")
  const servers: Array<RunningServer> = []
  let collector: Collector | undefined
  let dataDir: string | undefined

  beforeAll(async () => {
    const built = await run(["--out-dir", outDir], { entry: path.join(projectRoot, "scripts", "build.ts") })
    expect(built.code, built.stderr).toBe(0)
  }, processTimeout)

  afterAll(async () => {
    for (const server of servers) await server.stop("SIGTERM")
    await collector?.close()
    await rm(outDir, { recursive: true, force: true })
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true })
  })

  it("is stamped with the signature of the sources it was built from, and no chunk imports a .ts file", () => {
    const stamp = JSON.parse(readFileSync(path.join(outDir, ".stamp.json"), "utf8"))
    expect(stamp.signature).toBe(sourceSignature(projectRoot).signature)
    expect(stamp.files).toBeGreaterThan(50)
    const chunks = readdirSync(outDir).filter((name) => name.endsWith(".js"))
    expect(chunks).toContain("main.js")
    for (const chunk of chunks) {
      const tsImport = /(?:\bfrom|\bimport\s*\()\s*["'`][^"'`]*\.ts["'`]/.exec(
        readFileSync(path.join(outDir, chunk), "utf8")
      )
      expect(tsImport?.[0], chunk).toBeUndefined()
    }
  })

  it("serves the API, the console and the docs, and exports traces, against DATABASE_URL", async () => {
    const env: Env = await freshDatabaseEnv()
    collector = await startCollector({ port: 0 })
    const [port, adminPort] = [await freePort(), await freePort()]
    const server = await startServer(port, {
      entry: main,
      env: {
        ...env,
        ADMIN_PORT: String(adminPort),
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_BSP_SCHEDULE_DELAY: "100"
      }
    })
    servers.push(server)

    const index = await fetch(`${server.baseUrl}/v1`)
    expect(index.status).toBe(200)
    expect(index.headers.get("content-type")).toMatch(/^application\/json/)

    const cli = (...args: ReadonlyArray<string>) => run(args, { entry: main, env })
    const organization = json(await cli("org", "create", "--name", "Empaquetada", "--json"))
    const origin = json(await cli("origin", "create", "--org", organization.id, "--label", "web", "--json"))
    const created = await postLead(
      server.baseUrl,
      { nombre: "Ana López", telefono: "+52 55 1234 5678" },
      { key: origin.key }
    )
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    expect(created.body.status).toBe("created")
    const lead = json(await cli("lead", "show", "--id", created.body.lead_id, "--json"))
    expect(lead.nombre).toBe("Ana López")
    expect(lead.telefono).toBe("+52 55 1234 5678")

    const login = await fetch(`http://127.0.0.1:${adminPort}/login`)
    expect(login.status).toBe(200)
    expect(login.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(login.headers.get("content-security-policy")).toMatch(/script-src 'self' 'nonce-/)
    expect(await login.text()).toContain("<html")
    const asset = await fetch(`http://127.0.0.1:${adminPort}/assets/app.js`)
    expect(asset.status).toBe(200)
    expect(asset.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
    expect(await asset.text()).toBe(readFileSync(path.join(outDir, "console", "assets", "app.js"), "utf8"))
    expect((await fetch(`http://127.0.0.1:${adminPort}/assets/nope.js`)).status).toBe(404)

    const docs = await fetch(`${server.baseUrl}/v1/docs`)
    expect(docs.status).toBe(200)
    expect(await docs.text()).toContain('<script src="/v1/docs?asset=scalar.js">')
    const renderer = await fetch(`${server.baseUrl}/v1/docs?asset=scalar.js`)
    expect(renderer.status, "the bundle finds the renderer in node_modules").toBe(200)
    expect((await renderer.arrayBuffer()).byteLength).toBeGreaterThan(1_000_000)
    const openapi = await fetch(`${server.baseUrl}/v1/openapi.json`)
    expect(openapi.status).toBe(200)
    expect(((await openapi.json()) as { openapi?: string }).openapi).toBe("3.1.0")

    const deadline = Date.now() + 20_000
    while (!collector.spans.some((span) => span.name === "POST /v1/leads") && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(collector.spans.map((span) => span.name)).toContain("POST /v1/leads")

    const stopped = await server.stop("SIGTERM")
    expect(stopped.code, stopped.stderr).toBe(0)
  })

  it("serves with the embedded PostgreSQL when DATABASE_URL is unset, and the CLI shares it", async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "lead-intake-bundle-"))
    const env: Env = { LEAD_INTAKE_DATA_DIR: dataDir }
    const port = await freePort()
    const server = await startServer(port, { entry: main, env })
    servers.push(server)
    expect(server.output.stdout).toMatch(/embedded PostgreSQL at 127\.0\.0\.1:\d+/)
    expect(server.output.stdout).toMatch(/"listener":"api".*"code":"dist"/)

    const demo = await run(["demo", "--port", String(port)], { entry: main, env })
    expect(demo.code, demo.stderr).toBe(0)
    const key = /lk_live_[A-Za-z0-9_]+/.exec(demo.stdout)?.[0]
    expect(key, demo.stdout).toBeDefined()
    const created = await postLead(
      server.baseUrl,
      { nombre: "Luis", telefono: "+52 55 8765 4321", propiedad: { codigo: "DEM-0001" } },
      { key: key! }
    )
    expect(created.status, JSON.stringify(created.body)).toBe(201)

    const stopped = await server.stop("SIGTERM")
    expect(stopped.code, stopped.stderr).toBe(0)
    expect(existsSync(path.join(dataDir, "pg", "postmaster.pid"))).toBe(false)
  })
})
