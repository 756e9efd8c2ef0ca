import { readFileSync } from "node:fs"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient } from "effect/sql"
import pg from "pg"
import { describe, expect, it } from "vitest"
import { sqlFunctions } from "../../migrations/functions.ts"
import { migrations } from "../../migrations/index.ts"
import {
  changesSchemaOutsideTransaction,
  runsOutsideTransaction
} from "../../migrations/outsideTransaction.ts"
import * as Migrations from "../../src/Platform/Migrations.ts"
import { json, processTimeout, run } from "../e2e/Processes.ts"
import { withSql } from "../faults/support.ts"
import { createDatabase, databaseUrl } from "../support/Database.ts"

/**
 * The migrator on the run's PostgreSQL (the embedded 18, or CI's Debian server through
 * TEST_DATABASE_URL): a migration declared outside a transaction (0017, `CREATE INDEX CONCURRENTLY`)
 * is applied once, by one of two concurrent migrators, and run again after a build interrupted
 * part-way it rebuilds the invalid index it left; `migrate --status` tells applied, pending and
 * newer-than-this-code apart; `migrateThrough` makes an older release's database, which `migrate`
 * then brings up to date.
 */

const concurrent = "0017_leads_assignee_index"
const index = "leads_assignee_idx"

const freshUrl = async () => databaseUrl(await Effect.runPromise(createDatabase("migrations")))

const migrate = (url: string) =>
  withSql(url, (sql) => Effect.provideService(Migrations.migrate, SqlClient.SqlClient, sql))
const status = (url: string) =>
  withSql(url, (sql) => Effect.provideService(Migrations.status, SqlClient.SqlClient, sql))
const migrateThrough = (
  url: string,
  last: Migrations.MigrationName,
  functions?: ReadonlyArray<Migrations.SqlFunction>
) =>
  withSql(url, (sql) =>
    Effect.provideService(Migrations.migrateThrough(last, functions), SqlClient.SqlClient, sql)
  )

/** On a pool whose sessions carry timeouts shorter than the wait below, as the service's do. */
const migrateUnderServiceTimeouts = (url: string) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(
        PgClient.makeClient({
          url: Redacted.make(url),
          startupParameters: { statement_timeout: "500ms", lock_timeout: "500ms" }
        }),
        (sql) => Effect.provideService(Migrations.migrate, SqlClient.SqlClient, sql)
      )
    ).pipe(Effect.provide(Reactivity.layer), Effect.orDie)
  )

const query = async <R>(url: string, text: string, values: ReadonlyArray<unknown> = []) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(text, [...values])).rows as Array<R>
  } finally {
    await client.end()
  }
}

const indexValidity = async (url: string) =>
  (
    await query<{ valid: boolean }>(
      url,
      "SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = to_regclass($1)",
      [index]
    )
  ).map((row) => row.valid)

/** A migrated database without 0017 (not recorded, its index gone), and a writer's transaction open on `leads`. */
const withoutIndexBuild = async () => {
  const url = await freshUrl()
  await migrate(url)
  await query(url, "DELETE FROM schema_migrations WHERE migration_id = 17")
  await query(url, `DROP INDEX ${index}`)
  const writer = new pg.Client({ connectionString: url })
  await writer.connect()
  await writer.query("BEGIN")
  await writer.query("LOCK TABLE leads IN ROW EXCLUSIVE MODE")
  return { url, writer }
}

