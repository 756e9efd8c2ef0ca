import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { coordinatorTables, distributedTables, referenceTables } from "../../migrations/distribution.ts"
import { layerFreshDatabase } from "../support/Database.ts"

/**
 * The road past one PostgreSQL (docs/sre.md, "Distributing by organization"): distributing the tenant
 * tables by `organization_id` with Citus needs every primary key, unique key (constraint or unique
 * index) and foreign key of a tenant table to carry `organization_id`. Read from the live catalog of a
 * migrated database: every table is placed by `migrations/distribution.ts` (reference, distributed or
 * the coordinator's own; a partition goes with its table), and no key of a tenant table lacks the column. A new table or key that breaks
 * the rule fails here.
 */

/** A tenant table has an `organization_id` column, or hangs by a foreign key on one that does. */
const tenantTablesQuery = `
  WITH RECURSIVE tenant(relid) AS (
    SELECT a.attrelid FROM pg_attribute a
      JOIN pg_class c ON c.oid = a.attrelid AND c.relkind IN ('r', 'p') AND NOT c.relispartition
      JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
     WHERE a.attname = 'organization_id' AND NOT a.attisdropped
    UNION
    SELECT con.conrelid FROM pg_constraint con JOIN tenant t ON con.confrelid = t.relid
     WHERE con.contype = 'f' AND con.conparentid = 0
  )
  SELECT DISTINCT relid::regclass::text AS name FROM tenant ORDER BY 1`

/** Every key of those tables, as `table: kind name (columns)`, whose columns lack organization_id. */
const keysWithoutOrganizationQuery = `
  WITH keys AS (
    SELECT con.conrelid AS relid, con.conname AS name,
           CASE con.contype WHEN 'p' THEN 'primary key' WHEN 'u' THEN 'unique' ELSE 'foreign key' END AS kind,
           con.conkey AS cols, con.confrelid AS refrelid
      FROM pg_constraint con WHERE con.contype IN ('p', 'u', 'f')
    UNION ALL
    SELECT i.indrelid, ic.relname, 'unique index', i.indkey::int2[], 0
      FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
     WHERE i.indisunique AND NOT EXISTS (SELECT 1 FROM pg_constraint con WHERE con.conindid = i.indexrelid)
  )
  SELECT k.relid::regclass::text AS "table", k.kind, k.name,
         (SELECT string_agg(a.attname, ', ' ORDER BY array_position(k.cols, a.attnum))
            FROM pg_attribute a WHERE a.attrelid = k.relid AND a.attnum = ANY (k.cols)) AS columns
    FROM keys k
   WHERE k.relid = ANY ($1::regclass[])
     AND NOT EXISTS (SELECT 1 FROM pg_attribute a
                      WHERE a.attrelid = k.relid AND a.attnum = ANY (k.cols) AND a.attname = 'organization_id')
     -- organization_id → organizations (id) is the distribution column itself.
     AND NOT (k.kind = 'foreign key' AND k.refrelid = 'organizations'::regclass
              AND (SELECT array_agg(a.attname) FROM pg_attribute a
                    WHERE a.attrelid = k.relid AND a.attnum = ANY (k.cols)) = ARRAY['organization_id']::name[])
   ORDER BY 1, 2, 3`

const run = <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient>) =>
  Effect.runPromise(Effect.scoped(Effect.provide(effect, Layer.fresh(layerFreshDatabase))).pipe(Effect.orDie))

describe("the schema, ready to be distributed by organization", () => {
  it("every table is placed, and every key of a tenant table carries organization_id", async () => {
    const { tables, all, keys } = await run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const all = (yield* sql<{ name: string }>`
          SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1`).map(
          (row) => row.name
        )
        const tables = (yield* sql.unsafe<{ name: string }>(tenantTablesQuery))
          .map((row) => row.name)
          .filter((name) => !(referenceTables as ReadonlyArray<string>).includes(name))
        const keys = yield* sql.unsafe<{ table: string; kind: string; name: string; columns: string }>(
          keysWithoutOrganizationQuery,
          [`{${tables.join(",")}}`]
        )
        return {
          tables,
          all,
          keys: keys.map((key) => `${key.table}: ${key.kind} ${key.name} (${key.columns})`)
        }
      })
    )
    expect(all, "every table placed once in migrations/distribution.ts").toEqual(
      [...referenceTables, ...distributedTables, ...coordinatorTables].sort()
    )
    expect([...tables].sort(), "the tenant tables are the distributed ones").toEqual(
      [...distributedTables].sort()
    )
    expect(keys, "keys of tenant tables without organization_id").toEqual([])
  })

  it("no triggers: what one did, a function's own statement does", async () => {
    const triggers = await run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ name: string }>`
          SELECT t.tgname AS name FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
          JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = current_schema() AND NOT t.tgisinternal`
      })
    )
    expect(triggers).toEqual([])
  })
})
