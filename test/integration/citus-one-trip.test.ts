import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schedule } from "effect"
import { KeyStore } from "../../src/Accounts/KeyStore.ts"
import { Organizations } from "../../src/Accounts/Organizations.ts"
import { CaptureRules } from "../../src/Intake/CaptureRules.ts"
import { IdempotencyStore } from "../../src/Intake/IdempotencyStore.ts"
import { LeadRepository } from "../../src/Intake/LeadRepository.ts"
import { PropertyCatalog } from "../../src/Intake/PropertyCatalog.ts"
import { RateLimiter } from "../../src/Intake/RateLimiter.ts"
import { RequestLog } from "../../src/Intake/RequestLog.ts"
import { MemoryStore } from "../../src/Platform/MemoryStore.ts"
import { makeHarness, postLead, seed } from "../support/Client.ts"
import { createMigratedDatabase, databaseUrl, layerMigratedDatabase, postgres } from "../support/Database.ts"
import { asHarnessServices } from "./Harness.ts"

/**
 * On a Citus cluster: a create is one transaction on one worker (docs/sre.md#distributing-by-organization-citus).
 * The key check reads the key directory, a reference table the coordinator holds a copy of, and the
 * rate window is counted in a table the coordinator keeps to itself; only the write goes to the
 * worker holding the organization. Counted from the workers' own statistics (`pg_stat_database`),
 * with the request log kept in memory: its batches are writes of their own, not a create's.
 * Elsewhere there is no cluster to ask, and this is skipped.
 */
const citus = postgres().citus

type Node = { readonly host: string; readonly port: number }

/** A worker's committed and rolled-back transactions in `database`, once no session of the service is left there. */
const transactionsOn = (node: Node, database: string) =>
  Effect.promise(async () => {
    const { default: pg } = await import("pg")
    const client = new pg.Client({
      host: node.host,
      port: node.port,
      user: postgres().user,
      password: postgres().password,
      database
    })
    await client.connect()
    try {
      // A backend reports its counts as it ends: wait until the coordinator's sessions here are gone.
      for (let attempt = 0; attempt < 200; attempt++) {
        const { rows } = await client.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
        )
        if (rows[0]!.n === 0) break
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      await client.query("SELECT pg_stat_clear_snapshot()")
      const { rows } = await client.query<{ n: number }>(
        "SELECT (xact_commit + xact_rollback)::int AS n FROM pg_stat_database WHERE datname = current_database()"
      )
      return rows[0]!.n
    } finally {
      await client.end()
    }
  })

/** The request path's services on PostgreSQL, but for the request log. */
const servicesOn = (database: string) =>
  asHarnessServices(
    Layer.mergeAll(
      KeyStore.layer,
      RateLimiter.layer,
      IdempotencyStore.layer,
      LeadRepository.layer,
      PropertyCatalog.layer,
      RequestLog.layerMemory,
      Organizations.layer,
      CaptureRules.layer
    ).pipe(
      Layer.provideMerge(layerMigratedDatabase(databaseUrl(database), 8)),
      Layer.provideMerge(MemoryStore.layer),
      Layer.orDie
    )
  )

const creates = 80

/**
 * Citus's own maintenance runs transactions in the database on every worker too, about as many on
 * each: the coordinator's distributed deadlock detection (every 2 s), its two-phase-commit recovery
 * and shard-size reads. So the creates' transactions are what the worker holding the organization made
 * beyond the other, within a tenth of the creates: one more trip per create would add as many
 * transactions as there are creates.
 */
const maintenance = creates / 10

/** The port of the worker holding the organization's shards. */
const placementOf = (database: string, organizationId: string) =>
  Effect.promise(async () => {
    const { default: pg } = await import("pg")
    const coordinator = postgres().direct ?? postgres()
    const client = new pg.Client({
      host: coordinator.host,
      port: coordinator.port,
      user: postgres().user,
      password: postgres().password,
      database
    })
    await client.connect()
    try {
      const { rows } = await client.query<{ port: number }>(
        "SELECT nodeport AS port FROM citus_shards WHERE shardid = get_shard_id_for_distribution_column('leads', $1::uuid)",
        [organizationId]
      )
      return rows[0]!.port
    } finally {
      await client.end()
    }
  })

describe.skipIf(citus === null)("on Citus, one trip to one worker", () => {
  it.live(
    "a create, with or without an Idempotency-Key, makes one transaction on one worker: the key and the rate window are answered by the coordinator",
    () =>
      Effect.gen(function* () {
        const workers = citus!.workers
        const database = yield* createMigratedDatabase("trip")
        const fixture = yield* Effect.scoped(
          Effect.flatMap(makeHarness(servicesOn(database)), ({ context }) =>
            seed().pipe(Effect.provide(Layer.succeedContext(context)))
          )
        )
        const before = yield* Effect.forEach(workers, (worker) => transactionsOn(worker, database))

        // Each lead sent until it is answered 201, with its Idempotency-Key when it has one: on a busy
        // machine a statement may miss its deadline (503, or 500 when its outcome is unknown), and such
        // an attempt may have reached its worker too, so the bound counts attempts.
        let attempts = 0
        yield* Effect.scoped(
          Effect.gen(function* () {
            const { handler } = yield* makeHarness(servicesOn(database))
            yield* Effect.forEach(
              Array.from({ length: creates }, (_, i) => i),
              (i) =>
                Effect.suspend(() => {
                  attempts++
                  return postLead(
                    handler,
                    { nombre: `Trip ${i}`, telefono: `55 2000 ${String(i).padStart(4, "0")}` },
                    {
                      key: fixture.key,
                      ...(i % 2 === 0 ? { headers: { "idempotency-key": `one-trip-${i}` } } : {})
                    }
                  )
                }).pipe(
                  Effect.repeat({
                    until: (answer) => answer.status === 201 || answer.status === 200,
                    schedule: Schedule.spaced("100 millis"),
                    times: 10
                  })
                ),
              { concurrency: 4 }
            )
          })
        )
        const after = yield* Effect.forEach(workers, (worker) => transactionsOn(worker, database)).pipe(
          // A backend that ended may report a moment later.
          Effect.repeat({
            until: (counts) =>
              counts.reduce((a, b) => a + b, 0) - before.reduce((a, b) => a + b, 0) >= creates,
            schedule: Schedule.spaced("200 millis")
          }),
          Effect.timeoutOption("20 seconds"),
          Effect.andThen(Effect.forEach(workers, (worker) => transactionsOn(worker, database)))
        )
        const holderPort = yield* placementOf(database, fixture.organizationId)
        const made = after.map((count, i) => count - before[i]!)
        const holder = made[workers.findIndex((worker) => worker.port === holderPort)]!
        const other = made[workers.findIndex((worker) => worker.port !== holderPort)]!
        const figures = `worker transactions for ${creates} creates (${attempts} attempts): ${holder} on the worker holding the organization, ${other} on the other`
        yield* Effect.logInfo(figures)
        // Citus's maintenance reaches both workers alike: what the holder made beyond the other is the creates'.
        assert.isAtMost(holder - other, attempts + maintenance, figures)
        assert.isAtLeast(holder - other, creates - maintenance, figures)
      }),
    { timeout: 120_000 }
  )
})
