import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { Rejected, UnknownEntity } from "../Domain/Errors.ts"
import { type EventType, eventTypes } from "../Domain/WebhookPayload.ts"
import { generateSecret } from "../Domain/WebhookSignature.ts"
import { WebhookConfig } from "../Platform/Config.ts"
import { decodeFirst, decodeRows, requireExisting } from "../Platform/Sql/Sql.ts"
import { vetUrl } from "./Network.ts"

export interface WebhookEndpoint {
  readonly id: string
  readonly organizationId: string
  readonly url: string
  readonly events: ReadonlyArray<EventType>
  /** Also receives the events of test leads (`"livemode": false`). */
  readonly testEvents: boolean
  readonly disabled: boolean
  /** Why it is disabled: a `410 Gone`, no success for `WEBHOOK_DISABLE_AFTER`, or an operator. */
  readonly disabledReason: DisabledReason | null
  readonly disabledAt: Date | null
  /** The first failed attempt since the last success (or since it was enabled); null while it succeeds. */
  readonly failingSince: Date | null
  /** The last attempt's one-line error while it is failing or disabled; null otherwise. */
  readonly lastError: string | null
  readonly createdAt: Date
}

export const disabledReasons = ["gone", "failing", "operator"] as const
export type DisabledReason = (typeof disabledReasons)[number]

export interface NewEndpoint {
  readonly organizationId: string
  readonly url: string
  readonly events: ReadonlyArray<EventType>
  /** Default: false. */
  readonly testEvents?: boolean
}

const EndpointRow = Schema.Struct({
  id: Schema.String,
  organization_id: Schema.String,
  url: Schema.String,
  events: Schema.Array(Schema.Literals(eventTypes)),
  test_events: Schema.Boolean,
  disabled_at: Schema.NullOr(Schema.Date),
  disabled_reason: Schema.NullOr(Schema.Literals(disabledReasons)),
  failing_since: Schema.NullOr(Schema.Date),
  last_error: Schema.NullOr(Schema.String),
  created_at: Schema.Date
})

const EndpointKey = Schema.Struct({ organization_id: Schema.String, id: Schema.String })

/**
 * An endpoint's key, found by its id alone (the console and the CLI name an endpoint so); an unknown
 * id fails. A read across every organization, without locks: the statements that then change or lock
 * the endpoint's rows name its organization, as a cluster distributed by organization needs
 * (docs/sre.md#distributing-by-organization-citus).
 */
export const endpointKey = (sql: SqlClient.SqlClient, id: string) =>
  sql`SELECT organization_id, id FROM webhook_endpoints WHERE id = ${id}`.pipe(
    decodeFirst(EndpointKey),
    Effect.flatMap(
      Option.match({
        onNone: () => Effect.fail(new UnknownEntity({ entity: "webhook", id })),
        onSome: Effect.succeed
      })
    )
  )

/** The old secret keeps signing beside the new one this long, so receivers can switch without a gap. */
export const rotationGraceMillis = 24 * 60 * 60 * 1000

/**
 * Where an organization's lead events go. The secret is returned by `add` and `rotateSecret`
 * only; it is stored because every attempt must sign with it, and nothing else reads it back.
 */
export class WebhookEndpoints extends Context.Service<
  WebhookEndpoints,
  {
    add(
      endpoint: NewEndpoint
    ): Effect.Effect<
      { readonly endpoint: WebhookEndpoint; readonly secret: string },
      UnknownEntity | Rejected
    >
    list(organizationId: string): Effect.Effect<ReadonlyArray<WebhookEndpoint>, UnknownEntity>
    remove(id: string): Effect.Effect<void, UnknownEntity>
    /**
     * An operator stops deliveries to it: nothing is claimed for it until `enable`, and its pending
     * deliveries wait (an attempt already under way finishes). Disabling it again keeps the first time.
     */
    disable(id: string): Effect.Effect<WebhookEndpoint, UnknownEntity>
    enable(id: string): Effect.Effect<WebhookEndpoint, UnknownEntity>
    rotateSecret(id: string): Effect.Effect<{ readonly id: string; readonly secret: string }, UnknownEntity>
  }
