import { Clock, Context, Effect, Layer, Option, Schema, Struct } from "effect"
import { SqlClient } from "effect/sql"
import { Rejected, UnknownEntity } from "../Domain/Errors.ts"
import { isAcceptablePhone, phoneMatchKey } from "../Domain/Phone.ts"
import { readLead } from "../Intake/LeadRecord.ts"
import { LogRow } from "../Intake/RequestLog.ts"
import { countOf, decodeFirst, decodeRows, IdRow, requireExisting } from "../Platform/Sql/Sql.ts"
import { addOutboxEvent } from "../Webhooks/Outbox.ts"

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
  /** The lead's events as queued for the organization's webhook endpoints (never a secret). */
  readonly webhook_deliveries: ReadonlyArray<ExportedDelivery>
  /** Every attempt of those deliveries, oldest first per delivery (no body, no personal data). */
  readonly webhook_attempts: ReadonlyArray<ExportedAttempt>
  readonly erasure: Erasure | null
}

export interface ExportedAttempt {
  readonly endpoint_id: string
  readonly event_id: string
  readonly at: string
  readonly status: number | null
  readonly error: string | null
  readonly duration_ms: number
}

export interface ExportedDelivery {
  readonly endpoint_id: string
  readonly url: string
  readonly event_id: string
  readonly type: string
  readonly state: "pending" | "delivered" | "failed"
  readonly attempts: number
  readonly last_status: number | null
  readonly last_error: string | null
  readonly created_at: string
  readonly last_attempt_at: string | null
  readonly next_attempt_at: string | null
  readonly delivered_at: string | null
}

/** Why an erasure failed a delivery that was still pending; it is never sent afterwards. */
export const erasedDeliveryError = "cancelled: the lead was erased"

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
/** The lead in a webhook event's snapshot after erasure: the tombstone's fields. */
const erasedSnapshotLead = { nombre: null, telefono: null, email: null, property_id: null, assignee_id: null }
export const replyKeys = ["lead_id", "status", "lead_url", "matched_on"] as const

const ErasureRecordRow = Schema.Struct({
  lead_id: Schema.String,
  organization_id: Schema.String,
  erased_at: Schema.Date,
  erased_by: Schema.String,
  reason: Schema.String,
  removed: Schema.Record(Schema.String, Schema.Number)
})
const CountryRow = Schema.Struct({ country: Schema.String })

/** A body kept for rescue (docs/contract.md#11-rejected-leads-are-kept-for-rescue), as the export lists it. */
export interface KeptBody {
  readonly request_id: string
  readonly at: string
  readonly origin_id: string
  readonly livemode: boolean
  readonly body: string
}

const KeptBodyRow = Schema.Struct({
  id: Schema.String,
  request_id: Schema.String,
  at: Schema.Date,
  origin_id: Schema.String,
  livemode: Schema.Boolean,
  body: Schema.String
})

