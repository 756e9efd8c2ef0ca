import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { Rejected, UnknownEntity } from "./Domain/Errors.ts"
import { isAcceptablePhone, phoneMatchKey } from "./Domain/Phone.ts"
import { type ErasureRow, MemoryStore } from "./MemoryStore.ts"
import { decodeSingle } from "./Sql.ts"

const Count = Schema.Struct({ n: Schema.Number })

export interface ExportedLead {
  readonly id: string
  readonly organization_id: string
  readonly origin_id: string
  readonly origin: string
  readonly nombre: string | null
  readonly telefono: string | null
  /** The match key derived from `telefono` (E.164 when it parses). */
  readonly phone_key: string | null
  readonly email: string | null
  readonly property: {
    readonly id: string
    readonly codigo: string
    readonly external_code: string | null
  } | null
  readonly assignee_id: string | null
  readonly created_at: string
  readonly erased_at: string | null
}

export interface Erasure {
  readonly lead_id: string
  readonly organization_id: string
  readonly erased_at: string
  readonly erased_by: string
  readonly reason: string
  /** Rows erased or scrubbed, per table. */
  readonly removed: Readonly<Record<string, number>>
}

/** Everything held about one lead, as `lead export` prints it. No secret: keys appear as their prefix. */
export interface LeadExport {
  readonly exported_at: string
  readonly lead: ExportedLead
  readonly notes: ReadonlyArray<{
    readonly body: string
    readonly request_id: string
    readonly created_at: string
  }>
  readonly tasks: ReadonlyArray<{
    readonly kind: string
    readonly assignee_id: string | null
    readonly due_at: string
    readonly created_at: string
  }>
  readonly events: ReadonlyArray<{
    readonly type: string
    readonly payload: unknown
    readonly created_at: string
    readonly published_at: string | null
  }>
  readonly requests: ReadonlyArray<{
    readonly request_id: string
    readonly at: string
    readonly origin_id: string | null
    readonly key_prefix: string | null
    readonly status: number
    readonly outcome: string
    readonly idempotency_key: string | null
    readonly duration_ms: number
  }>
  readonly idempotent_replies: ReadonlyArray<{
    readonly origin_id: string
    readonly idempotency_key: string
    readonly status: number
    readonly reply: unknown
    readonly completed_at: string
  }>
  readonly erasure: Erasure | null
}

export interface EraseRequest {
  readonly leadId: string
  readonly reason: string
  readonly actor: string
}

export interface Erased {
  readonly id: string
  readonly erased_at: string
  readonly already_erased: boolean
}

export const maxReasonLength = 500

/**
 * What may stay in an outbox payload and in a stored reply after erasure: ids, the outcome and
 * the dashboard link (`<DASHBOARD_URL>/leads/<id>`), so a replay still answers as it first did.
 */
export const eventPayloadKeys = [
  "event_id",
  "type",
  "timestamp",
  "lead_id",
  "organization_id",
  "origin_id",
  "assignee_id",
  "request_id",
  "lead_url"
] as const
export const replyKeys = ["lead_id", "status", "lead_url", "matched_on"] as const

const digitsOf = (text: string) => text.replace(/\D/g, "")

const wordsOf = (text: string) =>
  text
    .normalize("NFC")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== "")

const containsWords = (haystack: ReadonlyArray<string>, needle: ReadonlyArray<string>) =>
  needle.length > 0 &&
  haystack.some((_, start) => needle.every((word, offset) => haystack[start + offset] === word))

/** The audit trail holds no personal data, so a reason that repeats the person's is refused. */
const checkReason = (
  reason: string,
  person: { readonly nombre: string | null; readonly telefono: string | null; readonly email: string | null }
): Effect.Effect<void, Rejected> => {
  const phoneTail = person.telefono === null ? "" : digitsOf(person.telefono).slice(-7)
  const repeats =
    (person.nombre !== null && containsWords(wordsOf(reason), wordsOf(person.nombre))) ||
    (person.email !== null && reason.toLowerCase().includes(person.email.toLowerCase())) ||
    (phoneTail.length === 7 && digitsOf(reason).includes(phoneTail))
  return repeats
    ? Effect.fail(
        new Rejected({
          reason:
            "the reason must not contain the person's name, phone or e-mail (the audit trail keeps no personal data)"
        })
      )
    : Effect.void
}

