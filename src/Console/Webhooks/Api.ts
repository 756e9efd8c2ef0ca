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
} from "../../AdminApi/Common.ts"
import { AdminNotFound, AdminValidationError } from "../../AdminApi/Errors.ts"

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
  last_attempt_at: Schema.NullOr(Instant),
  next_attempt_at: Schema.NullOr(Instant)
}).annotate({ identifier: "WebhookDelivery" })

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
    })
  )
  .middleware(AdminSchemaErrors)
  .middleware(OperatorSession)
  .annotate(OpenApi.Description, "Webhook endpoints, their signing secrets and their deliveries.") {}