/** The phone and e-mail a kept body names, when it is a JSON object that names them. */
const personOfBody = (body: string): { readonly telefono: string | null; readonly email: string | null } => {
  try {
    const parsed: unknown = JSON.parse(body)
    if (typeof parsed !== "object" || parsed === null) return { telefono: null, email: null }
    const { telefono, email } = parsed as { readonly telefono?: unknown; readonly email?: unknown }
    return {
      telefono: typeof telefono === "string" ? telefono : null,
      email: typeof email === "string" ? email.trim().toLowerCase() : null
    }
  } catch {
    return { telefono: null, email: null }
  }
}
const RequestRow = LogRow.mapFields(
  Struct.pick([
    "request_id",
    "at",
    "origin_id",
    "key_prefix",
    "status",
    "outcome",
    "idempotency_key",
    "duration_ms"
  ])
)
const ReplyRow = Schema.Struct({
  origin_id: Schema.String,
  key: Schema.String,
  http_status: Schema.Number,
  response: Schema.Unknown,
  completed_at: Schema.Date
})
const DeliveryRow = Schema.Struct({
  endpoint_id: Schema.String,
  url: Schema.String,
  event_id: Schema.String,
  type: Schema.String,
  state: Schema.Literals(["pending", "delivered", "failed"]),
  attempts: Schema.Number,
  last_status: Schema.NullOr(Schema.Number),
  last_error: Schema.NullOr(Schema.String),
  created_at: Schema.Date,
  last_attempt_at: Schema.NullOr(Schema.Date),
  next_attempt_at: Schema.NullOr(Schema.Date),
  delivered_at: Schema.NullOr(Schema.Date)
})
const AttemptRow = Schema.Struct({
  endpoint_id: Schema.String,
  event_id: Schema.String,
  at: Schema.Date,
  status: Schema.NullOr(Schema.Number),
  error: Schema.NullOr(Schema.String),
  duration_ms: Schema.Number
})
const ErasingLeadRow = Schema.Struct({
  organization_id: Schema.String,
  nombre: Schema.NullOr(Schema.String),
  telefono: Schema.NullOr(Schema.String),
  email: Schema.NullOr(Schema.String),
  erased_at: Schema.NullOr(Schema.Date),
  livemode: Schema.Boolean
})

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
    /**
     * The organization's bodies kept for rescue whose phone has the same match key as `phone`,
     * whether or not a lead has that phone.
     */
    keptBodies(
      organizationId: string,
      phone: string
    ): Effect.Effect<ReadonlyArray<KeptBody>, UnknownEntity | Rejected>
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

      const toErasure = (row: typeof ErasureRecordRow.Type): Erasure => ({
        ...row,
        erased_at: iso(row.erased_at)
      })

      const erasureOf = (leadId: string) =>
        sql`
          SELECT lead_id, organization_id, erased_at, erased_by, reason, removed
          FROM lead_erasures WHERE lead_id = ${leadId}`.pipe(
          decodeFirst(ErasureRecordRow),
          Effect.map(Option.map(toErasure))
        )

      /**
       * Each table that holds a copy of the lead's personal data, and how erasure removes it.
       * Deliveries come before events: a worker about to send holds its delivery row (see
       * `WebhookDeliveries.guard`), so the erasure waits for those bytes to leave, and no worker
       * sends from a row this erasure has reached.
       */
      const erasureSteps: ReadonlyArray<{
        readonly table: string
        readonly erase: (organizationId: string, leadId: string) => Effect.Effect<number, unknown>
      }> = [
        {
          table: "lead_notes",
          erase: (organizationId, leadId) =>
            sql`
              WITH gone AS (
                DELETE FROM lead_notes WHERE organization_id = ${organizationId} AND lead_id = ${leadId} RETURNING 1
              )
              SELECT count(*)::int AS n FROM gone`.pipe(countOf)
        },
        {
          table: "webhook_deliveries",
          erase: (organizationId, leadId) =>
            sql`
              WITH cancelled AS (
                UPDATE webhook_deliveries d
                SET state = 'failed', next_attempt_at = NULL, lease_token = NULL,
                    last_error = ${erasedDeliveryError}
                FROM outbox_events o
                WHERE d.organization_id = ${organizationId} AND o.organization_id = d.organization_id
                  AND o.id = d.outbox_id AND o.lead_id = ${leadId} AND d.state = 'pending'
                RETURNING 1
              )
              SELECT count(*)::int AS n FROM cancelled`.pipe(countOf)
        },
        {
          table: "outbox_events",
          erase: (organizationId, leadId) =>
            sql`
              WITH scrubbed AS (
                UPDATE outbox_events e
                SET payload = (
                  SELECT COALESCE(jsonb_object_agg(f.key, f.value), '{}'::jsonb)
                  FROM jsonb_each(e.payload) AS f
                  WHERE ${JSON.stringify(eventPayloadKeys)}::jsonb ? f.key
                ) || '{"erased": true}'::jsonb,
                webhook_snapshot = e.webhook_snapshot || jsonb_build_object('lead', ${JSON.stringify(erasedSnapshotLead)}::jsonb)
                WHERE e.organization_id = ${organizationId} AND e.lead_id = ${leadId}
                RETURNING 1
              )
              SELECT count(*)::int AS n FROM scrubbed`.pipe(countOf)
        },
        {
          // A test lead's replies are kept by the test keys' table (migration 0015).
          table: "idempotency_keys",
          erase: (organizationId, leadId) =>
            Effect.forEach(["idempotency_keys", "test_idempotency_keys"], (table) =>
              sql`
                WITH scrubbed AS (
                  UPDATE ${sql(table)} k
                  SET response = (
                    SELECT COALESCE(jsonb_object_agg(f.key, f.value), '{}'::jsonb)
                    FROM jsonb_each(k.response) AS f
                    WHERE ${JSON.stringify(replyKeys)}::jsonb ? f.key
                  )
                  WHERE k.organization_id = ${organizationId} AND k.state = 'completed'
                    AND k.response ->> 'lead_id' = ${leadId}
                  RETURNING 1
                )
                SELECT count(*)::int AS n FROM scrubbed`.pipe(countOf)
            ).pipe(Effect.map((counts) => counts.reduce((sum, n) => sum + n, 0)))
        }
      ]

      const loggedColumns = sql.literal(
        "id, organization_id, request_id, at, origin_id, key_prefix, status, outcome, lead_id, idempotency_key, duration_ms"
      )

      /**
       * Both tables of the request log: `logged_requests`, and `request_log` until the janitor has moved
       * its rows (migration 0029; a moved row keeps its id, and one transaction moves it).
       */
      const keptBodiesOf = (organizationId: string) =>
        sql`
          SELECT r.id::text AS id, r.request_id, r.at, r.origin_id, r.livemode, r.kept_body AS body
          FROM (SELECT id, organization_id, request_id, at, origin_id, livemode, kept_body FROM logged_requests
                UNION ALL
                SELECT id, organization_id, request_id, at, origin_id, livemode, kept_body FROM request_log) r
          JOIN origins o ON o.id = r.origin_id AND o.organization_id = r.organization_id
          WHERE o.organization_id = ${organizationId} AND r.kept_body IS NOT NULL
          ORDER BY r.at, r.id`.pipe(decodeRows(KeptBodyRow))

      const countryOf = (organizationId: string) =>
        sql`SELECT country FROM organizations WHERE id = ${organizationId}`.pipe(
          decodeFirst(CountryRow),
          Effect.map(Option.map((row) => row.country))
        )

      /**
       * Erasure of the kept bodies that name the lead's phone (by match key) or e-mail. A body that
       * is not a JSON object goes when its text holds the e-mail or the phone's digits: erasing a
       * body too many is the safe side.
       */
      const eraseKeptBodies = (
        organizationId: string,
        country: string,
        lead: { readonly telefono: string | null; readonly email: string | null }
      ) =>
        Effect.gen(function* () {
          const phoneKey = lead.telefono === null ? null : phoneMatchKey(lead.telefono, country)
          const phoneDigits = lead.telefono === null ? null : digitsOf(lead.telefono).slice(-10)
          const email = lead.email?.toLowerCase() ?? null
          const names = (body: string) => {
            const person = personOfBody(body)
            if (
              phoneKey !== null &&
              person.telefono !== null &&
              phoneMatchKey(person.telefono, country) === phoneKey
            )
              return true
            if (email !== null && person.email === email) return true
            return (
              (email !== null && body.toLowerCase().includes(email)) ||
              (phoneDigits !== null && phoneDigits.length >= 8 && digitsOf(body).includes(phoneDigits))
            )
          }
          const gone = (yield* keptBodiesOf(organizationId))
            .filter((kept) => names(kept.body))
            .map((kept) => kept.id)
          if (gone.length === 0) return 0
          // request_log first: a row the janitor moves meanwhile is then found in logged_requests.
          let erased = 0
          for (const table of ["request_log", "logged_requests"])
            erased += yield* sql`
              WITH gone AS (
                UPDATE ${sql(table)} SET kept_body = NULL
                WHERE organization_id = ${organizationId} AND id = ANY(${gone}::bigint[]) AND kept_body IS NOT NULL
                RETURNING 1
              )
              SELECT count(*)::int AS n FROM gone`.pipe(countOf, Effect.orDie)
          return erased
        })

      return PersonalData.of({
        keptBodies: Effect.fn("PersonalData.keptBodies")(function* (organizationId, phone) {
          const country = yield* countryOf(organizationId)
          if (Option.isNone(country))
            return yield* new UnknownEntity({ entity: "organization", id: organizationId })
          if (!isAcceptablePhone(phone)) return yield* badPhone()
          const matchKey = phoneMatchKey(phone, country.value)
          return (yield* keptBodiesOf(organizationId))
            .filter((kept) => {
              const { telefono } = personOfBody(kept.body)
              return telefono !== null && phoneMatchKey(telefono, country.value) === matchKey
            })
            .map(({ id: _, ...kept }) => ({ ...kept, at: iso(kept.at) }))
        }),

        findByPhone: Effect.fn("PersonalData.findByPhone")(function* (organizationId, phone) {
          const organization = yield* sql`
            SELECT country FROM organizations WHERE id = ${organizationId}`.pipe(decodeFirst(CountryRow))
          if (Option.isNone(organization))
            return yield* new UnknownEntity({ entity: "organization", id: organizationId })
          if (!isAcceptablePhone(phone)) return yield* badPhone()
          // A live lead before a test lead with the same phone (docs/contract.md#10-test-mode).
          const matchKey = phoneMatchKey(phone, organization.value.country)
          const lead = yield* sql`
            SELECT id FROM leads
            WHERE organization_id = ${organizationId}
              AND phone_key IN (lead_match_key(${matchKey}, true), lead_match_key(${matchKey}, false))
            ORDER BY livemode DESC`.pipe(decodeFirst(IdRow))
          if (Option.isNone(lead)) return yield* noLeadWithPhone(organizationId)
          yield* Effect.annotateCurrentSpan({ "lead.id": lead.value.id })
          return lead.value.id
        }),

        export: Effect.fn("PersonalData.export")(function* (leadId) {
          yield* Effect.annotateCurrentSpan({ "lead.id": leadId })
          const exportedAt = yield* Clock.currentTimeMillis
          const read = Effect.gen(function* () {
            yield* sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`
            const found = yield* readLead(leadId).pipe(Effect.provideService(SqlClient.SqlClient, sql))
            if (Option.isNone(found)) return Option.none()
            const { lead, notes, tasks, events } = found.value
            const organizationId = lead.organization_id
            const requests = yield* sql`
              SELECT request_id, at, origin_id, key_prefix, status, outcome, idempotency_key, duration_ms
              FROM (SELECT ${loggedColumns} FROM logged_requests UNION ALL SELECT ${loggedColumns} FROM request_log) r
              WHERE organization_id = ${organizationId} AND lead_id = ${leadId}
              ORDER BY at, id`.pipe(decodeRows(RequestRow))
            const replies = yield* sql`
              SELECT origin_id, key, http_status, response, completed_at FROM idempotency_keys
              WHERE organization_id = ${organizationId} AND state = 'completed'
                AND response ->> 'lead_id' = ${leadId}
              UNION ALL
              SELECT origin_id, key, http_status, response, completed_at FROM test_idempotency_keys
              WHERE organization_id = ${organizationId} AND state = 'completed'
                AND response ->> 'lead_id' = ${leadId}
              ORDER BY completed_at, key`.pipe(decodeRows(ReplyRow))
            const deliveries = yield* sql`
              SELECT d.endpoint_id, w.url, d.event_id, d.type, d.state, d.attempts, d.last_status, d.last_error,
                     d.created_at, d.last_attempt_at, d.next_attempt_at, d.delivered_at
              FROM webhook_deliveries d
              JOIN outbox_events o ON o.id = d.outbox_id AND o.organization_id = d.organization_id
              JOIN webhook_endpoints w ON w.id = d.endpoint_id AND w.organization_id = d.organization_id
              WHERE d.organization_id = ${organizationId} AND o.lead_id = ${leadId}
              ORDER BY d.created_at, d.outbox_id, w.created_at, d.endpoint_id`.pipe(decodeRows(DeliveryRow))
            const attempts = yield* sql`
              SELECT a.endpoint_id, a.event_id, a.at, a.status, a.error, a.duration_ms
              FROM webhook_deliveries d
              JOIN outbox_events o ON o.id = d.outbox_id AND o.organization_id = d.organization_id
              JOIN webhook_attempts a ON a.organization_id = o.organization_id
                AND a.endpoint_id = d.endpoint_id AND a.event_id = d.event_id
              WHERE d.organization_id = ${organizationId} AND o.lead_id = ${leadId}
              ORDER BY d.created_at, d.outbox_id, a.endpoint_id, a.attempt`.pipe(decodeRows(AttemptRow))
            const erasure = yield* erasureOf(leadId)
            return Option.some({
              exported_at: new Date(exportedAt).toISOString(),
              lead: {
                id: lead.id,
                organization_id: lead.organization_id,
                origin_id: lead.origin_id,
                origin: lead.origin_label,
                nombre: lead.nombre,
                telefono: lead.telefono,
                phone_key: lead.phone_key,
                email: lead.email,
                property: lead.property,
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
              webhook_deliveries: deliveries.map((d) => ({
                ...d,
                created_at: iso(d.created_at),
                last_attempt_at: isoOrNull(d.last_attempt_at),
                next_attempt_at: isoOrNull(d.next_attempt_at),
                delivered_at: isoOrNull(d.delivered_at)
              })),
              webhook_attempts: attempts.map((a) => ({ ...a, at: iso(a.at) })),
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
            // The lead's organization first, then its row locked by both keys: a lock names the
            // row's organization on Citus, where `leads` is distributed by it.
            const owner =
              yield* sql`SELECT organization_id AS id FROM leads WHERE id = ${request.leadId}`.pipe(
                decodeFirst(IdRow)
              )
            if (Option.isNone(owner)) return yield* new UnknownEntity({ entity: "lead", id: request.leadId })
            const found = yield* sql`
              SELECT organization_id, nombre, telefono, email, erased_at, livemode FROM leads
              WHERE organization_id = ${owner.value.id} AND id = ${request.leadId} FOR UPDATE`.pipe(
              decodeFirst(ErasingLeadRow)
            )
            if (Option.isNone(found)) return yield* new UnknownEntity({ entity: "lead", id: request.leadId })
            const lead = found.value
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
              removed[step.table] = yield* step.erase(lead.organization_id, request.leadId).pipe(Effect.orDie)
            }
            const country = yield* countryOf(lead.organization_id)
            removed.kept_bodies = yield* eraseKeptBodies(
              lead.organization_id,
              Option.getOrElse(country, () => "MX"),
              lead
            )
            yield* sql`
              UPDATE leads
              SET nombre = NULL, telefono = NULL, phone_key = NULL, email = NULL, property_id = NULL,
                  assignee_id = NULL, erased_at = ${now}, updated_at = ${now}
              WHERE organization_id = ${lead.organization_id} AND id = ${request.leadId}`.pipe(Effect.orDie)
            removed.leads = 1
            yield* sql`
              INSERT INTO lead_erasures (lead_id, organization_id, erased_at, erased_by, reason, removed)
              VALUES (${request.leadId}, ${lead.organization_id}, ${now}, ${request.actor.trim()},
                      ${request.reason.trim()}, ${JSON.stringify(removed)}::jsonb)`.pipe(Effect.orDie)
            yield* addOutboxEvent(sql, lead.organization_id, {
              lead_id: request.leadId,
              type: "lead.erased",
              payload: { erased: true },
              now,
              livemode: lead.livemode,
              filled: null,
              snapshot: null
            }).pipe(Effect.orDie)
            return { id: request.leadId, erased_at: iso(now), already_erased: false } satisfies Erased
          })
          const erased = yield* sql.withTransaction(erase).pipe(Effect.catchTag("SqlError", Effect.die))
          yield* Effect.annotateCurrentSpan({ "lead.already_erased": erased.already_erased })
          if (!erased.already_erased)
            yield* Effect.logInfo("lead erased").pipe(Effect.annotateLogs({ lead_id: erased.id }))
          return erased
        }),

        erasure: Effect.fn("PersonalData.erasure")(function* (leadId) {
          return yield* erasureOf(leadId)
        }),

        erasures: Effect.fn("PersonalData.erasures")(function* (organizationId, limit) {
          yield* requireExisting(sql, "organization", organizationId)
          const rows = yield* sql`
            SELECT lead_id, organization_id, erased_at, erased_by, reason, removed FROM lead_erasures
            WHERE organization_id = ${organizationId}
            ORDER BY erased_at DESC, lead_id
            LIMIT ${limit}`.pipe(decodeRows(ErasureRecordRow))
          return rows.map(toErasure)
        })
      })
    })
  )
}
