import { hash } from "node:crypto"
import { PgClient, PgConnection } from "@effect/sql-pg"
import {
  Array as Arr,
  Context,
  Duration,
  Effect,
  Exit,
  Layer,
  Option,
  Predicate,
  Redacted,
  Schema,
  Scope
} from "effect"
import { Reactivity } from "effect/reactivity"
import { Migrator, SqlClient, type SqlConnection, type SqlError } from "effect/sql"
import { sqlFunctions } from "../../migrations/functions.ts"
import { migrations } from "../../migrations/index.ts"
import { UnknownEntity } from "../Domain/Errors.ts"
import { AppConfig, redactedDatabaseUrl } from "./Config.ts"
import { acquireEmbeddedCluster } from "./EmbeddedPostgres.ts"

/** The store could not be reached in bounded time: the request may be retried, nothing was written. */
export class StoreUnavailable extends Schema.TaggedError<StoreUnavailable>()("StoreUnavailable", {
  operation: Schema.String
}) {}

/**
 * A write was sent and its answer never came: abandoned at `writeAbandonAfter`, or its connection
 * was lost (a crash mid-commit included). It may have committed, so it is not `StoreUnavailable`:
 * the answer is 500, and a retry with the same Idempotency-Key tells which it was.
 */
export class OutcomeUnknown extends Schema.TaggedError<OutcomeUnknown>()("OutcomeUnknown", {
  operation: Schema.String
}) {}

const unavailableReasons = new Set([
  "ConnectionError",
  "AuthenticationError",
  "StatementTimeoutError",
  "LockTimeoutError"
])

/**
 * A server shutting down, starting up (crash recovery), out of connections, a statement cancelled
 * (a pipelined statement shares its connection's cancel with its neighbours) or out of time waiting
 * for a lock: an outage, not a bug.
 */
const unavailableStates = new Set(["57P01", "57P02", "57P03", "53300", "57014", "55P03"])

/** The statement's own answer that it was rolled back: cancelled (by us or `statement_timeout`), or a lock wait ran out. */
const rolledBackStates = new Set(["57014", "55P03"])

export const sqlStateOf = (cause: unknown) =>
  typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : ""

export const isOutage = (error: SqlError.SqlError) =>
  unavailableReasons.has(error.reason._tag) || unavailableStates.has(sqlStateOf(error.reason.cause))

/** Reads are abandoned, and writes cancelled, this long after they start. */
export const statementTimeout = Duration.seconds(2)

/**
 * A write whose cancel got no answer is abandoned (its connection destroyed) this long after it
 * started, or sooner when its request's `AnswerBy` comes first.
 */
export const writeAbandonAfter = Duration.millis(2750)

/** What docs/sre.md#database-outages-every-answer-within-5-s promises: a request answers within this, whatever the database does. */
export const answerWithin = Duration.seconds(5)

/**
 * When the current request must have answered (`performance.now()` milliseconds), so that the
 * store steps of one request together stay within `answerWithin`: each step's bounds shrink to
 * what is left. Unset (CLI, worker), each step has only its own bounds.
 */
export const AnswerBy = Context.Reference<number | undefined>("lead-intake/AnswerBy", {
  defaultValue: () => undefined
})

/** Time kept back from `AnswerBy` for what follows the last store step (encoding, sending). */
const answerMargin = 150

/** `bound` milliseconds, or less when the request's `AnswerBy` comes sooner. */
const boundedBy = (answerBy: number | undefined, bound: number) =>
  answerBy === undefined ? bound : Math.min(bound, answerBy - answerMargin - performance.now())

/**
 * Set on every connection of the service (startup parameters), so PostgreSQL gives up on work its
 * client abandoned: a statement stops after `statement_timeout` (and at once, thawed after a
 * freeze, once that much time has passed), `client_connection_check_interval` stops one whose
 * socket is gone, and an idle transaction or a lost client (TCP keepalive) ends its session.
 * Migrations lift the statement and lock limits for their own transaction.
 */
export const sessionSettings = {
  statement_timeout: "10s",
  lock_timeout: "5s",
  idle_in_transaction_session_timeout: "10s",
  client_connection_check_interval: "1s",
  tcp_keepalives_idle: "10",
  tcp_keepalives_interval: "2",
  tcp_keepalives_count: "5"
} as const

