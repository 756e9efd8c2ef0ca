import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  cliFor,
  type Env,
  type Finished,
  freePort,
  freshDatabaseEnv,
  json,
  processTimeout,
  type RunningServer,
  startServer
} from "./Processes.ts"

/** The lines of the server's JSON log on stdout. */
const logLines = (stdout: string) =>
  stdout
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>)

describe("a first run, as a newcomer does it", { timeout: processTimeout }, () => {
  let env: Env
  let cli: (...args: ReadonlyArray<string>) => Promise<Finished>
  let server: RunningServer
  let port: number
  let metricsPort: number
  let adminPort: number
  let healthPort: number

  beforeAll(async () => {
    env = await freshDatabaseEnv()
    cli = cliFor(env)
    port = await freePort()
    metricsPort = await freePort()
    adminPort = await freePort()
    healthPort = await freePort()
    // As `npm start` does (node src/main.ts serve), on the port from PORT.
    server = await startServer(port, {
      env: {
        ...env,
        PORT: String(port),
        METRICS_PORT: String(metricsPort),
        ADMIN_PORT: String(adminPort),
        HEALTH_PORT: String(healthPort)
      },
      args: ["serve"]
    })
  })

  afterAll(async () => {
    await server?.stop("SIGKILL")
  })

  it("the server logs one start line per listener, all in one shape", async () => {
    // The listeners start side by side: the admin one may log after the API answers.
    const deadline = Date.now() + 10_000
    const started = () =>
      ['"listener":"admin"', '"listener":"health"'].every((line) => server.output.stdout.includes(line))
    while (!started() && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const starts = logLines(server.output.stdout).filter((line) => /listen/i.test(String(line.msg)))
    expect(starts.map((line) => [line.msg, line.listener, line.url])).toEqual(
      expect.arrayContaining([
        ["listening", "api", `http://127.0.0.1:${port}`],
        ["listening", "metrics", `http://127.0.0.1:${metricsPort}/metrics`],
        ["listening", "admin", `http://127.0.0.1:${adminPort}`],
        ["listening", "health", `http://127.0.0.1:${healthPort}`]
      ])
    )
    expect(starts).toHaveLength(4)
    for (const line of starts) {
      expect(Object.keys(line).slice(0, 5)).toEqual(["time", "level", "msg", "listener", "url"])
    }
  })

  it("demo --port prints a curl line that really creates a lead there; lead show names the property and assignee", async () => {
    const demo = await cli("demo", "--port", String(port))
    expect(demo.code, demo.stderr).toBe(0)
    expect(demo.stdout).toContain(`on http://127.0.0.1:${port}, send a lead`)
    expect(demo.stdout).toContain(`npx lead-intake serve --port ${port}`)
    expect(demo.stdout).toContain(`Documentation: http://127.0.0.1:${port}/v1/docs`)
    const curl = demo.stdout
      .split("\n")
      .map((line) => line.trim())
      .find((line) => line.startsWith("curl "))
    expect(curl).toContain(`http://127.0.0.1:${port}/v1/leads`)
    const sent = await promisify(execFile)("sh", ["-c", `${curl} -w '\\n%{http_code}'`])
    const [body, status] = sent.stdout.trim().split("\n")
    expect(status).toBe("201")
    const { lead_id: leadId, lead_url: leadUrl } = JSON.parse(body!) as { lead_id: string; lead_url: string }
    // Without DASHBOARD_URL, lead_url is the lead's page in this server's console, which answers there.
    expect(leadUrl).toBe(`http://127.0.0.1:${adminPort}/leads/${leadId}`)
    expect((await fetch(leadUrl)).status).toBe(200)
    const database = new URL(env.DATABASE_URL!)
    expect(demo.stdout).toContain(
      `Written to PostgreSQL at ${database.hostname}:${database.port}${database.pathname}: the server must use the same database`
    )

    const before = json(await cli("lead", "show", "--id", leadId, "--json"))
    const shown = await cli("lead", "show", "--id", leadId)
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).toMatch(new RegExp(`property: +DEM-0001 \\(${before.property_id}\\)`))
    expect(shown.stdout).toMatch(new RegExp(`assignee: +Agente Demo \\(${before.assignee_id}\\)`))
    expect(shown.stdout).toMatch(
      new RegExp(`first_contact for Agente Demo \\(${before.assignee_id}\\), due `)
    )
    expect(before).toMatchObject({
      id: leadId,
      nombre: "Ana López",
      property_codigo: "DEM-0001",
      assignee_name: "Agente Demo"
    })
    expect(Object.keys(before)).toEqual(
      expect.arrayContaining([
        "id",
        "organization_id",
        "origin",
        "nombre",
        "telefono",
        "email",
        "property_id",
        "assignee_id",
        "created_at",
        "notes",
        "tasks",
        "events"
      ])
    )
  })

  it("demo prints PUBLIC_BASE_URL when it is set, and otherwise the running server's URLs whatever its own PORT", async () => {
    const behindProxy = json(
      await cliFor({ ...env, PUBLIC_BASE_URL: "https://leads.example.test/" })("demo", "--json")
    )
    expect(behindProxy.url).toBe("https://leads.example.test")
    expect(behindProxy.curl).toContain("https://leads.example.test/v1/leads")
    const elsewhere = json(await cliFor({ ...env, PORT: "9123", ADMIN_PORT: "9000" })("demo", "--json"))
    expect(elsewhere.curl).toContain(`http://127.0.0.1:${port}/v1/leads`)
    expect(elsewhere.console_url).toBe(`http://127.0.0.1:${adminPort}/`)
    const text = await cliFor({ ...env, PORT: "9123" })("demo")
    expect(text.stdout).toContain(`With the server running (npm start) on http://127.0.0.1:${port}`)
  })
})
