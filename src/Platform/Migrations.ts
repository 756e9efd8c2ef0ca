import { hash } from "node:crypto"
import { Effect, Layer, Schema } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import { sqlFunctions } from "../../migrations/functions.ts"
import { migrations } from "../../migrations/index.ts"
import { AppConfig } from "./Config.ts"
import { decodeRows, layerClient, StartRefused } from "./Sql.ts"

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
}).pipe(Effect.withSpan("Migrations.migrate"))

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
}).pipe(Effect.withSpan("Migrations.pending"))

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
