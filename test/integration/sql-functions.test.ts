import { assert, layer } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { sqlFunctions } from "../../migrations/functions.ts"
import * as Migrations from "../../src/Platform/Migrations.ts"
import { layerFreshDatabase } from "../support/Database.ts"

const Applied = Schema.Array(Schema.Struct({ name: Schema.String, checksum: Schema.String }))

const applied = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return yield* sql`SELECT name, checksum FROM schema_functions ORDER BY name`.pipe(
    Effect.flatMap(Schema.decodeUnknownEffect(Applied))
  )
})

/** The text PostgreSQL holds now for the function with this name and number of arguments. */
const definitionOf = (name: string, args: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ readonly body: string }>`
      SELECT pg_get_functiondef(p.oid) AS body FROM pg_proc p WHERE p.proname = ${name} AND p.pronargs = ${args}`
    return row?.body ?? ""
  })

layer(layerFreshDatabase, { excludeTestServices: true })("SQL functions: migrations/functions.ts", (it) => {
  it.effect("every function is applied once, with the checksum of its text", () =>
    Effect.gen(function* () {
      const rows = yield* applied
      assert.sameMembers(
        rows.map((row) => row.name),
        sqlFunctions.map((fn) => fn.name)
      )
      for (const row of rows) assert.match(row.checksum, /^[0-9a-f]{64}$/)
      assert.deepStrictEqual(yield* Migrations.migrate, [], "nothing left to migrate")
      const sql = yield* SqlClient.SqlClient
      const definers = yield* sql<{ readonly proname: string }>`
        SELECT proname FROM pg_proc WHERE prosecdef AND pronamespace = current_schema()::regnamespace`
      assert.deepStrictEqual(
        definers.map((row) => row.proname),
        [],
        "no function runs as its owner: round-robin turns are a column now, not sequences made at run time"
      )
      assert.deepStrictEqual(yield* applied, rows, "an unchanged text is not applied again")
    })
  )

  it.effect("a function whose text changed since it was applied is created again, and only that one", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`
        CREATE OR REPLACE FUNCTION resolve_property(p_organization_id uuid, p_by text, p_value text) RETURNS uuid
        LANGUAGE plpgsql AS $fn$ BEGIN RAISE EXCEPTION 'an old text'; END $fn$`
      yield* sql`UPDATE schema_functions SET checksum = 'old' WHERE name = 'resolve_property'`
      const before = yield* applied
      assert.include(yield* definitionOf("resolve_property", 3), "an old text")

      yield* Migrations.migrate
      const after = yield* applied
      assert.notInclude(yield* definitionOf("resolve_property", 3), "an old text")
      assert.include(yield* definitionOf("resolve_property", 3), "p.codigo = p_value")
      for (const row of after) {
        const was = before.find((old) => old.name === row.name)
        if (row.name === "resolve_property") assert.notStrictEqual(row.checksum, "old")
        else assert.deepStrictEqual(row, was, `${row.name} untouched`)
      }
    })
  )
})
