import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber } from "effect"
import { IdempotencyStore } from "../../src/Intake/IdempotencyStore.ts"
import { LeadRepository } from "../../src/Intake/LeadRepository.ts"
import { leadWrite } from "../services/Suite.ts"
import { postLead } from "../support/Client.ts"
import { makePostgresHarness } from "./Harness.ts"

const spellings = [
  "+52 55 4321 8765",
  "55-4321-8765",
  "(55) 4321 8765",
  "5543218765",
  "+525543218765",
  "55.4321.8765",
  "+52 1 55 4321 8765",
  "044 55 4321 8765",
  "+52 (55) 4321-8765"
]

/**
 * As many dry-runs at once as the pool holds, answered before the burst: a fresh harness opens its
 * connections (and, on Citus, the coordinator its connections to the workers) during the burst
 * otherwise, and on a busy machine the first requests' key check could run out of time on that,
 * which is not what these tests are about. A dry-run writes nothing and takes no turn.
 */
const warmUp = (handler: (request: Request) => Promise<Response>, key: string) =>
  Effect.all(
    Array.from({ length: 16 }, (_, i) =>
      postLead(
        handler,
        { nombre: `Calentamiento ${i}`, telefono: `55 19${String(i).padStart(2, "0")} 0000` },
        { key, headers: { "x-service-dry-run": "true" } }
      )
    ),
    { concurrency: "unbounded" }
  ).pipe(Effect.map((responses) => responses.map((response) => response.status)))

