import { once } from "node:events"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import type { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { isLeadWriteEvent, type LeadWriteEvent, type WebhookEvent } from "../../src/Domain/WebhookPayload.ts"
import { RequestLog } from "../../src/Intake/RequestLog.ts"
import { erasedDeliveryError, PersonalData } from "../../src/PersonalData/PersonalData.ts"
import { WebhookConfig } from "../../src/Platform/Config.ts"
import { WebhookDeliveries } from "../../src/Webhooks/Deliveries.ts"
import { WebhookEndpoints } from "../../src/Webhooks/Endpoints.ts"
import { WebhookSender } from "../../src/Webhooks/Sender.ts"
import { WebhookWorker } from "../../src/Webhooks/Worker.ts"
import { postLead } from "../support/Client.ts"
import { layerTestConfig, postgres } from "../support/Database.ts"
import { makePostgresHarness } from "./Harness.ts"

const leadEventOf = (event: WebhookEvent): LeadWriteEvent => {
  if (!isLeadWriteEvent(event)) throw new Error(`expected a lead write event, got ${event.type}`)
  return event
}

/** A person whose every datum is unique to this file, so a trace of it anywhere is a leak. */
const personFor = (n: string) => ({
  create: {
    nombre: `Wilfrida Ocampo Zubiría ${n}`,
    telefono: `+52 55 70${n} 4862`,
    mensaje: `Quisiera ver el penthouse número ${n} con terraza ámbar`,
    extras: { presupuesto: `nueve millones ${n}`, horario: `mañanas tempranas ${n}` }
  },
  enrich: {
    nombre: `Wili O. ${n}`,
    telefono: `55-70${n}-4862`,
    email: `wilfrida.oz${n}@buzon-privado.mx`,
    mensaje: `Prefiero que me llamen por la tarde ${n}`,
    extras: { mascotas: `dos gatos siameses ${n}` },
    propiedad: { codigo: "ABC-1234" }
  }
})

/** Every spelling of the person's data that must be gone after erasure. */
const heldTracesOf = (person: ReturnType<typeof personFor>) =>
  tracesOf(person).filter((trace) => trace !== person.enrich.nombre && trace !== person.enrich.telefono)

const tracesOf = (person: ReturnType<typeof personFor>) => {
  const digits = person.create.telefono.replace(/\D/g, "")
  return [
    person.create.nombre,
    "Wilfrida",
    "Zubiría",
    person.enrich.nombre,
    person.create.telefono,
    person.enrich.telefono,
    digits,
    digits.slice(2),
    digits.slice(-8),
    person.enrich.email,
    person.enrich.email.split("@")[0]!,
    person.create.mensaje,
    "terraza ámbar",
    person.create.extras.presupuesto,
    person.create.extras.horario,
    person.enrich.mensaje,
    person.enrich.extras.mascotas
  ]
}

/**
 * Every text, character and JSON column of every table of the schema (found in the catalog, so a
 * table added later is swept too), searched for each trace. Returns "table.column: trace" hits.
 */
const sweep = (sql: SqlClient.SqlClient, traces: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const columns = yield* sql<{ table_name: string; column_name: string }>`
      SELECT c.table_name, c.column_name
      FROM information_schema.columns c
      JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
        AND (c.data_type IN ('text', 'character varying', 'character', 'json', 'jsonb')
             OR (c.data_type = 'ARRAY' AND c.udt_name IN ('_text', '_varchar', '_json', '_jsonb')))
      ORDER BY c.table_name, c.column_name`
    const hits: Array<string> = []
    for (const { table_name, column_name } of columns) {
      const rows = yield* sql.unsafe<{ v: string }>(
        `SELECT ${quote(column_name)}::text AS v FROM ${quote(table_name)} WHERE ${quote(column_name)} IS NOT NULL`
      )
      for (const { v } of rows) {
        // JSON text escapes non-ASCII characters; compare on the decoded form too.
        const decoded = v.startsWith("{") || v.startsWith("[") ? decodeJson(v) : v
        const text = `${v}\n${decoded}`.toLowerCase()
        for (const trace of traces) {
          if (text.includes(trace.toLowerCase())) hits.push(`${table_name}.${column_name}: ${trace}`)
        }
      }
    }
    return { columns: columns.map((c) => `${c.table_name}.${c.column_name}`), hits: [...new Set(hits)] }
  }).pipe(Effect.orDie)

