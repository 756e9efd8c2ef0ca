import { hash } from "node:crypto"
import { Effect, Layer, Schedule, Schema } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import {
  coordinatorTables,
  distributedFunctions,
  distributedTables,
  referenceTables
} from "../../migrations/distribution.ts"
import { sqlFunctions } from "../../migrations/functions.ts"
import { migrations } from "../../migrations/index.ts"
import { syncKeyDirectory } from "../../migrations/keyDirectory.ts"
import {
  changesSchemaOutsideTransaction,
  runsOutsideTransaction
} from "../../migrations/outsideTransaction.ts"
import { AppConfig } from "./Config.ts"
import { decodeRows, layerClient, StartRefused } from "./Sql/Sql.ts"

const migrationLockKey = 4_812_775_001

const AppliedFunction = Schema.Struct({ name: Schema.String, checksum: Schema.String })

/** One SQL function's text, as `migrations/functions.ts` lists them. */
export type SqlFunction = (typeof sqlFunctions)[number]

/**
 * The repeatable step after the versioned migrations: every SQL function whose text in `functions`
 * (`migrations/functions.ts`) differs from the one last applied (by checksum) is created again.
 */
const applyFunctions = (functions: ReadonlyArray<SqlFunction>) =>
  Effect.gen(function* () {
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
    for (const { name, text } of functions) {
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

const migrationsTable = "schema_migrations"

const idOf = (name: string) => Number(name.slice(0, 4))

const AppliedRow = Schema.Struct({
  migration_id: Schema.Number,
  name: Schema.String,
  created_at: Schema.Date
})

/** What `schema_migrations` records, oldest first; nothing when the table does not exist yet. */
const appliedRows = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [table] = yield* sql<{
    present: boolean
  }>`SELECT to_regclass(${migrationsTable}) IS NOT NULL AS present`
  if (table?.present !== true) return []
  return yield* sql`SELECT migration_id, name, created_at FROM schema_migrations ORDER BY migration_id`.pipe(
    decodeRows(AppliedRow)
  )
})

/**
 * Migrations run on one reserved connection holding the migration lock for its session, taken by
 * polling outside any transaction: a waiter blocked in `pg_advisory_lock` or idle in a transaction
 * keeps a snapshot, which a `CREATE INDEX CONCURRENTLY` run by the holder would wait for in turn,
 * for ever. (The previous release's migrator waits in `pg_advisory_xact_lock`; should it wait during
 * such a build, PostgreSQL sees the cycle and cancels one of the two, to be run again.)
 */
const lockPolled = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql<{ locked: boolean }>`SELECT pg_try_advisory_lock(${migrationLockKey}) AS locked`.pipe(
    Effect.map(([row]) => row?.locked === true),
    Effect.repeat({ until: (locked) => locked, schedule: Schedule.spaced("250 millis") })
  )
})

export type MigrationName = keyof typeof migrations

/** One migration, recorded in `schema_migrations` (the table Effect's migrator kept) once it succeeded. */
const apply = (name: MigrationName) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* migrations[name].pipe(
      Effect.mapError(
        (cause) =>
          new Migrator.MigrationError({ kind: "Failed", message: `Migration "${name}" failed`, cause })
      ),
      Effect.withSpan(`Migrator ${name}`)
    )
    yield* sql`INSERT INTO schema_migrations (migration_id, name) VALUES (${idOf(name)}, ${name.slice(5)})`
  })

/**
 * Every migration this code knows and the database has not applied, in order (one numbered below
 * the newest applied included: branches merged in another order than they were numbered), up to
 * `through` when given.
 */
const pendingNames = (through: MigrationName | undefined) =>
  Effect.map(appliedRows, (rows) => {
    const applied = new Set(rows.map((row) => row.migration_id))
    return (Object.keys(migrations) as Array<MigrationName>).filter(
      (name) => !applied.has(idOf(name)) && (through === undefined || idOf(name) <= idOf(through))
    )
  })

/**
 * The pending migrations (up to `through`) up to the first that runs outside a transaction, applied
 * in one transaction; then, when only migrations outside a transaction that change no schema the
 * functions depend on are left after them (index builds, validations), the SQL functions
 * `functions`, in the same transaction as the schema they are written for. A migration that changes
 * the schema in short transactions of its own (`inShortTransactions`) comes before the functions:
 * when it is the last, they are applied after it, in a transaction of their own. Returns the next
 * migration to run outside a transaction.
 */
