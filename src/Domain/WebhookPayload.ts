/** The lead event as stored with its outbox row (migration 0004) when the write committed. */
export interface WebhookEvent {
  readonly eventId: string
  readonly type: "lead.created" | "lead.enriched"
  readonly createdAt: Date
  readonly organizationId: string
  readonly leadId: string
  readonly requestId: string | null
  readonly origin: { readonly id: string; readonly label: string }
  readonly lead: {
    readonly nombre: string | null
    readonly telefono: string | null
    readonly email: string | null
    readonly property_id: string | null
    readonly assignee_id: string | null
  }
  readonly filled: ReadonlyArray<string>
}

export const eventTypes = ["lead.created", "lead.enriched"] as const

export type EventType = (typeof eventTypes)[number]

export const isEventType = (value: string): value is EventType =>
  (eventTypes as ReadonlyArray<string>).includes(value)

/** The POST body: the same bytes on every attempt, so receivers can dedupe and compare. */
export const webhookBody = (event: WebhookEvent, dashboardUrl: string): string =>
  JSON.stringify({
    type: event.type,
    timestamp: event.createdAt.toISOString(),
    data: {
      event_id: event.eventId,
      lead_id: event.leadId,
      organization_id: event.organizationId,
      origin: { id: event.origin.id, label: event.origin.label },
      lead_url: `${dashboardUrl}/leads/${event.leadId}`,
      request_id: event.requestId,
      lead: {
        nombre: event.lead.nombre,
        telefono: event.lead.telefono,
        email: event.lead.email,
        property_id: event.lead.property_id,
        assignee_id: event.lead.assignee_id
      },
      filled: event.filled
    }
  })
