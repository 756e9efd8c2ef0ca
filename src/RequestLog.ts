import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { UnknownEntity } from "./Domain/Errors.ts"
import { MemoryStore, type RequestLogRow } from "./MemoryStore.ts"
import { statementTimeout } from "./Sql.ts"

export type { RequestLogRow }

export type RequestLogScope = { readonly originId: string } | { readonly unattributed: true }

/**
 * One row per `POST /v1/leads`. A row whose origin is not known yet (an invalid key) is
 * attributed by the prefix that was sent, when that prefix names a key of some origin.
 */
export class RequestLog extends Context.Service<
  RequestLog,
  {
    record(row: RequestLogRow): Effect.Effect<void>
    list(scope: RequestLogScope, limit: number): Effect.Effect<ReadonlyArray<RequestLogRow>, UnknownEntity>
  }
>()("lead-intake/RequestLog") {
  static readonly layer = Layer.effect(
    RequestLog,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      return RequestLog.of({
        record: Effect.fn("RequestLog.record")(function* (row) {
          yield* sql`
            INSERT INTO request_log (request_id, at, origin_id, key_prefix, status, outcome, lead_id, idempotency_key, duration_ms)
            VALUES (
              ${row.requestId}, ${new Date(row.at)},
              COALESCE(${row.originId}::uuid, (SELECT origin_id FROM api_keys WHERE public_id = substr(${row.keyPrefix}::text, 9))),
              ${row.keyPrefix}, ${row.status}, ${row.outcome}, ${row.leadId}, ${row.idempotencyKey}, ${row.durationMs}
            )`.pipe(
            // The answer waits for this write, so a blocked log must not hold it.
            Effect.timeoutOrElse({
              duration: statementTimeout,
              orElse: () => Effect.die(new Error("request log write timed out"))
            }),
            Effect.orDie
          )
        }),
        list: Effect.fn("RequestLog.list")(function* (scope, limit) {
          if ("originId" in scope) {
            const [origin] = yield* sql`SELECT 1 FROM origins WHERE id = ${scope.originId}`.pipe(Effect.orDie)
            if (origin === undefined)
              return yield* new UnknownEntity({ entity: "origin", id: scope.originId })
          }
          const rows = yield* sql<{
            request_id: string
            at: Date
            origin_id: string | null
            key_prefix: string | null
            status: number
            outcome: string
            lead_id: string | null
            idempotency_key: string | null
            duration_ms: number
          }>`
            SELECT request_id, at, origin_id, key_prefix, status, outcome, lead_id, idempotency_key, duration_ms
            FROM request_log
            WHERE ${"originId" in scope ? sql`origin_id = ${scope.originId}` : sql`origin_id IS NULL`}
            ORDER BY at DESC, id DESC
            LIMIT ${limit}`.pipe(Effect.orDie)
          return rows.map((row) => ({
            requestId: row.request_id,
            at: row.at.getTime(),
            originId: row.origin_id,
            keyPrefix: row.key_prefix,
            status: row.status,
            outcome: row.outcome,
            leadId: row.lead_id,
            idempotencyKey: row.idempotency_key,
            durationMs: row.duration_ms
          }))
        })
      })
    })
  )

  static readonly layerMemory = Layer.effect(
    RequestLog,
    Effect.gen(function* () {
      const store = yield* MemoryStore
      const originOfPrefix = (prefix: string | null) =>
        prefix === null
          ? null
          : ([...store.keys.values()].find((key) => key.prefix === prefix)?.originId ?? null)
      return RequestLog.of({
        record: Effect.fn("RequestLog.record")(function* (row) {
          store.requests.push({ ...row, originId: row.originId ?? originOfPrefix(row.keyPrefix) })
        }),
        list: Effect.fn("RequestLog.list")(function* (scope, limit) {
          if ("originId" in scope && !store.origins.has(scope.originId)) {
            return yield* new UnknownEntity({ entity: "origin", id: scope.originId })
          }
          return store.requests
            .filter((row) => ("originId" in scope ? row.originId === scope.originId : row.originId === null))
            .reverse()
            .sort((a, b) => b.at - a.at)
            .slice(0, limit)
        })
      })
    })
  )
}
