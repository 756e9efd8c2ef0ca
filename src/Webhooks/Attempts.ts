import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { UnknownEntity } from "../Domain/Errors.ts"
import { decodeRows } from "../Platform/Sql/Sql.ts"
import { endpointKey } from "./Endpoints.ts"

/** One attempt of a delivery, as `webhook attempts` prints it. */
export interface AttemptView {
  readonly at: string
  /** The HTTP status, or null when there was no answer. */
  readonly status: number | null
  /** One line; null on success. */
  readonly error: string | null
  readonly duration_ms: number
}

const AttemptRow = Schema.Struct({
  at: Schema.Date,
  status: Schema.NullOr(Schema.Number),
  error: Schema.NullOr(Schema.String),
  duration_ms: Schema.Number
})

/** A delivery joined to its attempts: one row without an attempt when it has none. */
const DeliveryAttemptRow = Schema.Union([AttemptRow, Schema.Struct({ at: Schema.Null })])

/**
 * Every attempt of a delivery (written by `WebhookDeliveries.record`, in the statement that records
 * the attempt). PostgreSQL only: the in-memory fakes keep no attempt history, so this is tested on
 * the embedded PostgreSQL (test/webhooks/failing.test.ts).
 */
export class WebhookAttempts extends Context.Service<
  WebhookAttempts,
  {
    /** Oldest first; an endpoint, or an event it has no delivery of, that is unknown fails. */
    list(endpointId: string, eventId: string): Effect.Effect<ReadonlyArray<AttemptView>, UnknownEntity>
  }
>()("lead-intake/WebhookAttempts") {
  static readonly layer = Layer.effect(
    WebhookAttempts,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      return WebhookAttempts.of({
        list: Effect.fn("WebhookAttempts.list")(function* (endpointId, eventId) {
          const endpoint = yield* endpointKey(sql, endpointId)
          const rows = yield* sql`
            SELECT a.at, a.status, a.error, a.duration_ms
            FROM webhook_deliveries d
            LEFT JOIN webhook_attempts a
              ON a.organization_id = ${endpoint.organization_id} AND a.endpoint_id = d.endpoint_id
             AND a.event_id = d.event_id
            WHERE d.organization_id = ${endpoint.organization_id} AND d.endpoint_id = ${endpoint.id}
              AND d.event_id = ${eventId}
            ORDER BY a.attempt`.pipe(decodeRows(DeliveryAttemptRow))
          if (rows.length === 0) return yield* new UnknownEntity({ entity: "event", id: eventId })
          return rows.flatMap((row) => (row.at === null ? [] : [{ ...row, at: row.at.toISOString() }]))
        })
      })
    })
  )
}
