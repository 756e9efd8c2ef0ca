import { Clock, Duration, Effect, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../Platform/Config.ts"
import { countOf } from "../Platform/Sql/Sql.ts"
import { memoryMillis } from "./IdempotencyStore.ts"
import * as PreviousRequestLog from "./PreviousRequestLog.ts"

const sweepEvery = Duration.minutes(5)
const dayMillis = 24 * 60 * 60 * 1000
/** How far ahead the request log's partitions are made: a week of sweeps may fail before a row needs the writer's. */
const partitionsAhead = 7 * dayMillis
/** Batches of the previous request log moved per sweep (5,000 rows each), so that a sweep stays short. */
const movedBatchesPerSweep = 20

/**
 * Deletes state nobody can consult any more or that is past its retention: rate-limit windows
 * older than the current minute's neighbours, idempotency records past their 24 h memory or long
 * past their lease, the request log's days older than `REQUEST_LOG_RETENTION_DAYS` (a day's partition
 * dropped whole once its last row is past it, so a row stays between N and N + 1 days), and the
 * rejected bodies kept for rescue older than `REJECTED_RETENTION_DAYS` (their rows stay); the requests
 * whose key named no origin (`unattributed_requests`) past the same retention, by DELETE. It makes
 * the request log's partitions from yesterday to a week ahead, and moves into `logged_requests` up to
 * 100,000 of the rows in `request_log`, the table before partitioning (`PreviousRequestLog`). Every
 * step is idempotent, so instances need no coordination.
 */
export const sweep = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const { requestLogRetentionDays, rejectedRetentionDays } = yield* AppConfig
  const now = yield* Clock.currentTimeMillis
  // Live and test keys' state alike (migration 0015); the release before 0027 counted in the two older tables.
  for (const table of ["rate_windows", "rate_limit_windows", "test_rate_limit_windows"]) {
    yield* sql`DELETE FROM ${sql(table)} WHERE window_start < ${new Date(now - 10 * 60_000)}`
  }
  for (const table of ["idempotency_keys", "test_idempotency_keys"]) {
    yield* sql`
      DELETE FROM ${sql(table)}
      WHERE (state = 'completed' AND completed_at < ${new Date(now - memoryMillis)})
         OR (state = 'in_progress' AND lease_expires_at < ${new Date(now - 60 * 60_000)})`
  }
  const cutoff = new Date(now - requestLogRetentionDays * dayMillis)
  const [made] = yield* sql<{ made: number }>`
    SELECT logged_requests_add_partitions(${new Date(now - dayMillis)}, ${new Date(now + partitionsAhead)}) AS made`
  if ((made?.made ?? 0) > 0)
    yield* Effect.logInfo("request log partitions made").pipe(Effect.annotateLogs({ partitions: made!.made }))
  const moved = yield* PreviousRequestLog.moveRows(cutoff, movedBatchesPerSweep)
  if (moved > 0)
    yield* Effect.logInfo("request log rows moved from request_log").pipe(
      Effect.annotateLogs({ rows: moved })
    )
  // The requests whose key named no origin (a table of its own, not partitioned: a reference table on
  // Citus, where each DELETE is a commit on every node, so in bounded batches): the same retention.
  let unattributedDeleted = 0
  for (let batch = 0; batch < movedBatchesPerSweep; batch++) {
    const deleted = yield* sql`
      WITH gone AS (
        DELETE FROM unattributed_requests WHERE id IN (
          SELECT id FROM unattributed_requests WHERE at < ${cutoff} ORDER BY at LIMIT 5000)
        RETURNING 1
      )
      SELECT count(*)::int AS n FROM gone`.pipe(countOf)
    unattributedDeleted += deleted
    if (deleted < 5000) break
  }
  if (unattributedDeleted > 0)
    yield* Effect.logInfo("unattributed requests past their retention deleted").pipe(
      Effect.annotateLogs({ rows: unattributedDeleted })
    )
  const dropped = (yield* sql<{ name: string }>`
    SELECT logged_requests_drop_partitions(${cutoff}) AS name`).map((row) => row.name)
  if (dropped.length > 0)
    yield* Effect.logInfo("request log days past their retention dropped").pipe(
      Effect.annotateLogs({ partitions: dropped })
    )
  const keptCutoff = new Date(now - rejectedRetentionDays * dayMillis)
  const rejectedBodiesDeleted = yield* sql`
    WITH gone AS (
      UPDATE logged_requests SET kept_body = NULL
      WHERE kept_body IS NOT NULL AND at < ${keptCutoff}
      RETURNING 1
    )
    SELECT count(*)::int AS n FROM gone`.pipe(countOf)
  if (rejectedBodiesDeleted > 0)
    yield* Effect.logInfo("rejected bodies past their retention deleted").pipe(
      Effect.annotateLogs({ rows: rejectedBodiesDeleted })
    )
  return { requestLogDaysDropped: dropped, unattributedDeleted, rejectedBodiesDeleted }
}).pipe(Effect.withSpan("Janitor.sweep"))

export const layerJanitor = Layer.effectDiscard(
  Effect.forkScoped(
    Effect.repeat(
      sweep.pipe(Effect.catchCause((cause) => Effect.logWarning("janitor sweep failed; will retry", cause))),
      Schedule.spaced(sweepEvery)
    )
  )
)
