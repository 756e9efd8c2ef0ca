import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, References, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { layerServices } from "../../src/Intake/Services.ts"
import { makeHarness, postLead, seed } from "../support/Client.ts"
import { createMigratedDatabase, databaseUrl, layerMigratedDatabase, postgres } from "../support/Database.ts"
import { asHarnessServices } from "./Harness.ts"

/**
 * On a Citus cluster (`.ci/citus`): the worker holding an organization plans the shard queries of a
 * create's statements once per connection, and keeps those plans, rather than planning them again on
 * every create and keeping every copy (citusdata/citus#8783, fixed upstream by #8824; docs/sre.md,
 * "Which Citus"). Creates go through the service; the worker is read as its superuser: its log (Citus
 * logs each local plan it caches at DEBUG5, "Local shard query that is going to be cached") and its
 * backends' memory (`pg_log_backend_memory_contexts`, written to the same log).
 * Skipped without a Citus cluster, and on one that gives no superuser URLs and log files
 * (`TEST_CITUS_SUPERUSER_URLS`, `TEST_CITUS_LOGS`).
 */
const citus = postgres().citus
const inspection = citus?.inspection ?? null

/** Concurrent creates, and the service's connections to the coordinator. */
const concurrency = 8

interface Node {
  readonly superuserUrl: string
  readonly log: string
}

/** A statement as the node's superuser, in `database`; its rows. (Without values, several statements: no rows.) */
const onNode = <Row extends object>(
  node: Node,
  database: string,
  text: string,
  values: ReadonlyArray<unknown> = []
) =>
  Effect.promise(async () => {
    const { default: pg } = await import("pg")
    const url = new URL(node.superuserUrl)
    url.pathname = `/${database}`
    const client = new pg.Client({ connectionString: url.toString() })
    await client.connect()
    try {
      const result = await client.query<Row>(text, [...values])
      return Array.isArray(result) ? [] : result.rows
    } finally {
      await client.end()
    }
  })

/** The node's log: its size, and its lines from one offset to another (or to its end). */
const logSize = (node: Node) =>
  Effect.map(
    onNode<{ size: string }>(node, "postgres", "SELECT size::text AS size FROM pg_stat_file($1)", [node.log]),
    (rows) => Number(rows[0]!.size)
  )
const logLines = (node: Node, from: number, to?: number) =>
  Effect.map(
    onNode<{ text: Buffer }>(
      node,
      "postgres",
      "SELECT pg_read_binary_file($1, $2, coalesce($3, (pg_stat_file($1)).size) - $2) AS text",
      [node.log, from, to ?? null]
    ),
    (rows) => rows[0]!.text.toString("utf8").split("\n")
  )

/** A log line's backend and message (`log_line_prefix` starts with `%m [%p] `). */
const entryOf = (line: string) => {
  const match = /^\S+ \S+ \S+ \[(\d+)\] (?:\S+ )?[A-Z0-9]+: {2}(.*)$/.exec(line)
  return match === null ? null : { pid: Number(match[1]), message: match[2]! }
}

/** The client backends connected to `database` on the node (the coordinator's connections). */
const backendsOf = (node: Node, database: string) =>
  Effect.map(
    onNode<{ pid: number }>(
      node,
      "postgres",
      "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'",
      [database]
    ),
    (rows) => rows.map((row) => row.pid)
  )

/**
 * The bytes each backend's memory contexts hold (`pg_log_backend_memory_contexts`' "Grand total"):
 * the memory a cached plan, and a leaked one, lives in. Each backend writes its report to the log
 * when it next handles an interrupt, idle ones at once.
 */
const memoryOf = (node: Node, pids: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    const offset = yield* logSize(node)
    // A backend that ended meanwhile is not signalled (false), and is left out.
    const signalled: Array<number> = []
    for (const pid of pids) {
      const [row] = yield* onNode<{ sent: boolean }>(
        node,
        "postgres",
        "SELECT pg_log_backend_memory_contexts($1) AS sent",
        [pid]
      )
      if (row!.sent) signalled.push(pid)
    }
    const read = Effect.map(logLines(node, offset), (lines) => {
      const totals = new Map<number, number>()
      for (const line of lines) {
        const entry = entryOf(line)
        const total = entry === null ? null : /^Grand total: (\d+) bytes/.exec(entry.message)
        if (entry !== null && total !== null) totals.set(entry.pid, Number(total[1]))
      }
      return totals
    })
    return yield* read.pipe(
      Effect.repeat({
        until: (totals) => signalled.every((pid) => totals.has(pid)),
        schedule: Schedule.spaced("100 millis")
      }),
      Effect.timeout("30 seconds"),
      Effect.orDie
    )
  })