/** Client-side TCP keepalive: an idle pooled connection to a host that vanished fails in about 20 s. */
const keepAlive = Duration.seconds(10)

/**
 * Connection loss and timeouts become `StoreUnavailable` (503); every other SQL failure, and a
 * row that does not decode, is a defect (500): it means a bug or a broken schema rather than a
 * transient outage.
 */
export const availableOrFail =
  (operation: string) =>
  <A, R>(
    self: Effect.Effect<A, SqlError.SqlError | Schema.SchemaError, R>
  ): Effect.Effect<A, StoreUnavailable, R> =>
    self.pipe(within(statementTimeout, operation), outageOrDefect(operation))

/**
 * `self` run in a fiber of its own (with `context`) and awaited, unless abandoned first: `arm` gets
 * the function that abandons it (the fiber is interrupted and `abandoned()` answers instead)
 * and returns the one that disarms it once `self` has answered. One fiber and whatever `arm` sets
 * (a timer), where `Effect.timeoutOrElse` races `self` against a sleeping fiber: two fibers and two
 * timers per statement (CONTRIBUTING.md#findings).
 */
const abandonable = <A, E, R, Abandoned>(
  context: Context.Context<R>,
  self: Effect.Effect<A, E, R>,
  abandoned: () => Abandoned,
  arm: (abandon: () => void) => () => void
) =>
  Effect.callback<A, E | Abandoned>((resume) => {
    const running = Effect.runForkWith(context)(self)
    let settled = false
    let disarm = () => {}
    /** True the first time: whichever of answer, deadline or interruption comes first decides. */
    const settle = () => {
      if (settled) return false
      settled = true
      disarm()
      return true
    }
    disarm = arm(() => {
      if (!settle()) return
      running.interruptUnsafe()
      resume(Effect.fail(abandoned()))
    })
    running.addObserver((exit) => {
      if (settle()) resume(exit)
    })
    return Effect.sync(() => {
      settle()
      running.interruptUnsafe()
    })
  })

/** `self` bounded by `duration`: past it `self` is interrupted and `StoreUnavailable` answers. */
const within =
  (duration: Duration.Duration, operation: string) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreUnavailable, R> =>
    Effect.withFiber((parent) => {
      const millis = boundedBy(parent.getRef(AnswerBy), Duration.toMillis(duration))
      if (millis <= 0) return Effect.fail(new StoreUnavailable({ operation }))
      return abandonable(
        parent.context as Context.Context<R>,
        self,
        () => new StoreUnavailable({ operation }),
        (abandon) => {
          const timer = setTimeout(abandon, millis)
          return () => clearTimeout(timer)
        }
      )
    })

const outageOrDefect =
  (operation: string) =>
  <A, E extends StoreUnavailable | OutcomeUnknown, R>(
    self: Effect.Effect<A, SqlError.SqlError | Schema.SchemaError | E, R>
  ): Effect.Effect<A, StoreUnavailable | E, R> =>
    Effect.catch(self, (error): Effect.Effect<never, StoreUnavailable | E> => {
      if (error._tag === "SchemaError") return Effect.die(error)
      if (error._tag !== "SqlError") return Effect.fail(error as E)
      return isOutage(error) ? Effect.fail(new StoreUnavailable({ operation })) : Effect.die(error)
    })

/**
 * An outage met by a statement already sent: PostgreSQL's own answer that it rolled back
 * (cancelled, out of time for a lock) means nothing was written; anything else (the connection
 * closed or failed, the server terminating the session) may have come after the commit.
 */
const sentOutcome =
  (operation: string) =>
  <A, R>(
    self: Effect.Effect<A, SqlError.SqlError | Schema.SchemaError, R>
  ): Effect.Effect<A, SqlError.SqlError | Schema.SchemaError | StoreUnavailable | OutcomeUnknown, R> =>
    Effect.catchIf(
      self,
      (error): error is SqlError.SqlError => error._tag === "SqlError" && isOutage(error),
      (error) =>
        Effect.fail(
          rolledBackStates.has(sqlStateOf(error.reason.cause))
            ? new StoreUnavailable({ operation })
            : new OutcomeUnknown({ operation })
        )
    )

const isPgConnection = (u: unknown): u is PgConnection.PgConnection =>
  Predicate.hasProperty(u, PgConnection.TypeId)

