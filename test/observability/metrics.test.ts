import { PgClient } from "@effect/sql-pg"
import { assert, it, layer } from "@effect/vitest"
import { Effect, Layer, Metric, Option, Redacted } from "effect"
import { PrometheusMetrics } from "effect/observability"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../../src/Platform/Config.ts"
import * as Metrics from "../../src/Platform/Observability/Metrics.ts"
import { layerPoolMetrics } from "../../src/Platform/Observability/Observability.ts"
import * as Sql from "../../src/Platform/Sql/Sql.ts"
import { layerMemoryServices, seed } from "../support/Client.ts"
import { createDatabase, databaseUrl, testConfig } from "../support/Database.ts"
import { Observed, post, send, withServices } from "./support.ts"

const count = <State>(metric: Metric.Metric<number, State>, attributes: Record<string, string> = {}) =>
  Effect.map(Metric.value(Metric.withAttributes(metric, attributes)), (state) => {
    const value = state as { readonly count?: number; readonly value?: number }
    return Number(value.count ?? value.value ?? 0)
  })

const lead = { nombre: "Ana", telefono: "+52 55 1234 5678" }

layer(Observed.layer(layerMemoryServices), { excludeTestServices: true })("request metrics", (it) => {
  it.effect("requests by method, route, status and outcome; rate-limited, replayed and conflicting", () =>
    Effect.gen(function* () {
      const created = { method: "POST", route: "/v1/leads", status: "201", outcome: "created" }
      const before = {
        created: yield* count(Metrics.requests, created),
        replays: yield* count(Metrics.replays),
        conflicts: yield* count(Metrics.idempotencyConflicts, { reason: "conflict" }),
        limited: yield* count(Metrics.rateLimited),
        unmatched: yield* count(Metrics.requests, {
          method: "GET",
          route: "unmatched",
          status: "404",
          outcome: "not_found"
        })
      }

      yield* post(lead, { headers: { "idempotency-key": "metrics-1" } })
      const replay = yield* post(lead, { headers: { "idempotency-key": "metrics-1" } })
      assert.strictEqual(replay.body.replay, true)
      const conflict = yield* post(
        { ...lead, nombre: "Otra" },
        { headers: { "idempotency-key": "metrics-1" } }
      )
      assert.strictEqual(conflict.status, 409)
      const limited = yield* withServices(seed({ rateLimit: 1 }))
      yield* post({ nombre: "B", telefono: "+52 55 9999 0000" }, { key: limited.key })
      const refused = yield* post(lead, { key: limited.key })
      assert.strictEqual(refused.status, 429)
      yield* send({ method: "GET", path: "/no/such/route/ana@example.com" })

      assert.strictEqual((yield* count(Metrics.requests, created)) - before.created, 2)
      assert.strictEqual((yield* count(Metrics.replays)) - before.replays, 1)
      assert.strictEqual(
        (yield* count(Metrics.idempotencyConflicts, { reason: "conflict" })) - before.conflicts,
        1
      )
      assert.strictEqual((yield* count(Metrics.rateLimited)) - before.limited, 1)
      const unmatched = yield* count(Metrics.requests, {
        method: "GET",
        route: "unmatched",
        status: "404",
        outcome: "not_found"
      })
      assert.strictEqual(unmatched - before.unmatched, 1)

      const text = yield* PrometheusMetrics.format()
      assert.match(
        text,
        /^lead_intake_http_requests_total\{method="POST",route="\/v1\/leads",status="201",outcome="created"\} \d+$/m
      )
      assert.match(text, /^# TYPE lead_intake_http_request_duration_seconds histogram$/m)
      assert.match(
        text,
        /^lead_intake_http_request_duration_seconds_bucket\{method="POST",route="\/v1\/leads",status="429",le="\+Inf"\} \d+$/m
      )
      assert.match(
        text,
        /^lead_intake_http_request_duration_seconds_count\{method="GET",route="unmatched",status="404"\} \d+$/m
      )
      assert.match(text, /^lead_intake_rate_limited_total \d+$/m)
      assert.match(text, /^lead_intake_idempotent_replays_total \d+$/m)
      assert.match(text, /^lead_intake_idempotency_conflicts_total\{reason="conflict"\} \d+$/m)
      assert.notInclude(text, "ana@example.com", "unmatched paths never become labels")
    })
  )
})

it.live("the pool gauge counts this instance's connections, busy ones as in use", () =>
  Effect.gen(function* () {
    const name = yield* createDatabase("pool")
    const client = PgClient.layer({
      url: Redacted.make(databaseUrl(name)),
      applicationName: Sql.applicationName,
      maxConnections: 4
    })
    const config = Layer.succeed(AppConfig, {
      ...testConfig,
      metricsPort: Option.some(0),
      databasePoolSize: 4
    })
    yield* Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`SELECT pg_sleep(1.5)`.pipe(Effect.forkScoped)
      yield* Effect.sleep("300 millis")
      yield* Layer.build(layerPoolMetrics)
      yield* Effect.sleep("200 millis")
      assert.strictEqual(yield* count(Metrics.poolMax), 4)
      assert.isAtLeast(yield* count(Metrics.poolInUse), 1)
      assert.isAtLeast(yield* count(Metrics.poolOpen), 2)
    }).pipe(Effect.scoped, Effect.provide(Layer.merge(client, config)))
  })
)
