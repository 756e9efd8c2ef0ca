// What a statement costs in the Node process, in isolation: the same one-row SELECT through the
// `pg` driver's pool, through `@effect/sql-pg` (the service's client), on a reserved connection
// (with and without `Effect.timeout` on the wait for it), and through the service's `writeOrFail`
// (one timer that bounds the wait and then cancels the statement at the deadline, outages told
// from defects). 32 concurrent callers (as the bench's 32 connections) unless told; CPU time of this process
// per statement. Starts a scratch embedded PostgreSQL; one second of each row first, unreported
// (the first pass compiles every path).
// Usage: node scripts/sql-overhead.ts [seconds per row (4)] [rounds (2)] [concurrent callers (32)]
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import path from "node:path"
import { PgClient } from "@effect/sql-pg"
import { Context, Duration, Effect, Exit, Redacted, Scope } from "effect"
import { Reactivity } from "effect/reactivity"
import type { SqlClient } from "effect/sql"
import pg from "pg"
import { acquireEmbeddedCluster } from "../src/Platform/EmbeddedPostgres.ts"
import { writeOrFail } from "../src/Platform/Sql.ts"

const seconds = Number(process.argv[2] ?? 4)
const rounds = Number(process.argv[3] ?? 2)
const callers = Number(process.argv[4] ?? 32)
const poolSize = 10

const dataDir = await mkdtemp(path.join(tmpdir(), "sql-overhead-"))
const cluster = await acquireEmbeddedCluster(dataDir, (line) => process.stderr.write(`${line}\n`))
const connect = { host: "127.0.0.1", port: cluster.port, database: "postgres" }
const pool = new pg.Pool({ ...connect, user: cluster.user, password: cluster.password, max: poolSize })
const scope = Effect.runSync(Scope.make())
const sql: SqlClient.SqlClient = await Effect.runPromise(
  PgClient.make({
    ...connect,
    username: cluster.user,
    password: Redacted.make(cluster.password),
    maxConnections: poolSize
  }).pipe(Scope.provide(scope), Effect.provide(Reactivity.layer))
)

const text = "SELECT $1::text AS a, $2::int AS b, now() AS c"
const statement = (i: number) => sql`SELECT ${`x${i}`}::text AS a, ${i}::int AS b, now() AS c`

const reserved = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.scoped(
    Effect.flatMap(sql.reserve, (connection) =>
      Effect.provideService(self, sql.transactionService, [connection, 0])
    )
  )

const boundedReserve = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.scoped(
    Effect.flatMap(Effect.timeout(sql.reserve, Duration.seconds(2)), (connection) =>
      Effect.provideService(self, sql.transactionService, [connection, 0])
    )
  )

/** A context as large as a request's through the router (services, platform, HttpApi): 40 entries. */
const Filler = Array.from({ length: 40 }, (_, i) =>
  Context.Reference<number>(`sql-overhead/filler-${i}`, { defaultValue: () => i })
)
const largeContext = Filler.reduce((context, Tag, i) => Context.add(context, Tag, i), Context.empty())
const inLargeContext = <A, E>(self: Effect.Effect<A, E>) =>
  Effect.runPromise(Effect.provideContext(self, largeContext))

const rows: Record<string, (i: number) => Promise<unknown>> = {
  "pg driver, pool.query": (i) => pool.query(text, [`x${i}`, i]),
  "@effect/sql-pg, sql`…`": (i) => Effect.runPromise(statement(i)),
  "… on a reserved connection": (i) => Effect.runPromise(reserved(statement(i))),
  "… its wait bounded (timeout)": (i) => Effect.runPromise(boundedReserve(statement(i))),
  "… writeOrFail (the service)": (i) => Effect.runPromise(writeOrFail(sql, "overhead")(statement(i))),
  "… writeOrFail, a request's context": (i) => inLargeContext(writeOrFail(sql, "overhead")(statement(i)))
}

const measure = async (run: (i: number) => Promise<unknown>, forSeconds = seconds) => {
  let done = 0
  const end = performance.now() + forSeconds * 1000
  const cpu = process.cpuUsage()
  const started = performance.now()
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (performance.now() < end) await run(done++)
    })
  )
  const used = process.cpuUsage(cpu)
  return {
    perSecond: (done * 1000) / (performance.now() - started),
    cpuMs: (used.user + used.system) / 1000 / done
  }
}

try {
  process.stdout.write(
    `${callers} concurrent callers, pool of ${poolSize}, ${seconds} s per row, ${rounds} rounds\n\n`
  )
  process.stdout.write(
    `${"row".padEnd(34)}${"statements/s".padStart(14)}${"CPU ms/statement".padStart(18)}\n`
  )
  // Unreported: every path compiled and the pools full before the first figure.
  for (const run of Object.values(rows)) await measure(run, 1)
  for (let round = 1; round <= rounds; round++) {
    for (const [name, run] of Object.entries(rows)) {
      const { perSecond, cpuMs } = await measure(run)
      process.stdout.write(
        `${`${name} (${round})`.padEnd(34)}${perSecond.toFixed(0).padStart(14)}${cpuMs.toFixed(3).padStart(18)}\n`
      )
    }
  }
} finally {
  await pool.end()
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await cluster.release()
  await rm(dataDir, { recursive: true, force: true })
}
