import { Effect } from "effect"
import { SqlClient } from "effect/sql"

const marked = new WeakSet<object>()

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