describe("concurrent writes (postgres)", () => {
  it.live(
    "25 requests with one new phone in different spellings create one lead and enrich it 24 times",
    () =>
      Effect.gen(function* () {
        const { handler, sql, fixture, count } = yield* makePostgresHarness
        assert.deepStrictEqual(
          yield* warmUp(handler, fixture.key),
          Array.from({ length: 16 }, () => 200)
        )
        const responses = yield* Effect.all(
          Array.from({ length: 25 }, (_, i) =>
            postLead(
              handler,
              { nombre: `Cliente ${i}`, telefono: spellings[i % spellings.length], mensaje: `intento ${i}` },
              { key: fixture.key }
            )
          ),
          { concurrency: "unbounded" }
        )

        const created = responses.filter((response) => response.status === 201)
        const enriched = responses.filter((response) => response.status === 200)
        assert.strictEqual(created.length, 1)
        assert.strictEqual(enriched.length, 24)
        const leadId = created[0]!.body.lead_id
        assert.strictEqual(created[0]!.body.status, "created")
        for (const response of enriched) {
          assert.deepStrictEqual(
            [response.body.lead_id, response.body.status, response.body.matched_on],
            [leadId, "enriched", "telefono"]
          )
        }

        const organizationId = fixture.organizationId
        assert.strictEqual(
          yield* count(sql`SELECT count(*)::int AS n FROM leads WHERE organization_id = ${organizationId}`),
          1
        )
        assert.strictEqual(
          yield* count(
            sql`SELECT count(*)::int AS n FROM lead_tasks WHERE lead_id = ${leadId} AND kind = 'first_contact'`
          ),
          1
        )
        assert.strictEqual(
          yield* count(sql`SELECT count(*)::int AS n FROM lead_notes WHERE lead_id = ${leadId}`),
          25
        )
        const events = yield* sql<{ type: string; n: number }>`
        SELECT type, count(*)::int AS n FROM outbox_events WHERE organization_id = ${organizationId}
        GROUP BY type ORDER BY type`.pipe(Effect.orDie)
        assert.deepStrictEqual(
          events.map((row) => [row.type, row.n]),
          [
            ["lead.created", 1],
            ["lead.enriched", 24]
          ]
        )

        // The lost races enriched without taking round-robin turns: one turn was spent, and the
        // next new lead goes to the other agent.
        assert.strictEqual(
          yield* count(
            sql`SELECT turns_taken::int AS n FROM capture_rules WHERE organization_id = ${organizationId}`
          ),
          1
        )
        const next = yield* postLead(
          handler,
          { nombre: "Siguiente", telefono: "55 1111 0000" },
          { key: fixture.key }
        )
        assert.strictEqual(next.status, 201)
        const assigned = yield* sql<{ id: string; assignee_id: string }>`
        SELECT id, assignee_id FROM leads WHERE organization_id = ${organizationId} ORDER BY created_at`.pipe(
          Effect.orDie
        )
        assert.deepStrictEqual(
          assigned.map((row) => row.assignee_id),
          fixture.agentIds
        )
      })
  )

  it.live("40 concurrent creations split a round-robin rule over two agents exactly in half", () =>
    Effect.gen(function* () {
      const { handler, sql, fixture } = yield* makePostgresHarness
      assert.deepStrictEqual(
        yield* warmUp(handler, fixture.key),
        Array.from({ length: 16 }, () => 200)
      )
      const responses = yield* Effect.all(
        Array.from({ length: 40 }, (_, i) =>
          postLead(
            handler,
            { nombre: `Lead ${i}`, telefono: `55 20${String(i).padStart(2, "0")} 0000` },
            { key: fixture.key }
          )
        ),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(
        responses.map((response) => response.status),
        Array.from({ length: 40 }, () => 201)
      )
      assert.strictEqual(new Set(responses.map((response) => response.body.lead_id)).size, 40)

      const perAgent = yield* sql<{ assignee_id: string; n: number }>`
        SELECT assignee_id, count(*)::int AS n FROM leads WHERE organization_id = ${fixture.organizationId}
        GROUP BY assignee_id`.pipe(Effect.orDie)
      assert.deepStrictEqual(
        Object.fromEntries(perAgent.map((row) => [row.assignee_id, row.n])),
        Object.fromEntries(fixture.agentIds.map((id) => [id, 20]))
      )
      const tasksPerAgent = yield* sql<{ assignee_id: string; n: number }>`
        SELECT t.assignee_id, count(*)::int AS n FROM lead_tasks t JOIN leads l ON l.organization_id = t.organization_id AND l.id = t.lead_id
        WHERE l.organization_id = ${fixture.organizationId} GROUP BY t.assignee_id`.pipe(Effect.orDie)
      assert.deepStrictEqual(
        Object.fromEntries(tasksPerAgent.map((row) => [row.assignee_id, row.n])),
        Object.fromEntries(fixture.agentIds.map((id) => [id, 20]))
      )
    })
  )

  it.live("10 concurrent requests with one Idempotency-Key create one lead; the rest wait or replay", () =>
    Effect.gen(function* () {
      const { handler, fixture, sql, count } = yield* makePostgresHarness
      const body = { nombre: "Idempotente", telefono: "55 3000 0001", mensaje: "una sola vez" }
      const send = () =>
        postLead(handler, body, { key: fixture.key, headers: { "idempotency-key": "checkout-42" } })
      const responses = yield* Effect.all(Array.from({ length: 10 }, send), { concurrency: "unbounded" })

      const originals = responses.filter(
        (response) => response.status === 201 && response.body.replay !== true
      )
      assert.strictEqual(originals.length, 1)
      const original = originals[0]!
      assert.isNull(original.headers.get("idempotent-replayed"))
      for (const response of responses) {
        if (response === original) continue
        if (response.status === 409) {
          assert.strictEqual(response.body.error.code, "idempotency_in_progress")
          assert.strictEqual(response.headers.get("retry-after"), "1")
        } else {
          assert.strictEqual(response.status, 201)
          assert.deepStrictEqual(
            [response.body.replay, response.body.lead_id, response.body.lead_url, response.body.status],
            [true, original.body.lead_id, original.body.lead_url, "created"]
          )
          assert.strictEqual(response.headers.get("idempotent-replayed"), "true")
          assert.notStrictEqual(response.body.request_id, original.body.request_id)
        }
      }

      const replay = yield* send()
      assert.deepStrictEqual(
        [replay.status, replay.body.replay, replay.body.lead_id],
        [201, true, original.body.lead_id]
      )
      const organizationId = fixture.organizationId
      assert.strictEqual(
        yield* count(sql`SELECT count(*)::int AS n FROM leads WHERE organization_id = ${organizationId}`),
        1
      )
      assert.strictEqual(
        yield* count(
          sql`SELECT count(*)::int AS n FROM outbox_events WHERE organization_id = ${organizationId}`
        ),
        1
      )
      assert.strictEqual(
        yield* count(sql`SELECT count(*)::int AS n FROM lead_notes WHERE lead_id = ${original.body.lead_id}`),
        1
      )
    })
  )

  it.live(
    "a lost answer is settled by the end of the write still holding its key: settling waits for it",
    () =>
      Effect.gen(function* () {
        const { sql, fixture, context } = yield* makePostgresHarness
        const leads = Context.get(context as Context.Context<LeadRepository>, LeadRepository)
        const idempotency = Context.get(context as Context.Context<IdempotencyStore>, IdempotencyStore)
        const idempotencyKey = { key: "settle-waits", token: crypto.randomUUID() }
        const write = {
          ...leadWrite(
            fixture,
            { nombre: "Espera", telefono: "55 3100 0001" },
            { idempotency: idempotencyKey }
          ),
          idempotency: idempotencyKey,
          fingerprint: "f-1"
        }
        const slot = { ...fixture, livemode: true, key: idempotencyKey.key }

        // Another transaction holds the lead's phone (an uncommitted lead with its match key): the
        // keyed write waits on it, its key reserved and locked.
        const holding = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        // Let go of the phone however the test ends, so that the pool can close.
        yield* Effect.addFinalizer(() => Deferred.succeed(release, undefined))
        const holder = yield* sql
          .withTransaction(
            Effect.gen(function* () {
              // Values written into the text (ids and digits the test made): Citus cannot type the
              // parameters of an INSERT inside a transaction block that it sends to a worker.
              yield* sql.unsafe(`
                INSERT INTO leads (organization_id, origin_id, nombre, telefono, phone_key, created_at, updated_at, livemode)
                VALUES ('${fixture.organizationId}', '${fixture.originId}', 'holder', '55 3100 0001',
                        lead_match_key('${write.phoneKey}', true), now(), now(), true)`)
              yield* Deferred.succeed(holding, undefined)
              yield* Deferred.await(release)
              return yield* Effect.fail("rolled back" as const)
            })
          )
          .pipe(
            Effect.catchIf(
              (error) => error === "rolled back",
              () => Effect.void
            ),
            Effect.orDie,
            Effect.forkChild
          )
        // (A holder that fails to hold fails the test at once.)
        yield* Effect.raceFirst(Deferred.await(holding), Fiber.join(holder))
        const writing = yield* Effect.forkChild(leads.createOrEnrichKeyed(write))
        yield* Effect.sleep("300 millis")

        // The write's answer is taken for lost: settling it waits while the write runs…
        const settling = yield* Effect.forkChild(idempotency.settle(slot, idempotencyKey.token, 0))
        yield* Effect.sleep("500 millis")
        assert.isUndefined(settling.pollUnsafe(), "settling waits for the write")
        assert.isUndefined(writing.pollUnsafe(), "the write waits for the phone")

        // …and its end decides: committed, with the lead it wrote.
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(holder)
        const written = yield* Fiber.join(writing)
        assert.strictEqual(written._tag, "Written")
        if (written._tag !== "Written") return
        assert.deepStrictEqual(yield* Fiber.join(settling), {
          _tag: "Committed",
          response: { lead_id: written.written.leadId, status: "created" }
        })
      }),
    { timeout: 30_000 }
  )

  it.live("20 concurrent retries of a spent Idempotency-Key all replay (none answers in_progress)", () =>
    Effect.gen(function* () {
      const { handler, fixture, sql, count } = yield* makePostgresHarness
      const body = { nombre: "Reintento", telefono: "55 3000 0002", mensaje: "una vez" }
      const send = () =>
        postLead(handler, body, { key: fixture.key, headers: { "idempotency-key": "retry-storm-7" } })
      const original = yield* send()
      assert.strictEqual(original.status, 201)

      // The key is spent: the spec answers every later request with it by replay, however many at once.
      const responses = yield* Effect.all(Array.from({ length: 20 }, send), { concurrency: "unbounded" })
      for (const response of responses) {
        assert.deepStrictEqual(
          [
            response.status,
            response.body.replay,
            response.body.lead_id,
            response.headers.get("idempotent-replayed")
          ],
          [201, true, original.body.lead_id, "true"]
        )
      }
      const conflicts = yield* Effect.all(
        Array.from({ length: 10 }, () =>
          postLead(
            handler,
            { ...body, mensaje: "otro cuerpo" },
            { key: fixture.key, headers: { "idempotency-key": "retry-storm-7" } }
          )
        ),
        { concurrency: "unbounded" }
      )
      for (const response of conflicts) {
        assert.deepStrictEqual([response.status, response.body.error?.code], [409, "idempotency_conflict"])
      }
      assert.strictEqual(
        yield* count(sql`SELECT count(*)::int AS n FROM lead_notes WHERE lead_id = ${original.body.lead_id}`),
        1
      )
    })
  )
})
