import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { KeyStore } from "../../src/Accounts/KeyStore.ts"
import { layerServices } from "../../src/Intake/Services.ts"
import { type layerMemoryServices, layerPostgresServices, makeHarness, seed } from "../support/Client.ts"
import { layerFreshDurableDatabase } from "../support/Database.ts"

type Services = Layer.Success<typeof layerMemoryServices>

/** Widens a services layer to what `makeHarness` takes; the router never uses the memory-only store. */
export const asHarnessServices = <A>(services: Layer.Layer<A>) => services as unknown as Layer.Layer<Services>

/**
 * The whole router on a fresh migrated database, a seeded organization (two agents, a
 * round-robin rule over them, property ABC-1234), and the `SqlClient` to inspect what it wrote.
 */
const makePostgresHarnessWith = <A>(services: Layer.Layer<A>) =>
  Effect.gen(function* () {
    const harness = yield* makeHarness(asHarnessServices(services))
    const sql = Context.get(
      harness.context as unknown as Context.Context<SqlClient.SqlClient>,
      SqlClient.SqlClient
    )
    const fixture = yield* seed().pipe(Effect.provide(Layer.succeedContext(harness.context)))
    const count = (query: Effect.Effect<ReadonlyArray<{ readonly n: number }>, unknown>) =>
      query.pipe(
        Effect.map((rows) => rows[0]!.n),
        Effect.orDie
      )
    const keys = Context.get(harness.context as unknown as Context.Context<KeyStore>, KeyStore)
    /** An origin's limit, as an operator sets it: its keys' directory entries with it. */
    const setRateLimit = (originId: string, rateLimit: number) =>
      keys.setRateLimit(originId, rateLimit).pipe(Effect.orDie)
    return { ...harness, sql, fixture, count, setRateLimit }
  })

export const makePostgresHarness = makePostgresHarnessWith(layerPostgresServices)

/** The same on a database whose commits wait for the WAL flush, as in production. */
export const makeDurablePostgresHarness = makePostgresHarnessWith(
  layerServices.pipe(Layer.provideMerge(layerFreshDurableDatabase))
)
