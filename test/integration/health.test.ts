import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Logger, Redacted } from "effect"
import { HttpRouter } from "effect/http"
import { Reactivity } from "effect/reactivity"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { migrations } from "../../migrations/index.ts"
import { layerHealthRoutes } from "../../src/Platform/Health.ts"
import { Listeners, logListening } from "../../src/Platform/Listening.ts"
import * as Migrations from "../../src/Platform/Migrations.ts"
import { freePort } from "../e2e/Processes.ts"
import { type DedicatedCluster, startDedicatedCluster, withSql } from "../faults/support.ts"
import { createDatabase, databaseUrl } from "../support/Database.ts"

const migrationNames = Object.keys(migrations)

const clientLayer = (url: string) =>
  PgClient.layer({ url: Redacted.make(url), maxConnections: 2, connectTimeout: "1 second" }).pipe(
    Layer.provide(Reactivity.layer),
    Layer.orDie
  )

/** The health routes alone, in-process, on a pool to `url` (with `listeners`: the process's registry). */
const probe = (url: string, listeners: Layer.Layer<Listeners> | Layer.Layer<never> = Layer.empty) => {
  const { handler, dispose } = HttpRouter.toWebHandler(
    layerHealthRoutes.pipe(Layer.provide(clientLayer(url)), Layer.provide(listeners))
  )
  const get = async (path: string) => {
    const started = performance.now()
    const response = await handler(new Request(`http://ops.test${path}`))
    // biome-ignore lint/suspicious/noExplicitAny: the probe bodies are inspected field by field
    const body: any = await response.json()
    return { status: response.status, body, headers: response.headers, elapsed: performance.now() - started }
  }
  return { get, dispose }
}

const freshDatabase = async (migrated: boolean) => {
  const name = await Effect.runPromise(createDatabase("health"))
  const url = databaseUrl(name)
  if (migrated)
    await withSql(url, (sql) => Effect.provideService(Migrations.migrate, SqlClient.SqlClient, sql))
  return url
}

describe("GET /healthz and GET /readyz", () => {
  it("healthz answers 200 without touching the database, even when there is none", async () => {
    const { get, dispose } = probe("postgres://nobody:nothing@127.0.0.1:1/none")
    const response = await get("/healthz")
    expect(response.status).toBe(200)
    expect(response.body).toEqual({ status: "ok" })
    expect(response.headers.get("cache-control")).toBe("no-store")
    await dispose()
  })

  it("readyz is 200 on a migrated database", async () => {
    const { get, dispose } = probe(await freshDatabase(true))
    const response = await get("/readyz")
    expect(response.body).toEqual({
      status: "ready",
      database: "ok",
      migrations: { applied: migrationNames.length, pending: [] },
      listeners: {}
    })
    expect(response.status).toBe(200)
    await dispose()
  })

  it("readyz is 503 until every expected listener has announced itself and accepts connections", async () => {
    const url = await freshDatabase(true)
    const registry = await Effect.runPromise(Effect.scoped(Layer.build(Listeners.layer(["api", "admin"]))))
    const { get, dispose } = probe(url, Layer.succeedContext(registry))
    const listener = createServer()
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve))
    const { port } = listener.address() as AddressInfo
    const announce = (name: string, at: number) =>
      Effect.runPromise(
        Effect.provideContext(logListening(name, `http://127.0.0.1:${at}`), registry).pipe(
          Effect.provide(Logger.layer([]))
        )
      )

    expect((await get("/readyz")).body).toMatchObject({
      status: "not_ready",
      database: "ok",
      listeners: { api: "starting", admin: "starting" }
    })
    await announce("api", port)
    const oneUp = await get("/readyz")
    expect(oneUp.status).toBe(503)
    expect(oneUp.body.listeners).toEqual({ api: "up", admin: "starting" })
    const closed = await freePort()
    await announce("admin", closed)
    const down = await get("/readyz")
    expect(down.status).toBe(503)
    expect(down.body.listeners).toEqual({ api: "up", admin: "down" })
    await announce("admin", port)
    const ready = await get("/readyz")
    expect(ready.status).toBe(200)
    expect(ready.body).toMatchObject({ status: "ready", listeners: { api: "up", admin: "up" } })
    listener.close()
    await dispose()
  })

  it("readyz is 503 before migrations ran, and names the pending ones", async () => {
    const { get, dispose } = probe(await freshDatabase(false))
    const response = await get("/readyz")
    expect(response.status).toBe(503)
    expect(response.body).toEqual({
      status: "not_ready",
      database: "ok",
      migrations: { applied: 0, pending: migrationNames },
      listeners: {}
    })
    await dispose()
  })

  it("readyz is 503 when the newest migration is missing", async () => {
    const url = await freshDatabase(true)
    const newest = migrationNames.at(-1)!
    await withSql(url, (sql) =>
      sql.unsafe(`DELETE FROM schema_migrations WHERE migration_id = ${Number(newest.slice(0, 4))}`)
    )
    const { get, dispose } = probe(url)
    const response = await get("/readyz")
    expect(response.status).toBe(503)
    expect(response.body.migrations.pending).toEqual([newest])
    await dispose()
  })

  it("readyz is 503 when nothing listens at the database's address", async () => {
    const { get, dispose } = probe("postgres://nobody:nothing@127.0.0.1:1/none")
    const response = await get("/readyz")
    expect(response.status).toBe(503)
    expect(response.body).toMatchObject({ status: "not_ready", database: "unreachable" })
    expect(response.elapsed).toBeLessThan(3_000)
    await dispose()
  })

  describe("with the database stopped and started again", () => {
    let cluster: DedicatedCluster

    beforeAll(async () => {
      cluster = await startDedicatedCluster()
    }, 90_000)

    afterAll(async () => {
      await cluster?.release()
    }, 60_000)

    it("goes 200 → 503 (within the timeout) → 200", { timeout: 90_000 }, async () => {
      await cluster.createDatabase("health")
      const url = cluster.url("health")
      await withSql(url, (sql) => Effect.provideService(Migrations.migrate, SqlClient.SqlClient, sql))
      const { get, dispose } = probe(url)
      expect((await get("/readyz")).status).toBe(200)
      await cluster.stop("immediate")
      const down = await get("/readyz")
      expect(down.status).toBe(503)
      expect(down.body.database).toBe("unreachable")
      expect(down.elapsed).toBeLessThan(3_000)
      expect((await get("/healthz")).status).toBe(200)
      await cluster.start()
      const deadline = Date.now() + 30_000
      let status = 0
      while (status !== 200 && Date.now() < deadline) {
        status = (await get("/readyz")).status
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 250))
      }
      expect(status).toBe(200)
      await dispose()
    })
  })
})
