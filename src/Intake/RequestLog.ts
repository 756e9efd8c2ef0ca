import { Clock, Context, Effect, Layer, Metric, Schema, Semaphore } from "effect"
import { SqlClient } from "effect/sql"
import { UnknownEntity } from "../Domain/Errors.ts"
import { MemoryStore, type RequestLogRow } from "../Platform/MemoryStore.ts"
import { step } from "../Platform/Observability/Steps.ts"
import { decodeRows, requireExisting } from "../Platform/Sql/Decode.ts"
import { sqlStateOf, statementTimeout } from "../Platform/Sql/Outcome.ts"

export type { RequestLogRow }

/** A row as listed: whether its body is kept for rescue, and the lead a rescue made of it. */
export interface LoggedRequest extends RequestLogRow {
  readonly kept: boolean
  readonly rescuedLeadId: string | null
}

export interface RequestLogListing {
  /** Only the requests whose body is kept for rescue (docs/contract.md#11-rejected-leads-are-kept-for-rescue). */
  readonly keptOnly?: boolean
}

export type RequestLogScope = { readonly originId: string } | { readonly unattributed: true }

/** A request-log row as the CLI, the console and the personal-data export read it. */
export const LogRow = Schema.Struct({
  request_id: Schema.String,
  at: Schema.Date,
  origin_id: Schema.NullOr(Schema.String),
  key_prefix: Schema.NullOr(Schema.String),
  status: Schema.Number,
  outcome: Schema.String,
  lead_id: Schema.NullOr(Schema.String),
  idempotency_key: Schema.NullOr(Schema.String),
  duration_ms: Schema.Number,
  livemode: Schema.Boolean,
  kept: Schema.Boolean,
  rescued_lead_id: Schema.NullOr(Schema.String)
})

/** Rows one INSERT carries at most, and rows kept waiting at most (beyond, new rows are dropped and counted). */
const maxBatchRows = 500
const maxWaitingRows = 20_000

/** PostgreSQL's answer to a row no partition takes (check_violation). */
const noPartitionState = "23514"

/** The wait before a failed batch is tried again, doubled per failure up to the last. */
const retryAfter = [250, 500, 1_000, 2_000] as const

export const rowsWaiting = Metric.gauge("lead_intake_request_log_rows_waiting", {
  description:
    "Request log rows this instance has queued and not yet written (kept while the database is away)"
})

export const rowsDropped = Metric.counter("lead_intake_request_log_rows_dropped_total", {
  description:
    "Request log rows dropped because the queue was full, or still waiting when the instance stopped",
  incremental: true
})

interface Waiting {
  readonly row: RequestLogRow
  readonly key: string
  readonly keptBody: string | null
}

const toRecord = ({ row, key, keptBody }: Waiting) => ({
  row_key: key,
  request_id: row.requestId,
  at: new Date(row.at).toISOString(),
  origin_id: row.originId,
  key_prefix: row.keyPrefix,
  status: row.status,
  outcome: row.outcome,
  lead_id: row.leadId,
  idempotency_key: row.idempotencyKey,
  duration_ms: row.durationMs,
  livemode: row.livemode,
  kept_body: keptBody
})

/**
 * One row per `POST /v1/leads`. A row whose origin is not known yet (an invalid key) is
 * attributed by the prefix that was sent, when that prefix names a key of some origin.
 */
export class RequestLog extends Context.Service<
  RequestLog,
  {
    /**
     * Queues the row; `keptBody` is a rejected body kept for rescue, written with its row or not at
     * all, and never logged.
     */
    record(row: RequestLogRow, keptBody?: string): Effect.Effect<void>
    /** Writes what is waiting now (rows the database does not take stay waiting for the writer). */
    readonly flush: Effect.Effect<void>
    list(
      scope: RequestLogScope,
      limit: number,
      listing?: RequestLogListing
    ): Effect.Effect<ReadonlyArray<LoggedRequest>, UnknownEntity>
  }