/** A text array (`{a,b}`) starts like JSON and is not. */
const decodeJson = (text: string) => {
  try {
    return JSON.stringify(JSON.parse(text))
  } catch {
    return text
  }
}

const quote = (identifier: string) => `"${identifier.replaceAll('"', '""')}"`

const setUp = Effect.gen(function* () {
  const harness = yield* makePostgresHarness
  const built = yield* Layer.build(PersonalData.layer).pipe(
    Effect.provideService(SqlClient.SqlClient, harness.sql)
  )
  const personalData = Context.get(built, PersonalData)
  const log = Context.get(harness.context as unknown as Context.Context<RequestLog>, RequestLog)
  const flushLog = log.list({ originId: harness.fixture.originId }, 1).pipe(Effect.orDie)
  return { ...harness, personalData, flushLog }
})

/** Creates the person's lead, then enriches it with an e-mail, a property, a second note and extras. */
const createAndEnrich = (
  harness: Effect.Success<typeof setUp>,
  person: ReturnType<typeof personFor>,
  keys: { readonly create: string; readonly enrich: string }
) =>
  Effect.gen(function* () {
    const { handler, fixture } = harness
    const created = yield* postLead(handler, person.create, {
      key: fixture.key,
      headers: { "idempotency-key": keys.create }
    })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    const enriched = yield* postLead(handler, person.enrich, {
      key: fixture.key,
      headers: { "idempotency-key": keys.enrich }
    })
    assert.strictEqual(enriched.status, 200, JSON.stringify(enriched.body))
    assert.strictEqual(enriched.body.lead_id, created.body.lead_id)
    const dryRun = yield* postLead(handler, person.create, {
      key: fixture.key,
      headers: { "x-service-dry-run": "true" }
    })
    assert.strictEqual(dryRun.status, 200)
    yield* harness.flushLog
    return created.body.lead_id as string
  })

/**
 * The races below pause a write part-way with a test trigger (`pg_sleep`) and watch for it in
 * `pg_stat_activity`. On Citus a write runs on the worker holding the organization, where the
 * coordinator's sessions cannot see it pause (and a trigger on a distributed table is refused): they
 * run on plain PostgreSQL only. The locks they prove are the same row locks on either.
 */
const pausesWithTriggers = postgres().citus !== null

