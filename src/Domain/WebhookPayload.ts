interface EventBase {
  readonly eventId: string
  readonly createdAt: Date
  readonly organizationId: string
  /** `false` for the events of test leads, which reach only endpoints added with test events on. */
  readonly livemode: boolean
}

/** A lead write's event as stored with its outbox row (migration 0004) when the write committed. */
export interface LeadWriteEvent extends EventBase {
  readonly type: "lead.created" | "lead.enriched"
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

/** A lead's personal data was erased: ids only, so receivers erase their own copies. */
export interface LeadErasedEvent extends EventBase {
  readonly type: "lead.erased"
  readonly leadId: string
}

/** Sent on demand to one endpoint, so its owner can check the receiver end to end. */
export interface TestEvent extends EventBase {
  readonly type: "webhook.test"
  readonly endpointId: string
}

export type WebhookEvent = LeadWriteEvent | LeadErasedEvent | TestEvent

/** The types an endpoint may subscribe to; all of them unless it names fewer. */
export const eventTypes = ["lead.created", "lead.enriched", "lead.erased"] as const

export type EventType = (typeof eventTypes)[number]

export const deliveredTypes = [...eventTypes, "webhook.test"] as const

export type DeliveredType = (typeof deliveredTypes)[number]

export const isLeadWriteEvent = (event: WebhookEvent): event is LeadWriteEvent =>
  event.type === "lead.created" || event.type === "lead.enriched"

export const leadIdOf = (event: WebhookEvent): string | null => ("leadId" in event ? event.leadId : null)

export const isEventType = (value: string): value is EventType =>
  (eventTypes as ReadonlyArray<string>).includes(value)

const dataOf = (event: WebhookEvent, dashboardUrl: string) => {
  switch (event.type) {
    case "lead.created":
    case "lead.enriched":
      return {
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
    case "lead.erased":
      return {
        event_id: event.eventId,
        lead_id: event.leadId,
        organization_id: event.organizationId,
        erased_at: event.createdAt.toISOString()
      }
    case "webhook.test":
      return {
        event_id: event.eventId,
        endpoint_id: event.endpointId,
        organization_id: event.organizationId
      }
  }
}

/** The POST body: the same bytes on every attempt, so receivers can dedupe and compare. */
export const webhookBody = (event: WebhookEvent, dashboardUrl: string): string =>
  JSON.stringify({
    type: event.type,
    timestamp: event.createdAt.toISOString(),
    livemode: event.livemode,
    data: dataOf(event, dashboardUrl)
  })
