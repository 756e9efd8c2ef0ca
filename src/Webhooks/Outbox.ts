import { Effect, Schema } from "effect"
import type { SqlClient } from "effect/sql"

/**
 * An event of the outbox as `outbox_event_add` (migrations/functions.ts) reads it: the lead it is
 * about (none for a test event), its type and payload, when and in which mode, the fields an
 * enrichment filled, and the payload endpoints receive when it is set already (a test event names
 * its endpoint there); otherwise the function snapshots the lead itself (docs/webhooks.md).
 */
export const OutboxEvent = Schema.Struct({
  lead_id: Schema.NullOr(Schema.String),
  type: Schema.String,
  payload: Schema.Record(Schema.String, Schema.Unknown),
  now: Schema.DateFromString,
  livemode: Schema.Boolean,
  filled: Schema.NullOr(Schema.Array(Schema.String)),
  snapshot: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown))
})
export type OutboxEvent = typeof OutboxEvent.Type

const Added = Schema.Struct({ id: Schema.Number, event_id: Schema.String })
const encodeEvent = Schema.encodeEffect(OutboxEvent)
const decodeAdded = Schema.decodeUnknownEffect(Added)

/**
 * Adds `event` of the organization to the outbox, with its webhook deliveries, on `sql` (inside the
 * caller's transaction, if any): one call Citus runs on the node holding the organization.
 */
export const addOutboxEvent = (sql: SqlClient.SqlClient, organizationId: string, event: OutboxEvent) =>
  encodeEvent(event).pipe(
    Effect.flatMap(
      (encoded) => sql<{ readonly answer: unknown }>`
        SELECT outbox_event_add(${organizationId}, ${JSON.stringify(encoded)}::jsonb) AS answer`
    ),
    Effect.flatMap(([row]) => decodeAdded(row?.answer))
  )