describe("personal data on PostgreSQL, through the real API", () => {
  it.live(
    "the export holds every datum; after erasure no text or JSON column of any table holds a trace",
    () =>
      Effect.gen(function* () {
        const harness = yield* setUp
        const { sql, personalData, handler, fixture } = harness
        const person = personFor("11")
        const leadId = yield* createAndEnrich(harness, person, {
          create: "proof-create",
          enrich: "proof-enrich"
        })
        const traces = tracesOf(person)
        // Two rejected requests whose bodies are kept for rescue: one names the phone (a retired
        // property, 422), one only the e-mail (a nine-digit phone, 400).
        const retired = yield* postLead(
          handler,
          { ...person.create, email: person.enrich.email, propiedad: { codigo: "OLD-0001" } },
          { key: fixture.key }
        )
        assert.strictEqual(retired.status, 422)
        const nineDigits = yield* postLead(
          handler,
          { nombre: person.create.nombre, telefono: "55 7011 486", email: person.enrich.email },
          { key: fixture.key }
        )
        assert.strictEqual(nineDigits.status, 400)
        yield* harness.flushLog
        const keptForPhone = yield* personalData.keptBodies(fixture.organizationId, person.enrich.telefono)
        assert.deepStrictEqual(
          keptForPhone.map((kept) => kept.request_id),
          [retired.body.request_id],
          "the export by phone lists the kept body with the same match key"
        )
        assert.include(keptForPhone[0]!.body, person.create.mensaje)

        const exported = JSON.stringify(yield* personalData.export(leadId)).toLowerCase()
        // An enrichment never replaces the name or the phone, so its spellings of them are not held.
        for (const trace of heldTracesOf(person)) {
          assert.include(exported, trace.toLowerCase(), `the export holds "${trace}"`)
        }
        const document = yield* personalData.export(leadId)
        assert.strictEqual(document.lead.nombre, person.create.nombre)
        assert.strictEqual(document.lead.telefono, person.create.telefono)
        assert.strictEqual(document.lead.email, person.enrich.email)
        assert.strictEqual(document.lead.property?.codigo, "ABC-1234")
        assert.deepStrictEqual(
          document.notes.map((note) => note.body),
          [
            `${person.create.mensaje}\npresupuesto: ${person.create.extras.presupuesto}\nhorario: ${person.create.extras.horario}`,
            `${person.enrich.mensaje}\nmascotas: ${person.enrich.extras.mascotas}`
          ]
        )
        assert.includeMembers(
          document.requests.map((row) => row.outcome),
          ["created", "enriched"]
        )
        assert.deepStrictEqual(
          document.idempotent_replies.map((reply) => [reply.idempotency_key, reply.status]).sort(),
          [
            ["proof-create", 201],
            ["proof-enrich", 200]
          ]
        )
        assert.notInclude(exported, fixture.key.toLowerCase(), "never a secret")

        // Webhooks will put a snapshot of the lead in the event: the scrub must not depend on today's payload.
        yield* sql`
          UPDATE outbox_events
          SET payload = payload || jsonb_build_object(
            'lead', jsonb_build_object('nombre', ${person.create.nombre}::text, 'telefono', ${person.create.telefono}::text,
                                       'email', ${person.enrich.email}::text))
          WHERE lead_id = ${leadId}`
        const before = yield* sweep(sql, traces)
        assert.includeMembers(before.columns, [
          "leads.nombre",
          "leads.telefono",
          "leads.phone_key",
          "leads.email",
          "lead_notes.body",
          "outbox_events.payload",
          "idempotency_keys.response",
          "logged_requests.idempotency_key",
          "logged_requests.kept_body",
          "lead_erasures.reason",
          "lead_erasures.removed",
          "webhook_attempts.error"
        ])
        assert.includeMembers(
          before.hits.map((hit) => hit.split(":")[0]),
          [
            "leads.nombre",
            "leads.telefono",
            "leads.phone_key",
            "leads.email",
            "lead_notes.body",
            "outbox_events.payload",
            "logged_requests.kept_body"
          ],
          "the sweep finds the data while it is there"
        )

        const erased = yield* personalData.erase({
          leadId,
          reason: "ARCO: cancelación, folio 2211",
          actor: "dpo"
        })
        assert.isFalse(erased.already_erased)
        const after = yield* sweep(sql, traces)
        assert.deepStrictEqual(after.hits, [], "no trace of the person in any column of any table")
        assert.strictEqual(
          (yield* personalData.erasure(leadId)).pipe(Option.getOrThrow).removed.kept_bodies,
          2
        )

        const [tombstone] = yield* sql<{
          id: string
          organization_id: string
          origin_id: string
          erased_at: Date | null
        }>`
        SELECT id, organization_id, origin_id, erased_at FROM leads WHERE id = ${leadId}`
        assert.deepStrictEqual(
          [tombstone!.organization_id, tombstone!.origin_id, tombstone!.erased_at?.toISOString()],
          [fixture.organizationId, fixture.originId, erased.erased_at]
        )
        const requestRows = yield* harness.count(
          sql`SELECT count(*)::int AS n FROM logged_requests WHERE lead_id = ${leadId}`
        )
        assert.isAtLeast(requestRows, 2, "the request log is kept")

        // A partner's retry with a spent key answers the original reply, with the tombstone's id.
        const replayCreate = yield* postLead(handler, person.create, {
          key: fixture.key,
          headers: { "idempotency-key": "proof-create" }
        })
        assert.strictEqual(replayCreate.status, 201)
        assert.strictEqual(replayCreate.headers.get("idempotent-replayed"), "true")
        assert.deepStrictEqual(
          [replayCreate.body.lead_id, replayCreate.body.status, replayCreate.body.replay],
          [leadId, "created", true]
        )
        const replayEnrich = yield* postLead(handler, person.enrich, {
          key: fixture.key,
          headers: { "idempotency-key": "proof-enrich" }
        })
        assert.deepStrictEqual(
          [replayEnrich.status, replayEnrich.body.lead_id, replayEnrich.body.status],
          [200, leadId, "enriched"]
        )
        assert.deepStrictEqual((yield* sweep(sql, traces)).hits, [], "a replay brings nothing back")

        // The same phone afterwards is a new person to the CRM: a new lead.
        const again = yield* postLead(
          handler,
          { nombre: "Otra Persona", telefono: person.enrich.telefono },
          {
            key: fixture.key
          }
        )
        assert.strictEqual(again.status, 201, JSON.stringify(again.body))
        assert.notStrictEqual(again.body.lead_id, leadId)

        const twice = yield* personalData.erase({ leadId, reason: "duplicate request", actor: "dpo" })
        assert.deepStrictEqual(twice, { ...erased, already_erased: true })
        assert.strictEqual(
          yield* harness.count(sql`SELECT count(*)::int AS n FROM lead_erasures WHERE lead_id = ${leadId}`),
          1
        )
      })
  )

  it.live("the export by phone lists the kept bodies with that phone also when no lead has it", () =>
    Effect.gen(function* () {
      const harness = yield* setUp
      const { personalData, handler, fixture } = harness
      const rejected = yield* postLead(
        handler,
        { nombre: "Sin Lead", telefono: "+52 55 7033 9911", email: "no-es-correo" },
        { key: fixture.key }
      )
      assert.strictEqual(rejected.status, 400)
      yield* harness.flushLog
      const missing = yield* Effect.exit(personalData.findByPhone(fixture.organizationId, "55 7033 9911"))
      assert.isTrue(missing._tag === "Failure", "no lead has the phone")
      const kept = yield* personalData.keptBodies(fixture.organizationId, "(55) 7033-9911")
      assert.deepStrictEqual(
        kept.map((body) => [body.request_id, body.origin_id, body.livemode]),
        [[rejected.body.request_id, fixture.originId, true]]
      )
      assert.deepStrictEqual(yield* personalData.keptBodies(fixture.organizationId, "55 7033 9912"), [])
    })
  )

  it.live.skipIf(pausesWithTriggers)(
    "an erasure committing between an enrichment's insert and its update: the request creates a new lead",
    () =>
      Effect.gen(function* () {
        const harness = yield* setUp
        const { sql, personalData, handler, fixture } = harness
        const person = personFor("22")
        const leadId = yield* createAndEnrich(harness, person, {
          create: "race-1-create",
          enrich: "race-1-enrich"
        })

        // Fires after the insert found the phone taken and before the update looks for the lead.
        // Once only: the retried insert must not pause again, or the request would outlast its 2 s bound.
        yield* sql`CREATE TABLE pause_once (pending boolean)`
        yield* sql`INSERT INTO pause_once VALUES (true)`
        yield* sql`
        CREATE FUNCTION pause_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF EXISTS (SELECT 1 FROM pause_once) THEN
            DELETE FROM pause_once;
            PERFORM pg_sleep(0.6);
          END IF;
          RETURN NULL;
        END $$`
        yield* sql`
        CREATE TRIGGER pause_after_insert AFTER INSERT ON leads
        FOR EACH STATEMENT EXECUTE FUNCTION pause_after_insert()`
        const late = yield* Effect.forkChild(
          postLead(handler, { ...person.enrich, mensaje: "mensaje tardío 22" }, { key: fixture.key })
        )
        yield* waitForSleep(sql)
        yield* personalData.erase({ leadId, reason: "requested", actor: "dpo" })
        const response = yield* Fiber.join(late)
        yield* sql`DROP TRIGGER pause_after_insert ON leads`
        yield* sql`DROP TABLE pause_once`
        assert.strictEqual(response.status, 201, JSON.stringify(response.body))
        assert.notStrictEqual(response.body.lead_id, leadId)
        assert.strictEqual(
          yield* harness.count(sql`SELECT count(*)::int AS n FROM lead_notes WHERE lead_id = ${leadId}`),
          0
        )
        const [tombstone] = yield* sql<{ nombre: string | null; email: string | null }>`
        SELECT nombre, email FROM leads WHERE id = ${leadId}`
        assert.deepStrictEqual(tombstone, { nombre: null, email: null })
      })
  )

  it.live.skipIf(pausesWithTriggers)(
    "an enrichment holding the lead when the erasure starts: the erasure waits and removes its note too",
    () =>
      Effect.gen(function* () {
        const harness = yield* setUp
        const { sql, personalData, handler, fixture } = harness
        const person = personFor("33")
        const leadId = yield* createAndEnrich(harness, person, {
          create: "race-2-create",
          enrich: "race-2-enrich"
        })
        yield* sql`
        CREATE FUNCTION slow_note() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN PERFORM pg_sleep(0.6); RETURN NEW; END $$`
        yield* sql`CREATE TRIGGER slow_note BEFORE INSERT ON lead_notes FOR EACH ROW EXECUTE FUNCTION slow_note()`
        const enrichment = yield* Effect.forkChild(
          postLead(handler, { ...person.enrich, mensaje: "nota concurrente 33" }, { key: fixture.key })
        )
        yield* waitForSleep(sql)
        const erased = yield* personalData.erase({ leadId, reason: "requested", actor: "dpo" })
        const response = yield* Fiber.join(enrichment)
        yield* sql`DROP TRIGGER slow_note ON lead_notes`
        assert.strictEqual(response.status, 200, JSON.stringify(response.body))
        assert.strictEqual(response.body.lead_id, leadId, "the enrichment committed first")
        assert.isFalse(erased.already_erased)
        assert.strictEqual(
          yield* harness.count(sql`SELECT count(*)::int AS n FROM lead_notes WHERE lead_id = ${leadId}`),
          0,
          "the note the enrichment added is gone as well"
        )
        assert.deepStrictEqual((yield* sweep(sql, [...tracesOf(person), "nota concurrente 33"])).hits, [])
      })
  )

  it.live(
    "erasures racing twenty enrichments: every request answered, nothing personal on the tombstone",
    () =>
      Effect.gen(function* () {
        const harness = yield* setUp
        const { sql, personalData, handler, fixture } = harness
        const person = personFor("44")
        const leadId = yield* createAndEnrich(harness, person, {
          create: "race-3-create",
          enrich: "race-3-enrich"
        })
        const requests = Array.from({ length: 20 }, (_, i) =>
          postLead(handler, { ...person.enrich, mensaje: `ráfaga ${i} 44` }, { key: fixture.key })
        )
        const [responses, erasures] = yield* Effect.all(
          [
            Effect.all(requests, { concurrency: "unbounded" }),
            Effect.all(
              [0, 1, 2].map(() => personalData.erase({ leadId, reason: "requested", actor: "dpo" })),
              { concurrency: "unbounded" }
            )
          ],
          { concurrency: "unbounded" }
        )
        // 503 (the write's 2 s bound on a loaded machine) writes nothing; a 500 would be the bug.
        assert.deepStrictEqual(
          [...new Set(responses.map((response) => response.status))].filter(
            (status) => status !== 200 && status !== 201 && status !== 503
          ),
          []
        )
        assert.isTrue(responses.some((response) => response.status === 200 || response.status === 201))
        assert.strictEqual(erasures.filter((erased) => !erased.already_erased).length, 1)
        assert.strictEqual(
          yield* harness.count(sql`SELECT count(*)::int AS n FROM lead_notes WHERE lead_id = ${leadId}`),
          0
        )
        const live = yield* harness.count(
          sql`SELECT count(*)::int AS n FROM leads WHERE organization_id = ${fixture.organizationId} AND erased_at IS NULL
            AND phone_key IS NOT NULL AND telefono = ${person.enrich.telefono}`
        )
        assert.isAtMost(live, 1, "at most one new lead holds the phone")
      })
  )
})

