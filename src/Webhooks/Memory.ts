import { Context, Layer } from "effect"
import type { EventType, WebhookEvent } from "../Domain/WebhookPayload.ts"
import type { MemoryState } from "../Platform/MemoryStore.ts"

export interface MemoryEndpoint {
  readonly id: string
  readonly organizationId: string
  readonly url: string
  readonly events: ReadonlyArray<EventType>
  secret: string
  previousSecret: string | null
  previousSecretExpiresAt: number | null
  disabledAt: number | null
  readonly createdAt: number
}

export interface MemoryDelivery {
  readonly endpointId: string
  readonly event: WebhookEvent
  readonly seq: number
  state: "pending" | "delivered" | "failed"
  attempts: number
  failures: number
  lastStatus: number | null
  lastError: string | null
  lastAttemptAt: number | null
  nextAttemptAt: number | null
  leaseToken: string | null
}

/**
 * The webhook side of the in-memory fakes. The PostgreSQL triggers fan an event out inside the
 * write; here `fanOut` does the same from the shared event list before any read or change of
 * endpoints, which gives the same "endpoints that existed when the event was written".
 */
export interface WebhookMemoryState {
  readonly endpoints: Map<string, MemoryEndpoint>
  readonly deliveries: Map<string, MemoryDelivery>
  readonly eventIds: WeakMap<object, string>
  cursor: number
}

export const deliveryKey = (endpointId: string, eventId: string) => `${endpointId}\u0000${eventId}`

export const fanOut = (store: MemoryState, state: WebhookMemoryState) => {
  for (; state.cursor < store.events.length; state.cursor++) {
    const raw = store.events[state.cursor]!
    const type = raw.type as EventType
    const targets = [...state.endpoints.values()].filter(
      (e) => e.organizationId === raw.organizationId && e.disabledAt === null && e.events.includes(type)
    )
    const lead = store.leads.get(raw.leadId)
    if (targets.length === 0 || lead === undefined) continue
    const origin = store.origins.get(lead.originId)
    const eventId = crypto.randomUUID()
    state.eventIds.set(raw, eventId)
    const event: WebhookEvent = {
      eventId,
      type,
      createdAt: new Date(raw.createdAt),
      organizationId: raw.organizationId,
      leadId: raw.leadId,
      requestId: null,
      origin: { id: lead.originId, label: origin?.label ?? "" },
      lead: {
        nombre: lead.nombre,
        telefono: lead.telefono,
        email: lead.email,
        property_id: lead.propertyId,
        assignee_id: lead.assigneeId
      },
      filled: []
    }
    for (const endpoint of targets) {
      state.deliveries.set(deliveryKey(endpoint.id, eventId), {
        endpointId: endpoint.id,
        event,
        seq: state.cursor,
        state: "pending",
        attempts: 0,
        failures: 0,
        lastStatus: null,
        lastError: null,
        lastAttemptAt: null,
        nextAttemptAt: raw.createdAt,
        leaseToken: null
      })
    }
  }
}

export class WebhookMemory extends Context.Service<WebhookMemory, WebhookMemoryState>()(
  "lead-intake/WebhookMemory"
) {
  static readonly layer = Layer.sync(WebhookMemory, () => ({
    endpoints: new Map(),
    deliveries: new Map(),
    eventIds: new WeakMap(),
    cursor: 0
  }))
}
