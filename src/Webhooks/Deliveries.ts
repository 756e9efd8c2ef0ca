import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { UnknownEntity } from "../Domain/Errors.ts"
import { type DeliveredType, deliveredTypes, type WebhookEvent } from "../Domain/WebhookPayload.ts"
import { WebhookConfig, webhookConfig } from "../Platform/Config.ts"
import { availableOrFail, countOf, decodeRows, StoreUnavailable } from "../Platform/Sql/Sql.ts"
import { endpointKey } from "./Endpoints.ts"
import { addOutboxEvent } from "./Outbox.ts"

/** One attempt's worth of work, leased to this worker until `leaseUntil`. */
export interface ClaimedDelivery {
  readonly endpointId: string
  readonly token: string
  /** This attempt's number, counting every attempt since the event was first queued. */
  readonly attempt: number
  /** Failed attempts since the delivery was last queued (by the fan-out or `resend`). */
  readonly failures: number
  readonly url: string
  /** The secrets to sign with: during a rotation the old one first, then the new. */
  readonly secrets: ReadonlyArray<string>
  readonly event: WebhookEvent
}

export interface ClaimRequest {
  readonly limit: number
  readonly perEndpoint: number
  /** Endpoints this worker already has as many attempts in flight for as it allows. */
  readonly excludeEndpoints: ReadonlyArray<string>
  readonly leaseMillis: number
}

export type AttemptResult =
  | {
      readonly _tag: "Delivered"
      readonly status: number
      readonly attemptedAt: number
      readonly durationMillis: number
    }
  | {
      readonly _tag: "Failed"
      readonly status: number | null
      /** One line: what went wrong (timeout, connection refused, TLS, address not allowed, redirect, non-2xx). */
      readonly error: string
      readonly attemptedAt: number
      readonly durationMillis: number
      /** `undefined`: the schedule is spent (or the endpoint is gone) and the delivery is failed. */
      readonly retryAt: number | undefined
      /** `410 Gone`: the endpoint is disabled at once. */
      readonly disableEndpoint: boolean
    }

export interface DeliveryView {
  readonly event_id: string
  readonly type: DeliveredType
  readonly state: "pending" | "delivered" | "failed"
  readonly attempts: number
  readonly last_status: number | null
  /** The last attempt's one-line error; null after a success or before any attempt. */
  readonly last_error: string | null
  readonly last_attempt_at: string | null
  readonly next_attempt_at: string | null
}

export interface PendingStats {
  readonly count: number
  readonly oldestCreatedAt: number | null
}

/** What migration 0004's trigger stores with a lead write's outbox row (`webhook_snapshot`). */
const LeadSnapshot = Schema.Struct({
  origin: Schema.Struct({ id: Schema.String, label: Schema.String }),
  request_id: Schema.NullOr(Schema.String),
  lead: Schema.Struct({
    nombre: Schema.NullOr(Schema.String),
    telefono: Schema.NullOr(Schema.String),
    email: Schema.NullOr(Schema.String),
    property_id: Schema.NullOr(Schema.String),
    assignee_id: Schema.NullOr(Schema.String)
  }),
  filled: Schema.Array(Schema.String)
})

/** What `sendTest` stores with a `webhook.test` outbox row (migration 0014). */
const TestSnapshot = Schema.Struct({ endpoint_id: Schema.String })

const decodeLeadSnapshot = Schema.decodeUnknownEffect(LeadSnapshot)
const decodeTestSnapshot = Schema.decodeUnknownEffect(TestSnapshot)

const DeliveredTypeSchema = Schema.Literals(deliveredTypes)

const EventRow = Schema.Struct({
  event_id: Schema.String,
  type: DeliveredTypeSchema,
  created_at: Schema.Date,
  organization_id: Schema.String,
  lead_id: Schema.NullOr(Schema.String),
  livemode: Schema.Boolean,
  snapshot: Schema.Unknown
})
type EventRow = typeof EventRow.Type

const ClaimedRow = Schema.Struct({
  ...EventRow.fields,
  endpoint_id: Schema.String,
  attempts: Schema.Number,
  failures: Schema.Number,
  url: Schema.String,
  secret: Schema.String,
  previous_secret: Schema.NullOr(Schema.String),
  previous_secret_expires_at: Schema.NullOr(Schema.Date)
})

