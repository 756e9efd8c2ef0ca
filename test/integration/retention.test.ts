import { assert, it, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { AppConfig, appConfig } from "../../src/Config.ts"
import { sweep } from "../../src/Janitor.ts"
import { layerFreshDatabase, testConfig } from "../support/Database.ts"

const day = 24 * 60 * 60 * 1000
const now = Date.parse("2026-10-15T12:00:00.000Z")

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
    layerFreshDatabase,
    Layer.succeed(AppConfig, { ...testConfig, requestLogRetentionDays: 30 })
  ),
  { excludeTestServices: true }
)("janitor retention (postgres)", (it) => {
  it.effect("prunes request-log rows past the retention (in batches) and idempotency records past 24 h", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* TestClock.setTime(now)
      const [origin] = yield* sql<{ id: string }>`
        WITH org AS (INSERT INTO organizations (name) VALUES ('Retención') RETURNING id)
        INSERT INTO origins (organization_id, label) SELECT id, 'web' FROM org RETURNING id`
      const originId = origin!.id
      const logRow = (at: number, requestId: string) => sql`
        INSERT INTO request_log (request_id, at, origin_id, status, outcome, duration_ms)
        VALUES (${requestId}, ${new Date(at)}, ${originId}, 201, 'created', 1)`
      yield* sql`
        INSERT INTO request_log (request_id, at, origin_id, status, outcome, duration_ms)
        SELECT 'old-' || n, ${new Date(now - 45 * day)}, ${originId}, 201, 'created', 1
        FROM generate_series(1, 12000) AS n`
      yield* logRow(now - 30 * day - 1_000, "just-past")
      yield* logRow(now - 30 * day + 60_000, "just-within")
      yield* logRow(now - day, "yesterday")
      const completed = (key: string, at: number) => sql`
        INSERT INTO idempotency_keys (origin_id, key, fingerprint, state, http_status, response, completed_at)
        VALUES (${originId}, ${key}, 'f', 'completed', 201, '{"lead_id":"x"}'::jsonb, ${new Date(at)})`
      yield* completed("day-old", now - day - 1_000)
      yield* completed("fresh", now - day + 60_000)

      const result = yield* sweep
      assert.strictEqual(result.requestLogPruned, 12_001)
      const left = yield* sql<{ request_id: string }>`SELECT request_id FROM request_log ORDER BY at`
      assert.deepStrictEqual(
        left.map((row) => row.request_id),
        ["just-within", "yesterday"]
      )
      const keys = yield* sql<{ key: string }>`SELECT key FROM idempotency_keys`
      assert.deepStrictEqual(
        keys.map((row) => row.key),
        ["fresh"]
      )
      assert.strictEqual((yield* sweep).requestLogPruned, 0, "a second sweep finds nothing to do")
    }).pipe(Effect.provide(TestClock.layer()))
  )
})
