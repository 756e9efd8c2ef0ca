import { Context, Effect, Layer, Schema, Semaphore } from "effect"
import { SqlClient } from "effect/sql"
import { UnknownEntity } from "../Domain/Errors.ts"
import { MemoryStore, type RequestLogRow } from "../Platform/MemoryStore.ts"
import { step } from "../Platform/Observability/Steps.ts"
import { decodeRows, requireExisting, statementTimeout } from "../Platform/Sql.ts"

export type { RequestLogRow }

export type RequestLogScope = { readonly originId: string } | { readonly unattributed: true }

const LogRow = Schema.Struct({
  request_id: Schema.String,
  at: Schema.Date,
  origin_id: Schema.NullOr(Schema.String),
  key_prefix: Schema.NullOr(Schema.String),
  status: Schema.Number,
  outcome: Schema.String,
  lead_id: Schema.NullOr(Schema.String),
  idempotency_key: Schema.NullOr(Schema.String),
  duration_ms: Schema.Number,
  livemode: Schema.Boolean
})

/** Rows one INSERT carries at most, and rows queued at most (beyond, new rows are dropped and counted). */
const maxBatchRows = 500
const maxPendingRows = 20_000

const toRecord = (row: RequestLogRow) => ({
  request_id: row.requestId,
  at: new Date(row.at).toISOString(),
  origin_id: row.originId,
  key_prefix: row.keyPrefix,
  status: row.status,
  outcome: row.outcome,
  lead_id: row.leadId,
  idempotency_key: row.idempotencyKey,
  duration_ms: row.durationMs,
  livemode: row.livemode
})

/**
 * One row per `POST /v1/leads`. A row whose origin is not known yet (an invalid key) is
 * attributed by the prefix that was sent, when that prefix names a key of some origin.
 */
export class RequestLog extends Context.Service<
  RequestLog,
  {
    record(row: RequestLogRow): Effect.Effect<void>
    list(scope: RequestLogScope, limit: number): Effect.Effect<ReadonlyArray<RequestLogRow>, UnknownEntity>
    /** Waits until every row recorded so far is written, so a read that follows sees it. */
    readonly flush: Effect.Effect<void>
  }
>()("lead-intake/RequestLog") {
  /**
   * Rows are written off the answer's path, many per statement: `record` queues the row and one
   * writer at a time inserts everything queued (so under load a single INSERT carries a whole
   * batch, and a slow or unreachable database never holds an answer). `list` and shutdown wait
   * for the queue to be written.
   */
  static readonly layer = Layer.effect(
    RequestLog,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const fn = yield* step
      const writer = yield* Semaphore.make(1)
      const pending: Array<RequestLogRow> = []
      let dropped = 0

      const insert = (rows: ReadonlyArray<RequestLogRow>) => sql`
        INSERT INTO request_log (request_id, at, origin_id, key_prefix, status, outcome, lead_id, idempotency_key, duration_ms,
                                 livemode)
        SELECT r.request_id, r.at,
               COALESCE(r.origin_id, (SELECT origin_id FROM api_keys WHERE public_id = substr(r.key_prefix, 9))),
               r.key_prefix, r.status, r.outcome, r.lead_id, r.idempotency_key, r.duration_ms, r.livemode
        FROM jsonb_to_recordset(${JSON.stringify(rows.map((row, seq) => ({ ...toRecord(row), seq })))}::jsonb) AS r(
          seq integer, request_id text, at timestamptz, origin_id uuid, key_prefix text, status integer,
          outcome text, lead_id uuid, idempotency_key text, duration_ms double precision, livemode boolean)
        ORDER BY r.seq`

      const writeBatch = Effect.suspend(() => {
        const batch = pending.splice(0, maxBatchRows)
        if (batch.length === 0) return Effect.succeed(false)
        const lost = dropped
        dropped = 0
        return insert(batch).pipe(
          Effect.timeout(statementTimeout),
          Effect.andThen(
            lost === 0
              ? Effect.void
              : Effect.logWarning("request log rows dropped: the queue was full").pipe(
                  Effect.annotateLogs({ rows: lost })
                )
          ),
          Effect.catchCause((cause) =>
            Effect.logError("request log write failed", cause).pipe(
              Effect.annotateLogs({ rows: batch.length })
            )
          ),
          Effect.as(true)
        )
      })
      const drain: Effect.Effect<void> = Effect.flatMap(writeBatch, (wrote) => (wrote ? drain : Effect.void))
      const flush = writer.withPermits(1)(drain)
      // Writers run detached, so shutdown does not cut one off mid-batch: the finalizer waits for it.
      yield* Effect.addFinalizer(() => flush)

      return RequestLog.of({
        flush,
        record: fn("RequestLog.record")(function* (row) {
          if (pending.length >= maxPendingRows) {
            dropped++
            return
          }
          pending.push(row)
          if (pending.length === 1) yield* Effect.forkDetach(flush)
        }),
        list: Effect.fn("RequestLog.list")(function* (scope, limit) {
          yield* flush
          if ("originId" in scope) {
            yield* requireExisting(sql, "origin", scope.originId)
          }
          const rows = yield* sql`
            SELECT request_id, at, origin_id, key_prefix, status, outcome, lead_id, idempotency_key, duration_ms,
                   livemode
            FROM request_log
            WHERE ${"originId" in scope ? sql`origin_id = ${scope.originId}` : sql`origin_id IS NULL`}
            ORDER BY at DESC, id DESC
            LIMIT ${limit}`.pipe(decodeRows(LogRow))
          return rows.map((row) => ({
            requestId: row.request_id,
            at: row.at.getTime(),
            originId: row.origin_id,
            keyPrefix: row.key_prefix,
            status: row.status,
            outcome: row.outcome,
            leadId: row.lead_id,
            idempotencyKey: row.idempotency_key,
            durationMs: row.duration_ms,
            livemode: row.livemode
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
        flush: Effect.void,
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
