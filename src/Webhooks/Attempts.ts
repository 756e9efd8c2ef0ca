import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { UnknownEntity } from "../Domain/Errors.ts"
import { decodeRows } from "../Platform/Sql.ts"

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

const DeliveryRow = Schema.Struct({ found: Schema.Boolean })

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
          const [delivery] = yield* sql`
            SELECT EXISTS (SELECT 1 FROM webhook_deliveries WHERE endpoint_id = ${endpointId} AND event_id = ${eventId})
                   AS found
            FROM webhook_endpoints WHERE id = ${endpointId}`.pipe(decodeRows(DeliveryRow))
          if (delivery === undefined) return yield* new UnknownEntity({ entity: "webhook", id: endpointId })
          if (!delivery.found) return yield* new UnknownEntity({ entity: "event", id: eventId })
          const rows = yield* sql`
            SELECT a.at, a.status, a.error, a.duration_ms
            FROM webhook_attempts a JOIN webhook_endpoints e ON e.organization_id = a.organization_id
            WHERE e.id = ${endpointId} AND a.endpoint_id = ${endpointId} AND a.event_id = ${eventId}
            ORDER BY a.attempt`.pipe(decodeRows(AttemptRow))
          return rows.map((row) => ({ ...row, at: row.at.toISOString() }))
        })
      })
    })
  )
}
