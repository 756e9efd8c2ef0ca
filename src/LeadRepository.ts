import { Clock, Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { UnknownEntity } from "./Domain/Errors.ts"
import { type LeadInput, noteBody } from "./Domain/LeadRequest.ts"
import { idempotencySlot, MemoryStore } from "./MemoryStore.ts"
import { availableOrFail, ReadSql, type StoreUnavailable } from "./Sql.ts"

export interface LeadWrite {
  readonly requestId: string
  readonly organizationId: string
  readonly originId: string
  readonly input: LeadInput
  readonly phoneKey: string | null
  readonly propertyId: string | null
  readonly leadUrlBase: string
  /** The reservation this write completes, so its response is stored in the same transaction. */
  readonly idempotency: { readonly key: string; readonly token: string } | null
}

export interface LeadWritten {
  readonly leadId: string
  readonly outcome: "created" | "enriched"
  readonly assigneeId: string | null
}

export interface LeadDetail {
  readonly id: string
  readonly organization_id: string
  readonly origin: string
  readonly nombre: string
  readonly telefono: string | null
  readonly email: string | null
  readonly property_id: string | null
  readonly assignee_id: string | null
  readonly created_at: string
  readonly notes: ReadonlyArray<{ readonly body: string; readonly created_at: string }>
  readonly tasks: ReadonlyArray<{
    readonly kind: string
    readonly assignee_id: string | null
    readonly due_at: string
  }>
  readonly events: ReadonlyArray<{ readonly type: string; readonly created_at: string }>
}

export interface LeadSummary {
  readonly id: string
  readonly nombre: string
  readonly telefono: string | null
  readonly email: string | null
  readonly origin: string
  readonly created_at: string
}

export const firstContactMillis = 15 * 60 * 1000

export const leadUrl = (base: string, leadId: string) => `${base}/leads/${leadId}`

/**
 * Leads and everything a write sets off. `createOrEnrich` is one round trip (the function of
 * migration 0002), so a lead, its note, task, outbox event, capture assignment and stored
 * idempotent response commit together or not at all; the unique (organization, phone key) index
 * decides races, not timing, and only a real creation takes a round-robin turn.
 */
export class LeadRepository extends Context.Service<
  LeadRepository,
  {
    findMatch(
      organizationId: string,
      phoneKey: string
    ): Effect.Effect<Option.Option<string>, StoreUnavailable>
    createOrEnrich(write: LeadWrite): Effect.Effect<LeadWritten, StoreUnavailable>
    show(id: string): Effect.Effect<LeadDetail, UnknownEntity>
    list(organizationId: string, limit: number): Effect.Effect<ReadonlyArray<LeadSummary>, UnknownEntity>
  }
>()("lead-intake/LeadRepository") {
  static readonly layer = Layer.effect(
    LeadRepository,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const read = (yield* ReadSql) ?? sql
      const iso = (date: Date) => date.toISOString()

      return LeadRepository.of({
        findMatch: Effect.fn("LeadRepository.findMatch")(function* (organizationId, phoneKey) {
          const rows = yield* read<{ id: string }>`
            SELECT id FROM leads WHERE organization_id = ${organizationId} AND phone_key = ${phoneKey}`.pipe(
            availableOrFail("LeadRepository.findMatch")
          )
          return Option.fromNullishOr(rows[0]?.id)
        }),

        createOrEnrich: Effect.fn("LeadRepository.createOrEnrich")(function* (write) {
          const now = new Date(yield* Clock.currentTimeMillis)
          const dueAt = new Date(now.getTime() + firstContactMillis)
          const { input } = write
          const note = noteBody(input)
          const leadBase = `${write.leadUrlBase}/leads/`
          const rows = yield* sql<{ lead_id: string; created: boolean; assignee_id: string | null }>`
            SELECT lead_id, created, assignee_id FROM create_or_enrich_lead(
              ${write.organizationId}, ${write.originId}, ${input.nombre}, ${input.telefono}, ${write.phoneKey},
              ${input.email}, ${write.propertyId}::uuid, ${note}::text, ${write.requestId}, ${now}, ${dueAt},
              ${leadBase}, ${write.idempotency?.key ?? null}::text, ${write.idempotency?.token ?? null}::uuid
            )`.pipe(availableOrFail("LeadRepository.createOrEnrich"))
          const row = rows[0]!
          const written: LeadWritten = {
            leadId: row.lead_id,
            outcome: row.created ? "created" : "enriched",
            assigneeId: row.assignee_id
          }
          yield* Effect.annotateCurrentSpan({ "lead.id": written.leadId, "lead.outcome": written.outcome })
          return written
        }),

        show: Effect.fn("LeadRepository.show")(function* (id) {
          const [lead] = yield* sql<{
            id: string
            organization_id: string
            origin: string
            nombre: string
            telefono: string | null
            email: string | null
            property_id: string | null
            assignee_id: string | null
            created_at: Date
          }>`
            SELECT l.id, l.organization_id, o.label AS origin, l.nombre, l.telefono, l.email, l.property_id,
                   l.assignee_id, l.created_at
            FROM leads l JOIN origins o ON o.id = l.origin_id
            WHERE l.id = ${id}`.pipe(Effect.orDie)
          if (lead === undefined) return yield* new UnknownEntity({ entity: "lead", id })
          const [notes, tasks, events] = yield* Effect.all(
            [
              sql<{ body: string; created_at: Date }>`
                SELECT body, created_at FROM lead_notes WHERE lead_id = ${id} ORDER BY created_at, id`,
              sql<{ kind: string; assignee_id: string | null; due_at: Date }>`
                SELECT kind, assignee_id, due_at FROM lead_tasks WHERE lead_id = ${id} ORDER BY created_at, id`,
              sql<{ type: string; created_at: Date }>`
                SELECT type, created_at FROM outbox_events WHERE lead_id = ${id} ORDER BY id`
            ],
            { concurrency: "unbounded" }
          ).pipe(Effect.orDie)
          return {
            ...lead,
            created_at: iso(lead.created_at),
            notes: notes.map((n) => ({ body: n.body, created_at: iso(n.created_at) })),
            tasks: tasks.map((t) => ({ kind: t.kind, assignee_id: t.assignee_id, due_at: iso(t.due_at) })),
            events: events.map((e) => ({ type: e.type, created_at: iso(e.created_at) }))
          }
        }),

        list: Effect.fn("LeadRepository.list")(function* (organizationId, limit) {
          const [organization] = yield* sql`SELECT 1 FROM organizations WHERE id = ${organizationId}`.pipe(
            Effect.orDie
          )
          if (organization === undefined)
            return yield* new UnknownEntity({ entity: "organization", id: organizationId })
          const rows = yield* sql<{
            id: string
            nombre: string
            telefono: string | null
            email: string | null
            origin: string
            created_at: Date
          }>`
            SELECT l.id, l.nombre, l.telefono, l.email, o.label AS origin, l.created_at
            FROM leads l JOIN origins o ON o.id = l.origin_id
            WHERE l.organization_id = ${organizationId}
            ORDER BY l.created_at DESC, l.id
            LIMIT ${limit}`.pipe(Effect.orDie)
          return rows.map((row) => ({ ...row, created_at: iso(row.created_at) }))
        })
      })
    })
  )

  static readonly layerMemory = Layer.effect(
    LeadRepository,
    Effect.gen(function* () {
      const store = yield* MemoryStore
      const iso = (millis: number) => new Date(millis).toISOString()

      const matching = (organizationId: string, phoneKey: string | null) =>
        phoneKey === null
          ? undefined
          : [...store.leads.values()].find(
              (lead) => lead.organizationId === organizationId && lead.phoneKey === phoneKey
            )

      const assign = (write: LeadWrite): string | null => {
        const rule = store.rules
          .filter(
            (r) =>
              r.organizationId === write.organizationId &&
              (r.originId === null || r.originId === write.originId) &&
              (r.propertyId === null || r.propertyId === write.propertyId)
          )
          .sort((a, b) => a.priority - b.priority || a.seq - b.seq)[0]
        if (rule === undefined) return null
        if (!rule.roundRobin) return rule.agentIds[0] ?? null
        const agent = rule.agentIds[rule.rotation % rule.agentIds.length] ?? null
        rule.rotation += 1
        return agent
      }

      return LeadRepository.of({
        findMatch: Effect.fn("LeadRepository.findMatch")(function* (organizationId, phoneKey) {
          return Option.fromNullishOr(matching(organizationId, phoneKey)?.id)
        }),
        createOrEnrich: Effect.fn("LeadRepository.createOrEnrich")(function* (write) {
          const now = yield* Clock.currentTimeMillis
          const { input } = write
          const existing = matching(write.organizationId, write.phoneKey)
          const lead = existing ?? {
            id: crypto.randomUUID(),
            organizationId: write.organizationId,
            originId: write.originId,
            nombre: input.nombre,
            telefono: input.telefono,
            phoneKey: write.phoneKey,
            email: input.email,
            propertyId: write.propertyId,
            assigneeId: assign(write),
            createdAt: now
          }
          if (existing === undefined) {
            store.leads.set(lead.id, lead)
            store.tasks.push({
              leadId: lead.id,
              kind: "first_contact",
              assigneeId: lead.assigneeId,
              dueAt: now + firstContactMillis,
              createdAt: now
            })
          } else {
            existing.email ??= input.email
            existing.propertyId ??= write.propertyId
          }
          const note = noteBody(input)
          if (note !== null)
            store.notes.push({ leadId: lead.id, body: note, requestId: write.requestId, createdAt: now })
          const outcome = existing === undefined ? "created" : "enriched"
          store.events.push({
            leadId: lead.id,
            organizationId: write.organizationId,
            type: `lead.${outcome}`,
            createdAt: now
          })
          if (write.idempotency !== null) {
            const slot = idempotencySlot(write.originId, write.idempotency.key)
            const reservation = store.idempotency.get(slot)
            if (reservation?.state === "in_progress" && reservation.token === write.idempotency.token) {
              store.idempotency.set(slot, {
                state: "completed",
                fingerprint: reservation.fingerprint,
                status: outcome === "created" ? 201 : 200,
                response: {
                  lead_id: lead.id,
                  status: outcome,
                  lead_url: leadUrl(write.leadUrlBase, lead.id)
                },
                completedAt: now
              })
            }
          }
          return { leadId: lead.id, outcome, assigneeId: lead.assigneeId } as const
        }),
        show: Effect.fn("LeadRepository.show")(function* (id) {
          const lead = store.leads.get(id)
          if (lead === undefined) return yield* new UnknownEntity({ entity: "lead", id })
          return {
            id: lead.id,
            organization_id: lead.organizationId,
            origin: store.origins.get(lead.originId)?.label ?? "",
            nombre: lead.nombre,
            telefono: lead.telefono,
            email: lead.email,
            property_id: lead.propertyId,
            assignee_id: lead.assigneeId,
            created_at: iso(lead.createdAt),
            notes: store.notes
              .filter((n) => n.leadId === id)
              .map((n) => ({ body: n.body, created_at: iso(n.createdAt) })),
            tasks: store.tasks
              .filter((t) => t.leadId === id)
              .map((t) => ({ kind: t.kind, assignee_id: t.assigneeId, due_at: iso(t.dueAt) })),
            events: store.events
              .filter((e) => e.leadId === id)
              .map((e) => ({ type: e.type, created_at: iso(e.createdAt) }))
          }
        }),
        list: Effect.fn("LeadRepository.list")(function* (organizationId, limit) {
          if (!store.organizations.has(organizationId)) {
            return yield* new UnknownEntity({ entity: "organization", id: organizationId })
          }
          return [...store.leads.values()]
            .filter((lead) => lead.organizationId === organizationId)
            .sort((a, b) => b.createdAt - a.createdAt)
            .slice(0, limit)
            .map((lead) => ({
              id: lead.id,
              nombre: lead.nombre,
              telefono: lead.telefono,
              email: lead.email,
              origin: store.origins.get(lead.originId)?.label ?? "",
              created_at: iso(lead.createdAt)
            }))
        })
      })
    })
  )
}