const validateErasure = (request: EraseRequest): Effect.Effect<void, Rejected> => {
  if (request.reason.trim() === "")
    return Effect.fail(new Rejected({ reason: "the reason must not be empty" }))
  if ([...request.reason].length > maxReasonLength)
    return Effect.fail(new Rejected({ reason: `the reason must be at most ${maxReasonLength} characters` }))
  if (request.actor.trim() === "") return Effect.fail(new Rejected({ reason: "who erases must be named" }))
  return Effect.void
}

const noLeadWithPhone = (organizationId: string) =>
  new UnknownEntity({ entity: "lead with that phone in organization", id: organizationId })

const badPhone = () =>
  new Rejected({
    reason:
      "the phone must have at least 10 digits and only digits, spaces, hyphens, dots, parentheses and one leading +"
  })

/**
 * The data subject's rights over one lead: everything held about it (`export`) and its erasure
 * (`erase`), which leaves a tombstone and an audit row, in one transaction. Erasure walks a list
 * of per-table steps and the export has one section per table, so a new table holding a lead's
 * data (webhook deliveries) is one step and one section here.
 */
export class PersonalData extends Context.Service<
  PersonalData,
  {
    /** The lead with this phone (any spelling, matched as the API matches) in the organization. */
    findByPhone(organizationId: string, phone: string): Effect.Effect<string, UnknownEntity | Rejected>
    export(leadId: string): Effect.Effect<LeadExport, UnknownEntity>
    erase(request: EraseRequest): Effect.Effect<Erased, UnknownEntity | Rejected>
    erasure(leadId: string): Effect.Effect<Option.Option<Erasure>>
    erasures(organizationId: string, limit: number): Effect.Effect<ReadonlyArray<Erasure>, UnknownEntity>
  }
