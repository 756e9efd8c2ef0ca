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
        SELECT proname FROM pg_proc WHERE prosecdef AND proname LIKE 'capture_rule%' ORDER BY proname`
      assert.deepStrictEqual(
        definers.map((row) => row.proname),
        ["capture_rule_take_turn", "capture_rule_turns_taken", "capture_rules_turns"],
        "the sequence functions run as their owner (migration 0013)"
      )
      assert.deepStrictEqual(yield* applied, rows, "an unchanged text is not applied again")
    })
  )

  it.effect("a function whose text changed since it was applied is created again, and only that one", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`
        CREATE OR REPLACE FUNCTION create_or_enrich_lead(
          p_organization_id uuid, p_origin_id uuid, p_nombre text, p_telefono text, p_phone_key text,
          p_email text, p_property_id uuid, p_note text, p_request_id text, p_now timestamptz,
          p_due_at timestamptz, p_idempotency_key text, p_lease_token uuid
        ) RETURNS TABLE (lead_id uuid, created boolean, assignee_id uuid, filled text[])
        LANGUAGE plpgsql AS $fn$ BEGIN RAISE EXCEPTION 'an old text'; END $fn$`
      yield* sql`UPDATE schema_functions SET checksum = 'old' WHERE name = 'create_or_enrich_lead'`
      const before = yield* applied
      assert.include(yield* definitionOf("create_or_enrich_lead", 13), "an old text")

      yield* Migrations.migrate
      const after = yield* applied
      // The previous release's signature is today a live write through the one with the mode (0015).
      assert.notInclude(yield* definitionOf("create_or_enrich_lead", 13), "an old text")
      assert.include(yield* definitionOf("create_or_enrich_lead", 13), "p_lease_token, true)")
      assert.include(
        yield* definitionOf("create_or_enrich_lead", 14),
        "lead_match_key(p_phone_key, p_livemode)"
      )
      for (const row of after) {
        const was = before.find((old) => old.name === row.name)
        if (row.name === "create_or_enrich_lead") assert.notStrictEqual(row.checksum, "old")
        else assert.deepStrictEqual(row, was, `${row.name} untouched`)
      }
    })
  )
})
