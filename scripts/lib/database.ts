import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, ManagedRuntime, Option, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import type { SqlClient } from "effect/sql"
import { KeyStore } from "../../src/Accounts/KeyStore.ts"
import { Organizations } from "../../src/Accounts/Organizations.ts"
import { CaptureRules } from "../../src/Intake/CaptureRules.ts"
import { PropertyCatalog } from "../../src/Intake/PropertyCatalog.ts"
import { layerServices } from "../../src/Intake/Services.ts"
import { AppConfig } from "../../src/Platform/Config.ts"
import { acquireEmbeddedCluster } from "../../src/Platform/EmbeddedPostgres.ts"
import * as Migrations from "../../src/Platform/Migrations.ts"

const databaseName = "lead_intake"

/** An embedded PostgreSQL of its own in a temporary directory, with an empty database: nothing migrated. */
export interface ScratchCluster {
  readonly dataDir: string
  readonly port: number
  readonly postmasterPid: number
  /** `DATABASE_URL` for the database, through another port (a proxy) when given. */
  readonly url: (port?: number) => string
  readonly close: (options?: { readonly keep?: boolean }) => Promise<void>
}

/** An embedded PostgreSQL of its own in a temporary directory, with the service's database migrated. */
export interface ScratchDatabase extends Omit<ScratchCluster, "postmasterPid"> {
  /** Changes when the cluster is restarted. */
  postmasterPid: number
  readonly runtime: ManagedRuntime.ManagedRuntime<
    Layer.Success<typeof layerServices> | SqlClient.SqlClient,
    never
  >
  readonly close: (options?: { readonly keep?: boolean }) => Promise<void>
}

const log = (line: string) => process.stderr.write(`[postgres] ${line}\n`)

/**
 * The request path's services (and the SQL client) on the database at `url`, four connections, to
 * provision fixtures with; `migrate: false` only checks that the schema is current.
 */
export const servicesOn = (url: string, options: { readonly migrate: boolean }) =>
  ManagedRuntime.make(
    layerServices.pipe(
      Layer.provideMerge(Migrations.layer),
      Layer.provide(
        AppConfig.layerWith({
          databaseUrl: Option.some(Redacted.make(url)),
          databasePoolSize: 4,
          migrateOnStart: options.migrate
        })
      ),
      Layer.orDie
    )
  )

export const startScratchCluster = async (): Promise<ScratchCluster> => {
  const dataDir = await mkdtemp(path.join(tmpdir(), "lead-intake-bench-"))
  const cluster = await acquireEmbeddedCluster(dataDir, log)
  const url = (port = cluster.port) =>
    `postgres://${cluster.user}:${cluster.password}@127.0.0.1:${port}/${databaseName}`
  await Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const admin = yield* PgClient.makeClient({
          host: "127.0.0.1",
          port: cluster.port,
          username: cluster.user,
          password: Redacted.make(cluster.password),
          database: "postgres"
        })
        yield* admin.unsafe(`CREATE DATABASE ${databaseName}`)
      })
    ).pipe(Effect.provide(Reactivity.layer))
  )
  const postmasterPid = Number(
    (await readFile(path.join(cluster.clusterDir, "postmaster.pid"), "utf8")).split("\n")[0]
  )
  return {
    dataDir,
    port: cluster.port,
    postmasterPid,
    url,
    close: async (options) => {
      await cluster.release()
      if (options?.keep !== true) await rm(dataDir, { recursive: true, force: true })
    }
  }
}

/** A scratch cluster with the service's database migrated, and the request path's services on it. */
export const startScratchDatabase = async (): Promise<ScratchDatabase> => {
  const cluster = await startScratchCluster()
  const runtime = servicesOn(cluster.url(), { migrate: true })
  await runtime.runPromise(Effect.void)
  return {
    ...cluster,
    runtime,
    close: async (options) => {
      await runtime.dispose()
      await cluster.close(options)
    }
  }
}

export interface Provisioned {
  readonly organizationId: string
  readonly origins: ReadonlyArray<{ readonly id: string; readonly key: string }>
  readonly propertyCodigo: string
  readonly agentIds: ReadonlyArray<string>
}

/**
 * One organization as a real customer would have it: two agents, a round-robin capture rule, a
 * property, and `origins` origins whose per-minute limit is raised so the limit is never reached.
 */
export const provision = (options: {
  readonly origins: number
  readonly rateLimit: number
  readonly name?: string
}) =>
  Effect.gen(function* () {
    const organizations = yield* Organizations
    const keys = yield* KeyStore
    const rules = yield* CaptureRules
    const catalog = yield* PropertyCatalog
    const organization = yield* organizations.create({ name: options.name ?? "Bench Realty", country: "MX" })
    const ana = yield* rules.addAgent({ organizationId: organization.id, name: "Ana" })
    const luis = yield* rules.addAgent({ organizationId: organization.id, name: "Luis" })
    yield* rules.addRule({
      organizationId: organization.id,
      originId: null,
      propertyId: null,
      agentIds: [ana.id, luis.id],
      roundRobin: true,
      priority: 100
    })
    const property = yield* catalog.add({
      organizationId: organization.id,
      codigo: "BEN-0001",
      externalCode: "BENCH-1",
      archived: false
    })
    const origins = yield* Effect.forEach(
      Array.from({ length: options.origins }, (_, index) => index),
      (index) =>
        keys.createOrigin({
          organizationId: organization.id,
          label: `bench-${index + 1}`,
          rateLimit: options.rateLimit
        })
    )
    return {
      organizationId: organization.id,
      origins: origins.map((origin) => ({ id: origin.id, key: origin.key })),
      propertyCodigo: property.codigo,
      agentIds: [ana.id, luis.id]
    } satisfies Provisioned
  }).pipe(Effect.orDie)