/** A reserved `PgClient` connection carries its session, whose running statement a `CancelRequest` stops. */
const cancelRunning = (connection: SqlConnection.Connection): Effect.Effect<void> =>
  Predicate.hasProperty(connection, "connection") && isPgConnection(connection.connection)
    ? connection.connection.interrupt
    : Effect.void

const statementTimeoutMillis = Duration.toMillis(statementTimeout)
const writeAbandonAfterMillis = Duration.toMillis(writeAbandonAfter)
/** The time a write's cancel is given to be answered before the write is abandoned. */
const cancelLead = writeAbandonAfterMillis - statementTimeoutMillis

/**
 * A write whose answer says what happened: `StoreUnavailable` (503) only when nothing was written,
 * `OutcomeUnknown` (500) when it may have been. The wait for a connection is bounded and may be
 * abandoned: nothing was sent. A sent statement is cancelled at `statementTimeout` and its answer
 * awaited until `writeAbandonAfter`: a write that committed first is a write, a confirmed cancel is
 * `StoreUnavailable`. A server that does not answer by then (frozen, partitioned) leaves the
 * outcome unknown: the statement is abandoned and its connection destroyed (a pinned connection
 * released with a statement in flight is closed, never returned to the pool).
 *
 * One fiber reserves the connection and runs the statement on it, in a scope of its own (closed
 * when the write is abandoned, so a connection that arrives as the deadline abandons the wait is
 * released, and one whose statement never answers is destroyed); two timers bound
 * it from the start: until a connection is reserved the first abandons the wait, after that it
 * cancels the statement; the second abandons the statement. The wait for the connection can be
 * interrupted, the statement cannot. A fiber for the wait and another for the statement, each in
 * the caller's scope, cost 0.03-0.04 ms per write (`a2d298a:scripts/service-cost.ts`); racing the wait
 * against a sleep and forking a sleeping canceller cost three fibers and three timers per write
 * (CONTRIBUTING.md#findings).
 */
export const writeOrFail =
  (sql: SqlClient.SqlClient, operation: string) =>
  <A, R>(
    self: Effect.Effect<A, SqlError.SqlError | Schema.SchemaError, R>
  ): Effect.Effect<A, StoreUnavailable | OutcomeUnknown, R> =>
    Effect.withFiber((parent) => {
      const abandonAfter = boundedBy(parent.getRef(AnswerBy), writeAbandonAfterMillis)
      // Too little time left to wait for a cancel's answer: nothing is sent.
      if (abandonAfter < cancelLead) return Effect.fail(new StoreUnavailable({ operation }))
      const context = parent.context as Context.Context<R>
      type Outcome = Exit.Exit<A, SqlError.SqlError | Schema.SchemaError | StoreUnavailable | OutcomeUnknown>
      let connection: SqlConnection.Connection | undefined
      let outcome: Outcome | undefined
      /** Who waits: for the connection (`reserved`), then for the outcome (`answered`). */
      let onReserved: ((failure?: Outcome) => void) | undefined
      let onOutcome: ((exit: Outcome) => void) | undefined
      const settle = (exit: Outcome) => {
        if (outcome !== undefined) return
        outcome = exit
        clearTimeout(deadline)
        clearTimeout(abandonment)
        if (onReserved !== undefined) onReserved(exit)
        else onOutcome?.(exit)
      }
      // The connection's scope is closed by the fiber when it ends, or from here when it is
      // abandoned: a statement that never answers never ends its fiber, and its connection must close.
      const scope = Scope.makeUnsafe()
      const running = Effect.runForkWith(context)(
        Effect.flatMap(sql.reserve, (reserved) => {
          connection = reserved
          onReserved?.()
          return Effect.provideService(self, sql.transactionService, [reserved, 0]).pipe(
            sentOutcome(operation)
          )
        }).pipe(
          Effect.provideService(Scope.Scope, scope),
          Effect.onExit((exit) => Scope.close(scope, exit))
        )
      )
      /** Settled first: the interrupted fiber may end at once, and its exit must not decide. */
      const abandon = (exit: Outcome) => {
        settle(exit)
        running.interruptUnsafe()
        Effect.runForkWith(context)(Scope.close(scope, exit))
      }
      const deadline = setTimeout(
        () => {
          if (connection !== undefined) return void Effect.runForkWith(context)(cancelRunning(connection))
          abandon(Exit.fail(new StoreUnavailable({ operation })))
        },
        Math.min(statementTimeoutMillis, abandonAfter - cancelLead)
      )
      const abandonment = setTimeout(
        () => abandon(Exit.fail(new OutcomeUnknown({ operation }))),
        abandonAfter
      )
      running.addObserver(settle)
      const reserved = Effect.callback<
        void,
        StoreUnavailable | OutcomeUnknown | SqlError.SqlError | Schema.SchemaError
      >((resume) => {
        if (outcome !== undefined && connection === undefined) return resume(outcome.pipe(Effect.asVoid))
        if (connection !== undefined) return resume(Effect.void)
        onReserved = (failure) => {
          onReserved = undefined
          resume(failure === undefined ? Effect.void : Effect.asVoid(failure))
        }
        return Effect.sync(() => {
          onReserved = undefined
          running.interruptUnsafe()
          clearTimeout(deadline)
          clearTimeout(abandonment)
        })
      })
      const answered = Effect.callback<
        A,
        StoreUnavailable | OutcomeUnknown | SqlError.SqlError | Schema.SchemaError
      >((resume) => {
        if (outcome !== undefined) return resume(outcome)
        onOutcome = resume
      })
      return Effect.uninterruptibleMask((restore) => Effect.andThen(restore(reserved), answered))
    }).pipe(outageOrDefect(operation))

