import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  cliFor,
  cliInProcess,
  type Env,
  expectUserError,
  type Finished,
  freePort,
  freshDatabaseEnv,
  json,
  processTimeout,
  type RunningServer,
  startServer
} from "../e2e/Processes.ts"

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

interface Browser {
  readonly status: number
  readonly cookie: string | undefined
  // biome-ignore lint/suspicious/noExplicitAny: tests inspect response bodies field by field
  readonly body: any
}

const signIn = async (adminUrl: string, email: string, password: string): Promise<Browser> => {
  const response = await fetch(`${adminUrl}/api/session`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: adminUrl },
    body: JSON.stringify({ email, password })
  })
  const cookie = /lead_intake_session=([^;]*)/.exec(response.headers.get("set-cookie") ?? "")?.[1]
  return { status: response.status, cookie, body: await response.json() }
}

const call = async (adminUrl: string, browser: Browser, method: string, path: string, body?: unknown) => {
  const response = await fetch(`${adminUrl}${path}`, {
    method,
    headers: {
      cookie: `lead_intake_session=${browser.cookie}`,
      "x-csrf-token": browser.body.csrf_token ?? "",
      origin: adminUrl,
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, body: text === "" ? undefined : JSON.parse(text) }
}

describe("operator commands (in-process) and the console listener (a real `serve` process)", {
  timeout: processTimeout
}, () => {
  let env: Env
  let cli: (...args: ReadonlyArray<string>) => Promise<Finished>
  let server: RunningServer
  let adminUrl: string
  let healthUrl: string
  let organizationId: string
  const secrets: Array<string> = []

  beforeAll(async () => {
    env = await freshDatabaseEnv()
    cli = cliInProcess(env)
    organizationId = json(await cli("org", "create", "--name", "Consola", "--json")).id
    const port = await freePort()
    const adminPort = await freePort()
    adminUrl = `http://127.0.0.1:${adminPort}`
    healthUrl = `http://127.0.0.1:${await freePort()}`
    server = await startServer(port, {
      env: {
        ...env,
        ADMIN_PORT: String(adminPort),
        HEALTH_PORT: new URL(healthUrl).port,
        LOG_LEVEL: "Debug"
      }
    })
    // The two listeners start side by side: the public one answering says nothing about the console's.
    const deadline = Date.now() + 20_000
    while (
      !(await fetch(`${adminUrl}/login`).then(
        (r) => r.ok,
        () => false
      ))
    ) {
      if (Date.now() > deadline) throw new Error(`the console did not answer:\n${server.output.stderr}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }, processTimeout)

  afterAll(async () => {
    const finished = await server?.stop()
    const output = `${finished?.stdout ?? ""}${finished?.stderr ?? ""}`
    for (const secret of secrets)
      expect(output, "no key, password or session token in the logs").not.toContain(secret)
  })

  it("the health listener answers /healthz and /readyz; neither the public nor the console listener serves them", async () => {
    const live = await fetch(`${healthUrl}/healthz`)
    expect(live.status).toBe(200)
    expect(await live.json()).toEqual({ status: "ok" })
    expect(live.headers.get("cache-control")).toBe("no-store")
    const ready = await fetch(`${healthUrl}/readyz`)
    expect(ready.status).toBe(200)
    expect(await ready.json()).toMatchObject({
      status: "ready",
      database: "ok",
      migrations: { pending: [] }
    })
    for (const base of [server.baseUrl, adminUrl]) {
      for (const probe of ["/healthz", "/readyz"]) expect((await fetch(`${base}${probe}`)).status).toBe(404)
    }
    expect((await fetch(`${healthUrl}/v1`)).status, "the health listener serves the probes only").toBe(404)
    expect((await fetch(`${healthUrl}/login`)).status).toBe(404)
  })

  it("serve starts the console listener and prints one line for each listener", async () => {
    const page = await fetch(`${adminUrl}/login`)
    expect(page.status).toBe(200)
    expect(page.headers.get("content-security-policy")).toContain("nonce-")
    expect(server.output.stderr + server.output.stdout).toContain(
      `"msg":"listening","listener":"admin","url":"${adminUrl}"`
    )
    expect((await fetch(`${server.baseUrl}/api/origins`)).status, "the public listener serves /v1 only").toBe(
      404
    )
    expect((await fetch(`${adminUrl}/v1`)).status, "the console serves no /v1").toBe(404)
    const crossSite = await fetch(`${adminUrl}/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: "http://localhost:9999" },
      body: JSON.stringify({ email: "a@example.com", password: "x" })
    })
    expect(crossSite.status).toBe(403)
  })

  it("operator add prints id, email and a generated password that signs in once added", async () => {
    const added = json(
      await cli("operator", "add", "--org", organizationId, "--email", "Ana@Example.com", "--json")
    )
    expect(Object.keys(added).sort()).toEqual(["email", "id", "password"])
    expect(added).toEqual({
      id: expect.stringMatching(uuid),
      email: "ana@example.com",
      password: expect.any(String)
    })
    expect(added.password.length).toBeGreaterThanOrEqual(20)
    secrets.push(added.password)
    const browser = await signIn(adminUrl, "ana@example.com", added.password)
    expect(browser.status).toBe(200)
    expect(browser.body.operator).toEqual({
      id: added.id,
      email: "ana@example.com",
      role: "admin",
      organization_id: organizationId,
      language: null
    })
    secrets.push(browser.cookie!)
    const origin = await call(adminUrl, browser, "POST", "/api/origins", { label: "sitio" })
    expect(origin.status).toBe(201)
    secrets.push(origin.body.key, origin.body.key.slice(17))
    const audit = await call(adminUrl, browser, "GET", "/api/audit")
    expect(audit.body.items[0]).toMatchObject({ action: "origin.create", operator_email: "ana@example.com" })
    expect(audit.body.items[0].ip).toMatch(/127\.0\.0\.1/)

    const viewer = json(
      await cli(
        "operator",
        "add",
        "--org",
        organizationId,
        "--email",
        "vera@example.com",
        "--role",
        "viewer",
        "--json"
      )
    )
    secrets.push(viewer.password)
    const asViewer = await signIn(adminUrl, "vera@example.com", viewer.password)
    expect(asViewer.body.operator.role).toBe("viewer")
    expect((await call(adminUrl, asViewer, "POST", "/api/origins", { label: "nope" })).status).toBe(403)

    const platform = json(await cli("operator", "add", "--all-orgs", "--email", "root@example.com", "--json"))
    secrets.push(platform.password)
    const asRoot = await signIn(adminUrl, "root@example.com", platform.password)
    expect(asRoot.body.operator.organization_id).toBeNull()

    const text = await cli("operator", "add", "--org", organizationId, "--email", "texto@example.com")
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(/Password \(shown this once\): \S{20,}/)
  })

  it("refuses bad operator commands with one line and exit 1", async () => {
    expectUserError(
      await cli("operator", "add", "--org", organizationId, "--email", "ana@example.com"),
      /already exists/
    )
    expectUserError(await cli("operator", "add", "--email", "x@example.com"), /one of --org or --all-orgs/)
    expectUserError(
      await cli("operator", "add", "--org", organizationId, "--all-orgs", "--email", "x@example.com"),
      /exclude each other/
    )
    expectUserError(
      await cli("operator", "add", "--org", crypto.randomUUID(), "--email", "x@example.com"),
      /unknown organization/
    )
    expectUserError(await cli("operator", "add", "--org", "nope", "--email", "x@example.com"), /UUID/)
    expectUserError(
      await cli("operator", "add", "--org", organizationId, "--email", "not-an-email"),
      /e-mail/
    )
    expectUserError(
      await cli("operator", "add", "--org", organizationId, "--email", "y@example.com", "--role", "owner"),
      /role/
    )
    expectUserError(
      await cli("operator", "reset-password", "--email", "nobody@example.com"),
      /unknown operator/
    )
    expectUserError(await cli("operator", "remove", "--email", "nobody@example.com"), /unknown operator/)
  })

  it("reset-password prints a new password and signs out the old sessions; remove ends access at once", async () => {
    const added = json(
      await cli("operator", "add", "--org", organizationId, "--email", "luis@example.com", "--json")
    )
    secrets.push(added.password)
    const before = await signIn(adminUrl, "luis@example.com", added.password)
    expect(before.status).toBe(200)
    const reset = json(await cli("operator", "reset-password", "--email", "LUIS@example.com", "--json"))
    expect(reset).toEqual({ id: added.id, email: "luis@example.com", password: expect.any(String) })
    secrets.push(reset.password)
    expect(reset.password).not.toBe(added.password)
    expect((await call(adminUrl, before, "GET", "/api/session")).status).toBe(401)
    expect((await signIn(adminUrl, "luis@example.com", added.password)).status).toBe(401)
    const after = await signIn(adminUrl, "luis@example.com", reset.password)
    expect(after.status).toBe(200)
    const removed = json(await cli("operator", "remove", "--email", "luis@example.com", "--json"))
    expect(removed).toEqual({ id: added.id, email: "luis@example.com" })
    expect((await call(adminUrl, after, "GET", "/api/origins")).status).toBe(401)
    expect((await signIn(adminUrl, "luis@example.com", reset.password)).status).toBe(401)
  })

  it("demo prints the console URL, an operator e-mail and password that sign in to the demo organization", async () => {
    // Run with another ADMIN_PORT than the server's: the URL is the one the running server announced.
    const demoCli = cliInProcess({ ...env, ADMIN_PORT: "8081" })
    const demo = json(await demoCli("demo", "--json"))
    expect(demo.console_url).toBe(`${adminUrl}/`)
    secrets.push(demo.operator_password, demo.key)
    const browser = await signIn(adminUrl, demo.operator_email, demo.operator_password)
    expect(browser.status).toBe(200)
    expect(browser.body.operator.organization_id).toBe(demo.organization_id)
    const origins = await call(adminUrl, browser, "GET", "/api/origins")
    expect(origins.body.items.map((o: { id: string }) => o.id)).toEqual([demo.origin_id])
    const text = await demoCli("demo")
    expect(text.stdout).toContain(`console at ${adminUrl}/`)
    expect(text.stdout).toMatch(/e-mail: demo-[0-9a-f]{8}@example\.com/)
  })

  it("ADMIN_PORT=off serves no console but the probes still answer on HEALTH_PORT; bad ports are refused", async () => {
    const port = await freePort()
    const healthPort = await freePort()
    const off = await startServer(port, {
      env: { ...env, ADMIN_PORT: "off", HEALTH_PORT: String(healthPort) }
    })
    const probes = `http://127.0.0.1:${healthPort}`
    expect((await fetch(`${probes}/healthz`)).status).toBe(200)
    expect((await fetch(`${probes}/readyz`)).status).toBe(200)
    const deadline = Date.now() + 10_000
    while (
      !`${off.output.stdout}${off.output.stderr}`.includes("console disabled") &&
      Date.now() < deadline
    ) {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const finished = await off.stop()
    expect(finished.stderr + finished.stdout).not.toContain('"listener":"admin"')
    expect(finished.stderr + finished.stdout).toContain("console disabled")
    const bad = await cliFor({ ...env, ADMIN_PORT: "80808" })("serve", "--port", String(port))
    expect(bad.code).toBe(1)
    expect(bad.stderr).toMatch(/ADMIN_PORT/)
    const badHealth = await cliFor({ ...env, HEALTH_PORT: "none" })("serve", "--port", String(port))
    expect(badHealth.code).toBe(1)
    expect(badHealth.stderr).toMatch(/^lead-intake: invalid configuration: HEALTH_PORT: /)
    const badProxies = await cliFor({ ...env, TRUSTED_PROXIES: "10.0.0.0/8, proxy.internal" })(
      "serve",
      "--port",
      String(port)
    )
    expect(badProxies.code).toBe(1)
    expect(badProxies.stderr).toMatch(/^lead-intake: invalid configuration: TRUSTED_PROXIES: /)
    expect(badProxies.stderr).toContain("proxy.internal")
  })
})
