import { Clock, Duration, Effect, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { memoryMillis } from "./IdempotencyStore.ts"

const sweepEvery = Duration.minutes(5)

/**
 * Deletes state nobody can consult any more: rate-limit windows older than the current minute's
 * neighbours and idempotency records past their 24 h memory or long past their lease. Runs in
 * every instance; the deletes are idempotent, so instances need no coordination.
 */
export const layerJanitor = Layer.effectDiscard(
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const sweep = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      yield* sql`DELETE FROM rate_limit_windows WHERE window_start < ${new Date(now - 10 * 60_000)}`
      yield* sql`
        DELETE FROM idempotency_keys
        WHERE (state = 'completed' AND completed_at < ${new Date(now - memoryMillis)})
           OR (state = 'in_progress' AND lease_expires_at < ${new Date(now - 60 * 60_000)})`
    }).pipe(
      Effect.catchCause((cause) => Effect.logWarning("janitor sweep failed; will retry", cause)),
      Effect.withSpan("Janitor.sweep")
    )
    yield* Effect.forkScoped(Effect.repeat(sweep, Schedule.spaced(sweepEvery)))
  })
)