/**
 * Operator statements: the rows decoded with `row`. Any failure, a row that does not decode
 * included, is a defect: operator commands have no outage to report but the error itself.
 */
export const decodeRows =
  <T, E>(row: Schema.Codec<T, E>) =>
  <R>(
    self: Effect.Effect<ReadonlyArray<unknown>, SqlError.SqlError, R>
  ): Effect.Effect<ReadonlyArray<T>, never, R> =>
    self.pipe(Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(row))), Effect.orDie)

/** The first row decoded with `row`, if there is one. */
export const decodeFirst =
  <T, E>(row: Schema.Codec<T, E>) =>
  <R>(
    self: Effect.Effect<ReadonlyArray<unknown>, SqlError.SqlError, R>
  ): Effect.Effect<Option.Option<T>, never, R> =>
    self.pipe(decodeRows(row), Effect.map(Arr.head))

/** The one row a statement always returns (`INSERT … RETURNING`), decoded with `row`. */
export const decodeSingle =
  <T, E>(row: Schema.Codec<T, E>) =>
  <R>(self: Effect.Effect<ReadonlyArray<unknown>, SqlError.SqlError, R>): Effect.Effect<T, never, R> =>
    self.pipe(
      Effect.flatMap(([first]) => Schema.decodeUnknownEffect(row)(first)),
      Effect.orDie
    )

export const IdRow = Schema.Struct({ id: Schema.String })

const decodeCountRow = Schema.decodeUnknownEffect(Schema.Struct({ n: Schema.Number }))

/** The `n` of a `SELECT count(*)::int AS n` statement; a row that does not decode is a defect. */
export const countOf = <E, R>(
  self: Effect.Effect<ReadonlyArray<unknown>, E, R>
): Effect.Effect<number, E, R> =>
  Effect.flatMap(self, ([row]) => Effect.orDie(Effect.map(decodeCountRow(row), (decoded) => decoded.n)))

const tables = { organization: "organizations", origin: "origins" } as const

/** Fails with `UnknownEntity` when no organization (or origin) has this id. */
export const requireExisting = (sql: SqlClient.SqlClient, entity: keyof typeof tables, id: string) =>
  Effect.flatMap(
    sql`SELECT id FROM ${sql(tables[entity])} WHERE id = ${id}`.pipe(decodeFirst(IdRow)),
    (row) => (Option.isNone(row) ? Effect.fail(new UnknownEntity({ entity, id })) : Effect.void)
  )

export interface DatabaseLocation {
  readonly description: string
}

export class Database extends Context.Service<Database, DatabaseLocation>()("lead-intake/Database") {}

const log = (line: string) => process.stderr.write(`${line}\n`)