const webhookConfig = Layer.succeed(WebhookConfig, {
  allowPrivate: true,
  timeoutMillis: 2000,
  retrySchedule: [200],
  retentionDays: 30,
  concurrency: 4,
  concurrencyPerEndpoint: 2,
  pollIntervalMillis: 200,
  workerInServe: false,
  disableAfterMillis: 5 * 86_400_000
})

/** A local receiver answering 200 and keeping what it was sent. */
const startReceiver = Effect.gen(function* () {
  const received: Array<{ readonly headers: IncomingHttpHeaders; readonly body: string }> = []
  const server = createServer((request, response) => {
    let body = ""
    request.setEncoding("utf8")
    request.on("data", (chunk: string) => (body += chunk))
    request.on("end", () => {
      received.push({ headers: request.headers, body })
      response.writeHead(200).end()
    })
  })
  server.listen(0, "127.0.0.1")
  yield* Effect.promise(() => once(server, "listening"))
  yield* Effect.addFinalizer(() =>
    Effect.sync(() => {
      server.closeAllConnections()
      server.close()
    })
  )
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received }
})

describe("personal data and webhooks on PostgreSQL", () => {
  it.live.skipIf(pausesWithTriggers)(
    "the export lists the deliveries; the erasure waits for a send in progress, fails the pending ones, and no worker sends the person afterwards",
    () =>
      Effect.gen(function* () {
        const harness = yield* setUp
        const { sql, personalData, fixture } = harness
        const receiver = yield* startReceiver
        const provideDatabase = Layer.provide(
          Layer.succeedContext(
            harness.context as unknown as Context.Context<SqlClient.SqlClient | PgClient.PgClient>
          )
        )
        const webhooks = yield* Layer.build(
          Layer.mergeAll(WebhookEndpoints.layer, WebhookDeliveries.layer).pipe(
            Layer.provide(webhookConfig),
            provideDatabase
          )
        )
        const endpoints = Context.get(webhooks, WebhookEndpoints)
        const deliveries = Context.get(webhooks, WebhookDeliveries)
        const { endpoint, secret } = yield* endpoints.add({
          organizationId: fixture.organizationId,
          url: `${receiver.url}/hooks/leads`,
          events: ["lead.created", "lead.enriched"]
        })
        const person = personFor("55")
        const leadId = yield* createAndEnrich(harness, person, {
          create: "hooks-create",
          enrich: "hooks-enrich"
        })
        const traces = tracesOf(person)

        const document = yield* personalData.export(leadId)
        assert.deepStrictEqual(
          document.webhook_deliveries.map((d) => [d.endpoint_id, d.url, d.type, d.state, d.attempts]),
          [
            [endpoint.id, endpoint.url, "lead.created", "pending", 0],
            [endpoint.id, endpoint.url, "lead.enriched", "pending", 0]
          ]
        )
        assert.notInclude(JSON.stringify(document), secret, "never a secret")
        const before = yield* sweep(sql, traces)
        assert.include(
          before.hits.map((hit) => hit.split(":")[0]),
          "outbox_events.webhook_snapshot",
          "the sweep sees the lead copied into the events for the webhooks"
        )

        // Two attempts claimed by a worker just before the erasure. The first is sending: it holds
        // its delivery, and the erasure must wait until its bytes have left.
        const [first, second] = yield* deliveries.claim({
          limit: 2,
          perEndpoint: 2,
          excludeEndpoints: [],
          leaseMillis: 60_000
        })
        assert.deepStrictEqual([first!.event.type, second!.event.type].sort(), [
          "lead.created",
          "lead.enriched"
        ])
        const sending = yield* Deferred.make<void>()
        const leave = yield* Deferred.make<void>()
        let sentAt = 0
        const inFlight = yield* Effect.forkChild(
          deliveries.guard(first!, (event) =>
            Effect.gen(function* () {
              yield* Deferred.succeed(sending, undefined)
              yield* Deferred.await(leave)
              sentAt = Date.now()
              return event
            })
          )
        )
        yield* Deferred.await(sending)
        // The erasure pauses before its audit row, after failing the deliveries and scrubbing the events.
        yield* sql`
          CREATE FUNCTION pause_erasure() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN PERFORM pg_sleep(0.6); RETURN NEW; END $$`
        yield* sql`
          CREATE TRIGGER pause_erasure BEFORE INSERT ON lead_erasures
          FOR EACH ROW EXECUTE FUNCTION pause_erasure()`
        let erasedAt = 0
        const erasure = yield* Effect.forkChild(
          personalData
            .erase({ leadId, reason: "ARCO: cancelación, folio 5501", actor: "dpo" })
            .pipe(Effect.tap(() => Effect.sync(() => (erasedAt = Date.now()))))
        )
        yield* waitFor(
          sql,
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%UPDATE webhook_deliveries%'"
        )
        yield* Deferred.succeed(leave, undefined)
        const sent = yield* Fiber.join(inFlight)
        assert.strictEqual(
          leadEventOf(Option.getOrThrow(sent)).lead.nombre,
          person.create.nombre,
          "a send that started before the erasure goes out as it was"
        )

        // The second attempt reaches its delivery while the erasure holds it: it waits, then finds it failed.
        yield* waitFor(sql, "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event = 'PgSleep'")
        const late = yield* Effect.forkChild(
          deliveries.guard(second!, () => Effect.die(new Error("sent after the erasure")))
        )
        yield* waitFor(
          sql,
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FOR SHARE OF d%'"
        )
        const erased = yield* Fiber.join(erasure)
        assert.isTrue(
          Option.isNone(yield* Fiber.join(late)),
          "the claim taken before the erasure sends nothing"
        )
        assert.isAtLeast(erasedAt, sentAt, "the erasure committed after the send in progress")
        yield* sql`DROP TRIGGER pause_erasure ON lead_erasures`
        assert.strictEqual(erased.already_erased, false)

        const after = yield* personalData.export(leadId)
        assert.deepStrictEqual(
          after.webhook_deliveries.map((d) => [d.state, d.last_error, d.next_attempt_at]),
          [
            ["failed", erasedDeliveryError, null],
            ["failed", erasedDeliveryError, null]
          ]
        )
        assert.strictEqual(after.erasure!.removed.webhook_deliveries, 2)
        assert.deepStrictEqual((yield* sweep(sql, traces)).hits, [], "no trace of the person in any column")

        // A real worker against the receiver: nothing of the person is sent. An operator's resend
        // afterwards proves the worker runs, and sends the tombstone.
        yield* Effect.scoped(
          Effect.gen(function* () {
            yield* Layer.build(
              WebhookWorker.layerWorker.pipe(
                Layer.provide(Layer.mergeAll(WebhookDeliveries.layer, WebhookSender.layer)),
                Layer.provide(Layer.mergeAll(webhookConfig, layerTestConfig)),
                provideDatabase
              )
            )
            yield* Effect.sleep("1 second")
            assert.deepStrictEqual(receiver.received, [], "the worker sends nothing for the erased lead")
            yield* deliveries.resend(endpoint.id, first!.event.eventId)
            for (let i = 0; i < 100 && receiver.received.length === 0; i++) yield* Effect.sleep("50 millis")
            for (
              let i = 0;
              i < 100 && (yield* personalData.export(leadId)).webhook_attempts.length === 0;
              i++
            )
              yield* Effect.sleep("50 millis")
          })
        )
        const attempts = (yield* personalData.export(leadId)).webhook_attempts
        assert.deepStrictEqual(
          attempts.map((a) => [a.endpoint_id, a.event_id, a.error]),
          [[endpoint.id, first!.event.eventId, null]],
          "the export lists the attempt"
        )
        assert.deepStrictEqual((yield* sweep(sql, traces)).hits, [], "nor does the attempt hold a trace")
        assert.strictEqual(receiver.received.length, 1)
        const [resent] = receiver.received
        assert.strictEqual(resent!.headers["webhook-id"], first!.event.eventId)
        const body = JSON.parse(resent!.body)
        assert.strictEqual(body.data.lead_id, leadId)
        assert.deepStrictEqual(body.data.lead, {
          nombre: null,
          telefono: null,
          email: null,
          property_id: null,
          assignee_id: null
        })
        const text = receiver.received
          .map((r) => `${JSON.stringify(r.headers)}\n${r.body}`)
          .join("\n")
          .toLowerCase()
        for (const trace of traces) assert.notInclude(text, trace.toLowerCase())
      })
  )
})