/** The worker holding the organization's shard of `leads`, as an inspection node. */
const holderOf = (sql: SqlClient.SqlClient, organizationId: string) =>
  Effect.gen(function* () {
    const [shard] = yield* sql<{ port: number }>`
      SELECT s.nodeport AS port FROM citus_shards s
      WHERE s.shardid = get_shard_id_for_distribution_column('leads', ${organizationId}::uuid)`.pipe(
      Effect.orDie
    )
    const index = citus!.workers.findIndex((worker) => worker.port === shard!.port)
    return inspection![1 + index]!
  })

/**
 * The router on a database of its own, the service's pool as wide as the creates are concurrent, and
 * an organization whose origin's limit is out of the way. `debug5`: the workers log at DEBUG5 in that
 * database from its first connection on (a database's settings reach only sessions started after
 * them).
 */
const makeServiceHarness = Effect.fn("test.makeServiceHarness")(function* (options: {
  readonly debug5: boolean
}) {
  const name = yield* createMigratedDatabase("plans")
  if (options.debug5)
    // On a worker Citus refuses DDL it would propagate, unless told this is the node's alone.
    for (const worker of inspection!.slice(1))
      yield* onNode(
        worker,
        "postgres",
        `SET citus.enable_ddl_propagation = off; ALTER DATABASE ${name} SET log_min_messages = debug5`
      )
  // The coordinator keeps its connections to the workers for the whole test (Citus replaces one
  // older than 10 minutes by default, which a busy machine reaches): the same backends are measured.
  yield* onNode(
    inspection![0]!,
    "postgres",
    `SET citus.enable_ddl_propagation = off; ALTER DATABASE ${name} SET citus.max_cached_connection_lifetime = -1`
  )
  const database = layerMigratedDatabase(databaseUrl(name), concurrency).pipe(Layer.orDie)
  // Thousands of creates: their request lines (Info, logged by a fiber the router starts) would bury
  // the test's output.
  const quiet = Layer.succeed(References.MinimumLogLevel, "Warn")
  const harness = yield* makeHarness(
    asHarnessServices(Layer.merge(layerServices.pipe(Layer.provideMerge(database)), quiet))
  )
  const sql = Context.get(
    harness.context as unknown as Context.Context<SqlClient.SqlClient>,
    SqlClient.SqlClient
  )
  const fixture = yield* seed({ rateLimit: 1_000_000 }).pipe(
    Effect.provide(Layer.succeedContext(harness.context))
  )
  return { ...harness, name, sql, fixture }
})

/**
 * `count` creates of new leads, `concurrency` at a time, each with an Idempotency-Key (the write that
 * reserves the key runs the create's statements and the key's) and sent until it is answered 201, as a
 * partner would on a busy machine: again after a 503 (nothing written), a 500 asking for a retry with
 * the same key, and the 409 of that key's first attempt still being settled.
 */
const createLeads = (
  handler: (request: Request) => Promise<Response>,
  key: string,
  from: number,
  count: number
) =>
  Effect.forEach(
    Array.from({ length: count }, (_, i) => from + i),
    (n) =>
      Effect.gen(function* () {
        while (true) {
          const answer = yield* postLead(
            handler,
            { nombre: `Plan ${n}`, telefono: `55 5${String(n).padStart(7, "0")}` },
            { key, headers: { "idempotency-key": `plan-cache-${n}` } }
          )
          if (answer.status === 201) return
          assert.include([503, 500, 409], answer.status, JSON.stringify(answer.body))
          yield* Effect.sleep("100 millis")
        }
      }),
    { concurrency, discard: true }
  )