const embeddedClient = (dataDir: string, maxConnections: number) =>
  Effect.gen(function* () {
    const cluster = yield* Effect.acquireRelease(
      Effect.promise(() => acquireEmbeddedCluster(dataDir, log)),
      (cluster) => Effect.promise(() => cluster.release())
    )
    const connect = {
      host: "127.0.0.1",
      port: cluster.port,
      username: cluster.user,
      password: Redacted.make(cluster.password)
    }
    yield* ensureDatabase(connect, "lead_intake")
    const client = yield* PgClient.make({
      ...connect,
      database: "lead_intake",
      ...poolOptions(maxConnections)
    })
    const pipelined = yield* PgClient.make({ ...connect, database: "lead_intake", ...pipelinedOptions })
    return {
      client,
      pipelined,
      description: `embedded PostgreSQL at 127.0.0.1:${cluster.port}, data in ${cluster.clusterDir}`
    }
  })

/** Names this process's connections in `pg_stat_activity`, which is where the pool gauge counts them. */
export const instanceId = crypto.randomUUID().slice(0, 8)
export const applicationName = `lead-intake/${instanceId}`

const poolOptions = (maxConnections: number) => ({
  maxConnections,
  minConnections: 1,
  connectTimeout: Duration.millis(1500),
  idleTimeout: Duration.minutes(5),
  keepAlive,
  startupParameters: sessionSettings,
  applicationName
})

/**
 * The request path's statements that may share a connection with other requests' (pipelined on a
 * client of their own, so they need no connection of the pool and writes queue less): the reads
 * (key check, property, phone match) and the rate window's count. A pipelined statement cannot be
 * cancelled alone, so no write whose 503 promises "nothing was written" goes here: the count is the
 * one write that may, since a count that commits after its request answered 503 still counts an
 * authenticated request, which docs/contract.md#4-rate-limit counts whatever its outcome. For the same reason its
 * commit does not wait for the WAL flush (`synchronous_commit=off` on these sessions, which reads
 * ignore): a crash of PostgreSQL may forget the last fraction of a second of counts, never a lead.
 * A statement there waits at most a second for a lock (`lock_timeout`; past it, 503): a count for
 * its window's row held elsewhere, a read for a table a migration holds, so neither stalls the
 * statements queued behind it for long. Its connections are named
 * apart, so the pool gauge counts the pool only.
 */
const pipelinedOptions = {
  maxConnections: 2,
  minConnections: 1,
  connectTimeout: Duration.millis(1500),
  idleTimeout: Duration.minutes(5),
  keepAlive,
  startupParameters: { ...sessionSettings, lock_timeout: "1s", synchronous_commit: "off" },
  applicationName: `${applicationName}/pipelined`,
  multiplex: true
}

/** The multiplexed client for the statements above; unset (tests, CLI), they use the `SqlClient`. */
export const PipelinedSql = Context.Reference<SqlClient.SqlClient | undefined>("lead-intake/PipelinedSql", {
  defaultValue: () => undefined
})

/** The client a service runs those statements on: `PipelinedSql` where it is set, else the `SqlClient`. */
export const pipelinedSql: Effect.Effect<SqlClient.SqlClient, never, SqlClient.SqlClient> = Effect.gen(
  function* () {
    return (yield* PipelinedSql) ?? (yield* SqlClient.SqlClient)
  }
)

/**
 * SQL spans take `db.namespace`/`server.address` from explicit options only; read them from the URL
 * when it states them plainly (query parameters can override, so then leave the driver's defaults).
 */
const spanTargetOf = (url: Redacted.Redacted) => {
  const parsed = URL.parse(Redacted.value(url))
  if (parsed === null || parsed.hostname === "" || [...parsed.searchParams.keys()].length > 0) return {}
  let database: string
  let host: string
  try {
    database = decodeURIComponent(parsed.pathname.slice(1))
    host = decodeURIComponent(parsed.hostname.replace(/^\[(.*)\]$/, "$1"))
  } catch {
    return {}
  }
  return {
    host,
    ...(parsed.port === "" ? {} : { port: Number(parsed.port) }),
    ...(database === "" ? {} : { database })
  }
}

const ensureDatabase = (
  connect: { host: string; port: number; username: string; password: Redacted.Redacted },
  database: string
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const admin = yield* PgClient.makeClient({ ...connect, database: "postgres" })
      const rows = yield* admin<{
        exists: boolean
      }>`SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = ${database}) AS exists`
      if (rows[0]?.exists !== true) {
        yield* admin.unsafe(`CREATE DATABASE ${database}`).pipe(
          Effect.catchIf(
            (error) => error.reason._tag === "UniqueViolation",
            () => Effect.void
          )
        )
      }
    })
  )