>()("lead-intake/PersonalData") {
  static readonly layer = Layer.effect(
    PersonalData,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const iso = (date: Date) => date.toISOString()
      const isoOrNull = (date: Date | null) => (date === null ? null : date.toISOString())

      interface ErasureRecordRow {
        readonly lead_id: string
        readonly organization_id: string
        readonly erased_at: Date
        readonly erased_by: string
        readonly reason: string
        readonly removed: Record<string, number>
      }
      const toErasure = (row: ErasureRecordRow): Erasure => ({ ...row, erased_at: iso(row.erased_at) })

      const erasureOf = (leadId: string) =>
        sql<ErasureRecordRow>`
          SELECT lead_id, organization_id, erased_at, erased_by, reason, removed
          FROM lead_erasures WHERE lead_id = ${leadId}`.pipe(
          Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), toErasure))
        )

      /** The `n` of a statement that ends `SELECT count(*)::int AS n`. */
      const counted = <R>(statement: Effect.Effect<ReadonlyArray<unknown>, SqlError.SqlError, R>) =>
        statement.pipe(
          decodeSingle(Count),
          Effect.map((row) => row.n)
        )

      /** The JSON object in `column` of the row being updated, with only `keys` left in it. */
      const onlyKeys = (column: string, keys: ReadonlyArray<string>) => sql`(
        SELECT COALESCE(jsonb_object_agg(f.key, f.value), '{}'::jsonb)
        FROM jsonb_each(${sql(column)}) AS f
        WHERE ${JSON.stringify(keys)}::jsonb ? f.key
      )`

      /** Each table that holds a copy of the lead's personal data, and how erasure removes it. */
      const erasureSteps: ReadonlyArray<{
        readonly table: string
        readonly erase: (leadId: string) => Effect.Effect<number, unknown>
      }> = [
        {
          table: "lead_notes",
          erase: (leadId) =>
            counted(sql`
              WITH gone AS (DELETE FROM lead_notes WHERE lead_id = ${leadId} RETURNING 1)
              SELECT count(*)::int AS n FROM gone`)
        },
        {
          table: "outbox_events",
          erase: (leadId) =>
            counted(sql`
              WITH scrubbed AS (
                UPDATE outbox_events e
                SET payload = ${onlyKeys("payload", eventPayloadKeys)} || '{"erased": true}'::jsonb
                WHERE e.lead_id = ${leadId}
                RETURNING 1
              )
              SELECT count(*)::int AS n FROM scrubbed`)
        },
        {
          table: "idempotency_keys",
          erase: (leadId) =>
            counted(sql`
              WITH scrubbed AS (
                UPDATE idempotency_keys k
                SET response = ${onlyKeys("response", replyKeys)}
                WHERE k.state = 'completed' AND k.response ->> 'lead_id' = ${leadId}
                RETURNING 1
              )
              SELECT count(*)::int AS n FROM scrubbed`)
        }
      ]

      return PersonalData.of({
        findByPhone: Effect.fn("PersonalData.findByPhone")(function* (organizationId, phone) {
          const [organization] = yield* sql<{ country: string }>`
            SELECT country FROM organizations WHERE id = ${organizationId}`.pipe(Effect.orDie)
          if (organization === undefined)
            return yield* new UnknownEntity({ entity: "organization", id: organizationId })
          if (!isAcceptablePhone(phone)) return yield* badPhone()
          const [lead] = yield* sql<{ id: string }>`
            SELECT id FROM leads
            WHERE organization_id = ${organizationId} AND phone_key = ${phoneMatchKey(phone, organization.country)}`.pipe(
            Effect.orDie
          )
          if (lead === undefined) return yield* noLeadWithPhone(organizationId)
          yield* Effect.annotateCurrentSpan({ "lead.id": lead.id })
          return lead.id
        }),

        export: Effect.fn("PersonalData.export")(function* (leadId) {
          yield* Effect.annotateCurrentSpan({ "lead.id": leadId })
          const exportedAt = yield* Clock.currentTimeMillis
          const read = Effect.gen(function* () {
            yield* sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`
            const [lead] = yield* sql<{
              id: string
              organization_id: string
              origin_id: string
              origin: string
              nombre: string | null
              telefono: string | null
              phone_key: string | null
              email: string | null
              property_id: string | null
              codigo: string | null
              external_code: string | null
              assignee_id: string | null
              created_at: Date
              erased_at: Date | null
            }>`
              SELECT l.id, l.organization_id, l.origin_id, o.label AS origin, l.nombre, l.telefono, l.phone_key,
                     l.email, l.property_id, p.codigo, p.external_code, l.assignee_id, l.created_at, l.erased_at
              FROM leads l
              JOIN origins o ON o.id = l.origin_id
              LEFT JOIN properties p ON p.id = l.property_id
              WHERE l.id = ${leadId}`
            if (lead === undefined) return Option.none()
            const notes = yield* sql<{ body: string; request_id: string; created_at: Date }>`
              SELECT body, request_id, created_at FROM lead_notes WHERE lead_id = ${leadId} ORDER BY created_at, id`
            const tasks = yield* sql<{
              kind: string
              assignee_id: string | null
              due_at: Date
              created_at: Date
            }>`
              SELECT kind, assignee_id, due_at, created_at FROM lead_tasks WHERE lead_id = ${leadId}
              ORDER BY created_at, id`
            const events = yield* sql<{
              type: string
              payload: unknown
              created_at: Date
              published_at: Date | null
            }>`
              SELECT type, payload, created_at, published_at FROM outbox_events WHERE lead_id = ${leadId} ORDER BY id`
            const requests = yield* sql<{
              request_id: string
              at: Date
              origin_id: string | null
              key_prefix: string | null
              status: number
              outcome: string
              idempotency_key: string | null
              duration_ms: number
            }>`
              SELECT request_id, at, origin_id, key_prefix, status, outcome, idempotency_key, duration_ms
              FROM request_log WHERE lead_id = ${leadId} ORDER BY at, id`
            const replies = yield* sql<{
              origin_id: string
              key: string
              http_status: number
              response: unknown
              completed_at: Date
            }>`
              SELECT origin_id, key, http_status, response, completed_at FROM idempotency_keys
              WHERE state = 'completed' AND response ->> 'lead_id' = ${leadId}
              ORDER BY completed_at, key`
            const erasure = yield* erasureOf(leadId)
            return Option.some({
              exported_at: new Date(exportedAt).toISOString(),
              lead: {
                id: lead.id,
                organization_id: lead.organization_id,
                origin_id: lead.origin_id,
                origin: lead.origin,
                nombre: lead.nombre,
                telefono: lead.telefono,
                phone_key: lead.phone_key,
                email: lead.email,
                property:
                  lead.property_id === null
                    ? null
                    : { id: lead.property_id, codigo: lead.codigo!, external_code: lead.external_code },
                assignee_id: lead.assignee_id,
                created_at: iso(lead.created_at),
                erased_at: isoOrNull(lead.erased_at)
              },
              notes: notes.map((n) => ({
                body: n.body,
                request_id: n.request_id,
                created_at: iso(n.created_at)
              })),
              tasks: tasks.map((t) => ({
                kind: t.kind,
                assignee_id: t.assignee_id,
                due_at: iso(t.due_at),
                created_at: iso(t.created_at)
              })),
              events: events.map((e) => ({
                type: e.type,
                payload: e.payload,
                created_at: iso(e.created_at),
                published_at: isoOrNull(e.published_at)
              })),
              requests: requests.map((r) => ({ ...r, at: iso(r.at) })),
              idempotent_replies: replies.map((r) => ({
                origin_id: r.origin_id,
                idempotency_key: r.key,
                status: r.http_status,
                reply: r.response,
                completed_at: iso(r.completed_at)
              })),
              erasure: Option.getOrNull(erasure)
            } satisfies LeadExport)
          })
          const found = yield* sql.withTransaction(read).pipe(Effect.orDie)
          if (Option.isNone(found)) return yield* new UnknownEntity({ entity: "lead", id: leadId })
          return found.value
        }),

        erase: Effect.fn("PersonalData.erase")(function* (request) {
          yield* Effect.annotateCurrentSpan({ "lead.id": request.leadId })
          yield* validateErasure(request)
          const now = new Date(yield* Clock.currentTimeMillis)
          const erase = Effect.gen(function* () {
            const [lead] = yield* sql<{
              organization_id: string
              nombre: string | null
              telefono: string | null
              email: string | null
              erased_at: Date | null
            }>`
              SELECT organization_id, nombre, telefono, email, erased_at FROM leads
              WHERE id = ${request.leadId} FOR UPDATE`.pipe(Effect.orDie)
            if (lead === undefined) return yield* new UnknownEntity({ entity: "lead", id: request.leadId })
            if (lead.erased_at !== null) {
              return {
                id: request.leadId,
                erased_at: iso(lead.erased_at),
                already_erased: true
              } satisfies Erased
            }
            yield* checkReason(request.reason, lead)
            const removed: Record<string, number> = {}
            for (const step of erasureSteps) {
              removed[step.table] = yield* step.erase(request.leadId).pipe(Effect.orDie)
            }
            yield* sql`
              UPDATE leads
              SET nombre = NULL, telefono = NULL, phone_key = NULL, email = NULL, property_id = NULL,
                  assignee_id = NULL, erased_at = ${now}, updated_at = ${now}
              WHERE id = ${request.leadId}`.pipe(Effect.orDie)
            removed.leads = 1
            yield* sql`
              INSERT INTO lead_erasures (lead_id, organization_id, erased_at, erased_by, reason, removed)
              VALUES (${request.leadId}, ${lead.organization_id}, ${now}, ${request.actor.trim()},
                      ${request.reason.trim()}, ${JSON.stringify(removed)}::jsonb)`.pipe(Effect.orDie)
            return { id: request.leadId, erased_at: iso(now), already_erased: false } satisfies Erased
          })
          const erased = yield* sql.withTransaction(erase).pipe(Effect.catchTag("SqlError", Effect.die))
          yield* Effect.annotateCurrentSpan({ "lead.already_erased": erased.already_erased })
          if (!erased.already_erased)
            yield* Effect.logInfo("lead erased").pipe(Effect.annotateLogs({ lead_id: erased.id }))
          return erased
        }),

        erasure: Effect.fn("PersonalData.erasure")(function* (leadId) {
          return yield* erasureOf(leadId).pipe(Effect.orDie)
        }),

        erasures: Effect.fn("PersonalData.erasures")(function* (organizationId, limit) {
          const [organization] = yield* sql`SELECT 1 FROM organizations WHERE id = ${organizationId}`.pipe(
            Effect.orDie
          )
          if (organization === undefined)
            return yield* new UnknownEntity({ entity: "organization", id: organizationId })
          const rows = yield* sql<ErasureRecordRow>`
            SELECT lead_id, organization_id, erased_at, erased_by, reason, removed FROM lead_erasures
            WHERE organization_id = ${organizationId}
            ORDER BY erased_at DESC, lead_id
            LIMIT ${limit}`.pipe(Effect.orDie)
          return rows.map(toErasure)
        })
      })
    })
  )

  static readonly layerMemory = Layer.effect(
    PersonalData,
    Effect.gen(function* () {
      const store = yield* MemoryStore
      const iso = (millis: number) => new Date(millis).toISOString()
      const toErasure = (row: ErasureRow): Erasure => ({
        lead_id: row.leadId,
        organization_id: row.organizationId,
        erased_at: iso(row.erasedAt),
        erased_by: row.erasedBy,
        reason: row.reason,
        removed: row.removed
      })
      const erasureOf = (leadId: string) =>
        Option.map(Option.fromNullishOr(store.erasures.find((row) => row.leadId === leadId)), toErasure)
      const repliesOf = (leadId: string) =>
        [...store.idempotency.entries()].flatMap(([slot, record]) =>
          record.state === "completed" && record.response.lead_id === leadId ? [{ slot, record }] : []
        )

      const erasureSteps: ReadonlyArray<{
        readonly table: string
        readonly erase: (leadId: string) => number
      }> = [
        {
          table: "lead_notes",
          erase: (leadId) => {
            const before = store.notes.length
            store.notes.splice(0, store.notes.length, ...store.notes.filter((note) => note.leadId !== leadId))
            return before - store.notes.length
          }
        },
        {
          table: "outbox_events",
          erase: (leadId) => store.events.filter((event) => event.leadId === leadId).length
        },
        {
          table: "idempotency_keys",
          erase: (leadId) => {
            const replies = repliesOf(leadId)
            for (const { slot, record } of replies) {
              const { lead_id, status } = record.response
              store.idempotency.set(slot, { ...record, response: { lead_id, status } })
            }
            return replies.length
          }
        }
      ]

      return PersonalData.of({
        findByPhone: Effect.fn("PersonalData.findByPhone")(function* (organizationId, phone) {
          const organization = store.organizations.get(organizationId)
          if (organization === undefined)
            return yield* new UnknownEntity({ entity: "organization", id: organizationId })
          if (!isAcceptablePhone(phone)) return yield* badPhone()
          const phoneKey = phoneMatchKey(phone, organization.country)
          const lead = [...store.leads.values()].find(
            (lead) => lead.organizationId === organizationId && lead.phoneKey === phoneKey
          )
          if (lead === undefined) return yield* noLeadWithPhone(organizationId)
          return lead.id
        }),

        export: Effect.fn("PersonalData.export")(function* (leadId) {
          const exportedAt = yield* Clock.currentTimeMillis
          const lead = store.leads.get(leadId)
          if (lead === undefined) return yield* new UnknownEntity({ entity: "lead", id: leadId })
          const property = lead.propertyId === null ? undefined : store.properties.get(lead.propertyId)
          const erasure = erasureOf(leadId)
          return {
            exported_at: iso(exportedAt),
            lead: {
              id: lead.id,
              organization_id: lead.organizationId,
              origin_id: lead.originId,
              origin: store.origins.get(lead.originId)?.label ?? "",
              nombre: lead.nombre,
              telefono: lead.telefono,
              phone_key: lead.phoneKey,
              email: lead.email,
              property:
                property === undefined
                  ? null
                  : { id: property.id, codigo: property.codigo, external_code: property.externalCode },
              assignee_id: lead.assigneeId,
              created_at: iso(lead.createdAt),
              erased_at: Option.match(erasure, { onNone: () => null, onSome: (e) => e.erased_at })
            },
            notes: store.notes
              .filter((n) => n.leadId === leadId)
              .map((n) => ({ body: n.body, request_id: n.requestId, created_at: iso(n.createdAt) })),
            tasks: store.tasks
              .filter((t) => t.leadId === leadId)
              .map((t) => ({
                kind: t.kind,
                assignee_id: t.assigneeId,
                due_at: iso(t.dueAt),
                created_at: iso(t.createdAt)
              })),
            events: store.events
              .filter((e) => e.leadId === leadId)
              .map((e) => ({
                type: e.type,
                payload: Option.isSome(erasure) ? { lead_id: e.leadId, erased: true } : { lead_id: e.leadId },
                created_at: iso(e.createdAt),
                published_at: null
              })),
            requests: store.requests
              .filter((r) => r.leadId === leadId)
              .sort((a, b) => a.at - b.at)
              .map((r) => ({
                request_id: r.requestId,
                at: iso(r.at),
                origin_id: r.originId,
                key_prefix: r.keyPrefix,
                status: r.status,
                outcome: r.outcome,
                idempotency_key: r.idempotencyKey,
                duration_ms: r.durationMs
              })),
            idempotent_replies: repliesOf(leadId)
              .sort((a, b) => a.record.completedAt - b.record.completedAt)
              .map(({ slot, record }) => {
                const [originId = "", key = ""] = slot.split("\u0000")
                return {
                  origin_id: originId,
                  idempotency_key: key,
                  status: record.status,
                  reply: record.response,
                  completed_at: iso(record.completedAt)
                }
              }),
            erasure: Option.getOrNull(erasure)
          } satisfies LeadExport
        }),

        erase: Effect.fn("PersonalData.erase")(function* (request) {
          yield* validateErasure(request)
          const now = yield* Clock.currentTimeMillis
          const lead = store.leads.get(request.leadId)
          if (lead === undefined) return yield* new UnknownEntity({ entity: "lead", id: request.leadId })
          const previous = erasureOf(request.leadId)
          if (Option.isSome(previous)) {
            return { id: lead.id, erased_at: previous.value.erased_at, already_erased: true } satisfies Erased
          }
          yield* checkReason(request.reason, lead)
          const removed: Record<string, number> = {}
          for (const step of erasureSteps) removed[step.table] = step.erase(lead.id)
          Object.assign(lead, {
            nombre: null,
            telefono: null,
            phoneKey: null,
            email: null,
            propertyId: null,
            assigneeId: null
          })
          removed.leads = 1
          store.erasures.push({
            leadId: lead.id,
            organizationId: lead.organizationId,
            erasedAt: now,
            erasedBy: request.actor.trim(),
            reason: request.reason.trim(),
            removed
          })
          yield* Effect.logInfo("lead erased").pipe(Effect.annotateLogs({ lead_id: lead.id }))
          return { id: lead.id, erased_at: iso(now), already_erased: false } satisfies Erased
        }),

        erasure: Effect.fn("PersonalData.erasure")(function* (leadId) {
          return erasureOf(leadId)
        }),

        erasures: Effect.fn("PersonalData.erasures")(function* (organizationId, limit) {
          if (!store.organizations.has(organizationId))
            return yield* new UnknownEntity({ entity: "organization", id: organizationId })
          return store.erasures
            .filter((row) => row.organizationId === organizationId)
            .sort((a, b) => b.erasedAt - a.erasedAt || a.leadId.localeCompare(b.leadId))
            .slice(0, limit)
            .map(toErasure)
        })
      })
    })
  )
}
