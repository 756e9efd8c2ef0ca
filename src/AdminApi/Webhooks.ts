import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import {
  AdminSchemaErrors,
  IdParam,
  Instant,
  itemsOf,
  OperatorSession,
  OrgQuery,
  StoredText,
  scoped,
  trimmed,
  Unavailable,
  Uuid
} from "./Common.ts"
import { AdminNotFound, AdminValidationError } from "./Errors.ts"

export const WebhookEventType = Schema.Literals(["lead.created", "lead.enriched", "lead.erased"])

export const DeliveredEventType = Schema.Literals([
  "lead.created",
  "lead.enriched",
  "lead.erased",
  "webhook.test"
])

export const WebhookEndpointItem = Schema.Struct({
  id: Uuid,
  url: Schema.String,
  events: Schema.Array(WebhookEventType),
  test_events: Schema.Boolean.annotate({
    description: 'Also receives the events of test leads (`"livemode": false`).'
  }),
  disabled: Schema.Boolean,
  disabled_reason: Schema.NullOr(Schema.Literals(["gone", "failing", "operator"])).annotate({
    description:
      "Why it is disabled: `gone` (it answered 410), `failing` (paused after no success for WEBHOOK_DISABLE_AFTER) or `operator`; null while enabled."
  }),
  disabled_at: Schema.NullOr(Instant),
  failing_since: Schema.NullOr(Instant).annotate({
    description:
      "The first failed attempt since the last success (or since it was enabled); null while it succeeds."
  }),
  last_error: Schema.NullOr(Schema.String).annotate({
    description: "The last attempt's one-line error while it is failing or disabled; null otherwise."
  }),
  created_at: Instant
}).annotate({ identifier: "WebhookEndpoint" })

export const NewWebhookEndpoint = Schema.Struct({
  url: trimmed(2048).annotate({
    description: "https:// to a public address (unless WEBHOOK_ALLOW_PRIVATE)."
  }),
  events: Schema.optional(
    Schema.Array(WebhookEventType)
      .check(Schema.isMinLength(1), Schema.isMaxLength(3))
      .annotate({ description: "Default: lead.created, lead.enriched and lead.erased." })
  ),
  test_events: Schema.optional(
    Schema.Boolean.annotate({ description: "Also send the events of test leads. Default: false." })
  )
}).annotate({ identifier: "NewWebhookEndpoint" })

export const CreatedWebhookEndpoint = Schema.Struct({
  endpoint: WebhookEndpointItem,
  secret: Schema.String.annotate({
    description: "The signing secret `whsec_…`: shown this once, never again."
  })
})
  .annotate({ identifier: "CreatedWebhookEndpoint" })
  .pipe(HttpApiSchema.status(201))

export const WebhookSecret = Schema.Struct({
  id: Uuid,
  secret: Schema.String.annotate({
    description: "The new signing secret: shown this once; the old one keeps signing beside it for 24 h."
  })
}).annotate({ identifier: "WebhookSecret" })

export const WebhookDelivery = Schema.Struct({
  event_id: Uuid,
  type: DeliveredEventType,
  state: Schema.Literals(["pending", "delivered", "failed"]),
  attempts: Schema.Int,
  last_status: Schema.NullOr(Schema.Int),
  last_error: Schema.NullOr(Schema.String).annotate({
    description: "The last attempt's one-line error; null after a success or before any attempt."
  }),
  last_attempt_at: Schema.NullOr(Instant),
  next_attempt_at: Schema.NullOr(Instant)
}).annotate({ identifier: "WebhookDelivery" })

export const WebhookAttempt = Schema.Struct({
  at: Instant,
  status: Schema.NullOr(Schema.Int).annotate({
    description: "The HTTP status, or null when there was no answer."
  }),
  error: Schema.NullOr(Schema.String).annotate({
    description:
      "One line (timeout, connection refused, TLS, address not allowed, redirect, non-2xx); null on success."
  }),
  duration_ms: Schema.Int
}).annotate({ identifier: "WebhookAttempt" })

const isoInstantPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i

export const ResendFailed = Schema.Struct({
  since: StoredText.check(
    Schema.makeFilter(
      (value: string) =>
        (isoInstantPattern.test(value) && !Number.isNaN(Date.parse(value))) ||
        "Expected an ISO-8601 time with its offset, such as 2026-11-23T10:00:00Z"
    )
  ).annotate({
    format: "date-time",
    description: "Every failed delivery created at or after this time is queued again."
  })
}).annotate({ identifier: "ResendFailed" })

export class WebhooksGroup extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.get("webhooks", "/api/webhooks", {
      ...scoped,
      success: itemsOf(WebhookEndpointItem, "WebhookEndpointList"),
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.post("createWebhook", "/api/webhooks", {
      ...scoped,
      payload: NewWebhookEndpoint,
      success: CreatedWebhookEndpoint,
      error: [AdminNotFound, AdminValidationError, ...Unavailable]
    }),
    HttpApiEndpoint.delete("deleteWebhook", "/api/webhooks/:id", {
      ...scoped,
      params: IdParam,
      success: HttpApiSchema.NoContent,
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.post("disableWebhook", "/api/webhooks/:id/disable", {
      ...scoped,
      params: IdParam,
      success: WebhookEndpointItem,
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.post("enableWebhook", "/api/webhooks/:id/enable", {
      ...scoped,
      params: IdParam,
      success: WebhookEndpointItem,
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.post("rotateWebhookSecret", "/api/webhooks/:id/rotate-secret", {
      ...scoped,
      params: IdParam,
      success: WebhookSecret,
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.get("webhookDeliveries", "/api/webhooks/:id/deliveries", {
      query: {
        org: OrgQuery,
        limit: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 200 })))
      },
      params: IdParam,
      success: itemsOf(WebhookDelivery, "WebhookDeliveryList").annotate({ description: "Newest first." }),
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.post("testWebhook", "/api/webhooks/:id/test", {
      ...scoped,
      params: IdParam,
      success: Schema.Struct({
        event_id: Uuid,
        type: Schema.Literal("webhook.test"),
        state: Schema.Literal("pending")
      })
        .annotate({
          identifier: "QueuedTestEvent",
          description:
            "A `webhook.test` event queued for this endpoint alone, signed and retried like any other."
        })
        .pipe(HttpApiSchema.status(202)),
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.post("resendWebhookDelivery", "/api/webhooks/:id/deliveries/:event_id/resend", {
      ...scoped,
      params: { id: StoredText, event_id: StoredText },
      success: Schema.Struct({ event_id: Uuid, state: Schema.Literal("pending") }).annotate({
        identifier: "ResentDelivery"
      }),
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.get("webhookAttempts", "/api/webhooks/:id/deliveries/:event_id/attempts", {
      ...scoped,
      params: { id: StoredText, event_id: StoredText },
      success: itemsOf(WebhookAttempt, "WebhookAttemptList").annotate({
        description: "Every attempt of the delivery, oldest first."
      }),
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.post("resendFailedWebhookDeliveries", "/api/webhooks/:id/resend-failed", {
      ...scoped,
      params: IdParam,
      payload: ResendFailed,
      success: Schema.Struct({ queued: Schema.Int }).annotate({
        identifier: "ResentFailed",
        description: "How many failed deliveries were queued again, each with its own webhook-id."
      }),
      error: [AdminNotFound, AdminValidationError, ...Unavailable]
    })
  )
  .middleware(AdminSchemaErrors)
  .middleware(OperatorSession)
  .annotate(OpenApi.Description, "Webhook endpoints, their signing secrets and their deliveries.") {}
