import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Option, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import { inject } from "vitest"
import { defaultHostNames } from "../../src/Domain/HostNames.ts"
import { AppConfig, type AppConfigShape } from "../../src/Platform/Config.ts"
import * as Migrations from "../../src/Platform/Migrations.ts"
import { trustNone } from "../../src/Platform/TrustedProxies.ts"

export const postgres = () => inject("postgres")

const hostOf = (host: string) => (host.includes(":") && !host.startsWith("[") ? `[${host}]` : host)

export const databaseUrl = (database: string) => {
  const pg = postgres()
  return `postgres://${encodeURIComponent(pg.user)}:${encodeURIComponent(pg.password)}@${hostOf(pg.host)}:${pg.port}/${database}`
}

/** Creates an empty database in the run's cluster and returns its name. */
export const createDatabase = Effect.fn("test.createDatabase")(function* (prefix = "t") {
  const pg = postgres()
  const name = `${prefix}_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`
  yield* Effect.scoped(
    Effect.gen(function* () {
      const admin = yield* PgClient.makeClient({
        host: pg.host,
        port: pg.port,
        username: pg.user,
        password: Redacted.make(pg.password),
        database: "postgres"
      })
      yield* admin.unsafe(`CREATE DATABASE ${name}`)
    })
  ).pipe(Effect.provide(Reactivity.layer), Effect.orDie)
  return name
})

/** A fresh, migrated database for one test file (or one test), as `SqlClient` + `PgClient`. */
export const layerFreshDatabase = Layer.unwrap(
  Effect.gen(function* () {
    const name = yield* createDatabase()
    return Migrations.layerMigrated.pipe(
      Layer.provideMerge(
        PgClient.layer({
          url: Redacted.make(databaseUrl(name)),
          maxConnections: 30,
          connectTimeout: "2 seconds"
        })
      )
    )
  })
).pipe(Layer.orDie)

export const testConfig: AppConfigShape = {
  port: 0,
  host: "127.0.0.1",
  databaseUrl: Option.none(),
  dataDir: ".data",
  publicBaseUrl: "http://api.test",
  dashboardUrl: "https://crm.test",
  logLevel: "Warn",
  metricsPort: Option.none(),
  databasePoolSize: 10,
  requestLogRetentionDays: 90,
  rejectedRetentionDays: 30,
  adminHost: "127.0.0.1",
  adminHosts: defaultHostNames("127.0.0.1"),
  adminPort: Option.none(),
  healthHost: "127.0.0.1",
  healthPort: Option.none(),
  trustedProxies: trustNone,
  production: false,
  migrateOnStart: true
}

export const layerTestConfig = Layer.succeed(AppConfig, testConfig)
