import { assert, it, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { sweep } from "../../src/Intake/Janitor.ts"
import * as PreviousRequestLog from "../../src/Intake/PreviousRequestLog.ts"
import { AppConfig, appConfig } from "../../src/Platform/Config.ts"
import { WebhookDeliveries } from "../../src/Webhooks/Deliveries.ts"
import { addOutboxEvent } from "../../src/Webhooks/Outbox.ts"
import { layerFreshDatabase, postgres, testConfig } from "../support/Database.ts"

const day = 24 * 60 * 60 * 1000
const now = Date.parse("2026-10-15T12:00:00.000Z")

/**
 * The WAL bytes `statement` writes in this session (`EXPLAIN (ANALYZE, WAL)` runs it and counts what
 * its execution wrote, nested functions included): the server's WAL position would count the other
 * test files' writes beside it too.
 */
const walOf = (statement: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql.unsafe<{ "QUERY PLAN": ReadonlyArray<{ Plan: { "WAL Bytes": number } }> }>(
      `EXPLAIN (ANALYZE, WAL, FORMAT JSON) ${statement}`
    )
    return row!["QUERY PLAN"][0]!.Plan["WAL Bytes"]
  })

const requestCount = (sql: SqlClient.SqlClient, originId: string) =>
  sql<{ n: number }>`SELECT count(*)::int AS n FROM logged_requests WHERE origin_id = ${originId}`.pipe(
    Effect.map(([row]) => row!.n)
  )

const configFrom = (env: Record<string, string>) =>
  appConfig.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env }))))

it.effect("REQUEST_LOG_RETENTION_DAYS: 90 by default, a whole number of days from 1, else refused", () =>
  Effect.gen(function* () {
    assert.strictEqual((yield* configFrom({})).requestLogRetentionDays, 90)
    assert.strictEqual((yield* configFrom({ REQUEST_LOG_RETENTION_DAYS: "30" })).requestLogRetentionDays, 30)
    for (const bad of ["0", "-5", "1.5", "ninety", "36501"]) {
      const exit = yield* Effect.exit(configFrom({ REQUEST_LOG_RETENTION_DAYS: bad }))
      assert.isTrue(Exit.isFailure(exit), `"${bad}" is refused`)
    }
  })
)