const migrateInTransaction = (through: MigrationName | undefined, functions: ReadonlyArray<SqlFunction>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(
      Effect.gen(function* () {
        // A migration may take longer than the service's statements, and wait for another start's.
        yield* sql`SET LOCAL statement_timeout = 0`
        yield* sql`SET LOCAL lock_timeout = 0`
        yield* sql`
        CREATE TABLE IF NOT EXISTS schema_migrations (
          migration_id integer PRIMARY KEY,
          created_at timestamptz NOT NULL DEFAULT now(),
          name text NOT NULL
        )`
        const pending = yield* pendingNames(through)
        const outsideAt = pending.findIndex((name) => runsOutsideTransaction(migrations[name]))
        const now = outsideAt === -1 ? pending : pending.slice(0, outsideAt)
        for (const name of now) yield* apply(name)
        const lastInTransaction = pending
          .slice(now.length)
          .every(
            (name) =>
              runsOutsideTransaction(migrations[name]) && !changesSchemaOutsideTransaction(migrations[name])
          )
        const changed = lastInTransaction ? yield* applyFunctions(functions) : []
        return { applied: now as ReadonlyArray<string>, functions: changed, outside: pending[outsideAt] }
      })
    )
  })

/**
 * One migration that runs outside a transaction, with no statement or lock timeout, recorded once it
 * has succeeded: a crash before leaves it pending, to run again from the start.
 */
const migrateOutsideTransaction = (name: MigrationName) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* Effect.logInfo("running a migration outside a transaction").pipe(
      Effect.annotateLogs({ migration: name })
    )
    yield* sql`SET statement_timeout = 0`
    yield* sql`SET lock_timeout = 0`
    yield* apply(name).pipe(
      Effect.ensuring(
        Effect.ignore(sql`RESET statement_timeout`.pipe(Effect.andThen(sql`RESET lock_timeout`)))
      )
    )
  })

const migrateWith = (through: MigrationName | undefined, functions: ReadonlyArray<SqlFunction>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const connection = yield* sql.reserve
      const steps = Effect.gen(function* () {
        yield* lockPolled
        const applied: Array<string> = []
        while (true) {
          const step = yield* migrateInTransaction(through, functions)
          applied.push(...step.applied)
          if (step.functions.length > 0)
            yield* Effect.logInfo("SQL functions applied").pipe(
              Effect.annotateLogs({ functions: step.functions })
            )
          if (step.outside === undefined) {
            // Placed on Citus once the schema is whole (an older release's, `through`, is not placed).
            const placed = through === undefined ? yield* distribute : []
            if (placed.length > 0)
              yield* Effect.logInfo("distributed on Citus").pipe(Effect.annotateLogs({ placed }))
            const synced = through === undefined ? yield* syncKeyDirectory : 0
            if (synced > 0)
              yield* Effect.logInfo("key directory brought in step").pipe(
                Effect.annotateLogs({ keys: synced })
              )
            return applied
          }
          yield* migrateOutsideTransaction(step.outside)
          applied.push(step.outside)
        }
      }).pipe(Effect.ensuring(Effect.ignore(sql`SELECT pg_advisory_unlock(${migrationLockKey})`)))
      // Every statement on that one connection; depth -1: no transaction is open there yet, so the
      // next `withTransaction` begins one (rather than a savepoint) on it.
      return yield* Effect.provideService(steps, sql.transactionService, [connection, -1])
    })
  )

/**
 * The one signature (`name(uuid, jsonb)`, as `regprocedure` spells it) of the service's function
 * `name`: `migrations/distribution.ts` names functions without their arguments. Fails when the
 * schema has none, or more than one (an overload would make the name ambiguous: which one Citus
 * should run on the organization's node).
 */
export const signatureOf = (name: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const found = yield* sql<{ signature: string }>`
      SELECT p.oid::regprocedure::text AS signature FROM pg_proc p
      WHERE p.proname = ${name} AND p.pronamespace = current_schema()::regnamespace
      ORDER BY 1`
    const [only] = found
    if (only === undefined || found.length > 1)
      return yield* new Migrator.MigrationError({
        kind: "Failed",
        message:
          only === undefined
            ? `the function ${name} to distribute does not exist`
            : `the function ${name} to distribute is ambiguous: ${found.map((row) => row.signature).join(", ")}`
      })
    return only.signature
  })

/**
 * On a Citus coordinator (the `citus` extension is present), what `migrations/distribution.ts` says and
 * the cluster does not have yet: the global tables made reference tables, the tenant tables
 * distributed by `organization_id` in one colocation group (rows already there move to the workers),
 * the request path's functions distributed by their organization argument. Nothing on a plain
 * PostgreSQL, and nothing on a cluster that has it all. Returns what it placed.
 */