>()("lead-intake/RequestLog") {
  /**
   * Rows are written off the answer's path, many per statement: `record` queues the row and one
   * writer at a time inserts the oldest waiting rows (so under load a single INSERT carries a whole
   * batch, and a slow or unreachable database never holds an answer). A batch the database did not
   * take stays at the head of the queue and is tried again, with a growing pause, until it is
   * written: a restart or failover of PostgreSQL loses no row. A batch whose answer was lost may
   * have committed: each row carries a key of its own (migration 0018), and the INSERT skips keys
   * already written, so no row is written twice. What may be lost is what is waiting when the
   * instance itself stops: shutdown writes it if the database answers, and counts the rest.
   */
  static readonly layer = Layer.effect(
    RequestLog,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const fn = yield* step
      const layerScope = yield* Effect.scope
      // The writer's pauses run on the clock the layer was built with, not on the recording caller's.
      const clock = yield* Clock.Clock
      const writer = yield* Semaphore.make(1)
      const waiting: Array<Waiting> = []
      let dropped = 0

      /**
       * A row lands under its origin's organization: the origin the request was answered for, else the
       * one its key prefix names in the global directory (a request whose key the instance could not
       * check); a row of neither lands in `unattributed_requests` (migration 0022). One transaction.
       */
      const insert = (rows: ReadonlyArray<Waiting>) => {
        const batch = JSON.stringify(rows.map((row, seq) => ({ ...toRecord(row), seq })))
        const input = sql`
          SELECT r.seq, r.row_key, r.request_id, r.at, o.organization_id, o.id AS origin_id, r.key_prefix, r.status,
                 r.outcome, r.lead_id, r.idempotency_key, r.duration_ms, r.livemode, r.kept_body
          FROM jsonb_to_recordset(${batch}::jsonb) AS r(
            seq integer, row_key uuid, request_id text, at timestamptz, origin_id uuid, key_prefix text,
            status integer, outcome text, lead_id uuid, idempotency_key text, duration_ms double precision,
            livemode boolean, kept_body text)
          LEFT JOIN api_key_directory d ON d.public_id = substr(r.key_prefix, 9)
          LEFT JOIN api_keys k ON k.organization_id = d.organization_id AND k.id = d.key_id
          LEFT JOIN origins o ON o.id = COALESCE(r.origin_id, k.origin_id)`
        return sql.withTransaction(
          Effect.andThen(
            sql`
              INSERT INTO logged_requests (organization_id, row_key, request_id, at, origin_id, key_prefix, status, outcome,
                                       lead_id, idempotency_key, duration_ms, livemode, kept_body)
              SELECT i.organization_id, i.row_key, i.request_id, i.at, i.origin_id, i.key_prefix, i.status, i.outcome,
                     i.lead_id, i.idempotency_key, i.duration_ms, i.livemode, i.kept_body
              FROM (${input}) i WHERE i.organization_id IS NOT NULL
              ORDER BY i.seq
              ON CONFLICT (organization_id, row_key, at) DO NOTHING`,
            sql`
              INSERT INTO unattributed_requests (row_key, request_id, at, key_prefix, status, outcome, idempotency_key,
                                                 duration_ms, livemode)
              SELECT i.row_key, i.request_id, i.at, i.key_prefix, i.status, i.outcome, i.idempotency_key,
                     i.duration_ms, i.livemode
              FROM (${input}) i WHERE i.organization_id IS NULL
              ORDER BY i.seq
              ON CONFLICT (row_key) DO NOTHING`
          )
        )
      }

      const reportDropped = Effect.suspend(() => {
        const lost = dropped
        dropped = 0
        return lost === 0
          ? Effect.void
          : Effect.logWarning("request log rows dropped: the queue was full").pipe(
              Effect.annotateLogs({ rows: lost })
            )
      })

      /**
       * A batch with a row of a day that has no partition (the janitor makes them a week ahead; a clock
       * far off, or no janitor run for a week) makes its days' partitions and is written again.
       */
      const insertMakingPartitions = (batch: ReadonlyArray<Waiting>) =>
        Effect.catchIf(
          insert(batch),
          (error) => sqlStateOf(error.reason.cause) === noPartitionState,
          () => {
            const times = batch.map((entry) => entry.row.at)
            return sql`
              SELECT logged_requests_add_partitions(${new Date(Math.min(...times))}, ${new Date(Math.max(...times))})`.pipe(
              Effect.andThen(insert(batch))
            )
          }
        )

      /** The oldest waiting rows written, then taken off the queue; false when none were waiting. */
      const writeBatch = Effect.suspend(() => {
        const batch = waiting.slice(0, maxBatchRows)
        if (batch.length === 0) return Effect.succeed(false)
        return insertMakingPartitions(batch).pipe(
          Effect.timeout(statementTimeout),
          Effect.andThen(() => {
            waiting.splice(0, batch.length)
            return Metric.update(rowsWaiting, waiting.length)
          }),
          Effect.andThen(reportDropped),
          Effect.as(true)
        )
      })
      const writeAll: Effect.Effect<void, unknown> = Effect.flatMap(writeBatch, (wrote) =>
        wrote ? writeAll : Effect.void
      )
      /** One pass over what is waiting; a failure leaves the rows waiting and is the caller's to report. */
      const flush = writer.withPermits(1)(writeAll)

      const writeUntilDone = (attempt: number): Effect.Effect<void> =>
        flush.pipe(
          Effect.catchCause((cause) =>
            Effect.logWarning("request log write failed; the rows are kept and tried again", cause).pipe(
              Effect.annotateLogs({ rows: waiting.length, attempt: attempt + 1 }),
              Effect.andThen(Effect.sleep(retryAfter[Math.min(attempt, retryAfter.length - 1)]!)),
              Effect.andThen(Effect.suspend(() => writeUntilDone(attempt + 1)))
            )
          )
        )

      // At shutdown the writer is interrupted first (its fiber is in this layer's scope), then
      // what is still waiting gets one more try.
      yield* Effect.addFinalizer(() =>
        flush.pipe(
          Effect.catchCause((cause) =>
            Effect.logError("request log rows lost at shutdown: the database did not take them", cause).pipe(
              Effect.annotateLogs({ rows: waiting.length }),
              Effect.andThen(Metric.update(rowsDropped, waiting.length))
            )
          )
        )
      )

      return RequestLog.of({
        record: fn("RequestLog.record")(function* (row, keptBody) {
          if (waiting.length >= maxWaitingRows) {
            dropped++
            yield* Metric.update(rowsDropped, 1)
            return
          }
          waiting.push({ row, key: crypto.randomUUID(), keptBody: keptBody ?? null })
          yield* Metric.update(rowsWaiting, waiting.length)
          if (waiting.length === 1)
            yield* Effect.forkIn(Effect.provideService(writeUntilDone(0), Clock.Clock, clock), layerScope)
        }),
        flush: Effect.ignore(flush),
        list: Effect.fn("RequestLog.list")(function* (scope, limit, listing) {
          yield* Effect.ignore(flush)
          if ("originId" in scope) {
            yield* requireExisting(sql, "origin", scope.originId)
          }
          const rows = yield* (
            "originId" in scope
              ? sql`
                SELECT request_id, at, origin_id, key_prefix, status, outcome, lead_id, idempotency_key, duration_ms,
                       livemode, kept_body IS NOT NULL AS kept, rescued_lead_id
                FROM logged_requests
                WHERE origin_id = ${scope.originId}
                  ${listing?.keptOnly === true ? sql`AND kept_body IS NOT NULL` : sql``}
                ORDER BY at DESC, id DESC
                LIMIT ${limit}`
              : sql`
                SELECT request_id, at, NULL::uuid AS origin_id, key_prefix, status, outcome, NULL::uuid AS lead_id,
                       idempotency_key, duration_ms, livemode, false AS kept, NULL::uuid AS rescued_lead_id
                FROM unattributed_requests
                WHERE ${listing?.keptOnly === true ? sql`false` : sql`true`}
                ORDER BY at DESC, id DESC
                LIMIT ${limit}`
          ).pipe(decodeRows(LogRow))
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
            livemode: row.livemode,
            kept: row.kept,
            rescuedLeadId: row.rescued_lead_id
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
        record: Effect.fn("RequestLog.record")(function* (row, keptBody) {
          store.requests.push({
            ...row,
            originId: row.originId ?? originOfPrefix(row.keyPrefix),
            keptBody: keptBody ?? null
          })
        }),
        list: Effect.fn("RequestLog.list")(function* (scope, limit, listing) {
          if ("originId" in scope && !store.origins.has(scope.originId)) {
            return yield* new UnknownEntity({ entity: "origin", id: scope.originId })
          }
          return store.requests
            .filter((row) => ("originId" in scope ? row.originId === scope.originId : row.originId === null))
            .filter((row) => listing?.keptOnly !== true || row.keptBody !== null)
            .reverse()
            .sort((a, b) => b.at - a.at)
            .slice(0, limit)
            .map(
              ({ keptBody, ...row }): LoggedRequest => ({
                ...row,
                kept: keptBody !== null,
                rescuedLeadId: null
              })
            )
        })
      })
    })
  )
}
