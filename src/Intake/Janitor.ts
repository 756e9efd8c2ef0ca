import { Clock, Duration, Effect, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../Platform/Config.ts"
import { countOf } from "../Platform/Sql/Sql.ts"
import { memoryMillis } from "./IdempotencyStore.ts"

const sweepEvery = Duration.minutes(5)
const dayMillis = 24 * 60 * 60 * 1000
/** Request-log rows deleted per statement, so a long backlog never holds one long transaction. */
const requestLogBatch = 5_000

/**
 * Deletes state nobody can consult any more or that is past its retention: rate-limit windows
 * older than the current minute's neighbours, idempotency records past their 24 h memory or long
 * past their lease, request-log rows older than `REQUEST_LOG_RETENTION_DAYS`, and the rejected bodies
 * kept for rescue older than `REJECTED_RETENTION_DAYS` (their rows stay). The deletes are
 * idempotent, so instances need no coordination.
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
  const pruneBatch = sql`
    WITH gone AS (
      DELETE FROM request_log
      WHERE id IN (SELECT id FROM request_log WHERE at < ${cutoff} LIMIT ${requestLogBatch})
      RETURNING 1
    )
    SELECT count(*)::int AS n FROM gone`.pipe(countOf)
  let pruned = 0
  while (true) {
    const n = yield* pruneBatch
    pruned += n
    if (n < requestLogBatch) break
  }
  if (pruned > 0) yield* Effect.logInfo("request log pruned").pipe(Effect.annotateLogs({ rows: pruned }))
  const keptCutoff = new Date(now - rejectedRetentionDays * dayMillis)
  const rejectedBodiesDeleted = yield* sql`
    WITH gone AS (
      UPDATE request_log SET kept_body = NULL
      WHERE kept_body IS NOT NULL AND at < ${keptCutoff}
      RETURNING 1
    )
    SELECT count(*)::int AS n FROM gone`.pipe(countOf)
  if (rejectedBodiesDeleted > 0)
    yield* Effect.logInfo("rejected bodies past their retention deleted").pipe(
      Effect.annotateLogs({ rows: rejectedBodiesDeleted })
    )
  return { requestLogPruned: pruned, rejectedBodiesDeleted }
}).pipe(Effect.withSpan("Janitor.sweep"))

export const layerJanitor = Layer.effectDiscard(
  Effect.forkScoped(
    Effect.repeat(
      sweep.pipe(Effect.catchCause((cause) => Effect.logWarning("janitor sweep failed; will retry", cause))),
      Schedule.spaced(sweepEvery)
    )
  )
)
