import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createDatabase, databaseUrl } from "../support/Database.ts"
import { awaitRoomInWindow, cli, post, type RunningServer, startServer } from "./support.ts"

describe("two instances on one PostgreSQL", () => {
  let url: string
  let organization: string
  const servers: Array<RunningServer> = []

  beforeAll(async () => {
    url = databaseUrl(await Effect.runPromise(createDatabase("cluster")))
    await cli(url, ["migrate"])
    organization = (await cli(url, ["org", "create", "--name", "Two Instances"])).id
    servers.push(await startServer(url), await startServer(url))
  }, 60_000)

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()))
  })

  it("shares one rate-limit window: 61 requests across both give exactly one 429", async () => {
    const origin = await cli(url, ["origin", "create", "--org", organization, "--label", "limit-shared"])
    await awaitRoomInWindow(20)
    const responses = await Promise.all(
      Array.from({ length: 61 }, (_, i) =>
        post(servers[i % 2]!.url, origin.key, { nombre: `Lead ${i}` }, { "x-service-dry-run": "true" })
      )
    )
    const statuses = responses.map((response) => response.status)
    expect(statuses.filter((status) => status === 429)).toHaveLength(1)
    expect(statuses.filter((status) => status === 200)).toHaveLength(60)
    const refused = responses.find((response) => response.status === 429)!
    expect(refused.body.error?.code).toBe("rate_limited")
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0")
  })

  it("sends the same Idempotency-Key to both at once and creates one lead per key", async () => {
    const origin = await cli(url, [
      "origin",
      "create",
      "--org",
      organization,
      "--label",
      "idem-shared",
      "--rate-limit",
      "1000"
    ])
    const keys = Array.from({ length: 8 }, (_, i) => `order-${i}`)
    const body = (i: number) => ({ nombre: `Cliente ${i}`, telefono: `+52 55 3000 ${String(1000 + i)}` })
    const first = await Promise.all(
      keys.flatMap((key, i) =>
        servers.map((server) => post(server.url, origin.key, body(i), { "idempotency-key": key }))
      )
    )
    for (const response of first) {
      expect([200, 201, 409]).toContain(response.status)
      if (response.status === 409) expect(response.body.error?.code).toBe("idempotency_in_progress")
    }
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const settled = await Promise.all(
      keys.map((key, i) => post(servers[i % 2]!.url, origin.key, body(i), { "idempotency-key": key }))
    )
    for (const [i, response] of settled.entries()) {
      expect(response.status).toBe(201)
      expect(response.body.replay).toBe(true)
      const originals = first.slice(i * 2, i * 2 + 2).filter((r) => r.status === 201)
      expect(originals.length).toBeGreaterThanOrEqual(1)
      for (const original of originals) expect(original.body.lead_id).toBe(response.body.lead_id)
    }
    const leads = await cli(url, ["lead", "list", "--org", organization, "--limit", "100"])
    const created = leads.filter((lead: { nombre: string }) => lead.nombre.startsWith("Cliente "))
    expect(created).toHaveLength(keys.length)
  })

  it("refuses a key revoked through the CLI on both instances at their next request", async () => {
    const origin = await cli(url, ["origin", "create", "--org", organization, "--label", "revoked-shared"])
    for (const server of servers) {
      expect(
        (await post(server.url, origin.key, { nombre: "Before" }, { "x-service-dry-run": "true" })).status
      ).toBe(200)
    }
    await cli(url, ["key", "revoke", "--origin", origin.id])
    for (const server of servers) {
      const response = await post(
        server.url,
        origin.key,
        { nombre: "After" },
        { "x-service-dry-run": "true" }
      )
      expect(response.status).toBe(401)
      expect(response.body.error?.code).toBe("invalid_key")
    }
  })
})
