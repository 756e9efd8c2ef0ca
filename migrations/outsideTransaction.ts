import { Effect, Schedule } from "effect"
import { SqlClient, SqlError } from "effect/sql"

const marked = new WeakSet<object>()
const changingSchema = new WeakSet<object>()

/**
 * Declares that a migration runs outside a transaction (`CREATE INDEX CONCURRENTLY` cannot run in
 * one). The migrator runs it alone, on one connection holding the migration lock, without statement
 * or lock timeouts, and records it only once it has succeeded: a crash part-way leaves it pending, so
 * it must be safe to run again from the start (`createIndexConcurrently` is).
 */
export const outsideTransaction = <A, E, R>(migration: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
  marked.add(migration)
  return migration
}

export const runsOutsideTransaction = (migration: unknown): boolean =>
  typeof migration === "object" && migration !== null && marked.has(migration)

/**
 * Declares that a migration changes the schema of tables the request path uses, outside the
 * migrator's transaction, in transactions of its own made with `shortTransaction`: one table's
 * locks at a time, each held for a few milliseconds, so that no request waits behind it for long
 * and none deadlocks with it. It runs as an `outsideTransaction` migration does (alone, recorded
 * once it has succeeded, run again from the start after a crash), but the SQL functions are applied
 * after it rather than before, since they may depend on what it changes.
 */
export const inShortTransactions = <A, E, R>(migration: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
  changingSchema.add(migration)
  return outsideTransaction(migration)
}

export const changesSchemaOutsideTransaction = (migration: unknown): boolean =>
  typeof migration === "object" && migration !== null && changingSchema.has(migration)

/**
 * How long a statement of a `shortTransaction` waits for a lock: a request that arrives meanwhile
 * queues behind the waiting statement, so this bounds its wait too (with the few milliseconds the
 * statement then takes, as it changes the catalog only).
 */
export const shortLockTimeout = "200ms"

const isLockConflict = (error: unknown) =>
  SqlError.isSqlError(error) &&
  (error.reason._tag === "LockTimeoutError" || error.reason._tag === "DeadlockError")

/**
 * `statements` in a transaction of their own, each waiting at most `shortLockTimeout` for a lock;
 * when one gives up (or PostgreSQL breaks a deadlock with the request path by cancelling it), the
 * transaction is rolled back and run again a moment later, for up to 10 minutes. Between tries the
 * requests that queued behind it go on. They must be statements that only change the catalog (or
 * touch few rows), and safe to run again.
 */
export const shortTransaction = <A, E, R>(what: string, statements: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return yield* sql
      .withTransaction(
        Effect.andThen(sql.unsafe(`SET LOCAL lock_timeout = '${shortLockTimeout}'`), statements)
      )
      .pipe(
        Effect.tapError((error) =>
          isLockConflict(error)
            ? Effect.logInfo("a lock was not free in time: trying again").pipe(Effect.annotateLogs({ what }))
            : Effect.void
        ),
        Effect.retry({
          while: isLockConflict,
          schedule: Schedule.spaced("250 millis").pipe(
            Schedule.jittered,
            Schedule.upTo({ duration: "10 minutes" })
          )
        })
      )
  })

/**
 * `CREATE INDEX CONCURRENTLY name ON definition`, again after a crash: a build that was interrupted
 * leaves an invalid index under that name (unused by queries, still maintained by writes), which is
 * dropped and built again; a valid one is kept.
 */
export const createIndexConcurrently = (
  name: string,
  definition: string,
  options?: { readonly unique?: boolean }
) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [existing] = yield* sql<{ valid: boolean }>`
      SELECT i.indisvalid AS valid FROM pg_index i WHERE i.indexrelid = to_regclass(${name})`
    if (existing?.valid === true) return
    if (existing !== undefined) {
      yield* Effect.logWarning("dropping an invalid index left by an interrupted build").pipe(
        Effect.annotateLogs({ index: name })
      )
      yield* sql.unsafe(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`)
    }
    yield* sql.unsafe(
      `CREATE ${options?.unique === true ? "UNIQUE " : ""}INDEX CONCURRENTLY ${name} ON ${definition}`
    )
  })