/**
 * The service cannot run as configured (`NODE_ENV=production` without `DATABASE_URL`, a schema
 * older than the code): one line for the operator, exit status 1.
 */
export class StartRefused extends Schema.TaggedError<StartRefused>()("StartRefused", {
  message: Schema.String
}) {}

/**
 * Where `DATABASE_URL` points, as `host:port/database` (the user and password left out); the whole
 * URL with its password masked when it does not parse that way (a socket directory, parameters).
 */
export const databaseLocation = (url: Redacted.Redacted): string => {
  const parsed = URL.parse(Redacted.value(url))
  if (parsed === null || parsed.hostname === "" || [...parsed.searchParams.keys()].length > 0)
    return redactedDatabaseUrl(url)
  return `${parsed.hostname}:${parsed.port === "" ? "5432" : parsed.port}${parsed.pathname}`
}

/** PgClient + SqlClient on `DATABASE_URL`, or on the embedded cluster under the data directory. */
export const layerClient = Layer.effectContext(
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (config.production && Option.isNone(config.databaseUrl)) {
      return yield* new StartRefused({
        message:
          "NODE_ENV=production needs DATABASE_URL (postgres://user:password@host:port/database); the embedded PostgreSQL is for development only"
      })
    }
    const { client, pipelined, description } = yield* Option.match(config.databaseUrl, {
      onNone: () => embeddedClient(config.dataDir, config.databasePoolSize),
      onSome: (url) =>
        Effect.all({
          client: PgClient.make({ url, ...spanTargetOf(url), ...poolOptions(config.databasePoolSize) }),
          pipelined: PgClient.make({ url, ...spanTargetOf(url), ...pipelinedOptions }),
          description: Effect.succeed(`PostgreSQL at ${databaseLocation(url)}`)
        })
    })
    return Context.make(PgClient.PgClient, client).pipe(
      Context.add(SqlClient.SqlClient, client),
      Context.add(PipelinedSql, pipelined),
      Context.add(Database, { description })
    )
  })
).pipe(Layer.provide(Reactivity.layer))

const migrationLockKey = 4_812_775_001

const runMigrations = Migrator.make({})

const AppliedFunction = Schema.Struct({ name: Schema.String, checksum: Schema.String })

/**
 * The repeatable step after the versioned migrations: every SQL function whose text in
 * `migrations/functions.ts` differs from the one last applied (by checksum) is created again.
 */