layer(
  Layer.mergeAll(
    WebhookDeliveries.layer,
    Layer.succeed(AppConfig, { ...testConfig, requestLogRetentionDays: 30 })
  ).pipe(Layer.provideMerge(layerFreshDatabase)),
  { excludeTestServices: true }
)("janitor retention (postgres)", (it) => {
  // On one PostgreSQL: on Citus the rows live on the workers, whose WAL the coordinator's EXPLAIN
  // does not count (docs/performance.md measures a day's retention there by hand).
  it.effect.skipIf(postgres().citus !== null)(
    "a day dropped writes no WAL for its rows; the same rows deleted write each",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const [origin] = yield* sql<{ id: string; organization_id: string }>`
        WITH org AS (INSERT INTO organizations (name) VALUES ('Retención WAL') RETURNING id)
        INSERT INTO origins (organization_id, label) SELECT id, 'web' FROM org RETURNING id, organization_id`
        const days = ["2026-08-01", "2026-08-02"].map((date) => Date.parse(`${date}T00:00:00Z`))
        for (const at of days) {
          yield* sql`SELECT logged_requests_add_partitions(${new Date(at)}, ${new Date(at)})`
          yield* sql`
          INSERT INTO logged_requests (organization_id, request_id, at, origin_id, status, outcome, duration_ms)
          SELECT ${origin!.organization_id}, 'wal-' || n, ${new Date(at + 3_600_000)}, ${origin!.id}, 201, 'created', 1
          FROM generate_series(1, 20000) AS n`
        }
        yield* sql`CHECKPOINT`.pipe(Effect.ignore)
        const deleted = yield* walOf(
          `DELETE FROM logged_requests WHERE at >= '2026-08-01T00:00:00Z' AND at < '2026-08-02T00:00:00Z'`
        )
        const dropped = yield* walOf(`SELECT logged_requests_drop_partitions('2026-08-03T00:00:00Z')`)
        // A DELETE writes a record for each row (some 50 bytes and more); a drop writes the catalog's
        // changes (after the checkpoint, whole pages of it), whatever the rows: two days of 20,000 rows.
        assert.isAbove(
          deleted,
          20_000 * 50,
          `a DELETE writes every row it deletes to the WAL (${deleted} bytes)`
        )
        assert.isBelow(
          dropped,
          deleted / 5,
          `two days dropped, ${dropped} bytes, against one deleted, ${deleted}`
        )
        assert.strictEqual(
          (yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM logged_requests WHERE at < '2026-08-03T00:00:00Z'`)[0]!.n,
          0
        )
      })
  )

  it.effect(
    "drops the request log's days past the retention whole; prunes idempotency records past 24 h",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* TestClock.setTime(now)
        const [origin] = yield* sql<{ id: string; organization_id: string }>`
        WITH org AS (INSERT INTO organizations (name) VALUES ('Retención') RETURNING id)
        INSERT INTO origins (organization_id, label) SELECT id, 'web' FROM org RETURNING id, organization_id`
        const originId = origin!.id
        const organizationId = origin!.organization_id
        for (const at of [
          now - 45 * day,
          Date.parse("2026-09-14T12:00:00Z"),
          Date.parse("2026-09-15T12:00:00Z"),
          now - day
        ])
          yield* sql`SELECT logged_requests_add_partitions(${new Date(at)}, ${new Date(at)})`
        const logRow = (at: number, requestId: string) => sql`
        INSERT INTO logged_requests (organization_id, request_id, at, origin_id, status, outcome, duration_ms)
        VALUES (${organizationId}, ${requestId}, ${new Date(at)}, ${originId}, 201, 'created', 1)`
        yield* sql`
        INSERT INTO logged_requests (organization_id, request_id, at, origin_id, status, outcome, duration_ms)
        SELECT ${organizationId}, 'old-' || n, ${new Date(now - 45 * day)}, ${originId}, 201, 'created', 1
        FROM generate_series(1, 40000) AS n`
        // 2026-09-14 ends at the cutoff's day: gone whole. 2026-09-15 holds the cutoff: kept whole, the
        // row already past 30 days included, until the day is past it.
        yield* logRow(Date.parse("2026-09-14T23:59:59.999Z"), "day-before-cutoff")
        yield* logRow(Date.parse("2026-09-15T00:00:00.000Z"), "cutoff-day-past")
        yield* logRow(now - 30 * day + 60_000, "just-within")
        yield* logRow(now - day, "yesterday")
        const unattributed = (requestId: string, at: number) => sql`
          INSERT INTO unattributed_requests (request_id, at, key_prefix, status, outcome, duration_ms)
          VALUES (${requestId}, ${new Date(at)}, 'lk_live_nobody00', 401, 'unauthorized', 1)`
        yield* unattributed("unattributed-past", now - 30 * day - 60_000)
        yield* unattributed("unattributed-within", now - 30 * day + 60_000)
        // Live and test keys' records alike (test mode's own tables, migration 0015).
        for (const table of ["idempotency_keys", "test_idempotency_keys"]) {
          const completed = (key: string, at: number) => sql`
          INSERT INTO ${sql(table)} (organization_id, origin_id, key, fingerprint, state, http_status, response,
                                     completed_at)
          VALUES (${organizationId}, ${originId}, ${key}, 'f', 'completed', 201, '{"lead_id":"x"}'::jsonb, ${new Date(at)})`
          yield* completed("day-old", now - day - 1_000)
          yield* completed("fresh", now - day + 60_000)
        }
        for (const table of ["rate_limit_windows", "test_rate_limit_windows"]) {
          yield* sql`
          INSERT INTO ${sql(table)} (organization_id, origin_id, window_start, count)
          VALUES (${organizationId}, ${originId}, ${new Date(now - 11 * 60_000)}, 3),
                 (${organizationId}, ${originId}, ${new Date(now - 60_000)}, 2)`
        }
        for (const livemode of [true, false]) {
          yield* sql`
            INSERT INTO rate_windows (origin_id, livemode, window_start, count)
            VALUES (${originId}, ${livemode}, ${new Date(now - 11 * 60_000)}, 3),
                   (${originId}, ${livemode}, ${new Date(now - 60_000)}, 2)`
        }
        const result = yield* sweep
        assert.includeMembers(result.requestLogDaysDropped, [
          "logged_requests_20260831",
          "logged_requests_20260914"
        ])
        assert.notInclude(result.requestLogDaysDropped, "logged_requests_20260915")
        assert.strictEqual(result.unattributedDeleted, 1)
        assert.deepStrictEqual(
          (yield* sql<{ request_id: string }>`SELECT request_id FROM unattributed_requests`).map(
            (row) => row.request_id
          ),
          ["unattributed-within"]
        )
        const left = yield* sql<{ request_id: string }>`SELECT request_id FROM logged_requests ORDER BY at`
        assert.deepStrictEqual(
          left.map((row) => row.request_id),
          ["cutoff-day-past", "just-within", "yesterday"]
        )
        for (const table of ["idempotency_keys", "test_idempotency_keys"]) {
          const keys = yield* sql<{ key: string }>`SELECT key FROM ${sql(table)}`
          assert.deepStrictEqual(
            keys.map((row) => row.key),
            ["fresh"],
            table
          )
        }
        const windows = yield* sql<{ livemode: boolean; count: number }>`
          SELECT livemode, count FROM rate_windows ORDER BY livemode`
        assert.deepStrictEqual(
          windows.map((row) => [row.livemode, row.count]),
          [
            [false, 2],
            [true, 2]
          ],
          "rate_windows: windows older than 10 minutes go, in both modes"
        )
        for (const table of ["rate_limit_windows", "test_rate_limit_windows"]) {
          const windows = yield* sql<{ count: number }>`SELECT count FROM ${sql(table)}`
          assert.deepStrictEqual(
            windows.map((row) => row.count),
            [2],
            `${table}: windows older than 10 minutes go`
          )
        }
        assert.deepStrictEqual((yield* sweep).requestLogDaysDropped, [], "a second sweep finds nothing to do")
      }).pipe(Effect.provide(TestClock.layer()))
  )

  it.effect(
    "at a day's end: the day past the retention goes at midnight UTC, not a millisecond before; a week ahead is made",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const lastMillisecond = Date.parse("2026-10-20T23:59:59.999Z")
        yield* TestClock.setTime(lastMillisecond)
        const [origin] = yield* sql<{ id: string; organization_id: string }>`
        WITH org AS (INSERT INTO organizations (name) VALUES ('Medianoche') RETURNING id)
        INSERT INTO origins (organization_id, label) SELECT id, 'web' FROM org RETURNING id, organization_id`
        yield* sql`SELECT logged_requests_add_partitions('2026-09-19T00:00:00Z', '2026-09-21T00:00:00Z')`
        yield* sql`
        INSERT INTO logged_requests (organization_id, request_id, at, origin_id, status, outcome, duration_ms)
        VALUES (${origin!.organization_id}, 'first-of-the-day', '2026-09-20T00:00:00Z', ${origin!.id}, 201, 'created', 1),
               (${origin!.organization_id}, 'last-of-the-day', '2026-09-20T23:59:59.999Z', ${origin!.id}, 201, 'created', 1)`
        const days = sql<{ name: string }>`
        SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'logged_requests'::regclass AND c.relname >= 'logged_requests_20260919'
          AND c.relname <= 'logged_requests_20261031' ORDER BY 1`.pipe(
          Effect.map((rows) => rows.map((row) => row.name))
        )

        // 30 days before 23:59:59.999 on 2026-10-20 is within 2026-09-20: that day stays whole.
        const before = (yield* sweep).requestLogDaysDropped
        assert.include(before, "logged_requests_20260919")
        assert.notInclude(before, "logged_requests_20260920")
        assert.strictEqual(yield* requestCount(sql, origin!.id), 2)
        assert.includeMembers(yield* days, ["logged_requests_20261019", "logged_requests_20261027"])
        assert.notInclude(yield* days, "logged_requests_20261028")

        yield* TestClock.adjust(1)
        assert.deepStrictEqual(
          (yield* sweep).requestLogDaysDropped,
          ["logged_requests_20260920"],
          "at midnight"
        )
        assert.strictEqual(yield* requestCount(sql, origin!.id), 0)
        assert.include(yield* days, "logged_requests_20261028", "a week ahead of the new day")
      }).pipe(Effect.provide(TestClock.layer()))
  )

  it.effect(
    "moves the rows the previous release wrote to request_log, deletes those past the retention",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* TestClock.setTime(now)
        const [origin] = yield* sql<{ id: string; organization_id: string }>`
        WITH org AS (INSERT INTO organizations (name) VALUES ('Anterior') RETURNING id)
        INSERT INTO origins (organization_id, label) SELECT id, 'web' FROM org RETURNING id, organization_id`
        // The previous release's own statement (migration 0018's row keys, 0021's kept bodies).
        yield* sql`
        INSERT INTO request_log (organization_id, row_key, request_id, at, origin_id, status, outcome, duration_ms, kept_body)
        SELECT ${origin!.organization_id}, gen_random_uuid(), 'previous-' || n, ${new Date(now - 40 * day)} + n * interval '1 day',
               ${origin!.id}, 400, 'validation_error', 1, '{"telefono":"551234567"}'
        FROM generate_series(0, 39) AS n
        ON CONFLICT (organization_id, row_key) DO NOTHING`
        const result = yield* sweep
        assert.strictEqual((yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM request_log`)[0]!.n, 0)
        const moved = yield* sql<{ request_id: string; kept: boolean }>`
        SELECT request_id, kept_body IS NOT NULL AS kept FROM logged_requests WHERE origin_id = ${origin!.id} ORDER BY at`
        assert.strictEqual(
          moved.length,
          30,
          "the 30 days within the retention moved, the 10 before it deleted"
        )
        assert.deepStrictEqual(moved[0], { request_id: "previous-10", kept: true }, "with its kept body")
        assert.strictEqual(moved.at(-1)?.request_id, "previous-39")
        assert.deepStrictEqual(
          result.requestLogDaysDropped,
          [],
          "nothing moved into a day past the retention"
        )
      }).pipe(Effect.provide(TestClock.layer()))
  )

  it.effect("moves request_log's newest rows first, by id, whatever the ids' digits", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const [origin] = yield* sql<{ id: string; organization_id: string }>`
        WITH org AS (INSERT INTO organizations (name) VALUES ('Por orden') RETURNING id)
        INSERT INTO origins (organization_id, label) SELECT id, 'web' FROM org RETURNING id, organization_id`
      // Ids 99,999,999 and 100,000,000: as text, the older sorts after the newer.
      yield* sql`
        INSERT INTO request_log (id, organization_id, row_key, request_id, at, origin_id, status, outcome, duration_ms)
        OVERRIDING SYSTEM VALUE
        SELECT 99999998 + n, ${origin!.organization_id}, gen_random_uuid(), 'digits-' || n, now() - interval '1 hour',
               ${origin!.id}, 201, 'created', 1
        FROM generate_series(1, 2) AS n`
      assert.strictEqual(yield* PreviousRequestLog.moveBatch(new Date(0), 1), 1)
      const moved = yield* sql<{ id: string }>`
        SELECT id::text AS id FROM logged_requests WHERE origin_id = ${origin!.id}`
      assert.deepStrictEqual(
        moved.map((row) => row.id),
        ["100000000"],
        "the newest row moved first, its id kept"
      )
      yield* sql`DELETE FROM request_log WHERE origin_id = ${origin!.id}`
    })
  )

  it.effect("the janitor and the webhooks' retention, run at once, each prune their own tables only", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const deliveries = yield* WebhookDeliveries
      yield* TestClock.setTime(now)
      const [ids] = yield* sql<{ organization_id: string; origin_id: string }>`
        WITH org AS (INSERT INTO organizations (name) VALUES ('Ganchos') RETURNING id)
        INSERT INTO origins (organization_id, label) SELECT id, 'web' FROM org
        RETURNING organization_id, id AS origin_id`
      const { organization_id: organizationId, origin_id: originId } = ids!
      const [lead] = yield* sql<{ id: string }>`
        INSERT INTO leads (organization_id, origin_id, nombre, created_at, updated_at)
        VALUES (${organizationId}, ${originId}, 'Retenida', ${new Date(now - 60 * day)}, ${new Date(now - 60 * day)})
        RETURNING id`
      yield* sql`
        INSERT INTO webhook_endpoints (organization_id, url, events, secret, created_at)
        VALUES (${organizationId}, 'https://hooks.example.com/x', ARRAY['lead.created', 'lead.enriched'],
                'whsec_x', ${new Date(now - 90 * day)})`
      // Each event queues a delivery to the endpoint, as a write's would.
      const event = (name: string, age: number) =>
        addOutboxEvent(sql, organizationId, {
          lead_id: lead!.id,
          type: "lead.enriched",
          payload: { name },
          now: new Date(now - age),
          livemode: true,
          filled: null,
          snapshot: null
        }).pipe(Effect.map((added) => String(added.id)))
      const delivered = yield* event("old-delivered", 40 * day)
      yield* event("old-pending", 40 * day)
      yield* event("recent-delivered", day)
      yield* sql`
        UPDATE webhook_deliveries d SET state = 'delivered', next_attempt_at = NULL, delivered_at = d.created_at
        FROM outbox_events o
        WHERE o.organization_id = d.organization_id AND o.id = d.outbox_id AND o.payload ->> 'name' LIKE '%-delivered'`
      for (const at of [now - 40 * day, now - day])
        yield* sql`SELECT logged_requests_add_partitions(${new Date(at)}, ${new Date(at)})`
      yield* sql`
        INSERT INTO logged_requests (organization_id, request_id, at, origin_id, status, outcome, duration_ms, lead_id)
        VALUES (${organizationId}, 'hooks-old', ${new Date(now - 40 * day)}, ${originId}, 201, 'created', 1, ${lead!.id}),
               (${organizationId}, 'hooks-recent', ${new Date(now - day)}, ${originId}, 201, 'created', 1, ${lead!.id})`

      const [janitor, webhooks] = yield* Effect.all([sweep, deliveries.prune(now - 30 * day)], {
        concurrency: "unbounded"
      })
      assert.include(janitor.requestLogDaysDropped, "logged_requests_20260905")
      assert.deepStrictEqual(webhooks, { deliveries: 1, events: 1 })
      const events = yield* sql<{ name: string }>`
        SELECT payload ->> 'name' AS name FROM outbox_events WHERE lead_id = ${lead!.id} ORDER BY id`
      assert.deepStrictEqual(
        events.map((row) => row.name),
        ["old-pending", "recent-delivered"],
        "pending work and recent history stay"
      )
      assert.strictEqual((yield* sql`SELECT 1 FROM outbox_events WHERE id = ${delivered}`).length, 0)
      const logged = yield* sql<{ request_id: string }>`
        SELECT request_id FROM logged_requests WHERE lead_id = ${lead!.id}`
      assert.deepStrictEqual(
        logged.map((row) => row.request_id),
        ["hooks-recent"]
      )
      assert.strictEqual((yield* sql`SELECT 1 FROM leads WHERE id = ${lead!.id}`).length, 1)
    }).pipe(Effect.provide(TestClock.layer()))
  )
})

