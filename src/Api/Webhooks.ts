/**
 * The webhook events (docs/webhooks.md) as the OpenAPI 3.1 `webhooks` of the document (the API's
 * `override` annotation in `Api.ts`): what the organization's endpoints receive, signed as
 * Standard Webhooks. HttpApi declares the routes the service answers, so the requests it sends are
 * written here as OpenAPI operations.
 */

type Json = Readonly<Record<string, unknown>>

const uuid = { type: "string", format: "uuid" }
const instant = { type: "string", format: "date-time" }

const signatureHeaders = [
  {
    name: "webhook-id",
    in: "header",
    required: true,
    description: "The event id, the same on every attempt: dedupe on it.",
    schema: uuid
  },
  {
    name: "webhook-timestamp",
    in: "header",
    required: true,
    description: "Unix seconds of this attempt; refuse old ones to stop replays.",
    schema: { type: "string", pattern: "^[0-9]+$" }
  },
  {
    name: "webhook-signature",
    in: "header",
    required: true,
    description:
      'Space-separated `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">`, keyed with the base64-decoded part of the endpoint\'s `whsec_…` secret; two during a secret rotation (old and new).',
    schema: { type: "string" }
  }
]

const envelope = (type: string, data: Json): Json => ({
  type: "object",
  required: ["type", "timestamp", "livemode", "data"],
  properties: {
    type: { const: type },
    timestamp: { ...instant, description: "When the event happened." },
    livemode: {
      type: "boolean",
      description: "`false` for the events of test leads, sent only to endpoints added with test events on."
    },
    data
  }
})

const object = (properties: Record<string, Json>): Json => ({
  type: "object",
  required: Object.keys(properties),
  properties
})

const nullableString = { type: ["string", "null"] }

const leadWriteData = object({
  event_id: uuid,
  lead_id: uuid,
  organization_id: uuid,
  origin: object({ id: uuid, label: { type: "string" } }),
  lead_url: { type: "string", format: "uri", description: "The lead in the dashboard." },
  request_id: { ...nullableString, description: "The request that wrote the lead." },
  lead: {
    ...object({
      nombre: nullableString,
      telefono: nullableString,
      email: nullableString,
      property_id: { type: ["string", "null"], format: "uuid" },
      assignee_id: { type: ["string", "null"], format: "uuid" }
    }),
    description: "The lead as stored after the write."
  },
  filled: {
    type: "array",
    items: { type: "string", enum: ["email", "property_id"] },
    description: "The lead fields this enrichment filled; empty for `lead.created`."
  }
})

const events: ReadonlyArray<{ readonly type: string; readonly summary: string; readonly data: Json }> = [
  { type: "lead.created", summary: "A lead was created", data: leadWriteData },
  {
    type: "lead.enriched",
    summary: "An existing lead was enriched (a field filled or a note added)",
    data: leadWriteData
  },
  {
    type: "lead.erased",
    summary: "A lead's personal data was erased: erase your copy",
    data: object({ event_id: uuid, lead_id: uuid, organization_id: uuid, erased_at: instant })
  },
  {
    type: "webhook.test",
    summary: "A test event, sent on demand from the CLI or the console",
    data: object({ event_id: uuid, endpoint_id: uuid, organization_id: uuid })
  }
]

const operation = (event: (typeof events)[number]): Json => ({
  post: {
    operationId: `webhook_${event.type.replace(".", "_")}`,
    summary: event.summary,
    description:
      "POSTed to each endpoint subscribed to this type (`webhook.test`: to the one endpoint asked for). Answer any 2xx within 15 seconds; anything else, a redirect included, is retried with the same `webhook-id` (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h); `410 Gone` disables the endpoint.",
    parameters: signatureHeaders,
    requestBody: {
      required: true,
      content: { "application/json": { schema: envelope(event.type, event.data) } }
    },
    responses: {
      "2XX": { description: "Received." },
      "410": { description: "Gone: the endpoint is disabled at once." }
    }
  }
})

export const webhooks: Json = Object.fromEntries(events.map((event) => [event.type, operation(event)]))
