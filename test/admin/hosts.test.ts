import { ConfigProvider, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { defaultHostNames, isAllowedHost, parseHostList } from "../../src/Domain/HostNames.ts"
import { appConfig } from "../../src/Platform/Config.ts"
import { type Harness, makeHarness, send, signIn } from "./support.ts"

const configFrom = (env: Record<string, string>) =>
  Effect.runPromise(appConfig.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env })))))

describe("ADMIN_HOSTS", () => {
  it("defaults to the bound ADMIN_HOST and localhost, with or without a port", async () => {
    const { adminHosts } = await configFrom({})
    for (const host of ["127.0.0.1", "127.0.0.1:8081", "localhost", "LOCALHOST:8081", "localhost:3000"]) {
      expect(isAllowedHost(host, adminHosts), host).toBe(true)
    }
    for (const host of [
      "attacker.example",
      "attacker.example:8081",
      "127.0.0.2:8081",
      "localhost.attacker.example"
    ]) {
      expect(isAllowedHost(host, adminHosts), host).toBe(false)
    }
    const v6 = await configFrom({ ADMIN_HOST: "::1" })
    expect(isAllowedHost("[::1]:8081", v6.adminHosts)).toBe(true)
    expect(isAllowedHost("127.0.0.1:8081", v6.adminHosts)).toBe(false)
  })

  it("takes a comma-separated list; an entry with a port allows that port only; a malformed list is refused", async () => {
    const { adminHosts } = await configFrom({
      ADMIN_HOSTS: "console.example.com, Admin.Example.com:8443,[::1]"
    })
    expect(isAllowedHost("console.example.com", adminHosts)).toBe(true)
    expect(isAllowedHost("console.example.com:443", adminHosts)).toBe(true)
    expect(isAllowedHost("admin.example.com:8443", adminHosts)).toBe(true)
    expect(isAllowedHost("admin.example.com", adminHosts)).toBe(false)
    expect(isAllowedHost("admin.example.com:443", adminHosts)).toBe(false)
    expect(isAllowedHost("[::1]:8081", adminHosts)).toBe(true)
    expect(isAllowedHost("localhost:8081", adminHosts), "the list replaces the default").toBe(false)
    for (const bad of [
      " , ",
      "http://console.example.com",
      "a b",
      "host:99999",
      "host:x",
      "under_score.example"
    ]) {
      await expect(configFrom({ ADMIN_HOSTS: bad }), bad).rejects.toThrow()
    }
  })

  it("refuses a missing or malformed Host header", () => {
    const allowed = defaultHostNames("127.0.0.1")
    for (const header of [
      undefined,
      "",
      "127.0.0.1:8081, evil.example",
      "127.0.0.1:",
      "user@127.0.0.1",
      "127.0.0.1/x"
    ]) {
      expect(isAllowedHost(header, allowed), String(header)).toBe(false)
    }
    expect(parseHostList("a.example,b.example:1")).toEqual([
      { name: "a.example", port: undefined },
      { name: "b.example", port: 1 }
    ])
  })
})

describe("the console answers only its host names, before anything else runs", { timeout: 120_000 }, () => {
  let harness: Harness

  beforeAll(async () => {
    harness = await makeHarness()
  }, 120_000)
  afterAll(() => harness?.close())

  const count = (table: "audit_log" | "login_throttle" | "operator_sessions") =>
    harness.run(
      Effect.flatMap(
        Effect.service(SqlClient.SqlClient),
        (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(table)}`
      ).pipe(
        Effect.map((rows) => rows[0]!.n),
        Effect.orDie
      )
    )

  const expectMisdirected = (answer: Awaited<ReturnType<typeof send>>) => {
    expect(answer.status, answer.text).toBe(421)
    expect(answer.body.error.code).toBe("misdirected_request")
    expect(answer.body.request_id).toBe(answer.headers.get("x-request-id"))
    expect(answer.headers.get("set-cookie")).toBeNull()
    expect(answer.headers.get("cache-control")).toBe("no-store")
  }

  it("a page rebound by DNS (its own name, this address and port) gets 421 on pages, assets, sign-in and the API", async () => {
    const signed = await signIn(harness, harness.a.admin)
    const before = await Promise.all([
      count("audit_log"),
      count("login_throttle"),
      count("operator_sessions")
    ])
    const rebound = { host: "rebind.attacker.example:8081" }
    const sameOrigin = { ...rebound, origin: "http://rebind.attacker.example:8081" }
    expectMisdirected(await send(harness.admin, "GET", "/login", { headers: rebound }))
    expectMisdirected(await send(harness.admin, "GET", "/assets/app.js", { headers: rebound }))
    expectMisdirected(await send(harness.admin, "GET", "/api/nowhere", { headers: rebound }))
    expectMisdirected(
      await send(harness.admin, "POST", "/api/session", {
        body: { email: harness.a.admin.email, password: "wrong" },
        headers: sameOrigin
      })
    )
    expectMisdirected(
      await send(harness.admin, "POST", "/api/session", {
        body: { email: harness.a.admin.email, password: harness.a.admin.password },
        headers: sameOrigin
      })
    )
    expectMisdirected(await signed.call("GET", "/api/origins", { headers: rebound }))
    expectMisdirected(
      await signed.call("POST", "/api/origins", { body: { label: "rebound" }, headers: sameOrigin })
    )
    expectMisdirected(
      await send(harness.admin, "GET", "/api/session", { headers: { host: "127.0.0.2:8081" } })
    )
    expect(
      await Promise.all([count("audit_log"), count("login_throttle"), count("operator_sessions")])
    ).toEqual(before)
    expect((await signed.call("GET", "/api/origins")).status).toBe(200)
  })

  it("serves localhost and the bound address, with or without the port", async () => {
    for (const host of ["127.0.0.1:8081", "127.0.0.1", "localhost:8081", "localhost"]) {
      expect((await send(harness.admin, "GET", "/login", { headers: { host } })).status, host).toBe(200)
    }
    const signed = await signIn(harness, harness.a.viewer)
    expect((await signed.call("GET", "/api/session", { headers: { host: "localhost:8081" } })).status).toBe(
      200
    )
  })
})