>()("lead-intake/WebhookEndpoints") {
  static readonly layer = Layer.effect(
    WebhookEndpoints,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const config = yield* WebhookConfig
      const view = (row: typeof EndpointRow.Type): WebhookEndpoint => ({
        id: row.id,
        organizationId: row.organization_id,
        url: row.url,
        events: row.events,
        testEvents: row.test_events,
        disabled: row.disabled_at !== null,
        disabledReason: row.disabled_at === null ? null : row.disabled_reason,
        disabledAt: row.disabled_at,
        failingSince: row.failing_since,
        lastError: row.last_error,
        createdAt: row.created_at
      })
      // `410 Gone` is what releases before migration 0020 wrote for a 410 (a rolling deploy may still).
      const columns = sql`id, organization_id, url, events, test_events, disabled_at,
        CASE disabled_reason WHEN '410 Gone' THEN 'gone' ELSE disabled_reason END AS disabled_reason,
        failing_since,
        CASE WHEN failing_since IS NOT NULL OR disabled_at IS NOT NULL THEN (
          SELECT a.error FROM webhook_attempts a
          WHERE a.organization_id = webhook_endpoints.organization_id AND a.endpoint_id = webhook_endpoints.id
          ORDER BY a.at DESC, a.attempt DESC LIMIT 1)
        END AS last_error,
        created_at`
      /**
       * An endpoint as the caller sees it, read after a write by its key: Citus takes no subquery in a
       * write's RETURNING, and `columns` has one (the last error).
       */
      const written = (write: Effect.Effect<ReadonlyArray<unknown>, SqlError.SqlError>) =>
        Effect.gen(function* () {
          const key = yield* write.pipe(decodeFirst(EndpointKey))
          if (Option.isNone(key)) return Option.none<typeof EndpointRow.Type>()
          return yield* sql`
            SELECT ${columns} FROM webhook_endpoints
            WHERE organization_id = ${key.value.organization_id} AND id = ${key.value.id}`.pipe(
            decodeFirst(EndpointRow)
          )
        })
      return WebhookEndpoints.of({
        add: Effect.fn("WebhookEndpoints.add")(function* (endpoint) {
          const target = yield* vetUrl(endpoint.url, config).pipe(
            Effect.mapError((refused) => new Rejected({ reason: `URL not allowed: ${refused.reason}` }))
          )
          yield* requireExisting(sql, "organization", endpoint.organizationId)
          const secret = generateSecret()
          const now = new Date(yield* Clock.currentTimeMillis)
          const row = yield* written(sql`
            INSERT INTO webhook_endpoints (organization_id, url, events, test_events, secret, created_at)
            VALUES (${endpoint.organizationId}, ${target.url.href}, ${`{${endpoint.events.join(",")}}`}::text[],
                    ${endpoint.testEvents ?? false}, ${secret}, ${now})
            RETURNING organization_id, id`).pipe(
            Effect.map(Option.getOrThrowWith(() => new Error("an inserted endpoint could not be read")))
          )
          yield* Effect.annotateCurrentSpan({ "webhook.endpoint_id": row.id })
          return { endpoint: view(row), secret }
        }),
        list: Effect.fn("WebhookEndpoints.list")(function* (organizationId) {
          yield* requireExisting(sql, "organization", organizationId)
          const rows = yield* sql`
            SELECT ${columns} FROM webhook_endpoints WHERE organization_id = ${organizationId}
            ORDER BY created_at, id`.pipe(decodeRows(EndpointRow))
          return rows.map(view)
        }),
        remove: Effect.fn("WebhookEndpoints.remove")(function* (id) {
          const key = yield* endpointKey(sql, id)
          const rows = yield* sql`
            DELETE FROM webhook_endpoints WHERE organization_id = ${key.organization_id} AND id = ${key.id}
            RETURNING id`.pipe(Effect.orDie)
          if (rows.length === 0) return yield* new UnknownEntity({ entity: "webhook", id })
        }),
        disable: Effect.fn("WebhookEndpoints.disable")(function* (id) {
          const key = yield* endpointKey(sql, id)
          const now = new Date(yield* Clock.currentTimeMillis)
          const row = yield* written(sql`
            UPDATE webhook_endpoints
            SET disabled_at = CASE WHEN disabled_reason = 'operator' THEN COALESCE(disabled_at, ${now}) ELSE ${now} END,
                disabled_reason = 'operator'
            WHERE organization_id = ${key.organization_id} AND id = ${key.id}
            RETURNING organization_id, id`)
          if (Option.isNone(row)) return yield* new UnknownEntity({ entity: "webhook", id })
          return view(row.value)
        }),
        enable: Effect.fn("WebhookEndpoints.enable")(function* (id) {
          const key = yield* endpointKey(sql, id)
          const row = yield* written(sql`
            UPDATE webhook_endpoints SET disabled_at = NULL, disabled_reason = NULL, failing_since = NULL
            WHERE organization_id = ${key.organization_id} AND id = ${key.id}
            RETURNING organization_id, id`)
          if (Option.isNone(row)) return yield* new UnknownEntity({ entity: "webhook", id })
          return view(row.value)
        }),
        rotateSecret: Effect.fn("WebhookEndpoints.rotateSecret")(function* (id) {
          const key = yield* endpointKey(sql, id)
          const secret = generateSecret()
          const now = yield* Clock.currentTimeMillis
          const rows = yield* sql`
            UPDATE webhook_endpoints
            SET previous_secret = secret, previous_secret_expires_at = ${new Date(now + rotationGraceMillis)},
                secret = ${secret}
            WHERE organization_id = ${key.organization_id} AND id = ${key.id} RETURNING id`.pipe(Effect.orDie)
          if (rows.length === 0) return yield* new UnknownEntity({ entity: "webhook", id })
          return { id, secret }
        })
      })
    })
  )
}
