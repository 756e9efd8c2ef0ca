import { Context, Layer } from "effect"
import type { EventType, WebhookEvent } from "../Domain/WebhookPayload.ts"
import type { MemoryState } from "../Platform/MemoryStore.ts"

export interface MemoryEndpoint {
  readonly id: string
  readonly organizationId: string
  readonly url: string
  readonly events: ReadonlyArray<EventType>
  readonly testEvents: boolean
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

const eventOf = (
  store: MemoryState,
  raw: MemoryState["events"][number],
  eventId: string
): WebhookEvent | undefined => {
  const base = {
    eventId,
    createdAt: new Date(raw.createdAt),
    organizationId: raw.organizationId,
    livemode: raw.livemode ?? true
  }
  if (raw.type === "lead.erased") return { ...base, type: "lead.erased", leadId: raw.leadId }
  const lead = store.leads.get(raw.leadId)
  if (lead === undefined || (raw.type !== "lead.created" && raw.type !== "lead.enriched")) return undefined
  return {
    ...base,
    type: raw.type,
    leadId: raw.leadId,
    requestId: null,
    origin: { id: lead.originId, label: store.origins.get(lead.originId)?.label ?? "" },
    lead: {
      nombre: lead.nombre,
      telefono: lead.telefono,
      email: lead.email,
      property_id: lead.propertyId,
      assignee_id: lead.assigneeId
    },
    filled: []
  }
}

const queue = (state: WebhookMemoryState, endpointId: string, event: WebhookEvent, seq: number) => {
  state.deliveries.set(deliveryKey(endpointId, event.eventId), {
    endpointId,
    event,
    seq,
    state: "pending",
    attempts: 0,
    failures: 0,
    lastStatus: null,
    lastError: null,
    lastAttemptAt: null,
    nextAttemptAt: event.createdAt.getTime(),
    leaseToken: null
  })
}

export const fanOut = (store: MemoryState, state: WebhookMemoryState) => {
  for (; state.cursor < store.events.length; state.cursor++) {
    const raw = store.events[state.cursor]!
    const livemode = raw.livemode ?? true
    const targets = [...state.endpoints.values()].filter(
      (e) =>
        e.organizationId === raw.organizationId &&
        e.disabledAt === null &&
        (e.events as ReadonlyArray<string>).includes(raw.type) &&
        (livemode || e.testEvents)
    )
    if (targets.length === 0) continue
    const eventId = crypto.randomUUID()
    const event = eventOf(store, raw, eventId)
    if (event === undefined) continue
    state.eventIds.set(raw, eventId)
    for (const endpoint of targets) queue(state, endpoint.id, event, state.cursor)
  }
}

/** Queues a `webhook.test` event for one endpoint, after the events already written. */
export const queueTest = (
  store: MemoryState,
  state: WebhookMemoryState,
  endpoint: MemoryEndpoint,
  now: number
): WebhookEvent => {
  fanOut(store, state)
  const event: WebhookEvent = {
    eventId: crypto.randomUUID(),
    type: "webhook.test",
    createdAt: new Date(now),
    organizationId: endpoint.organizationId,
    livemode: true,
    endpointId: endpoint.id
  }
  queue(state, endpoint.id, event, store.events.length)
  return event
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
