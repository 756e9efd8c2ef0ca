import { assert, layer } from "@effect/vitest"
import { Effect, Exit, Schema } from "effect"
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

/** The service's functions with more than 6 arguments, by signature. */
const wideFunctions = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ readonly signature: string }>`
    SELECT p.oid::regprocedure::text AS signature FROM pg_proc p
    WHERE p.pronamespace = current_schema()::regnamespace AND p.pronargs > 6
    ORDER BY 1`
  return rows.map((row) => row.signature)
})

const fifteen = Array.from({ length: 15 }, (_, i) => `a${i} text`).join(", ")

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
        SELECT proname FROM pg_proc WHERE prosecdef AND pronamespace = current_schema()::regnamespace ORDER BY 1`
      assert.deepStrictEqual(
        definers.map((row) => row.proname),
        ["logged_requests_add_partitions", "logged_requests_drop_partitions"],
        "only the request log's partitions are made and dropped as the schema's owner (the service's role has no DDL rights); round-robin turns are a column, not sequences made at run time"
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

  it.effect(
    "no function of the schema takes more than 6 arguments: the write functions take one document",
    () =>
      Effect.gen(function* () {
        assert.deepStrictEqual(yield* wideFunctions, [])
        const sql = yield* SqlClient.SqlClient
        yield* sql.unsafe(`CREATE FUNCTION wide_probe(${fifteen.split(", ").slice(0, 7).join(", ")}) RETURNS int
                         LANGUAGE sql AS 'SELECT 1'`)
        assert.deepStrictEqual(
          yield* wideFunctions,
          ["wide_probe(text,text,text,text,text,text,text)"],
          "a function with 7 is found"
        )
        yield* sql`DROP FUNCTION wide_probe(text, text, text, text, text, text, text)`
      })
  )

  it.effect(
    "migration 0028 drops every signature of the positional write functions, run again from the start",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        // What a database of the release before holds (its texts do not matter here, their signatures do).
        yield* sql.unsafe(
          `CREATE FUNCTION write_lead_json(${fifteen}) RETURNS jsonb LANGUAGE sql AS 'SELECT NULL::jsonb'`
        )
        yield* sql.unsafe(`CREATE FUNCTION add_outbox_event(${fifteen.split(", ").slice(0, 8).join(", ")})
                         RETURNS int LANGUAGE sql AS 'SELECT 1'`)
        yield* sql.unsafe(`CREATE FUNCTION add_outbox_event(a uuid) RETURNS int LANGUAGE sql AS 'SELECT 1'`)
        yield* sql`INSERT INTO schema_functions (name, checksum) VALUES ('write_lead_json', 'old')`
        assert.lengthOf(yield* wideFunctions, 2)
        yield* sql`DELETE FROM schema_migrations WHERE migration_id = 28`
        assert.deepStrictEqual(yield* Migrations.migrate, ["0028_write_documents"])
        assert.deepStrictEqual(yield* wideFunctions, [])
        const [left] = yield* sql<{ readonly n: number }>`
        SELECT count(*)::int AS n FROM pg_proc
        WHERE proname IN ('write_lead_json', 'add_outbox_event') AND pronamespace = current_schema()::regnamespace`
        assert.strictEqual(left!.n, 0, "every signature of a dropped name")
        assert.notInclude(
          (yield* applied).map((row) => row.name),
          "write_lead_json"
        )
        assert.include(yield* definitionOf("lead_write", 2), "lead_create_or_enrich")
      })
  )

  it.effect(
    "a column of leads is stored and filled from the document's field of its name, with no new text; a webhook's filled names only its lead's fields",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`ALTER TABLE leads ADD COLUMN probe text`
        const [organization] = yield* sql<{ readonly id: string }>`
          INSERT INTO organizations (name, country) VALUES ('Probe', 'MX') RETURNING id`
        const [origin] = yield* sql<{ readonly id: string }>`
          INSERT INTO origins (organization_id, label, rate_limit, created_at)
          VALUES (${organization!.id}, 'web', 60, now()) RETURNING id`
        yield* sql`
          INSERT INTO webhook_endpoints (organization_id, url, events, test_events, secret, created_at)
          VALUES (${organization!.id}, 'https://crm.example/hook', '{lead.enriched}'::text[], false, 'whsec_probe', now())`
        const write = (input: object, requestId: string) =>
          sql<{ readonly answer: { readonly lead_id: string; readonly filled: ReadonlyArray<string> } }>`
            SELECT lead_write(${organization!.id}, ${JSON.stringify({
              origin_id: origin!.id,
              livemode: true,
              request_id: requestId,
              input: {
                nombre: "Ana",
                telefono: "55 1234 5678",
                email: null,
                mensaje: null,
                propiedad: null,
                extras: [],
                ...input
              },
              phone_key: "+525512345678",
              note: null,
              now: new Date().toISOString(),
              due_at: new Date().toISOString(),
              idempotency: null
            })}::jsonb) AS answer`.pipe(Effect.map(([row]) => row!.answer))

        const created = yield* write({}, "probe-1")
        assert.deepStrictEqual(created.filled, [])
        const enriched = yield* write({ probe: "dato", email: "ana@example.com" }, "probe-2")
        assert.deepStrictEqual(enriched.filled, ["email", "probe"])
        const again = yield* write({ probe: "otro" }, "probe-3")
        assert.deepStrictEqual(again.filled, [])
        const stored = yield* sql<{ readonly probe: string; readonly email: string }>`
          SELECT probe, email FROM leads WHERE id = ${created.lead_id}`
        assert.deepStrictEqual([...stored], [{ probe: "dato", email: "ana@example.com" }])
        const snapshots = yield* sql<{ readonly filled: unknown }>`
          SELECT webhook_snapshot -> 'filled' AS filled FROM outbox_events
          WHERE lead_id = ${created.lead_id} AND type = 'lead.enriched' ORDER BY created_at, id`
        assert.deepStrictEqual(
          snapshots.map((row) => row.filled),
          [["email"], []]
        )
        yield* sql`DELETE FROM webhook_deliveries WHERE organization_id = ${organization!.id}`
        yield* sql`DELETE FROM outbox_events WHERE organization_id = ${organization!.id}`
        yield* sql`DELETE FROM lead_tasks WHERE organization_id = ${organization!.id}`
        yield* sql`DELETE FROM leads WHERE organization_id = ${organization!.id}`
        yield* sql`ALTER TABLE leads DROP COLUMN probe`
      })
  )

  it.effect("a distributed function is found by its name alone; a name with two signatures is refused", () =>
    Effect.gen(function* () {
      assert.strictEqual(yield* Migrations.signatureOf("lead_write"), "lead_write(uuid,jsonb)")
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE FUNCTION lead_write(p_organization_id uuid) RETURNS jsonb LANGUAGE sql AS 'SELECT NULL::jsonb'`
      const twice = yield* Effect.exit(Migrations.signatureOf("lead_write"))
      yield* sql`DROP FUNCTION lead_write(uuid)`
      assert.isTrue(Exit.isFailure(twice))
      assert.include(
        String(Exit.isFailure(twice) ? twice.cause : ""),
        "the function lead_write to distribute is ambiguous: lead_write(uuid), lead_write(uuid,jsonb)"
      )
      const none = yield* Effect.exit(Migrations.signatureOf("no_such_function"))
      assert.include(
        String(Exit.isFailure(none) ? none.cause : ""),
        "no_such_function to distribute does not exist"
      )
    })
  )
})