describe.skipIf(inspection === null)("on Citus, the shard queries of a create are planned once", () => {
  it.live(
    "the worker plans a create's statements once per connection, not once per create",
    () =>
      Effect.gen(function* () {
        const { handler, name, sql, fixture } = yield* makeServiceHarness({ debug5: true })
        const holder = yield* holderOf(sql, fixture.organizationId)
        const warmUp = 100
        const measured = 100
        const start = yield* logSize(holder)
        // Every connection has served creates of both kinds before the count starts.
        yield* createLeads(handler, fixture.key, 0, warmUp)
        const from = yield* logSize(holder)
        yield* createLeads(handler, fixture.key, warmUp, measured)
        // A backend writes its log lines before it answers: every plan of these creates is in there.
        const [before, during] = yield* Effect.all([logLines(holder, start, from), logLines(holder, from)])
        const backends = new Set(yield* backendsOf(holder, name))
        const plansIn = (lines: ReadonlyArray<string>) =>
          lines.flatMap((line) => {
            const entry = entryOf(line)
            const query = entry?.message.match(/^Local shard query that is going to be cached: (.*)$/)?.[1]
            return entry === null || query === undefined || !backends.has(entry.pid)
              ? []
              : [{ pid: entry.pid, query }]
          })
        const plans = [...plansIn(before), ...plansIn(during)]
        const duringMeasured = plansIn(during).length
        const statements = new Set(plans.map((plan) => plan.query)).size
        const connections = new Set(plans.map((plan) => plan.pid)).size
        yield* Effect.logInfo("local plans cached on the worker").pipe(
          Effect.annotateLogs({
            warm_up_creates: warmUp,
            during_warm_up: plans.length - duringMeasured,
            measured_creates: measured,
            during_measured: duringMeasured,
            shard_queries: statements,
            connections
          })
        )
        // A failure says what was measured, so that a run on another build reports its figures.
        const figures = `${plans.length - duringMeasured} plans cached during ${warmUp} warm-up creates, ${duringMeasured} during the next ${measured}; ${statements} shard queries, ${connections} connections`
        assert.isAbove(
          statements,
          0,
          `the worker cached plans of the creates' shard queries (DEBUG5 is logged): ${figures}`
        )
        // Each connection plans each statement once (again only if the plan is invalidated, say by an
        // ANALYZE of a shard): what the measured creates add cannot exceed one round of it, however
        // many creates there are. Re-planning on every create adds at least one per create.
        assert.isAtMost(
          duringMeasured,
          statements * connections,
          `plans cached during ${measured} creates, against ${statements} shard queries x ${connections} connections (${figures})`
        )
        assert.isBelow(duringMeasured, measured, `plans cached during ${measured} creates (${figures})`)
      }),
    { timeout: 300_000 }
  )

  it.live(
    "the memory of the busiest worker connection stays flat over 5,000 creates",
    () =>
      Effect.gen(function* () {
        const { handler, name, sql, fixture } = yield* makeServiceHarness({ debug5: false })
        const holder = yield* holderOf(sql, fixture.organizationId)
        const warmUp = 200
        const measured = 5_000
        yield* createLeads(handler, fixture.key, 0, warmUp)
        const connections = yield* backendsOf(holder, name)
        const before = yield* memoryOf(holder, connections)
        const started = performance.now()
        yield* createLeads(handler, fixture.key, warmUp, measured)
        const seconds = (performance.now() - started) / 1000
        // A connection the service replaced (a request past its deadline on a busy machine closes its
        // session, and with it the coordinator's connection to the worker) is not measured again:
        // the ones kept served these creates from the first to the last.
        const still = yield* backendsOf(holder, name)
        const kept = connections.filter((pid) => still.includes(pid) && before.has(pid))
        assert.isAbove(
          kept.length,
          0,
          `worker connections kept through the creates (${connections.length} measured before, ${still.length} after)`
        )
        const after = yield* memoryOf(holder, kept)
        const growth = kept
          .map((pid) => ({ pid, before: before.get(pid)!, growth: after.get(pid)! - before.get(pid)! }))
          .sort((a, b) => b.growth - a.growth)
        yield* Effect.logInfo("worker connections' memory").pipe(
          Effect.annotateLogs({
            creates: measured,
            creates_per_second: Math.round(measured / seconds),
            connections: connections.length,
            kept: kept.length,
            kib_before: growth.map((c) => Math.round(c.before / 1024)).join(" "),
            kib_growth: growth.map((c) => Math.round(c.growth / 1024)).join(" ")
          })
        )
        // After the warm-up a connection holds every plan a create needs; what it may still add is
        // small and bounded (a plan made again after an ANALYZE of a shard replaces the old one, a few
        // catalog cache entries). Planning on every create and keeping every plan adds tens of KB per
        // create: the busiest of these connections serves at least 5,000 / connections creates.
        const kib = (bytes: number) => Math.round(bytes / 1024)
        assert.isAtMost(
          growth[0]!.growth,
          1024 * 1024,
          `the busiest connection grew by ${growth[0]!.growth} bytes (${kib(growth[0]!.before)} KiB to ${kib(growth[0]!.before + growth[0]!.growth)} KiB) over ${measured} creates; growth of the ${kept.length} of ${connections.length} connections kept, KiB: ${growth.map((c) => kib(c.growth)).join(" ")}; ${Math.round(measured / seconds)} creates/s`
        )
      }),
    { timeout: 900_000 }
  )
})
