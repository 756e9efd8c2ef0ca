import { Effect } from "effect"
import { eventTypes } from "../../Domain/WebhookPayload.ts"
import { WebhookAttempts } from "../../Webhooks/Attempts.ts"
import { WebhookDeliveries } from "../../Webhooks/Deliveries.ts"
import { type WebhookEndpoint, WebhookEndpoints } from "../../Webhooks/Endpoints.ts"
import { adminFail } from "../Http/RequestContext.ts"
import { notFound, organizationGroup, orNotFound, unknownToNotFound } from "../Http/Shared.ts"
import type { OrganizationRow } from "../Organizations.ts"

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const iso = (date: Date | null) => (date === null ? null : date.toISOString())

const webhookView = (endpoint: WebhookEndpoint) => ({
  id: endpoint.id,
  url: endpoint.url,
  events: endpoint.events,
  test_events: endpoint.testEvents,
  disabled: endpoint.disabled,
  // A row disabled before the reason was kept was disabled by an operator (as `webhook list` reads it).
  disabled_reason: endpoint.disabled ? (endpoint.disabledReason ?? ("operator" as const)) : null,
  disabled_at: iso(endpoint.disabledAt),
  failing_since: iso(endpoint.failingSince),
  last_error: endpoint.lastError,
  created_at: endpoint.createdAt.toISOString()
})

export const layerWebhooksHandlers = organizationGroup(
  "webhooks",
  Effect.fn(function* (handlers, { organizationOf, record }) {
    const webhooks = yield* WebhookEndpoints
    const deliveries = yield* WebhookDeliveries
    const attempts = yield* WebhookAttempts

    const listed = (organization: OrganizationRow) => webhooks.list(organization.id).pipe(orNotFound)

    /** The organization asked for and its endpoint with this id; any other id, malformed included, is a 404. */
    const ownedWebhook = Effect.fn("Admin.ownedWebhook")(function* (org: string | undefined, id: string) {
      const organization = yield* organizationOf(org)
      const endpoint = (yield* listed(organization)).find((item) => item.id === id)
      if (endpoint === undefined) return yield* notFound("webhook")
      return { organization, endpoint }
    })

    return handlers
      .handle(
        "webhooks",
        Effect.fn("Admin.webhooks")(function* ({ query }) {
          const organization = yield* organizationOf(query.org)
          return { items: (yield* listed(organization)).map(webhookView) }
        })
      )
      .handle(
        "createWebhook",
        Effect.fn("Admin.createWebhook")(function* ({ query, payload }) {
          const organization = yield* organizationOf(query.org)
          const added = yield* webhooks
            .add({
              organizationId: organization.id,
              url: payload.url.trim(),
              events: [...new Set(payload.events ?? eventTypes)],
              testEvents: payload.test_events ?? false
            })
            .pipe(
              Effect.catchTags({
                UnknownEntity: unknownToNotFound,
                Rejected: (error) => adminFail("validation_error", `url: ${error.reason}`, "url")
              })
            )
          yield* record(
            organization,
            "webhook.create",
            `webhook ${added.endpoint.id} ${added.endpoint.url} (${added.endpoint.events.join(", ")})`
          )
          return { endpoint: webhookView(added.endpoint), secret: added.secret }
        })
      )
      .handle(
        "deleteWebhook",
        Effect.fn("Admin.deleteWebhook")(function* ({ query, params }) {
          const { organization, endpoint } = yield* ownedWebhook(query.org, params.id)
          yield* webhooks.remove(endpoint.id).pipe(orNotFound)
          yield* record(organization, "webhook.remove", `webhook ${endpoint.id} ${endpoint.url}`)
        })
      )
      .handle(
        "disableWebhook",
        Effect.fn("Admin.disableWebhook")(function* ({ query, params }) {
          const { organization } = yield* ownedWebhook(query.org, params.id)
          const disabled = yield* webhooks.disable(params.id).pipe(orNotFound)
          yield* record(organization, "webhook.disable", `webhook ${disabled.id} ${disabled.url}`)
          return webhookView(disabled)
        })
      )
      .handle(
        "enableWebhook",
        Effect.fn("Admin.enableWebhook")(function* ({ query, params }) {
          const { organization } = yield* ownedWebhook(query.org, params.id)
          const enabled = yield* webhooks.enable(params.id).pipe(orNotFound)
          yield* record(organization, "webhook.enable", `webhook ${enabled.id} ${enabled.url}`)
          return webhookView(enabled)
        })
      )
      .handle(
        "rotateWebhookSecret",
        Effect.fn("Admin.rotateWebhookSecret")(function* ({ query, params }) {
          const { organization } = yield* ownedWebhook(query.org, params.id)
          const rotated = yield* webhooks.rotateSecret(params.id).pipe(orNotFound)
          yield* record(organization, "webhook.rotate_secret", `webhook ${params.id}`)
          return rotated
        })
      )
      .handle(
        "webhookDeliveries",
        Effect.fn("Admin.webhookDeliveries")(function* ({ query, params }) {
          yield* ownedWebhook(query.org, params.id)
          const rows = yield* deliveries.list(params.id, query.limit ?? 50).pipe(orNotFound)
          return { items: rows }
        })
      )
      .handle(
        "testWebhook",
        Effect.fn("Admin.testWebhook")(function* ({ query, params }) {
          const { organization } = yield* ownedWebhook(query.org, params.id)
          const queued = yield* deliveries.sendTest(params.id).pipe(orNotFound)
          yield* record(organization, "webhook.test", `webhook ${params.id} event ${queued.eventId}`)
          return { event_id: queued.eventId, type: "webhook.test" as const, state: "pending" as const }
        })
      )
      .handle(
        "resendWebhookDelivery",
        Effect.fn("Admin.resendWebhookDelivery")(function* ({ query, params }) {
          const { organization } = yield* ownedWebhook(query.org, params.id)
          if (!uuidPattern.test(params.event_id)) return yield* notFound("event")
          yield* deliveries.resend(params.id, params.event_id).pipe(orNotFound)
          yield* record(organization, "webhook.resend", `webhook ${params.id} event ${params.event_id}`)
          return { event_id: params.event_id, state: "pending" as const }
        })
      )
      .handle(
        "webhookAttempts",
        Effect.fn("Admin.webhookAttempts")(function* ({ query, params }) {
          yield* ownedWebhook(query.org, params.id)
          if (!uuidPattern.test(params.event_id)) return yield* notFound("event")
          const items = yield* attempts.list(params.id, params.event_id).pipe(orNotFound)
          return { items }
        })
      )
      .handle(
        "resendFailedWebhookDeliveries",
        Effect.fn("Admin.resendFailedWebhookDeliveries")(function* ({ query, params, payload }) {
          const { organization } = yield* ownedWebhook(query.org, params.id)
          const since = new Date(payload.since)
          const queued = yield* deliveries.resendFailed(params.id, since).pipe(orNotFound)
          yield* record(
            organization,
            "webhook.resend_failed",
            `webhook ${params.id} since ${since.toISOString()}: ${queued} queued`
          )
          return { queued }
        })
      )
  })
)
