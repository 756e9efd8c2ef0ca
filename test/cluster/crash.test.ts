import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { requestFingerprint } from "../../src/Domain/Fingerprint.ts"
import { createDatabase, databaseUrl } from "../support/Database.ts"
import { cli, post, type RunningServer, startServer } from "./support.ts"

describe("a server killed with SIGKILL mid-traffic", () => {
  let url: string
  let key: string
  let organization: string
  let server: RunningServer | undefined

  beforeAll(async () => {
    url = databaseUrl(await Effect.runPromise(createDatabase("crash", { durable: true })))
    await cli(url, ["migrate"])
    organization = (await cli(url, ["org", "create", "--name", "Crash"])).id
    key = (
      await cli(url, ["origin", "create", "--org", organization, "--label", "crash", "--rate-limit", "5000"])
    ).key
  }, 60_000)

  afterAll(async () => {
    await server?.stop("SIGKILL")
  })

  it("leaves every lead exactly once, and every retry replays or creates", async () => {
    const requests = Array.from({ length: 60 }, (_, i) => ({
      idempotencyKey: `crash-${i}`,
      body: { nombre: `Crash ${i}`, telefono: `+52 81 4000 ${String(1000 + i)}`, mensaje: `intento ${i}` }
    }))
    server = await startServer(url)
    const target = server.url
    const inFlight = requests.map((request, i) =>
      new Promise((resolve) => setTimeout(resolve, i * 3)).then(() =>
        post(target, key, request.body, { "idempotency-key": request.idempotencyKey }).catch(() => undefined)
      )
    )
    await new Promise((resolve) => setTimeout(resolve, 60))
    await server.stop("SIGKILL")
    const acknowledged = await Promise.all(inFlight)

    server = await startServer(url)
    const retryUntilSettled = async (request: (typeof requests)[number]) => {
      const deadline = Date.now() + 45_000
      while (true) {
        const response = await post(server!.url, key, request.body, {
          "idempotency-key": request.idempotencyKey
        })
        if (response.status !== 409 || Date.now() > deadline) return response
        await new Promise((resolve) => setTimeout(resolve, 1000))
      }
    }
    const retries = await Promise.all(requests.map(retryUntilSettled))

    for (const [i, retry] of retries.entries()) {
      expect(retry.status).toBe(201)
      const original = acknowledged[i]
      if (original !== undefined && original.status === 201) {
        expect(retry.body.replay).toBe(true)
        expect(retry.body.lead_id).toBe(original.body.lead_id)
      }
    }
    const leads = await cli(url, ["lead", "list", "--org", organization, "--limit", "500"])
    expect(leads).toHaveLength(requests.length)
    expect(new Set(leads.map((lead: { telefono: string }) => lead.telefono)).size).toBe(requests.length)
    expect(new Set(retries.map((retry) => retry.body.lead_id)).size).toBe(requests.length)
  }, 90_000)
})

describe("a reservation left by a worker that died", () => {
  it("answers 409 in progress until its lease ends, then the retry creates the lead once", async () => {
    const url = databaseUrl(await Effect.runPromise(createDatabase("lease", { durable: true })))
    await cli(url, ["migrate"])
    const organization = (await cli(url, ["org", "create", "--name", "Lease"])).id
    const origin = await cli(url, ["origin", "create", "--org", organization, "--label", "lease"])
    const body = { nombre: "Lease", telefono: "+52 33 1234 0000" }
    const database = <A>(query: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
      Effect.runPromise(
        Effect.flatMap(SqlClient.SqlClient, query).pipe(
          Effect.provide(PgClient.layer({ url: Redacted.make(url) })),
          Effect.orDie
        )
      )
    // The reservation is left once the server is up: its lease must not run out while it starts.
    const server = await startServer(url)
    const leaseEnded = () =>
      database(
        (sql) => sql<{ ended: boolean }>`
          SELECT lease_expires_at < now() AS ended FROM idempotency_keys WHERE key = 'dead-worker'`
      ).then(([row]) => row?.ended === true)
    try {
      await database(
        (sql) => sql`
          INSERT INTO idempotency_keys (organization_id, origin_id, key, fingerprint, state, lease_token,
                                        lease_expires_at)
          VALUES (${organization}, ${origin.id}, 'dead-worker', ${requestFingerprint(body)}, 'in_progress', gen_random_uuid(),
                  now() + interval '5 seconds')`
      )
      const blocked = await post(server.url, origin.key, body, { "idempotency-key": "dead-worker" })
      expect(await leaseEnded(), "the lease still runs").toBe(false)
      expect(blocked.status).toBe(409)
      expect(blocked.body.error?.code).toBe("idempotency_in_progress")
      expect(blocked.headers.get("retry-after")).toBe("1")
      while (!(await leaseEnded())) await new Promise((resolve) => setTimeout(resolve, 100))
      const created = await post(server.url, origin.key, body, { "idempotency-key": "dead-worker" })
      expect(created.status).toBe(201)
      expect(created.body.replay).toBeUndefined()
      const replayed = await post(server.url, origin.key, body, { "idempotency-key": "dead-worker" })
      expect(replayed.body).toMatchObject({ lead_id: created.body.lead_id, replay: true })
    } finally {
      await server.stop()
    }
  }, 60_000)
})