const SnapshotRow = Schema.Struct({ snapshot: Schema.Unknown })

const DeliveryRow = Schema.Struct({
  event_id: Schema.String,
  type: DeliveredTypeSchema,
  state: Schema.Literals(["pending", "delivered", "failed"]),
  attempts: Schema.Number,
  last_status: Schema.NullOr(Schema.Number),
  last_error: Schema.NullOr(Schema.String),
  last_attempt_at: Schema.NullOr(Schema.Date),
  next_attempt_at: Schema.NullOr(Schema.Date)
})

const RecordedRow = Schema.Struct({ paused: Schema.Boolean })

/** An endpoint is paused only after this many failed attempts within `WEBHOOK_DISABLE_AFTER`. */
export const minimumFailedAttempts = 3

const PendingRow = Schema.Struct({ count: Schema.Number, oldest: Schema.NullOr(Schema.Date) })

const decodeClaimed = Schema.decodeUnknownEffect(Schema.Array(ClaimedRow))
const decodeOrganizations = Schema.decodeUnknownEffect(
  Schema.Array(Schema.Struct({ organization_id: Schema.String }))
)
const decodeSnapshots = Schema.decodeUnknownEffect(Schema.Array(SnapshotRow))
const decodePending = Schema.decodeUnknownEffect(Schema.Array(PendingRow))

/** The event as its outbox row holds it: each type reads its own snapshot. */
const eventOf = Effect.fnUntraced(function* (row: EventRow) {
  const base = {
    eventId: row.event_id,
    createdAt: row.created_at,
    organizationId: row.organization_id,
    livemode: row.livemode
  }
  switch (row.type) {
    case "webhook.test": {
      const snapshot = yield* decodeTestSnapshot(row.snapshot)
      return { ...base, type: row.type, endpointId: snapshot.endpoint_id } satisfies WebhookEvent
    }
    case "lead.erased":
      return { ...base, type: row.type, leadId: row.lead_id ?? "" } satisfies WebhookEvent
    default: {
      const snapshot = yield* decodeLeadSnapshot(row.snapshot)
      return {
        ...base,
        type: row.type,
        leadId: row.lead_id ?? "",
        requestId: snapshot.request_id,
        origin: snapshot.origin,
        lead: snapshot.lead,
        filled: snapshot.filled
      } satisfies WebhookEvent
    }
  }
})

/** The same event with the snapshot its row holds now (an erasure may have scrubbed it). */
const refreshed = (claimed: ClaimedDelivery, snapshot: unknown) =>
  eventOf({
    event_id: claimed.event.eventId,
    type: claimed.event.type,
    created_at: claimed.event.createdAt,
    organization_id: claimed.event.organizationId,
    lead_id: "leadId" in claimed.event ? claimed.event.leadId : null,
    livemode: claimed.event.livemode,
    snapshot
  })

/**
 * The queue of webhook deliveries: one row per (endpoint, event), claimed with a lease so several
 * instances share the work without sending one attempt twice, and a crashed worker's claim comes
 * back when its lease ends.
 */
export class WebhookDeliveries extends Context.Service<
  WebhookDeliveries,
  {
    claim(request: ClaimRequest): Effect.Effect<ReadonlyArray<ClaimedDelivery>, StoreUnavailable>
    /** `false` when the lease was lost (another worker took the row, or it was resent meanwhile). */
    record(claimed: ClaimedDelivery, result: AttemptResult): Effect.Effect<boolean, StoreUnavailable>
    /**
     * Runs `send` with the event as its rows hold it now, holding the delivery's row until `send`
     * ends; none when the claim no longer stands (the lead was erased, the event resent, the lease
     * lost). An erasure cancels deliveries before it scrubs events, so it waits for a `send` in
     * progress, and a `send` after it finds the delivery failed: bytes built from personal data
     * never leave once the erasure has committed.
     */
    guard<A, E>(
      claimed: ClaimedDelivery,
      send: (event: WebhookEvent) => Effect.Effect<A, E>
    ): Effect.Effect<Option.Option<A>, E | StoreUnavailable>
    /** Gives a claim back unfinished (the process is stopping): the delivery is due again at once. */
    release(claimed: ClaimedDelivery): Effect.Effect<void, StoreUnavailable>
    list(endpointId: string, limit: number): Effect.Effect<ReadonlyArray<DeliveryView>, UnknownEntity>
    resend(endpointId: string, eventId: string): Effect.Effect<void, UnknownEntity>
    /**
     * Queues again every `failed` delivery of the endpoint created at or after `since`, each with its
     * own event id; how many.
     */
    resendFailed(endpointId: string, since: Date): Effect.Effect<number, UnknownEntity>
    /** Queues a `webhook.test` event for this endpoint alone, signed and retried like any other. */
    sendTest(endpointId: string): Effect.Effect<{ readonly eventId: string }, UnknownEntity>
    pending(): Effect.Effect<PendingStats, StoreUnavailable>
    /** Deletes finished deliveries and outbox events older than `before` that nothing still waits on. */
    prune(
      before: number
    ): Effect.Effect<{ readonly deliveries: number; readonly events: number }, StoreUnavailable>
  }
