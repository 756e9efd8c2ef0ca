import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { KeyStore } from "../../src/Accounts/KeyStore.ts"
import { generateApiKey } from "../../src/Domain/ApiKey.ts"
import { freshDatabaseUrl, inspector, startPostgresServer } from "../faults/support.ts"
import { seed } from "../support/Client.ts"

type Server = Awaited<ReturnType<typeof startPostgresServer>>

/**
 * `serve` answers a create that writes, or a dry run that passes, ahead of the router
 * (`src/Http/DirectCreate.ts`) and passes everything else on. Two servers over one database, each
 * with an organization of its own: one with the direct create, one with the router alone. The same
 * requests must get the same answers (status, headers, body but for ids), the same log lines and
 * the same request-log rows, and a request the direct create passes on must be counted and read
 * once.
 */
describe("the direct create answers as the router does", () => {
  let direct: Server
  let router: Server
  let db: ReturnType<typeof inspector>
  const revoked = new Map<Server, { readonly key: string; readonly originId: string }>()
  const directLines: Array<string> = []
  const routerLines: Array<string> = []

  beforeAll(async () => {
    const url = await freshDatabaseUrl()
    ;[direct, router] = await Promise.all([
      startPostgresServer(url, 10, { seed: { rateLimit: 1_000 }, logLines: directLines }),
      startPostgresServer(url, 10, { direct: false, seed: { rateLimit: 1_000 }, logLines: routerLines })
    ])
    db = inspector(url)
    // On each server an origin whose key was revoked: the refusal is attributed to that origin.
    for (const server of [direct, router]) {
      const origin = await Effect.runPromise(
        Effect.gen(function* () {
          const fixture = yield* seed({ rateLimit: 1_000 })
          yield* (yield* KeyStore).revoke(fixture.originId)
          return fixture
        }).pipe(Effect.orDie, Effect.provide(Layer.succeedContext(server.services)))
      )
      revoked.set(server, { key: origin.key, originId: origin.originId })
    }
  }, 60_000)

  afterAll(async () => {
    await direct?.close()
    await router?.close()
    await db?.close()
  })

  interface Outgoing {
    readonly body: string
    readonly headers?: Record<string, string>
    readonly key?: string
  }

  const post = (server: Server, outgoing: Outgoing) =>
    fetch(`http://127.0.0.1:${server.port}/v1/leads`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${outgoing.key ?? server.fixture.key}`,
        "content-type": "application/json",
        ...outgoing.headers
      },
      body: outgoing.body
    })

  const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gu
  /** Values that differ between any two requests: ids, the window's position. */
  const varying = new Set([
    "x-request-id",
    "x-ratelimit-remaining",
    "x-ratelimit-reset",
    "ratelimit",
    "retry-after"
  ])
  const transport = new Set(["date", "connection", "keep-alive"])

  /** The answer with what legitimately differs between the two servers masked. */
  const answerOf = async (response: Response) => {
    const text = await response.text()
    const headers = Object.fromEntries(
      [...response.headers]
        .filter(([name]) => !transport.has(name))
        .map(([name, value]) => [name, varying.has(name) ? "<varies>" : value.replace(uuid, "<uuid>")])
    )
    return {
      status: response.status,
      headers,
      body: text.replace(uuid, "<uuid>").replace(/"origen":"[^"]*"/u, '"origen":"<label>"'),
      requestIdMatches: text.includes(`"request_id":"${response.headers.get("x-request-id")}"`)
    }
  }

  /** The request's log line, with what differs between two requests or two organizations masked. */
  const logLineOf = async (lines: ReadonlyArray<string>, requestId: string | null) => {
    for (let attempt = 0; attempt < 100; attempt++) {
      const line = lines
        .map((text) => JSON.parse(text) as Record<string, unknown>)
        .find((record) => record.request_id === requestId)
      if (line !== undefined) {
        const masked = new Set(["time", "request_id", "duration_ms", "origin_id", "key_prefix", "lead_id"])
        return Object.fromEntries(
          Object.entries(line).map(([key, value]) => [key, masked.has(key) ? typeof value : value])
        )
      }
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    return undefined
  }

  /** Well-formed, checksum and all, but no key of any origin. */
  const unknownKey = generateApiKey().key

  const lead = (phone: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      nombre: "Ana Direct",
      telefono: phone,
      mensaje: "hola",
      extras: { campaign: "x" },
      ...extra
    })

  const scenarios: ReadonlyArray<readonly [name: string, outgoing: (server: Server) => Outgoing]> = [
    ["created", () => ({ body: lead("+52 55 1111 0001"), headers: { "idempotency-key": "direct-1" } })],
    ["enriched", () => ({ body: lead("+52 55 1111 0001", { email: "ana@example.com" }) })],
    ["replayed", () => ({ body: lead("+52 55 1111 0001"), headers: { "idempotency-key": "direct-1" } })],
    [
      "idempotency conflict",
      () => ({ body: lead("+52 55 1111 0002"), headers: { "idempotency-key": "direct-1" } })
    ],
    [
      "malformed key",
      () => ({ body: lead("+52 55 1111 0003"), key: "lk_live_AAAAAAAA_unknownunknownunknown" })
    ],
    ["unknown key", () => ({ body: lead("+52 55 1111 0013"), key: unknownKey })],
    ["revoked key", (server) => ({ body: lead("+52 55 1111 0014"), key: revoked.get(server)?.key ?? "" })],
    ["property not found", () => ({ body: lead("+52 55 1111 0004", { propiedad: { codigo: "ZZZ-9999" } }) })],
    ["not JSON", () => ({ body: '{"nombre": "Ana",' })],
    ["a field fails", () => ({ body: lead("+52 55 1111 0005", { nombre: "" }) })],
    ["lone surrogate", () => ({ body: '{"nombre": "\\ud800", "telefono": "+52 55 1111 0006"}' })],
    [
      "not JSON media type",
      () => ({ body: lead("+52 55 1111 0007"), headers: { "content-type": "text/plain" } })
    ],
    ["dry run", () => ({ body: lead("+52 55 1111 0001"), headers: { "x-service-dry-run": "true" } })],
    [
      "dry run of a new phone, any Idempotency-Key",
      () => ({
        body: lead("+52 55 1111 0009"),
        headers: { "x-service-dry-run": "true", "idempotency-key": "" }
      })
    ],
    [
      "dry run, property not found",
      () => ({
        body: lead("+52 55 1111 0010", { propiedad: { codigo: "ZZZ-9999" } }),
        headers: { "x-service-dry-run": "true" }
      })
    ],
    [
      "dry run, unknown key",
      () => ({
        body: lead("+52 55 1111 0011"),
        headers: { "x-service-dry-run": "true" },
        key: "lk_live_AAAAAAAA_unknownunknownunknown"
      })
    ],
    [
      "dry run, not true",
      () => ({ body: lead("+52 55 1111 0012"), headers: { "x-service-dry-run": "yes" } })
    ],
    ["bad Idempotency-Key", () => ({ body: lead("+52 55 1111 0008"), headers: { "idempotency-key": "" } })]
  ]

  const logOf = (server: Server) =>
    db.query<{ status: number; outcome: string; has_lead: boolean; idempotency_key: string | null }>(
      `SELECT status, outcome, lead_id IS NOT NULL AS has_lead, idempotency_key
       FROM request_log WHERE origin_id = $1 ORDER BY at, id`,
      [server.fixture.originId]
    )

  const settledLog = async (server: Server, rows: number) => {
    for (let attempt = 0; attempt < 100; attempt++) {
      const log = await logOf(server)
      if (log.length >= rows) return log
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    return logOf(server)
  }

  it("every scenario gets the same answer and the same request-log row on both", async () => {
    const refusedPairs: Array<readonly [name: string, direct: string | null, router: string | null]> = []
    for (const [name, outgoing] of scenarios) {
      const directResponse = await post(direct, outgoing(direct))
      const routerResponse = await post(router, outgoing(router))
      if (name.endsWith(" key")) {
        refusedPairs.push([
          name,
          directResponse.headers.get("x-request-id"),
          routerResponse.headers.get("x-request-id")
        ])
      }
      const fromDirect = await answerOf(directResponse)
      const fromRouter = await answerOf(routerResponse)
      expect({ name, ...fromDirect }).toEqual({ name, ...fromRouter })
      expect(fromDirect.requestIdMatches, name).toBe(true)
      const directLine = await logLineOf(directLines, directResponse.headers.get("x-request-id"))
      expect(directLine, name).toBeDefined()
      expect({ name, ...directLine }).toEqual({
        name,
        ...(await logLineOf(routerLines, routerResponse.headers.get("x-request-id")))
      })
    }
    // created, enriched, replayed, the two dry runs and the four refused keys were answered
    // directly; the rest by the router.
    expect(direct.answeredDirectly()).toBe(9)
    expect(router.answeredDirectly()).toBe(0)

    const attributed = scenarios.filter(([name]) => !name.endsWith(" key")).length
    const fromDirect = await settledLog(direct, attributed)
    const fromRouter = await settledLog(router, attributed)
    expect(fromDirect).toEqual(fromRouter)
    // The unknown key's row belongs to no origin; the rest, in order.
    expect(fromDirect.map((row) => row.status)).toEqual([
      201, 200, 201, 409, 422, 400, 400, 400, 415, 200, 200, 422, 400, 400
    ])
    // The refused keys' rows (no origin to list them by): the same on both, one per request.
    const rowOf = async (server: Server, requestId: string | null) =>
      (
        await db.query<Record<string, unknown>>(
          `SELECT status, outcome, origin_id IS NOT NULL AS attributed, origin_id = $2 AS revoked_origin,
                  key_prefix IS NOT NULL AS has_prefix, lead_id, idempotency_key
           FROM request_log WHERE request_id = $1`,
          [requestId, revoked.get(server)?.originId]
        )
      )[0]
    for (const [name, fromDirectId, fromRouterId] of refusedPairs) {
      const row = await rowOf(direct, fromDirectId)
      expect({ name, ...row }).toEqual({ name, ...(await rowOf(router, fromRouterId)) })
      expect(row?.status, name).toBe(401)
      if (name === "revoked key") expect(row?.revoked_origin, name).toBe(true)
    }
    // A request the direct create passed on after its round trip took its unit there, not twice.
    const units = (server: Server) =>
      db.query<{ n: number }>(
        "SELECT COALESCE(sum(count), 0)::int AS n FROM rate_limit_windows WHERE origin_id = $1",
        [server.fixture.originId]
      )
    expect(await units(direct)).toEqual(await units(router))
  })

  it("a key past its limit is refused by the router and never counted past it", async () => {
    const limited = await Effect.runPromise(
      seed({ rateLimit: 2 }).pipe(Effect.provide(Layer.succeedContext(direct.services)))
    )
    const answers: Array<number> = []
    for (let index = 0; index < 6; index++) {
      const response = await post(direct, { body: lead(`+52 55 2222 000${index}`), key: limited.key })
      answers.push(response.status)
      if (response.status === 429) {
        expect(response.headers.get("retry-after")).toMatch(/^[0-9]+$/u)
        expect(response.headers.get("x-ratelimit-remaining")).toBe("0")
        expect(((await response.json()) as { error: { code: string } }).error.code).toBe("rate_limited")
      } else await response.text()
    }
    // Two writes a minute; should the minute turn during the six, two more.
    const written = answers.filter((status) => status === 201).length
    expect(written).toBeGreaterThanOrEqual(2)
    expect(written).toBeLessThanOrEqual(4)
    expect(answers.filter((status) => status === 429)).toHaveLength(6 - written)
    const windows = await db.query<{ count: number }>(
      "SELECT count FROM rate_limit_windows WHERE origin_id = $1",
      [limited.originId]
    )
    expect(windows.every((window) => window.count <= 2)).toBe(true)
  })

  it("24 concurrent creates of one new phone: one lead, one 201, 23 enrichments", async () => {
    const before = direct.answeredDirectly()
    const responses = await Promise.all(
      Array.from({ length: 24 }, (_, index) =>
        post(direct, { body: lead("+52 55 3333 0001", { mensaje: `race ${index}` }) })
      )
    )
    const bodies = (await Promise.all(responses.map((response) => response.json()))) as Array<{
      lead_id: string
    }>
    expect(responses.filter((response) => response.status === 201)).toHaveLength(1)
    expect(responses.filter((response) => response.status === 200)).toHaveLength(23)
    expect(new Set(bodies.map((body) => body.lead_id)).size).toBe(1)
    expect(direct.answeredDirectly() - before).toBe(24)
    const [leads] = await db.query<{ n: number; notes: number }>(
      `SELECT count(*)::int AS n,
              (SELECT count(*)::int FROM lead_notes n WHERE n.lead_id = min(l.id::text)::uuid) AS notes
       FROM leads l WHERE organization_id = $1 AND telefono IS NOT NULL AND phone_key LIKE '%33330001'`,
      [direct.fixture.organizationId]
    )
    expect(leads).toEqual({ n: 1, notes: 24 })
  })
})