it.effect("REJECTED_RETENTION_DAYS: 30 by default, a whole number of days from 1, else refused", () =>
  Effect.gen(function* () {
    assert.strictEqual((yield* configFrom({})).rejectedRetentionDays, 30)
    assert.strictEqual((yield* configFrom({ REJECTED_RETENTION_DAYS: "7" })).rejectedRetentionDays, 7)
    for (const bad of ["0", "-5", "1.5", "thirty", "36501"]) {
      const exit = yield* Effect.exit(configFrom({ REJECTED_RETENTION_DAYS: bad }))
      assert.isTrue(Exit.isFailure(exit), `"${bad}" is refused`)
    }
  })
)

layer(
  Layer.succeed(AppConfig, { ...testConfig, rejectedRetentionDays: 7 }).pipe(
    Layer.provideMerge(layerFreshDatabase)
  ),
  { excludeTestServices: true }
)("rejected bodies' retention (postgres)", (it) => {
  it.effect("deletes the bodies kept longer than REJECTED_RETENTION_DAYS; their request-log rows stay", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* TestClock.setTime(now)
      const [origin] = yield* sql<{ id: string; organization_id: string }>`
        WITH org AS (INSERT INTO organizations (name) VALUES ('Rescate') RETURNING id)
        INSERT INTO origins (organization_id, label) SELECT id, 'web' FROM org RETURNING id, organization_id`
      yield* sql`SELECT logged_requests_add_partitions(${new Date(now - 8 * day)}, ${new Date(now - 7 * day)})`
      const kept = (requestId: string, at: number) => sql`
        INSERT INTO logged_requests (organization_id, request_id, at, origin_id, status, outcome, duration_ms, kept_body)
        VALUES (${origin!.organization_id}, ${requestId}, ${new Date(at)}, ${origin!.id}, 400, 'validation_error', 1, '{"telefono":"551234567"}')`
      yield* kept("past", now - 7 * day - 1_000)
      yield* kept("within", now - 7 * day + 60_000)

      const result = yield* sweep
      assert.strictEqual(result.rejectedBodiesDeleted, 1)
      assert.deepStrictEqual(result.requestLogDaysDropped, [])
      const rows = yield* sql<{ request_id: string; kept: boolean }>`
        SELECT request_id, kept_body IS NOT NULL AS kept FROM logged_requests ORDER BY at`
      assert.deepStrictEqual(rows, [
        { request_id: "past", kept: false },
        { request_id: "within", kept: true }
      ])
      assert.strictEqual((yield* sweep).rejectedBodiesDeleted, 0, "a second sweep finds nothing to do")
    }).pipe(Effect.provide(TestClock.layer()))
  )
})
