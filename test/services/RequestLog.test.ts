import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { KeyStore } from "../../src/Accounts/KeyStore.ts"
import { generateApiKey } from "../../src/Domain/ApiKey.ts"
import { RequestLog, type RequestLogRow } from "../../src/Intake/RequestLog.ts"
import { layerPostgresServices, seed } from "../support/Client.ts"
import { acrossLayers } from "./Suite.ts"

const base = Date.parse("2026-08-01T12:00:00.000Z")

const row = (overrides: Partial<RequestLogRow> & { readonly at: number }): RequestLogRow => ({
  requestId: crypto.randomUUID(),
  originId: null,
  keyPrefix: null,
  livemode: true,
  status: 201,
  outcome: "created",
  leadId: null,
  idempotencyKey: null,
  durationMs: 12.5,
  ...overrides
})

/** A recorded row as `list` gives it back. */
const listed = (entry: RequestLogRow, kept = false) => ({ ...entry, kept, rescuedLeadId: null })

acrossLayers("RequestLog", (it) => {
  it.effect("lists an origin's requests newest first, every field kept, up to the limit", () =>
    Effect.gen(function* () {
      const log = yield* RequestLog
      const fixture = yield* seed()
      const other = yield* seed()
      const created = row({
        at: base,
        originId: fixture.originId,
        keyPrefix: fixture.prefix,
        leadId: crypto.randomUUID(),
        idempotencyKey: "order-1",
        durationMs: 8.25
      })
      const replay = row({
        at: base + 2_000,
        originId: fixture.originId,
        keyPrefix: fixture.prefix,
        status: 201,
        outcome: "replay",
        leadId: created.leadId,
        idempotencyKey: "order-1"
      })
      const limited = row({
        at: base + 1_000,
        originId: fixture.originId,
        keyPrefix: fixture.prefix,
        status: 429,
        outcome: "rate_limited"
      })
      for (const entry of [created, replay, limited]) yield* log.record(entry)
      yield* log.record(row({ at: base + 5_000, originId: other.originId, keyPrefix: other.prefix }))

      assert.deepStrictEqual(
        yield* log.list({ originId: fixture.originId }, 10),
        [replay, limited, created].map((entry) => listed(entry))
      )
      assert.deepStrictEqual(
        yield* log.list({ originId: fixture.originId }, 2),
        [replay, limited].map((entry) => listed(entry))
      )
    })
  )

  it.effect("attributes a row with an invalid key by the prefix it sent, revoked keys included", () =>
    Effect.gen(function* () {
      const log = yield* RequestLog
      const keys = yield* KeyStore
      const fixture = yield* seed()
      yield* keys.rotate(fixture.originId)

      const revokedKey = row({
        at: base + 10_000,
        keyPrefix: fixture.prefix,
        status: 401,
        outcome: "invalid_key"
      })
      const unknownKey = row({
        at: base + 11_000,
        keyPrefix: generateApiKey().prefix,
        status: 401,
        outcome: "invalid_key"
      })
      const noKey = row({ at: base + 12_000, status: 401, outcome: "invalid_key" })
      for (const entry of [revokedKey, unknownKey, noKey]) yield* log.record(entry)

      assert.deepStrictEqual(yield* log.list({ originId: fixture.originId }, 10), [
        listed({ ...revokedKey, originId: fixture.originId })
      ])
      const unattributed = yield* log.list({ unattributed: true }, 100)
      const ours = new Set([unknownKey.requestId, noKey.requestId, revokedKey.requestId])
      assert.deepStrictEqual(
        unattributed.filter((entry) => ours.has(entry.requestId)),
        [noKey, unknownKey].map((entry) => listed(entry))
      )
    })
  )

  it.effect("keeps a rejected body with its row; the kept-only listing shows just those rows", () =>
    Effect.gen(function* () {
      const log = yield* RequestLog
      const fixture = yield* seed()
      const attributed = { originId: fixture.originId, keyPrefix: fixture.prefix }
      const rejected = row({ at: base + 20_000, ...attributed, status: 400, outcome: "validation_error" })
      const created = row({ at: base + 21_000, ...attributed })
      yield* log.record(rejected, '{"nombre":"Ana","telefono":"551234567"}')
      yield* log.record(created)

      assert.deepStrictEqual(yield* log.list({ originId: fixture.originId }, 10), [
        listed(created),
        listed(rejected, true)
      ])
      assert.deepStrictEqual(yield* log.list({ originId: fixture.originId }, 10, { keptOnly: true }), [
        listed(rejected, true)
      ])
    })
  )
})

layer(layerPostgresServices, { excludeTestServices: true })("RequestLog (postgres, database away)", (it) => {
  it.effect(
    "keeps the rows the database refused, oldest first, and writes each once when it answers again",
    () =>
      Effect.gen(function* () {
        const log = yield* RequestLog
        const sql = yield* SqlClient.SqlClient
        const fixture = yield* seed()
        const at = Date.now()
        const logged = (i: number) =>
          row({
            at: at + i,
            originId: fixture.originId,
            keyPrefix: fixture.prefix,
            idempotencyKey: `away-${i}`
          })
        const first = logged(0)
        const second = logged(1)
        const third = logged(2)
        yield* log.record(first)
        yield* log.flush
        // The table gone for a while: every INSERT fails, as it would with the database away.
        yield* sql`ALTER TABLE logged_requests RENAME TO request_log_away`
        yield* log.record(second, '{"telefono":"551234567"}')
        yield* log.record(third)
        yield* log.flush
        yield* Effect.sleep("600 millis")
        yield* sql`ALTER TABLE request_log_away RENAME TO logged_requests`
        yield* Effect.sleep("2500 millis")
        const rows = yield* log.list({ originId: fixture.originId }, 10)
        assert.deepStrictEqual(rows, [listed(third), listed(second, true), listed(first)])
        const [stored] = yield* sql<{ n: number; kept: number }>`
        SELECT count(*)::int AS n, count(kept_body)::int AS kept
        FROM logged_requests WHERE origin_id = ${fixture.originId} AND row_key IS NOT NULL`
        assert.deepStrictEqual(stored, { n: 3, kept: 1 }, "the kept body is written once, with its row")
      })
  )
})

layer(layerPostgresServices, { excludeTestServices: true })("RequestLog (postgres, partitions)", (it) => {
  it.effect("a row of a day that has no partition makes its day's partition and is written, none lost", () =>
    Effect.gen(function* () {
      const log = yield* RequestLog
      const sql = yield* SqlClient.SqlClient
      const fixture = yield* seed()
      // Far past the week the janitor makes ahead (a clock far off, a janitor stopped for a week).
      const at = Date.parse("2031-03-09T23:59:59.999Z")
      const partitionOf = (name: string) =>
        sql<{ present: boolean }>`SELECT to_regclass(${name}) IS NOT NULL AS present`.pipe(
          Effect.map(([row]) => row!.present)
        )
      assert.isFalse(yield* partitionOf("logged_requests_20310309"))
      assert.isFalse(yield* partitionOf("logged_requests_20310310"))
      const late = row({ at, originId: fixture.originId, keyPrefix: fixture.prefix })
      const next = row({ at: at + 1, originId: fixture.originId, keyPrefix: fixture.prefix })
      yield* log.record(late)
      yield* log.record(next, '{"telefono":"551234567"}')
      yield* log.flush
      assert.deepStrictEqual(yield* log.list({ originId: fixture.originId }, 10), [
        listed(next, true),
        listed(late)
      ])
      assert.isTrue(yield* partitionOf("logged_requests_20310309"))
      assert.isTrue(yield* partitionOf("logged_requests_20310310"))
    })
  )
})