describe("migrations", () => {
  it("declares 0017, 0022, 0023 and 0025-0028 outside a transaction, 0022, 0026, 0027 and 0028 changing the schema", () => {
    // The shipped migrations, which never change; a later one is held to the rule below.
    const declared = (test: (migration: unknown) => boolean) =>
      Object.entries(migrations)
        .filter(([name, migration]) => Number(name.slice(0, 4)) <= 28 && test(migration))
        .map(([name]) => name)
    expect(declared(runsOutsideTransaction)).toEqual([
      concurrent,
      "0022_organization_columns",
      "0023_organization_backfill",
      "0025_organization_keys_validated",
      "0026_organization_keys",
      "0027_admission_on_the_coordinator",
      "0028_write_documents"
    ])
    expect(declared(changesSchemaOutsideTransaction)).toEqual([
      "0022_organization_columns",
      "0026_organization_keys",
      "0027_admission_on_the_coordinator",
      "0028_write_documents"
    ])
  })

  it("a migration after 0028 that alters a table does so in short transactions (docs/sre.md)", () => {
    const later = Object.entries(migrations).filter(([name]) => Number(name.slice(0, 4)) > 28)
    const altering = later.filter(([name]) =>
      /\bALTER\s+TABLE\b/i.test(readFileSync(new URL(`../../migrations/${name}.ts`, import.meta.url), "utf8"))
    )
    expect(altering.filter(([, migration]) => !changesSchemaOutsideTransaction(migration))).toEqual([])
  })

  it("two migrators at once: every migration applied once, the concurrent index built and valid", async () => {
    const url = await freshUrl()
    const [first, second] = await Promise.all([migrate(url), migrate(url)])
    expect([...first, ...second].sort()).toEqual(Object.keys(migrations).sort())
    expect(await indexValidity(url)).toEqual([true])
    const current = await status(url)
    expect(current.pending).toEqual([])
    expect(current.applied.map((migration) => migration.name)).toEqual(Object.keys(migrations))
    expect(current.schema_newer_than_code).toBe(false)
    expect(await migrate(url)).toEqual([])
  })

  it("after a build interrupted part-way, the next migrate drops the invalid index and builds it again", async () => {
    // As if the process died during 0017: not recorded, and its index left invalid by a build that
    // was cancelled while it waited for a writer's transaction.
    const { url, writer } = await withoutIndexBuild()
    const builder = new pg.Client({ connectionString: url })
    await builder.connect()
    await builder.query("SET statement_timeout = '300ms'")
    await expect(
      builder.query(`CREATE INDEX CONCURRENTLY ${index} ON leads (assignee_id) WHERE assignee_id IS NOT NULL`)
    ).rejects.toThrow(/statement timeout/)
    await builder.end()
    await writer.query("ROLLBACK")
    await writer.end()
    expect(await indexValidity(url)).toEqual([false])
    expect((await status(url)).pending).toEqual([concurrent])

    expect(await migrate(url)).toEqual([concurrent])
    expect(await indexValidity(url)).toEqual([true])
    expect((await status(url)).pending).toEqual([])
  })

  it("waits for the writers a concurrent build must wait for, past the sessions' statement and lock timeouts", async () => {
    const { url, writer } = await withoutIndexBuild()
    const migrating = migrateUnderServiceTimeouts(url)
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    expect((await status(url)).pending).toEqual([concurrent])
    await writer.query("COMMIT")
    await writer.end()
    expect(await migrating).toEqual([concurrent])
    expect(await indexValidity(url)).toEqual([true])
  })

  it("migrateThrough: the migrations up to one and the functions given, the later ones pending until migrate", async () => {
    const url = await freshUrl()
    const names = Object.keys(migrations)
    const before = names.indexOf(concurrent) - 1
    const older = sqlFunctions.filter((fn) => fn.name === "lead_match_key")
    const appliedFunctions = async () =>
      (await query<{ name: string }>(url, "SELECT name FROM schema_functions")).map((row) => row.name).sort()

    expect(await migrateThrough(url, names[before] as Migrations.MigrationName, older)).toEqual(
      names.slice(0, before + 1)
    )
    expect((await status(url)).pending).toEqual(names.slice(before + 1))
    expect(await appliedFunctions()).toEqual(["lead_match_key"])
    expect(await indexValidity(url)).toEqual([])

    // The next one alone, outside a transaction as migrate runs it; nothing else, no function.
    expect(await migrateThrough(url, concurrent)).toEqual([concurrent])
    expect(await indexValidity(url)).toEqual([true])
    expect((await status(url)).pending).toEqual(names.slice(before + 2))
    expect(await appliedFunctions()).toEqual(["lead_match_key"])

    expect(await migrate(url)).toEqual(names.slice(before + 2))
    expect(await appliedFunctions()).toEqual(sqlFunctions.map((fn) => fn.name).sort())
  })

  it("a table a request holds is altered in short tries: a writer queued behind them waits 200 ms at most, never the holder's time", async () => {
    const url = await freshUrl()
    const names = Object.keys(migrations) as Array<Migrations.MigrationName>
    const columns = names.indexOf("0022_organization_columns")
    await migrateThrough(url, names[columns - 1]!)
    // A request mid-write on request_log, for 2.5 s.
    const holder = new pg.Client({ connectionString: url })
    await holder.connect()
    await holder.query("BEGIN")
    await holder.query("LOCK TABLE request_log IN ROW EXCLUSIVE MODE")
    const migrating = migrateThrough(url, names[columns]!)
    // Writers arriving meanwhile: each queues behind the migration's wait for its lock, if at all.
    const writer = new pg.Client({ connectionString: url })
    await writer.connect()
    const waits: Array<number> = []
    const until = performance.now() + 2_500
    while (performance.now() < until) {
      const started = performance.now()
      await writer.query("BEGIN")
      await writer.query("LOCK TABLE request_log IN ROW EXCLUSIVE MODE")
      await writer.query("COMMIT")
      waits.push(performance.now() - started)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    const columnsOf = async (table: string) =>
      (
        await query<{ column_name: string }>(
          url,
          "SELECT column_name FROM information_schema.columns WHERE table_name = $1 AND column_name = 'organization_id'",
          [table]
        )
      ).length
    // The tables before it are done; it is not, nor recorded, while the request holds it.
    expect(await columnsOf("api_keys")).toBe(1)
    expect(await columnsOf("request_log")).toBe(0)
    expect((await status(url)).pending[0]).toBe(names[columns])
    await holder.query("COMMIT")
    await holder.end()
    await writer.end()
    expect(await migrating).toEqual([names[columns]])
    expect(await columnsOf("request_log")).toBe(1)
    expect(await columnsOf("webhook_deliveries")).toBe(1)
    // Some writers queued behind a try (else the test shows nothing), none for long.
    expect(Math.max(...waits)).toBeGreaterThan(50)
    expect(Math.max(...waits)).toBeLessThan(600)
  })

  it("migrate --status (text and --json): applied and pending by name, a schema newer than the code, and a gap applied", {
    timeout: processTimeout * 2
  }, async () => {
    const url = await freshUrl()
    const env = { DATABASE_URL: url, LOG_LEVEL: "Warn" }
    const before = await run(["migrate", "--status", "--json"], { env })
    expect(before.code, before.stderr).toBe(0)
    expect(json(before)).toEqual({
      applied: [],
      pending: Object.keys(migrations),
      unknown: [],
      schema_newer_than_code: false
    })
    expect(json(await run(["migrate", "--json"], { env }))).toEqual({ applied: Object.keys(migrations) })
    await query(
      url,
      "INSERT INTO schema_migrations (migration_id, name) VALUES (9999, 'from_a_newer_release')"
    )
    const after = json(await run(["migrate", "--status", "--json"], { env }))
    expect(after.pending).toEqual([])
    expect(after.applied.map((migration: { name: string }) => migration.name)).toEqual([
      ...Object.keys(migrations),
      "9999_from_a_newer_release"
    ])
    expect(after.unknown).toEqual(["9999_from_a_newer_release"])
    expect(after.schema_newer_than_code).toBe(true)
    // Numbered below the newest applied (another release's, or a branch merged late): still applied.
    await query(url, "DELETE FROM schema_migrations WHERE migration_id IN (16, 17)")
    await query(url, `DROP INDEX ${index}`)
    expect(json(await run(["migrate", "--status", "--json"], { env })).pending).toEqual([
      "0016_announced_urls",
      concurrent
    ])
    expect(json(await run(["migrate", "--json"], { env })).applied).toEqual([
      "0016_announced_urls",
      concurrent
    ])
    expect(await indexValidity(url)).toEqual([true])
    const text = await run(["migrate", "--status"], { env })
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout).toContain(`Applied (${Object.keys(migrations).length + 1}):`)
    expect(text.stdout).toContain("Pending: none")
    expect(text.stdout).toContain(
      "The schema is newer than this code: applied here but unknown to it: 9999_from_a_newer_release"
    )
  })
})