describe("a worker whose claim an erasure overtakes", () => {
  it.live("an erasure committing between a worker's claim and its send: the receiver gets nothing", () =>
    Effect.gen(function* () {
      const harness = yield* setUp
      const { sql, personalData, fixture } = harness
      const receiver = yield* startReceiver
      const provideDatabase = Layer.provide(
        Layer.succeedContext(
          harness.context as unknown as Context.Context<SqlClient.SqlClient | PgClient.PgClient>
        )
      )
      const webhooks = yield* Layer.build(
        Layer.mergeAll(WebhookEndpoints.layer, WebhookDeliveries.layer).pipe(
          Layer.provide(webhookConfig),
          provideDatabase
        )
      )
      yield* Context.get(webhooks, WebhookEndpoints).add({
        organizationId: fixture.organizationId,
        url: `${receiver.url}/hooks/leads`,
        events: ["lead.created"]
      })
      const person = personFor("66")
      const leadId = yield* createAndEnrich(harness, person, {
        create: "overtaken-create",
        enrich: "overtaken-enrich"
      })

      // The sender the worker uses erases the lead once it holds a claim, before it connects.
      const erased = yield* Deferred.make<void>()
      const attempts = { count: 0 }
      const sender = Layer.effect(
        WebhookSender,
        Effect.gen(function* () {
          const real = yield* WebhookSender
          return WebhookSender.of({
            send: (delivery) =>
              Effect.gen(function* () {
                attempts.count++
                yield* personalData.erase({ leadId, reason: "ARCO: cancelación, folio 6601", actor: "dpo" })
                yield* Deferred.succeed(erased, undefined)
                return yield* real.send(delivery)
              }).pipe(Effect.orDie)
          })
        })
      ).pipe(Layer.provide(WebhookSender.layer))
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* Layer.build(
            WebhookWorker.layerWorker.pipe(
              Layer.provide(Layer.mergeAll(WebhookDeliveries.layer, sender)),
              Layer.provide(Layer.mergeAll(webhookConfig, layerTestConfig)),
              provideDatabase
            )
          )
          yield* Deferred.await(erased).pipe(Effect.timeout("10 seconds"))
          yield* Effect.sleep("1 second")
        })
      )
      assert.strictEqual(attempts.count, 1, "one claim, and no retry of a failed delivery")
      assert.deepStrictEqual(receiver.received, [], "nothing reached the receiver")
      const [delivery] = (yield* personalData.export(leadId)).webhook_deliveries
      assert.deepStrictEqual(
        [delivery!.state, delivery!.last_error, delivery!.attempts],
        ["failed", erasedDeliveryError, 1]
      )
      assert.deepStrictEqual((yield* sweep(sql, tracesOf(person))).hits, [])
    })
  )
})

const waitFor = (sql: SqlClient.SqlClient, query: string) =>
  Effect.gen(function* () {
    for (let attempt = 0; attempt < 1000; attempt++) {
      const [row] = yield* sql.unsafe<{ n: number }>(query)
      if ((row?.n ?? 0) > 0) return
      yield* Effect.sleep("10 millis")
    }
    const activity = yield* sql.unsafe(
      "SELECT state, wait_event_type, wait_event, left(query, 120) AS query FROM pg_stat_activity WHERE datname = current_database()"
    )
    return yield* Effect.die(
      new Error(`timed out waiting for: ${query}\n${JSON.stringify(activity, null, 1)}`)
    )
  }).pipe(Effect.orDie)

/** Until the forked request's write (`lead_write`) is paused in a test trigger's pg_sleep. */
const waitForSleep = (sql: SqlClient.SqlClient) =>
  waitFor(
    sql,
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query ~ 'lead_write\\(' AND wait_event = 'PgSleep'"
  )