>()("lead-intake/WebhookDeliveries") {
  static readonly layer = Layer.effect(
    WebhookDeliveries,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      // The worker provides its `WebhookConfig`; other readers (the console) never record an attempt.
      const disableAfterMillis = yield* Option.match(yield* Effect.serviceOption(WebhookConfig), {
        onSome: (config) => Effect.succeed(config.disableAfterMillis),
        onNone: () => Effect.orDie(Effect.map(webhookConfig, (config) => config.disableAfterMillis))
      })
      const iso = (date: Date | null) => (date === null ? null : date.toISOString())

      return WebhookDeliveries.of({
        claim: Effect.fn("WebhookDeliveries.claim")(function* (request) {
          const now = yield* Clock.currentTimeMillis
          const due = new Date(now)
          const excluded = `{${request.excludeEndpoints.join(",")}}`
          // Which deliveries the claim takes, read without locks across every organization: the due
          // ones, oldest first, at most `perEndpoint` per endpoint and `limit` in all. Each
          // organization's share is then claimed by a statement that names it, the one way a row
          // lock stays on one node of a cluster distributed by organization
          // (docs/sre.md#distributing-by-organization-citus).
          const picked = yield* sql`
            SELECT e.organization_id
            FROM webhook_endpoints e
            CROSS JOIN LATERAL (
              SELECT x.next_attempt_at
              FROM webhook_deliveries x
              WHERE x.organization_id = e.organization_id AND x.endpoint_id = e.id
                AND x.state = 'pending' AND x.next_attempt_at <= ${due}
              ORDER BY x.next_attempt_at
              LIMIT ${request.perEndpoint}
            ) d
            WHERE e.disabled_at IS NULL AND NOT (e.id = ANY (${excluded}::uuid[]))
            ORDER BY d.next_attempt_at
            LIMIT ${request.limit}`.pipe(
            Effect.flatMap(decodeOrganizations),
            availableOrFail("WebhookDeliveries.claim")
          )
          const shares = new Map<string, number>()
          for (const { organization_id } of picked)
            shares.set(organization_id, (shares.get(organization_id) ?? 0) + 1)
          const token = crypto.randomUUID()
          const rows = (yield* Effect.forEach(shares, ([organizationId, share]) =>
            sql`
              WITH picked AS (
                SELECT d.endpoint_id, d.event_id
                FROM webhook_endpoints e
                CROSS JOIN LATERAL (
                  SELECT x.endpoint_id, x.event_id, x.next_attempt_at
                  FROM webhook_deliveries x
                  WHERE x.organization_id = ${organizationId} AND x.endpoint_id = e.id
                    AND x.state = 'pending' AND x.next_attempt_at <= ${due}
                  ORDER BY x.next_attempt_at
                  LIMIT ${request.perEndpoint}
                  FOR UPDATE OF x SKIP LOCKED
                ) d
                WHERE e.organization_id = ${organizationId} AND e.disabled_at IS NULL
                  AND NOT (e.id = ANY (${excluded}::uuid[]))
                ORDER BY d.next_attempt_at
                LIMIT ${share}
              )
              UPDATE webhook_deliveries w
              SET attempts = w.attempts + 1, next_attempt_at = ${new Date(now + request.leaseMillis)},
                  lease_token = ${token}
              FROM picked, webhook_endpoints e, outbox_events o
              WHERE w.organization_id = ${organizationId} AND w.endpoint_id = picked.endpoint_id
                AND w.event_id = picked.event_id
                AND e.organization_id = ${organizationId} AND e.id = w.endpoint_id
                AND o.organization_id = ${organizationId} AND o.id = w.outbox_id
              RETURNING w.endpoint_id, w.event_id, w.attempts, w.failures, e.url, e.secret, e.previous_secret,
                        e.previous_secret_expires_at, o.type, o.created_at, o.organization_id, o.lead_id,
                        o.livemode, o.webhook_snapshot AS snapshot`.pipe(
              Effect.flatMap(decodeClaimed),
              availableOrFail("WebhookDeliveries.claim")
            )
          )).flat()
          return yield* Effect.forEach(rows, (row) =>
            eventOf(row).pipe(
              Effect.orDie,
              Effect.map(
                (event): ClaimedDelivery => ({
                  endpointId: row.endpoint_id,
                  token,
                  attempt: row.attempts,
                  failures: row.failures,
                  url: row.url,
                  secrets:
                    row.previous_secret !== null &&
                    row.previous_secret_expires_at !== null &&
                    row.previous_secret_expires_at.getTime() > now
                      ? [row.previous_secret, row.secret]
                      : [row.secret],
                  event
                })
              )
            )
          )
        }),

        record: Effect.fn("WebhookDeliveries.record")(function* (claimed, result) {
          const attemptedAt = new Date(result.attemptedAt)
          const failed = result._tag === "Failed"
          const error = failed ? result.error : null
          const nextAttemptAt = failed && result.retryAt !== undefined ? new Date(result.retryAt) : null
          const state = failed ? (nextAttemptAt === null ? "failed" : "pending") : "delivered"
          const windowStart = new Date(result.attemptedAt - disableAfterMillis)
          const endpointId = claimed.endpointId
          const organizationId = claimed.event.organizationId
          // One statement: the delivery, its attempt, and the endpoint's clock
          // (docs/webhooks.md#when-an-endpoint-keeps-failing). A healthy endpoint's row is not touched.
          // The failed attempts are counted since `failing_since`, the whole time without a success, not
          // over the last `disableAfterMillis`: an endpoint whose attempts come sparsely (few events, a
          // busy worker) would otherwise never have three in the trailing window and never be paused.
          // This attempt is the `1 +` and is left out of the count: PostgreSQL runs the CTEs on one
          // snapshot (the count cannot see the row `attempt` inserts), Citus runs them one after the
          // other (it can).
          const rows = yield* sql`
            WITH recorded AS (
              UPDATE webhook_deliveries
              SET state = ${state}, failures = failures + ${failed ? 1 : 0}, last_status = ${result.status},
                  last_error = ${error}, last_attempt_at = ${attemptedAt},
                  next_attempt_at = ${nextAttemptAt}, lease_token = NULL,
                  delivered_at = ${failed ? null : attemptedAt}
              WHERE organization_id = ${organizationId} AND endpoint_id = ${endpointId}
                AND event_id = ${claimed.event.eventId} AND lease_token = ${claimed.token}
              RETURNING endpoint_id, event_id
            ), attempt AS (
              INSERT INTO webhook_attempts
                (organization_id, endpoint_id, event_id, attempt, at, status, error, duration_ms)
              SELECT ${organizationId}, endpoint_id, event_id, ${claimed.attempt}, ${attemptedAt},
                     ${result.status}, ${error}, ${Math.max(0, Math.round(result.durationMillis))}
              FROM recorded
              ON CONFLICT DO NOTHING
            ), verdict AS (
              SELECT CASE
                       WHEN ${failed && result.disableEndpoint} THEN 'gone'
                       WHEN ${failed} AND COALESCE(e.failing_since, ${attemptedAt}) <= ${windowStart}
                            AND 1 + (SELECT count(*) FROM (
                                       SELECT 1 FROM webhook_attempts a
                                       WHERE a.organization_id = ${organizationId} AND a.endpoint_id = e.id
                                         AND a.at >= e.failing_since AND a.error IS NOT NULL
                                         AND (a.event_id, a.attempt) <> (${claimed.event.eventId}::uuid, ${claimed.attempt})
                                       LIMIT ${minimumFailedAttempts - 1}) since)
                                >= ${minimumFailedAttempts}
                         THEN 'failing'
                     END AS reason
              FROM webhook_endpoints e WHERE e.organization_id = ${organizationId} AND e.id = ${endpointId}
            ), clock AS (
              UPDATE webhook_endpoints e
              SET failing_since = CASE WHEN ${failed} THEN COALESCE(e.failing_since, ${attemptedAt}) END,
                  disabled_at = COALESCE(e.disabled_at, CASE WHEN verdict.reason IS NOT NULL THEN ${attemptedAt}::timestamptz END),
                  disabled_reason = CASE WHEN e.disabled_at IS NULL THEN verdict.reason ELSE e.disabled_reason END
              FROM verdict
              WHERE e.organization_id = ${organizationId} AND e.id = ${endpointId}
                AND EXISTS (SELECT 1 FROM recorded)
                AND (${failed} OR e.failing_since IS NOT NULL)
              RETURNING e.id, e.organization_id, e.url,
                        e.disabled_reason = 'failing' AND e.disabled_at = ${attemptedAt} AS paused
            ), audited AS (
              INSERT INTO audit_log (at, organization_id, operator_id, operator_email, action, target, ip)
              SELECT ${attemptedAt}, clock.organization_id, NULL, 'system', 'webhook.auto_disabled',
                     'webhook ' || clock.id || ' ' || clock.url, NULL
              FROM clock WHERE clock.paused
            )
            SELECT COALESCE((SELECT paused FROM clock), false) AS paused
            FROM recorded`.pipe(decodeRows(RecordedRow), availableOrFail("WebhookDeliveries.record"))
          if (rows[0]?.paused === true) {
            yield* Effect.logWarning("webhook endpoint disabled: no successful attempt").pipe(
              Effect.annotateLogs({ endpoint_id: endpointId, disabled_reason: "failing" })
            )
          }
          return rows.length > 0
        }),

        guard: (claimed, send) =>
          sql
            .withTransaction(
              Effect.gen(function* () {
                const [row] = yield* sql`
                  SELECT o.webhook_snapshot AS snapshot
                  FROM webhook_deliveries d
                  JOIN outbox_events o ON o.organization_id = ${claimed.event.organizationId} AND o.id = d.outbox_id
                  WHERE d.organization_id = ${claimed.event.organizationId} AND d.endpoint_id = ${claimed.endpointId}
                    AND d.event_id = ${claimed.event.eventId}
                    AND d.state = 'pending' AND d.lease_token = ${claimed.token}
                  FOR SHARE OF d`.pipe(
                  Effect.flatMap(decodeSnapshots),
                  availableOrFail("WebhookDeliveries.guard")
                )
                if (row === undefined) return Option.none()
                const event = yield* refreshed(claimed, row.snapshot).pipe(Effect.orDie)
                return Option.some(yield* send(event))
              })
            )
            .pipe(
              Effect.catchTag("SqlError", () =>
                Effect.fail(new StoreUnavailable({ operation: "WebhookDeliveries.guard" }))
              ),
              Effect.withSpan("WebhookDeliveries.guard")
            ),

        release: Effect.fn("WebhookDeliveries.release")(function* (claimed) {
          const now = yield* Clock.currentTimeMillis
          yield* sql`
            UPDATE webhook_deliveries SET next_attempt_at = ${new Date(now)}, lease_token = NULL
            WHERE organization_id = ${claimed.event.organizationId} AND endpoint_id = ${claimed.endpointId}
              AND event_id = ${claimed.event.eventId} AND lease_token = ${claimed.token}`.pipe(
            availableOrFail("WebhookDeliveries.release")
          )
        }),

        list: Effect.fn("WebhookDeliveries.list")(function* (endpointId, limit) {
          const endpoint = yield* endpointKey(sql, endpointId)
          const rows = yield* sql`
            SELECT event_id, type, state, attempts, last_status, last_error, last_attempt_at, next_attempt_at
            FROM webhook_deliveries
            WHERE organization_id = ${endpoint.organization_id} AND endpoint_id = ${endpoint.id}
            ORDER BY created_at DESC, outbox_id DESC
            LIMIT ${limit}`.pipe(decodeRows(DeliveryRow))
          return rows.map((row) => ({
            ...row,
            last_attempt_at: iso(row.last_attempt_at),
            next_attempt_at: iso(row.next_attempt_at)
          }))
        }),

        resend: Effect.fn("WebhookDeliveries.resend")(function* (endpointId, eventId) {
          const endpoint = yield* endpointKey(sql, endpointId)
          const now = yield* Clock.currentTimeMillis
          const rows = yield* sql`
            UPDATE webhook_deliveries
            SET state = 'pending', failures = 0, next_attempt_at = ${new Date(now)}, lease_token = NULL,
                delivered_at = NULL
            WHERE organization_id = ${endpoint.organization_id} AND endpoint_id = ${endpoint.id}
              AND event_id = ${eventId}
            RETURNING event_id`.pipe(Effect.orDie)
          if (rows.length === 0) return yield* new UnknownEntity({ entity: "event", id: eventId })
          yield* sql`SELECT pg_notify('lead_intake_webhooks', '')`.pipe(Effect.orDie)
        }),

        resendFailed: Effect.fn("WebhookDeliveries.resendFailed")(function* (endpointId, since) {
          const endpoint = yield* endpointKey(sql, endpointId)
          const now = yield* Clock.currentTimeMillis
          const queued = yield* sql`
            WITH queued AS (
              UPDATE webhook_deliveries
              SET state = 'pending', failures = 0, next_attempt_at = ${new Date(now)}, lease_token = NULL
              WHERE organization_id = ${endpoint.organization_id} AND endpoint_id = ${endpoint.id}
                AND state = 'failed' AND created_at >= ${since}
              RETURNING 1
            )
            SELECT count(*)::int AS n FROM queued`.pipe(countOf, Effect.orDie)
          yield* Effect.annotateCurrentSpan({ "webhook.endpoint_id": endpointId, "webhook.queued": queued })
          if (queued > 0) yield* sql`SELECT pg_notify('lead_intake_webhooks', '')`.pipe(Effect.orDie)
          return queued
        }),

        sendTest: Effect.fn("WebhookDeliveries.sendTest")(function* (endpointId) {
          const endpoint = yield* endpointKey(sql, endpointId)
          const now = new Date(yield* Clock.currentTimeMillis)
          // A call of its own, not one per row of a query on a distributed table: Citus would run it on
          // the node holding the row, where its statements cannot reach the other nodes.
          const row = yield* addOutboxEvent(sql, endpoint.organization_id, {
            lead_id: null,
            type: "webhook.test",
            payload: {},
            now,
            livemode: true,
            filled: null,
            snapshot: { endpoint_id: endpoint.id }
          }).pipe(Effect.orDie)
          yield* Effect.annotateCurrentSpan({
            "webhook.endpoint_id": endpointId,
            "webhook.event_id": row.event_id
          })
          return { eventId: row.event_id }
        }),

        pending: Effect.fn("WebhookDeliveries.pending")(function* () {
          const [row] = yield* sql`
            SELECT count(*)::int AS count, min(created_at) AS oldest
            FROM webhook_deliveries WHERE state = 'pending'`.pipe(
            Effect.flatMap(decodePending),
            availableOrFail("WebhookDeliveries.pending")
          )
          return { count: row?.count ?? 0, oldestCreatedAt: row?.oldest?.getTime() ?? null }
        }),

        prune: Effect.fn("WebhookDeliveries.prune")(function* (before) {
          const cutoff = new Date(before)
          const deliveries = yield* sql`
            WITH gone AS (
              DELETE FROM webhook_deliveries WHERE state <> 'pending' AND created_at < ${cutoff} RETURNING 1
            )
            SELECT count(*)::int AS n FROM gone`.pipe(countOf, availableOrFail("WebhookDeliveries.prune"))
          const events = yield* sql`
            WITH gone AS (
              DELETE FROM outbox_events o
              WHERE o.created_at < ${cutoff}
                AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d
                                WHERE d.organization_id = o.organization_id AND d.outbox_id = o.id)
              RETURNING 1
            )
            SELECT count(*)::int AS n FROM gone`.pipe(countOf, availableOrFail("WebhookDeliveries.prune"))
          return { deliveries, events }
        })
      })
    })
  )
}