export const distribute = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [citus] = yield* sql<{
    present: boolean
  }>`SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AS present`
  if (citus?.present !== true) return []
  return yield* sql.withTransaction(
    Effect.gen(function* () {
      // One transaction that creates shards and then changes the tables again: Citus must do it over
      // one connection per node.
      yield* sql`SET LOCAL citus.multi_shard_modify_mode TO 'sequential'`
      const placed = new Map(
        (yield* sql<{ name: string; kind: string }>`
          SELECT table_name::text AS name, citus_table_type AS kind FROM citus_tables`).map((row) => [
          row.name,
          row.kind
        ])
      )
      const toReference = referenceTables.filter((table) => placed.get(table) !== "reference")
      const toDistribute = distributedTables.filter((table) => placed.get(table) !== "distributed")
      const done: Array<string> = []
      if (toReference.length > 0 || toDistribute.length > 0) {
        // Citus places a table only while no local table refers to it, nor it to one: the foreign keys
        // of the tables to place are set aside meanwhile, and added back once every table is placed.
        const moving = [...toReference, ...toDistribute]
        const keys = yield* sql<{ table: string; name: string; definition: string }>`
          SELECT conrelid::regclass::text AS table, conname AS name, pg_get_constraintdef(oid) AS definition
          FROM pg_constraint
          WHERE contype = 'f' AND connamespace = current_schema()::regnamespace AND conparentid = 0
            AND (conrelid::regclass::text IN ${sql.in(moving)} OR confrelid::regclass::text IN ${sql.in(moving)})`
        for (const key of keys) yield* sql.unsafe(`ALTER TABLE ${key.table} DROP CONSTRAINT ${key.name}`)
        for (const table of toReference) {
          yield* sql`SELECT create_reference_table(${table})`
          done.push(table)
        }
        const [anchor] = distributedTables
        for (const table of toDistribute) {
          yield* sql`
            SELECT create_distributed_table(${table}, 'organization_id',
                                            colocate_with => ${table === anchor ? "default" : anchor})`
          done.push(table)
        }
        for (const key of keys)
          yield* sql.unsafe(`ALTER TABLE ${key.table} ADD CONSTRAINT ${key.name} ${key.definition}`)
      }
      for (const { name, argument } of distributedFunctions) {
        const signature = yield* signatureOf(name)
        const [known] = yield* sql<{ distributed: boolean }>`
          SELECT EXISTS (SELECT 1 FROM pg_dist_object WHERE classid = 'pg_proc'::regclass
                         AND objid = ${signature}::regprocedure AND distribution_argument_index IS NOT NULL)
          AS distributed`
        if (known?.distributed === true) continue
        yield* sql`SELECT create_distributed_function(${signature}, ${argument}, colocate_with => ${"leads"})`
        done.push(name)
      }
      return done
    })
  )
}).pipe(Effect.withSpan("Migrations.distribute"))

export { coordinatorTables, distributedTables, referenceTables }

/**
 * Applies pending migrations, then the SQL functions whose text changed; the migration lock makes
 * concurrent starts wait for each other. Migrations run in order, in one transaction per run of
 * them between those that run outside a transaction (`migrations/outsideTransaction.ts`).
 */
export const migrate = migrateWith(undefined, sqlFunctions).pipe(Effect.withSpan("Migrations.migrate"))

/**
 * The pending migrations up to `last` only, as `migrate` applies them, then `functions` (none by
 * default) instead of today's: those are written for today's schema, where they may name what a
 * later migration adds. With an older release's `migrations/functions.ts` as `functions`, this makes
 * that release's database (`scripts/rehearse-migrations.ts`); `migrate` then upgrades it.
 */
export const migrateThrough = (last: MigrationName, functions: ReadonlyArray<SqlFunction> = []) =>
  migrateWith(last, functions).pipe(Effect.withSpan("Migrations.migrateThrough", { attributes: { last } }))

export const layerMigrated = Layer.effectDiscard(
  Effect.gen(function* () {
    const applied = yield* migrate
    if (applied.length > 0) yield* Effect.logInfo("migrations applied").pipe(Effect.annotateLogs({ applied }))
  }).pipe(Effect.orDie)
)

export interface MigrationStatus {
  readonly applied: ReadonlyArray<{ readonly name: string; readonly applied_at: string }>
  readonly pending: ReadonlyArray<string>
  /** Applied migrations this code does not know: a newer release migrated this database. */
  readonly unknown: ReadonlyArray<string>
  readonly schema_newer_than_code: boolean
}

/** What the database has applied against what this code expects (`migrate --status`). */
export const status = Effect.gen(function* () {
  const rows = yield* appliedRows
  const applied = new Set(rows.map((row) => row.migration_id))
  const known = new Set(Object.keys(migrations).map(idOf))
  const unknown = rows
    .filter((row) => !known.has(row.migration_id))
    .map((row) => `${String(row.migration_id).padStart(4, "0")}_${row.name}`)
  return {
    applied: rows.map((row) => ({
      name: `${String(row.migration_id).padStart(4, "0")}_${row.name}`,
      applied_at: row.created_at.toISOString()
    })),
    pending: Object.keys(migrations).filter((name) => !applied.has(idOf(name))),
    unknown,
    schema_newer_than_code: unknown.length > 0
  } satisfies MigrationStatus
}).pipe(Effect.withSpan("Migrations.status"))

/** The migrations this code expects that the database has not applied (`schema_migrations`). */
export const pendingMigrations = Effect.map(status, (current) => current.pending)

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
