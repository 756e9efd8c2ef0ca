import { createServer } from "node:net"
import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { generateApiKey } from "../../src/Domain/ApiKey.ts"
import { layerServices } from "../../src/Intake/Services.ts"
import { makeHarness, postLead } from "../support/Client.ts"
import { asHarnessServices, makePostgresHarness } from "./Harness.ts"

/** A TCP port on which nothing listens: connections to it are refused at once. */
const closedPort = Effect.promise(
  () =>
    new Promise<number>((resolve, reject) => {
      const server = createServer()
      server.once("error", reject)
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        server.close(() =>
          typeof address === "object" && address !== null ? resolve(address.port) : reject()
        )
      })
    })
)

describe("failures while saving (postgres)", () => {
  it.live(
    "a failure in the middle of the write leaves nothing, and a retry with the same key creates once",
    () =>
      Effect.gen(function* () {
        const { handler, sql, fixture, count } = yield* makePostgresHarness
        // The note is written after the lead and its round-robin turn: a constraint that refuses this
        // request's note fails the write there (a constraint, not a trigger, which Citus refuses).
        yield* sql
          .unsafe(
            "ALTER TABLE lead_notes ADD CONSTRAINT fail_marked_write CHECK (body NOT LIKE '%debe desaparecer%') NOT VALID"
          )
          .pipe(Effect.orDie)

        const body = {
          nombre: "FAIL-WRITE",
          telefono: "55 6100 0001",
          email: "falla@example.com",
          mensaje: "debe desaparecer",
          extras: { origen: "prueba" }
        }
        const send = () =>
          postLead(handler, body, { key: fixture.key, headers: { "idempotency-key": "retry-after-500" } })

        const failed = yield* send()
        assert.strictEqual(failed.status, 500)
        assert.deepStrictEqual(Object.keys(failed.body).sort(), ["error", "request_id"])
        assert.strictEqual(failed.body.error.code, "internal_error")
        assert.isString(failed.body.error.message)
        assert.isString(failed.body.error.docs_url)
        assert.strictEqual(failed.body.request_id, failed.headers.get("x-request-id"))

        const organizationId = fixture.organizationId
        const leftBehind = () =>
          Effect.all([
            count(sql`SELECT count(*)::int AS n FROM leads WHERE organization_id = ${organizationId}`),
            count(sql`SELECT count(*)::int AS n FROM lead_notes`),
            count(sql`SELECT count(*)::int AS n FROM lead_tasks`),
            count(sql`SELECT count(*)::int AS n FROM outbox_events`)
          ])
        assert.deepStrictEqual(yield* leftBehind(), [0, 0, 0, 0])
        // The write failed after the lead took its round-robin turn: the turn rolled back with it, so
        // the retry's lead goes to the first agent.
        assert.strictEqual(
          yield* count(
            sql`SELECT turns_taken::int AS n FROM capture_rules WHERE organization_id = ${organizationId}`
          ),
          0
        )

        yield* sql.unsafe("ALTER TABLE lead_notes DROP CONSTRAINT fail_marked_write").pipe(Effect.orDie)

        const created = yield* send()
        assert.strictEqual(created.status, 201)
        assert.strictEqual(created.body.status, "created")
        assert.isUndefined(created.body.replay)

        const replayed = yield* send()
        assert.strictEqual(replayed.status, 201)
        assert.deepStrictEqual(
          [replayed.body.replay, replayed.body.lead_id, replayed.body.lead_url],
          [true, created.body.lead_id, created.body.lead_url]
        )
        assert.strictEqual(replayed.headers.get("idempotent-replayed"), "true")

        assert.deepStrictEqual(yield* leftBehind(), [1, 1, 1, 1])
        const [lead] = yield* sql<{ assignee_id: string }>`
        SELECT assignee_id FROM leads WHERE id = ${created.body.lead_id}`.pipe(Effect.orDie)
        assert.strictEqual(lead?.assignee_id, fixture.agentIds[0])
      })
  )

  it.live("a 422 property_not_found releases the Idempotency-Key for a corrected retry", () =>
    Effect.gen(function* () {
      const { handler, sql, fixture, count } = yield* makePostgresHarness
      const headers = { "idempotency-key": "retry-after-422" }
      const lead = { nombre: "Propiedad", telefono: "55 6200 0001" }

      const missing = yield* postLead(
        handler,
        { ...lead, propiedad: { codigo: "ZZZ-9999" } },
        { key: fixture.key, headers }
      )
      assert.strictEqual(missing.status, 422)
      assert.deepStrictEqual(
        [missing.body.error.code, missing.body.error.field],
        ["property_not_found", "propiedad"]
      )

      const corrected = { ...lead, propiedad: { codigo: "ABC-1234" } }
      const created = yield* postLead(handler, corrected, { key: fixture.key, headers })
      assert.strictEqual(created.status, 201)
      assert.isUndefined(created.body.replay)

      const replayed = yield* postLead(handler, corrected, { key: fixture.key, headers })
      assert.deepStrictEqual(
        [replayed.status, replayed.body.replay, replayed.body.lead_id],
        [201, true, created.body.lead_id]
      )
      const [row] = yield* sql<{ property_id: string }>`
        SELECT property_id FROM leads WHERE id = ${created.body.lead_id}`.pipe(Effect.orDie)
      assert.strictEqual(row?.property_id, fixture.propertyId)
      assert.strictEqual(
        yield* count(
          sql`SELECT count(*)::int AS n FROM leads WHERE organization_id = ${fixture.organizationId}`
        ),
        1
      )
    })
  )

  it.live("a request log write that blocks does not hold the answer", () =>
    Effect.gen(function* () {
      const { handler, sql, fixture, count } = yield* makePostgresHarness
      const started = performance.now()
      const response = yield* sql.withTransaction(
        Effect.andThen(
          sql`LOCK TABLE logged_requests IN ACCESS EXCLUSIVE MODE`,
          postLead(handler, { nombre: "Bitácora", telefono: "55 6400 0001" }, { key: fixture.key })
        )
      )
      assert.strictEqual(response.status, 201)
      assert.isBelow(performance.now() - started, 3_000)
      assert.strictEqual(
        yield* count(sql`SELECT count(*)::int AS n FROM leads WHERE id = ${response.body.lead_id}`),
        1
      )
    })
  )

  it.live(
    "answers 503 temporarily_unavailable with Retry-After: 5 when the key store cannot be reached",
    () =>
      Effect.gen(function* () {
        const port = yield* closedPort
        const unreachable = PgClient.layer({
          host: "127.0.0.1",
          port,
          username: "nobody",
          password: Redacted.make("nothing"),
          database: "lead_intake",
          connectTimeout: "500 millis"
        }).pipe(Layer.orDie)
        const { handler } = yield* makeHarness(
          asHarnessServices(layerServices.pipe(Layer.provideMerge(unreachable)))
        )

        const started = performance.now()
        const response = yield* postLead(
          handler,
          { nombre: "Nadie", telefono: "55 6300 0001" },
          {
            key: generateApiKey().key,
            headers: { "idempotency-key": "retry-after-503" }
          }
        )
        const elapsed = performance.now() - started

        assert.strictEqual(response.status, 503)
        assert.strictEqual(response.body.error.code, "temporarily_unavailable")
        assert.strictEqual(response.headers.get("retry-after"), "5")
        assert.strictEqual(response.body.request_id, response.headers.get("x-request-id"))
        assert.isBelow(elapsed, 2_000)

        // A malformed key is refused before any lookup, so an unreachable store does not matter.
        const malformed = yield* postLead(handler, { nombre: "Nadie" }, { key: `${generateApiKey().key}x` })
        assert.deepStrictEqual([malformed.status, malformed.body.error.code], [401, "invalid_key"])
      })
  )
})