const applyFunctions = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE IF NOT EXISTS schema_functions (
      name text PRIMARY KEY,
      checksum text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`
  const rows = yield* sql`SELECT name, checksum FROM schema_functions`.pipe(
    Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(AppliedFunction)))
  )
  const applied = new Map(rows.map((row) => [row.name, row.checksum]))
  // What `SET search_path FROM CURRENT` pins a SECURITY DEFINER function to: this schema, then pg_temp.
  yield* sql`SELECT set_config('search_path', quote_ident(current_schema()) || ', pg_temp', true)`
  const changed: Array<string> = []
  for (const { name, text } of sqlFunctions) {
    const checksum = hash("sha256", text, "hex")
    if (applied.get(name) === checksum) continue
    yield* sql.unsafe(text)
    yield* sql`
      INSERT INTO schema_functions (name, checksum) VALUES (${name}, ${checksum})
      ON CONFLICT (name) DO UPDATE SET checksum = EXCLUDED.checksum, applied_at = now()`
    changed.push(name)
  }
  return changed
})

/**
 * Applies pending migrations, then the SQL functions whose text changed; an advisory lock makes
 * concurrent starts wait for each other.
 */
export const migrate = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [applied, functions] = yield* sql.withTransaction(
    Effect.gen(function* () {
      // A migration may take longer than the service's statements, and wait for another start's.
      yield* sql`SET LOCAL statement_timeout = 0`
      yield* sql`SET LOCAL lock_timeout = 0`
      yield* sql`SELECT pg_advisory_xact_lock(${migrationLockKey})`
      const applied = yield* runMigrations({
        loader: Migrator.fromRecord(migrations),
        table: "schema_migrations"
      })
      return [applied, yield* applyFunctions] as const
    })
  )
  if (functions.length > 0)
    yield* Effect.logInfo("SQL functions applied").pipe(Effect.annotateLogs({ functions }))
  return applied.map(([id, name]) => `${String(id).padStart(4, "0")}_${name}`)
}).pipe(Effect.withSpan("Sql.migrate"))

export const layerMigrated = Layer.effectDiscard(
  Effect.gen(function* () {
    const applied = yield* migrate
    if (applied.length > 0) yield* Effect.logInfo("migrations applied").pipe(Effect.annotateLogs({ applied }))
  }).pipe(Effect.orDie)
)

const AppliedRow = Schema.Struct({ migration_id: Schema.Number })

/** The migrations this code expects that the database has not applied (`schema_migrations`). */
export const pendingMigrations = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [table] = yield* sql<{
    present: boolean
  }>`SELECT to_regclass('schema_migrations') IS NOT NULL AS present`
  const rows =
    table?.present === true
      ? yield* sql`SELECT migration_id FROM schema_migrations`.pipe(decodeRows(AppliedRow))
      : []
  const applied = new Set(rows.map((row) => row.migration_id))
  return Object.keys(migrations).filter((name) => !applied.has(Number(name.slice(0, 4))))
}).pipe(Effect.withSpan("Sql.pendingMigrations"))

/**
 * `MIGRATE_ON_START=false` (`serve --no-migrate`): nothing is migrated (`lead-intake migrate` is the
 * deploy step), and a schema older than the code is refused. A newer one is fine: migrations expand
 * before the code that needs them ships, so the previous release runs on the next one's schema.
 */
export const layerSchemaChecked = Layer.effectDiscard(
  Effect.gen(function* () {
    const pending = yield* Effect.orDie(pendingMigrations)
    if (pending.length > 0) {
      return yield* new StartRefused({
        message: `the database schema is older than this code (pending: ${pending.join(", ")}); run \`lead-intake migrate\` first (MIGRATE_ON_START=false)`
      })
    }
    yield* Effect.logDebug("schema up to date, not migrating (MIGRATE_ON_START=false)")
  })
)

/** Migrates on start (the default), or only checks the schema with `MIGRATE_ON_START=false`. */
const layerSchema = Layer.unwrap(
  AppConfig.useSync((config) => (config.migrateOnStart ? layerMigrated : layerSchemaChecked))
)

/** The client with the schema brought up to date (or checked): what the server and the CLI run on. */
export const layer = layerSchema.pipe(Layer.provideMerge(layerClient))

/** An HTTP API shows instants as ISO-8601 text; PostgreSQL hands them over as dates. */
const instantsAsText = (value: unknown): unknown =>
  value instanceof Date
    ? value.toISOString()
    : Array.isArray(value)
      ? value.map(instantsAsText)
      : value !== null && typeof value === "object"
        ? Object.fromEntries(Object.entries(value).map(([key, field]) => [key, instantsAsText(field)]))
        : value

/** Rows decoded with the schema an API contract declares for them, so a row type is declared once. */
export const decodeItems =
  <S extends Schema.Top & { readonly DecodingServices: never }>(item: S) =>
  <R>(
    self: Effect.Effect<ReadonlyArray<unknown>, SqlError.SqlError, R>
  ): Effect.Effect<ReadonlyArray<S["Type"]>, never, R> =>
    self.pipe(
      Effect.flatMap((rows) => Schema.decodeUnknownEffect(Schema.Array(item))(instantsAsText(rows))),
      Effect.orDie
    )

/** A value assembled from several statements, decoded with the schema the contract declares for it. */
export const decodeAs = <S extends Schema.Top & { readonly DecodingServices: never }>(
  schema: S,
  value: unknown
) => Schema.decodeUnknownEffect(schema)(instantsAsText(value)).pipe(Effect.orDie) as Effect.Effect<S["Type"]>

export const decodeItem =
  <S extends Schema.Top & { readonly DecodingServices: never }>(item: S) =>
  <R>(
    self: Effect.Effect<ReadonlyArray<unknown>, SqlError.SqlError, R>
  ): Effect.Effect<Option.Option<S["Type"]>, never, R> =>
    self.pipe(
      decodeItems(item),
      Effect.map((rows) => Option.fromNullishOr(rows[0]))
    )
