// The CPU of each request-path service call on PostgreSQL, in-process, without HTTP: what a create's
// five statements cost through their services (`KeyStore.authenticate`, `RateLimiter.consume`,
// `IdempotencyStore.reserve`, `PropertyCatalog.resolve`, `LeadRepository.createOrEnrich`), the five
// in a row as the handler runs them, and a bare one-row SELECT on the same clients for scale.
// 16 callers at a time on a scratch embedded PostgreSQL; rounds alternate the rows; medians.
//   node scripts/service-cost.ts [calls per row (3000)] [rounds (3)]
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { KeyStore } from "../src/Accounts/KeyStore.ts"
import { IdempotencyStore } from "../src/Intake/IdempotencyStore.ts"
import { leadInputOf } from "../src/Intake/LeadInput.ts"
import { LeadRepository } from "../src/Intake/LeadRepository.ts"
import { PropertyCatalog } from "../src/Intake/PropertyCatalog.ts"
import { RateLimiter } from "../src/Intake/RateLimiter.ts"
import { availableOrFail, pipelinedSql, writeOrFail } from "../src/Platform/Sql.ts"
import { provision, startScratchDatabase } from "./lib/database.ts"
import { phoneOf } from "./lib/load.ts"

const calls = Number(process.argv[2] ?? 3000)
const rounds = Number(process.argv[3] ?? 3)
const concurrency = 16

const database = await startScratchDatabase()
try {
  const program = Effect.gen(function* () {
    const fixture = yield* provision({ origins: 1, rateLimit: 1e9 })
    const origin = fixture.origins[0]!
    const keys = yield* KeyStore
    const limiter = yield* RateLimiter
    const idempotency = yield* IdempotencyStore
    const catalog = yield* PropertyCatalog
    const leads = yield* LeadRepository
    const sql = yield* SqlClient.SqlClient
    const read = yield* pipelinedSql
    const caller = yield* keys.authenticate(origin.key)
    const reference = { by: "codigo", value: fixture.propertyCodigo } as const
    let n = 0
    const run = Date.now()
    const input = (i: number) =>
      leadInputOf({ nombre: `Lead ${i}`, telefono: phoneOf(5_600_000_000 + i), email: `l${i}@example.com` })
    const create = (i: number, token: string | null) =>
      leads.createOrEnrich({
        requestId: crypto.randomUUID(),
        organizationId: caller.organizationId,
        originId: caller.originId,
        livemode: true,
        input: input(i),
        phoneKey: `52${5_600_000_000 + i}`,
        propertyId: null,
        idempotency: token === null ? null : { key: `${run}-${i}`, token }
      })
    const upsert = (i: number) => sql`
      INSERT INTO rate_limit_windows AS w (origin_id, window_start, count)
      VALUES (${caller.originId}, ${new Date(60_000 * (i + 1))}, 1)
      ON CONFLICT (origin_id, window_start) DO UPDATE SET count = w.count + 1 WHERE w.count < ${1e9}
      RETURNING count`
    const rows: Record<string, (i: number) => Effect.Effect<unknown, unknown>> = {
      "SELECT 1 on the pool": () => sql`SELECT 1 AS one`,
      "SELECT 1 on the pipelined client": () => read`SELECT 1 AS one`,
      "UPSERT, one hot row": () => sql`
          INSERT INTO rate_limit_windows AS w (origin_id, window_start, count)
          VALUES (${caller.originId}, ${new Date(0)}, 1)
          ON CONFLICT (origin_id, window_start) DO UPDATE SET count = w.count + 1 WHERE w.count < ${1e9}
          RETURNING count`,
      "UPSERT, a row each": upsert,
      "… availableOrFail": (i) => upsert(i).pipe(availableOrFail("upsert")),
      "… writeOrFail": (i) => upsert(i).pipe(writeOrFail(sql, "upsert")),
      "KeyStore.authenticate": () => keys.authenticate(origin.key),
      "RateLimiter.consume": () => limiter.consume(caller),
      "IdempotencyStore.reserve": (i) =>
        idempotency.reserve(
          { originId: caller.originId, livemode: true, key: `${run}-r-${i}` },
          "fingerprint"
        ),
      "PropertyCatalog.resolve": () => catalog.resolve(caller.organizationId, reference),
      "LeadRepository.createOrEnrich": (i) => create(i, null),
      "the five in a row": (i) =>
        Effect.gen(function* () {
          const c = yield* keys.authenticate(origin.key)
          yield* limiter.consume(c)
          const reservation = yield* idempotency.reserve(
            { originId: c.originId, livemode: true, key: `${run}-${i}` },
            "f"
          )
          yield* catalog.resolve(c.organizationId, reference)
          return yield* create(i, reservation._tag === "Reserved" ? reservation.token : null)
        })
    }
    const measure = (row: (i: number) => Effect.Effect<unknown, unknown>, count: number) =>
      Effect.gen(function* () {
        const cpu = process.cpuUsage()
        yield* Effect.forEach(
          Array.from({ length: count }, () => n++),
          row,
          { concurrency, discard: true }
        )
        const used = process.cpuUsage(cpu)
        return (used.user + used.system) / 1000 / count
      })
    for (const row of Object.values(rows)) yield* measure(row, 1000)
    const results = new Map<string, Array<number>>()
    for (let round = 0; round < rounds; round++) {
      for (const [name, row] of Object.entries(rows)) {
        results.set(name, [...(results.get(name) ?? []), yield* measure(row, calls)])
      }
    }
    const median = (values: Array<number>) =>
      [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
    process.stdout.write(
      `${concurrency} callers, ${calls} calls per row, ${rounds} rounds: CPU ms per call\n`
    )
    for (const [name, values] of results) {
      process.stdout.write(
        `${name.padEnd(32)}${median(values).toFixed(3).padStart(8)}   (${values.map((v) => v.toFixed(3)).join(" ")})\n`
      )
    }
  })
  await database.runtime.runPromise(program.pipe(Effect.orDie))
} finally {
  await database.close()
}
