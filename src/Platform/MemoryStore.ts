import { Context, Layer } from "effect"
import type { KeyMode } from "../Domain/ApiKey.ts"
import type { StoredLeadFields } from "../Domain/LeadInput.ts"

/**
 * The state behind every `layerMemory`: one object shared by the in-memory services so they
 * see each other's writes the way the PostgreSQL layers see each other's tables.
 */
export interface MemoryState {
  readonly organizations: Map<string, { id: string; name: string; country: string }>
  readonly agents: Map<string, { id: string; organizationId: string; name: string }>
  readonly origins: Map<
    string,
    { id: string; organizationId: string; label: string; rateLimit: number; createdAt: number }
  >
  readonly keys: Map<
    string,
    {
      id: string
      originId: string
      mode: KeyMode
      publicId: string
      prefix: string
      hash: string
      createdAt: number
      revokedAt: number | null
    }
  >
  readonly properties: Map<
    string,
    { id: string; organizationId: string; codigo: string; externalCode: string | null; archived: boolean }
  >
  readonly rules: Array<{
    id: string
    organizationId: string
    priority: number
    originId: string | null
    propertyId: string | null
    agentIds: ReadonlyArray<string>
    roundRobin: boolean
    rotation: number
    seq: number
  }>
  /** A lead's stored fields (`StoredLeadFields`) beside the columns the service sets. */
  readonly leads: Map<
    string,
    {
      -readonly [K in keyof StoredLeadFields]: StoredLeadFields[K]
    } & {
      id: string
      organizationId: string
      originId: string
      phoneKey: string | null
      propertyId: string | null
      assigneeId: string | null
      createdAt: number
      /** A test key's lead (docs/contract.md#10-test-mode). */
      livemode: boolean
    }
  >
  readonly notes: Array<{ leadId: string; body: string; requestId: string; createdAt: number }>
  readonly tasks: Array<{
    leadId: string
    kind: string
    assigneeId: string | null
    dueAt: number
    createdAt: number
  }>
  readonly events: Array<{
    leadId: string
    organizationId: string
    type: string
    createdAt: number
    /** Absent: a live event. */
    livemode?: boolean
  }>
  readonly idempotency: Map<
    string,
    | { state: "in_progress"; fingerprint: string; token: string; leaseExpiresAt: number }
    | {
        state: "completed"
        fingerprint: string
        /** The reservation that completed it (`IdempotencyStore.settle` tells its own completion by it). */
        token: string
        status: number
        response: { readonly lead_id: string; readonly status: "created" | "enriched" }
        completedAt: number
      }
  >
  /** Requests counted per window: `rateWindowSlot` names one. */
  readonly windows: Map<string, number>
  readonly requests: Array<StoredRequest>
}

/** A request-log row as the memory store holds it: with the body kept for rescue, if any. */
export interface StoredRequest extends RequestLogRow {
  readonly keptBody: string | null
}

export interface RequestLogRow {
  readonly requestId: string
  readonly at: number
  readonly originId: string | null
  readonly keyPrefix: string | null
  readonly status: number
  readonly outcome: string
  readonly leadId: string | null
  readonly idempotencyKey: string | null
  readonly durationMs: number
  readonly livemode: boolean
}

/** Idempotency keys are the origin's per mode: a test key's never meet the live key's. */
export const idempotencySlot = (originId: string, livemode: boolean, key: string) =>
  `${originId}\u0000${livemode ? "live" : "test"}\u0000${key}`

/** The parts `idempotencySlot` joined. */
export const idempotencySlotParts = (slot: string) => {
  const [originId = "", mode = "", ...key] = slot.split("\u0000")
  return { originId, livemode: mode === "live", key: key.join("\u0000") }
}

export const rateWindowSlot = (originId: string, livemode: boolean, windowIndex: number) =>
  `${originId}@${livemode ? "live" : "test"}@${windowIndex}`

export class MemoryStore extends Context.Service<MemoryStore, MemoryState>()("lead-intake/MemoryStore") {
  static readonly layer = Layer.sync(MemoryStore, () => ({
    organizations: new Map(),
    agents: new Map(),
    origins: new Map(),
    keys: new Map(),
    properties: new Map(),
    rules: [],
    leads: new Map(),
    notes: [],
    tasks: [],
    events: [],
    idempotency: new Map(),
    windows: new Map(),
    requests: []
  }))
}
