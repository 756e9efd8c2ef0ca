import { Clock, Context, Effect, Exit, Layer, Option, Schema } from "effect"
import { SqlClient, type SqlError, SqlSchema } from "effect/sql"
import { UnknownEntity } from "../Domain/Errors.ts"
import {
  fillableFieldNames,
  LeadInput,
  noteBody,
  type StoredLeadFields,
  storedFieldsOf
} from "../Domain/LeadInput.ts"
import { idempotencySlot, idempotencySlotParts, MemoryStore } from "../Platform/MemoryStore.ts"
import { countOf, IdRow, requireExisting } from "../Platform/Sql/Decode.ts"
import {
  type OutcomeUnknown,
  type StoreUnavailable,
  sqlStateOf,
  writeOrFail
} from "../Platform/Sql/Outcome.ts"
import { sqlService } from "../Platform/SqlService.ts"
import {
  annotated,
  foundOf,
  type Reservation,
  releaseIn,
  reservationTimes,
  reserveIn,
  StoredResponse
} from "./IdempotencyStore.ts"
import { readLead } from "./LeadRecord.ts"
import { activePropertyIn, UnknownProperty } from "./PropertyCatalog.ts"

export interface LeadWrite {
  readonly requestId: string
  readonly organizationId: string
  readonly originId: string
  /** A test key's write: it meets only test leads, is never assigned and sets off no task. */
  readonly livemode: boolean
  /** The request's fields; its `propiedad` is resolved by the write itself (422 when it names no active property). */
  readonly input: LeadInput
  readonly phoneKey: string | null
  /** The reservation this write completes, so its response is stored in the same transaction. */
  readonly idempotency: { readonly key: string; readonly token: string } | null
}

/** A write behind an Idempotency-Key: the reservation it takes (`token`) and the request's fingerprint. */
export interface KeyedLeadWrite extends LeadWrite {
  readonly idempotency: { readonly key: string; readonly token: string }
  readonly fingerprint: string
}

/** What a keyed write did: reserved its key and wrote the lead, or found the key's earlier use and wrote nothing. */
export type KeyedWritten =
  | { readonly _tag: "Written"; readonly written: LeadWritten }
  | Exclude<Reservation, { readonly _tag: "Reserved" }>

/**
 * A lead field a write set: on creation the ones given, on enrichment the empty ones it filled (of
 * `fillableFieldNames`, and the property), in byte order.
 */
export const FilledField = Schema.Literals([...fillableFieldNames, "property"])
export type FilledField = typeof FilledField.Type

export interface LeadWritten {
  readonly leadId: string
  readonly outcome: "created" | "enriched"
  readonly assigneeId: string | null
  readonly filled: ReadonlyArray<FilledField>
}

/** A lead as `lead show` reads it: its stored fields (each null once the lead is erased) and what hangs on it. */
export interface LeadDetail extends StoredLeadFields {
  readonly id: string
  readonly organization_id: string
  readonly origin: string
  readonly property_id: string | null
  readonly property_codigo: string | null
  readonly assignee_id: string | null
  readonly assignee_name: string | null
  readonly created_at: Date
  readonly livemode: boolean
  readonly notes: ReadonlyArray<{ readonly body: string; readonly created_at: Date }>
  readonly tasks: ReadonlyArray<{
    readonly kind: string
    readonly assignee_id: string | null
    readonly assignee_name: string | null
    readonly due_at: Date
  }>
  readonly events: ReadonlyArray<{ readonly type: string; readonly created_at: Date }>
}

export interface LeadSummary {
  readonly id: string
  readonly nombre: string | null
  readonly telefono: string | null
  readonly email: string | null
  readonly origin: string
  readonly created_at: Date
}

export const firstContactMillis = 15 * 60 * 1000

/**
 * One write as the SQL write functions (`lead_write`, `lead_write_keyed`, `lead_rescue` in
 * migrations/functions.ts) and the memory fake both read it: the request's input whole, as
 * normalised, with who writes it, when, its phone's match key, its note and the Idempotency-Key's
 * reservation it completes. The functions take it as one `jsonb` argument beside the organization,
 * so a new field of the lead changes `LeadFields` (src/Domain/LeadInput.ts) and the table, not a
 * signature or a statement.
 */
export const LeadWriteDocument = Schema.Struct({
  origin_id: Schema.String,
  /** A test key's write: it meets only test leads, is never assigned and sets off no task. */
  livemode: Schema.Boolean,
  request_id: Schema.String,
  /** Its `propiedad` is resolved by the write itself (P0005, 422, when it names no active property). */
  input: LeadInput,
  phone_key: Schema.NullOr(Schema.String),
  note: Schema.NullOr(Schema.String),
  now: Schema.DateFromString,
  /** When the first-contact task a created live lead gets falls due. */
  due_at: Schema.DateFromString,
  idempotency: Schema.NullOr(Schema.Struct({ key: Schema.String, token: Schema.String }))
})
export type LeadWriteDocument = typeof LeadWriteDocument.Type

/** `lead_write_keyed`'s document: the reservation it takes, with the request's fingerprint and its times. */
export const KeyedLeadWriteDocument = Schema.Struct({
  ...LeadWriteDocument.fields,
  idempotency: Schema.Struct({
    key: Schema.String,
    token: Schema.String,
    fingerprint: Schema.String,
    lease_expires_at: Schema.DateFromString,
    forget_before: Schema.DateFromString
  })
})

/** `lead_rescue`'s document: the write, for the request-log row it rescues. */
export const RescueDocument = Schema.Struct({ ...LeadWriteDocument.fields, request_log_id: Schema.String })

/** The document of `write` made at `now` (clock millis): what both layers write from. */
export const documentOf = (write: LeadWrite, now: number): LeadWriteDocument => ({
  origin_id: write.originId,
  livemode: write.livemode,
  request_id: write.requestId,
  input: write.input,
  phone_key: write.phoneKey,
  note: noteBody(write.input),
  now: new Date(now),
  due_at: new Date(now + firstContactMillis),
  idempotency: write.idempotency
})

/** What a write did (`lead_write`'s answer). */
const Written = Schema.Struct({
  lead_id: Schema.String,
  created: Schema.Boolean,
  assignee_id: Schema.NullOr(Schema.String),
  filled: Schema.Array(FilledField)
})

/** `lead_write_keyed`'s answer: what the reservation found, and what the write did (none when nothing was written). */
const KeyedAnswer = Schema.Struct({
  reserved: Schema.Boolean,
  state: Schema.NullOr(Schema.Literals(["in_progress", "completed"])),
  fingerprint: Schema.NullOr(Schema.String),
  response: Schema.NullOr(StoredResponse),
  written: Schema.NullOr(Written)
})

const SummaryRow = Schema.Struct({
  id: Schema.String,
  nombre: Schema.NullOr(Schema.String),
  telefono: Schema.NullOr(Schema.String),
  email: Schema.NullOr(Schema.String),
  origin: Schema.String,
  created_at: Schema.Date
})

/** `lead_write`'s and `lead_rescue`'s word that the request's property does not resolve: nothing was written. */
const unknownPropertyState = "P0005"

/**
 * Leads and everything a write sets off. `createOrEnrich` is one round trip (`lead_write` in
 * migrations/functions.ts: the request's property resolved, then `lead_create_or_enrich`), so a
 * lead, its note, task, outbox event, capture assignment and stored idempotent response commit
 * together or not at all, and a property that does not resolve writes nothing (`UnknownProperty`);
 * the unique (organization, phone key) index decides races, not timing, and only a real creation
 * takes a round-robin turn. Test leads
 * (docs/contract.md#10-test-mode) live beside live ones and never meet them (`lead_match_key` keeps a test
 * lead's phone key apart); `purgeTest` removes an organization's test leads with everything
 * hanging on them.
 */
export class LeadRepository extends Context.Service<
  LeadRepository,
  {
    findMatch(
      organizationId: string,
      livemode: boolean,
      phoneKey: string
    ): Effect.Effect<Option.Option<string>, StoreUnavailable>
    createOrEnrich(
      write: LeadWrite
    ): Effect.Effect<LeadWritten, UnknownProperty | StoreUnavailable | OutcomeUnknown>
    /**
     * `createOrEnrich` behind its Idempotency-Key, in one statement and one transaction
     * (`lead_write_keyed`): the key's lock taken (so a request with the same key meanwhile
     * finds it in progress) and the key reserved for `write.idempotency.token`, then the write; a key
     * that is not free comes back as what its reservation found, and nothing is written. A write that
     * fails rolls back with its reservation, so the caller releases nothing; a lost answer
     * (`OutcomeUnknown`) is settled as any write's (`IdempotencyStore.settle`).
     */
    createOrEnrichKeyed(
      write: KeyedLeadWrite
    ): Effect.Effect<KeyedWritten, UnknownProperty | StoreUnavailable | OutcomeUnknown>
    /**
     * The same write as `createOrEnrich`, for a rescue of the request-log row `requestLogId`: done
     * only while that row keeps its body and names no lead, and marked on it in the same transaction
     * (`lead_rescue`); none when the row was rescued already, or keeps nothing.
     */
    rescue(
      write: LeadWrite,
      requestLogId: string
    ): Effect.Effect<Option.Option<LeadWritten>, UnknownProperty | StoreUnavailable | OutcomeUnknown>
    show(id: string): Effect.Effect<LeadDetail, UnknownEntity>
    list(
      organizationId: string,
      limit: number,
      livemode?: boolean
    ): Effect.Effect<ReadonlyArray<LeadSummary>, UnknownEntity>
    /** Removes the organization's test leads, their notes, tasks, events, deliveries and idempotency records. */
    purgeTest(organizationId: string): Effect.Effect<number, UnknownEntity>
  }
>()("lead-intake/LeadRepository") {
  static readonly layer = Layer.effect(
    LeadRepository,
    Effect.gen(function* () {
      const { sql, read, readOrFail, fn } = yield* sqlService

      const findMatch = SqlSchema.findOneOption({
        Request: Schema.Struct({
          organizationId: Schema.String,
          livemode: Schema.Boolean,
          phoneKey: Schema.String
        }),
        Result: IdRow,
        execute: ({ organizationId, livemode, phoneKey }) =>
          read`
            SELECT id FROM leads
            WHERE organization_id = ${organizationId} AND phone_key = lead_match_key(${phoneKey}, ${livemode})`
      })
      const decodeWritten = Schema.decodeUnknownEffect(Written)
      const decodeKeyed = Schema.decodeUnknownEffect(KeyedAnswer)
      const decodeRescued = Schema.decodeUnknownEffect(Schema.NullOr(Written))
      /** P0005 as a value, so that it reaches the caller as `UnknownProperty` rather than as an SQL failure. */
      const noProperty = Symbol("noProperty")
      const propertyResolved = <A, R>(self: Effect.Effect<A, SqlError.SqlError | Schema.SchemaError, R>) =>
        Effect.catchIf(
          self,
          (error) => error._tag === "SqlError" && sqlStateOf(error.reason.cause) === unknownPropertyState,
          () => Effect.succeed(noProperty)
        )
      // Each a statement `SELECT f($1, $2)`, the organization first and the write's document encoded
      // by its Schema: a call Citus hands whole to the node holding the organization.
      const encodeWrite = Schema.encodeEffect(LeadWriteDocument)
      const encodeKeyed = Schema.encodeEffect(KeyedLeadWriteDocument)
      const encodeRescue = Schema.encodeEffect(RescueDocument)
      const write = (lead: LeadWrite, now: number) =>
        encodeWrite(documentOf(lead, now)).pipe(
          Effect.flatMap(
            (document) => sql<{ readonly answer: unknown }>`
              SELECT lead_write(${lead.organizationId}, ${JSON.stringify(document)}::jsonb) AS answer`
          ),
          Effect.flatMap(([row]) => decodeWritten(row?.answer)),
          propertyResolved
        )
      const keyedWrite = (lead: KeyedLeadWrite, now: number) => {
        const times = reservationTimes(now)
        return encodeKeyed({
          ...documentOf(lead, now),
          idempotency: {
            ...lead.idempotency,
            fingerprint: lead.fingerprint,
            lease_expires_at: times.leaseExpiresAt,
            forget_before: times.forgetBefore
          }
        }).pipe(
          Effect.flatMap(
            (document) => sql<{ readonly answer: unknown }>`
              SELECT lead_write_keyed(${lead.organizationId}, ${JSON.stringify(document)}::jsonb) AS answer`
          ),
          Effect.flatMap(([row]) => decodeKeyed(row?.answer)),
          propertyResolved
        )
      }
      const rescueWrite = (lead: LeadWrite, now: number, requestLogId: string) =>
        encodeRescue({ ...documentOf(lead, now), idempotency: null, request_log_id: requestLogId }).pipe(
          Effect.flatMap(
            (document) => sql<{ readonly answer: unknown }>`
              SELECT lead_rescue(${lead.organizationId}, ${JSON.stringify(document)}::jsonb) AS answer`
          ),
          Effect.flatMap(([row]) => decodeRescued(row?.answer)),
          propertyResolved
        )
      const writtenOf = (row: typeof Written.Type): LeadWritten => ({
        leadId: row.lead_id,
        outcome: row.created ? "created" : "enriched",
        assigneeId: row.assignee_id,
        filled: row.filled
      })
      const annotateWritten = (written: LeadWritten) =>
        Effect.annotateCurrentSpan({
          "lead.id": written.leadId,
          "lead.outcome": written.outcome,
          "capture.assignee_id": written.assigneeId ?? "unassigned"
        })
      /** A keyed write's value: what the reservation found, else what the write did. */
      const keyedOf = (
        lead: KeyedLeadWrite,
        answer: typeof KeyedAnswer.Type
      ): Effect.Effect<KeyedWritten> => {
        if (!answer.reserved) return Effect.succeed(foundOf(answer, lead.fingerprint))
        if (answer.written === null)
          return Effect.die(new Error("lead_write_keyed reserved its key and wrote no lead"))
        return Effect.succeed({ _tag: "Written", written: writtenOf(answer.written) })
      }
      const findLeads = SqlSchema.findAll({
        Request: Schema.Struct({
          organizationId: Schema.String,
          limit: Schema.Number,
          livemode: Schema.Boolean
        }),
        Result: SummaryRow,
        execute: ({ organizationId, limit, livemode }) => sql`
          SELECT l.id, l.nombre, l.telefono, l.email, o.label AS origin, l.created_at
          FROM leads l JOIN origins o ON o.id = l.origin_id AND o.organization_id = l.organization_id
          WHERE l.organization_id = ${organizationId} AND l.livemode = ${livemode}
          ORDER BY l.created_at DESC, l.id
          LIMIT ${limit}`
      })

      return LeadRepository.of({
        findMatch: fn("LeadRepository.findMatch")(function* (organizationId, livemode, phoneKey) {
          const found = yield* findMatch({ organizationId, livemode, phoneKey }).pipe(
            readOrFail("LeadRepository.findMatch")
          )
          return Option.map(found, (row) => row.id)
        }),

        createOrEnrich: fn("LeadRepository.createOrEnrich")(function* (lead) {
          if (lead.input.propiedad !== null)
            yield* Effect.annotateCurrentSpan("property.by", lead.input.propiedad.by)
          const row = yield* write(lead, yield* Clock.currentTimeMillis).pipe(
            writeOrFail(sql, "LeadRepository.createOrEnrich")
          )
          if (row === noProperty) return yield* new UnknownProperty()
          const written = writtenOf(row)
          yield* annotateWritten(written)
          return written
        }),

        createOrEnrichKeyed: fn("LeadRepository.createOrEnrichKeyed")(function* (lead) {
          if (lead.input.propiedad !== null)
            yield* Effect.annotateCurrentSpan("property.by", lead.input.propiedad.by)
          const row = yield* keyedWrite(lead, yield* Clock.currentTimeMillis).pipe(
            writeOrFail(sql, "LeadRepository.createOrEnrichKeyed")
          )
          if (row === noProperty) return yield* new UnknownProperty()
          const keyed = yield* keyedOf(lead, row)
          if (keyed._tag !== "Written") return yield* annotated(keyed)
          yield* Effect.annotateCurrentSpan("idempotency.result", "new")
          yield* annotateWritten(keyed.written)
          return keyed
        }),

        rescue: fn("LeadRepository.rescue")(function* (lead, requestLogId) {
          const row = yield* rescueWrite(lead, yield* Clock.currentTimeMillis, requestLogId).pipe(
            writeOrFail(sql, "LeadRepository.rescue")
          )
          if (row === noProperty) return yield* new UnknownProperty()
          return row === null ? Option.none() : Option.some(writtenOf(row))
        }),

        show: Effect.fn("LeadRepository.show")(function* (id) {
          const found = yield* readLead(id).pipe(Effect.provideService(SqlClient.SqlClient, sql))
          if (Option.isNone(found)) return yield* new UnknownEntity({ entity: "lead", id })
          const { lead, notes, tasks, events } = found.value
          return {
            id: lead.id,
            organization_id: lead.organization_id,
            origin: lead.origin_label,
            ...storedFieldsOf(lead),
            property_id: lead.property_id,
            property_codigo: lead.property?.codigo ?? null,
            assignee_id: lead.assignee_id,
            assignee_name: lead.assignee_name,
            created_at: lead.created_at,
            livemode: lead.livemode,
            notes: notes.map((note) => ({ body: note.body, created_at: note.created_at })),
            tasks: tasks.map((task) => ({
              kind: task.kind,
              assignee_id: task.assignee_id,
              assignee_name: task.assignee_name,
              due_at: task.due_at
            })),
            events: events.map((event) => ({ type: event.type, created_at: event.created_at }))
          }
        }),

        list: Effect.fn("LeadRepository.list")(function* (organizationId, limit, livemode = true) {
          yield* requireExisting(sql, "organization", organizationId)
          return yield* findLeads({ organizationId, limit, livemode }).pipe(Effect.orDie)
        }),

        purgeTest: Effect.fn("LeadRepository.purgeTest")(function* (organizationId) {
          yield* requireExisting(sql, "organization", organizationId)
          // Deliveries go with their events (ON DELETE CASCADE); the request log keeps its rows.
          return yield* sql
            .withTransaction(
              Effect.gen(function* () {
                yield* sql`
                  DELETE FROM test_idempotency_keys
                  WHERE origin_id IN (SELECT id FROM origins WHERE organization_id = ${organizationId})`
                const doomed = sql`SELECT id FROM leads WHERE organization_id = ${organizationId} AND NOT livemode`
                yield* sql`DELETE FROM outbox_events WHERE lead_id IN (${doomed})`
                yield* sql`DELETE FROM lead_notes WHERE lead_id IN (${doomed})`
                yield* sql`DELETE FROM lead_tasks WHERE lead_id IN (${doomed})`
                yield* sql`DELETE FROM lead_erasures WHERE lead_id IN (${doomed})`
                return yield* sql`
                  WITH gone AS (
                    DELETE FROM leads WHERE organization_id = ${organizationId} AND NOT livemode RETURNING 1
                  )
                  SELECT count(*)::int AS n FROM gone`.pipe(countOf)
              })
            )
            .pipe(Effect.orDie)
        })
      })
    })
  )

  static readonly layerMemory = Layer.effect(
    LeadRepository,
    Effect.gen(function* () {
      const store = yield* MemoryStore
      const at = (millis: number) => new Date(millis)

      const matching = (organizationId: string, livemode: boolean, phoneKey: string | null) =>
        phoneKey === null
          ? undefined
          : [...store.leads.values()].find(
              (lead) =>
                lead.organizationId === organizationId &&
                lead.livemode === livemode &&
                lead.phoneKey === phoneKey
            )

      const assign = (
        organizationId: string,
        write: LeadWriteDocument,
        propertyId: string | null
      ): string | null => {
        const rule = store.rules
          .filter(
            (r) =>
              r.organizationId === organizationId &&
              (r.originId === null || r.originId === write.origin_id) &&
              (r.propertyId === null || r.propertyId === propertyId)
          )
          .sort((a, b) => a.priority - b.priority || a.seq - b.seq)[0]
        if (rule === undefined) return null
        if (!rule.roundRobin) return rule.agentIds[0] ?? null
        const agent = rule.agentIds[rule.rotation % rule.agentIds.length] ?? null
        rule.rotation += 1
        return agent
      }

      /** The write from its document, as `lead_write` reads it. */
      const writeDocument = Effect.fnUntraced(function* (organizationId: string, write: LeadWriteDocument) {
        const now = write.now.getTime()
        const { input } = write
        const propertyId =
          input.propiedad === null ? null : activePropertyIn(store, organizationId, input.propiedad)
        if (propertyId === undefined) return yield* new UnknownProperty()
        if (write.idempotency !== null) {
          const slot = idempotencySlot(write.origin_id, write.livemode, write.idempotency.key)
          const reservation = store.idempotency.get(slot)
          if (reservation?.state !== "in_progress" || reservation.token !== write.idempotency.token)
            return yield* Effect.die(new Error("the idempotency key's reservation is no longer held"))
        }
        const existing = matching(organizationId, write.livemode, write.phone_key)
        const lead = existing ?? {
          id: crypto.randomUUID(),
          organizationId,
          originId: write.origin_id,
          ...storedFieldsOf(input),
          phoneKey: write.phone_key,
          propertyId,
          assigneeId: write.livemode ? assign(organizationId, write, propertyId) : null,
          createdAt: now,
          livemode: write.livemode
        }
        if (existing === undefined) store.leads.set(lead.id, lead)
        if (existing === undefined && write.livemode) {
          store.tasks.push({
            leadId: lead.id,
            kind: "first_contact",
            assigneeId: lead.assigneeId,
            dueAt: write.due_at.getTime(),
            createdAt: now
          })
        }
        // As `lead_create_or_enrich`: the given fields the lead has empty, by name.
        const filled: Array<FilledField> = []
        const given = storedFieldsOf(input)
        for (const name of fillableFieldNames) {
          if (given[name] === null || (existing !== undefined && existing[name] !== null)) continue
          filled.push(name)
          if (existing !== undefined) Object.assign(existing, { [name]: given[name] })
        }
        if (propertyId !== null && (existing === undefined || existing.propertyId === null))
          filled.push("property")
        if (existing !== undefined) existing.propertyId ??= propertyId
        filled.sort()
        if (write.note !== null)
          store.notes.push({ leadId: lead.id, body: write.note, requestId: write.request_id, createdAt: now })
        const outcome = existing === undefined ? "created" : "enriched"
        store.events.push({
          leadId: lead.id,
          organizationId,
          type: `lead.${outcome}`,
          createdAt: now,
          livemode: write.livemode
        })
        if (write.idempotency !== null) {
          const slot = idempotencySlot(write.origin_id, write.livemode, write.idempotency.key)
          const reservation = store.idempotency.get(slot)
          if (reservation?.state === "in_progress") {
            store.idempotency.set(slot, {
              state: "completed",
              fingerprint: reservation.fingerprint,
              token: reservation.token,
              status: outcome === "created" ? 201 : 200,
              response: { lead_id: lead.id, status: outcome },
              completedAt: now
            })
          }
        }
        return { leadId: lead.id, outcome, assigneeId: lead.assigneeId, filled } as const
      })
      const createOrEnrich = Effect.fn("LeadRepository.createOrEnrich")(function* (write: LeadWrite) {
        return yield* writeDocument(write.organizationId, documentOf(write, yield* Clock.currentTimeMillis))
      })

      return LeadRepository.of({
        findMatch: Effect.fn("LeadRepository.findMatch")(function* (organizationId, livemode, phoneKey) {
          return Option.fromNullishOr(matching(organizationId, livemode, phoneKey)?.id)
        }),
        // Rescues live beside the request log's kept bodies, which only PostgreSQL holds.
        rescue: () => Effect.die(new Error("LeadRepository.rescue needs PostgreSQL")),
        createOrEnrich,
        createOrEnrichKeyed: Effect.fn("LeadRepository.createOrEnrichKeyed")(function* (write) {
          const now = yield* Clock.currentTimeMillis
          const slot = {
            organizationId: write.organizationId,
            originId: write.originId,
            livemode: write.livemode,
            key: write.idempotency.key
          }
          const found = reserveIn(store, slot, write.fingerprint, write.idempotency.token, now)
          if (found._tag !== "Reserved") return yield* annotated(found)
          const exit = yield* Effect.exit(writeDocument(write.organizationId, documentOf(write, now)))
          if (Exit.isSuccess(exit)) return { _tag: "Written", written: exit.value } as const
          // As `lead_write_keyed`'s rollback does: a write that fails frees its key.
          releaseIn(store, slot, write.idempotency.token)
          return yield* Effect.failCause(exit.cause)
        }),
        show: Effect.fn("LeadRepository.show")(function* (id) {
          const lead = store.leads.get(id)
          if (lead === undefined) return yield* new UnknownEntity({ entity: "lead", id })
          return {
            id: lead.id,
            organization_id: lead.organizationId,
            origin: store.origins.get(lead.originId)?.label ?? "",
            ...storedFieldsOf(lead),
            property_id: lead.propertyId,
            property_codigo:
              lead.propertyId === null ? null : (store.properties.get(lead.propertyId)?.codigo ?? null),
            assignee_id: lead.assigneeId,
            assignee_name:
              lead.assigneeId === null ? null : (store.agents.get(lead.assigneeId)?.name ?? null),
            created_at: at(lead.createdAt),
            livemode: lead.livemode,
            notes: store.notes
              .filter((n) => n.leadId === id)
              .map((n) => ({ body: n.body, created_at: at(n.createdAt) })),
            tasks: store.tasks
              .filter((t) => t.leadId === id)
              .map((t) => ({
                kind: t.kind,
                assignee_id: t.assigneeId,
                assignee_name: t.assigneeId === null ? null : (store.agents.get(t.assigneeId)?.name ?? null),
                due_at: at(t.dueAt)
              })),
            events: store.events
              .filter((e) => e.leadId === id)
              .map((e) => ({ type: e.type, created_at: at(e.createdAt) }))
          }
        }),
        list: Effect.fn("LeadRepository.list")(function* (organizationId, limit, livemode = true) {
          if (!store.organizations.has(organizationId)) {
            return yield* new UnknownEntity({ entity: "organization", id: organizationId })
          }
          return [...store.leads.values()]
            .filter((lead) => lead.organizationId === organizationId && lead.livemode === livemode)
            .sort((a, b) => b.createdAt - a.createdAt)
            .slice(0, limit)
            .map((lead) => ({
              id: lead.id,
              nombre: lead.nombre,
              telefono: lead.telefono,
              email: lead.email,
              origin: store.origins.get(lead.originId)?.label ?? "",
              created_at: at(lead.createdAt)
            }))
        }),
        purgeTest: Effect.fn("LeadRepository.purgeTest")(function* (organizationId) {
          if (!store.organizations.has(organizationId)) {
            return yield* new UnknownEntity({ entity: "organization", id: organizationId })
          }
          const doomed = new Set(
            [...store.leads.values()]
              .filter((lead) => lead.organizationId === organizationId && !lead.livemode)
              .map((lead) => lead.id)
          )
          for (const id of doomed) store.leads.delete(id)
          const keep = <T extends { readonly leadId: string }>(rows: Array<T>) => {
            const kept = rows.filter((row) => !doomed.has(row.leadId))
            rows.splice(0, rows.length, ...kept)
          }
          keep(store.notes)
          keep(store.tasks)
          keep(store.events)
          const origins = new Set(
            [...store.origins.values()].filter((o) => o.organizationId === organizationId).map((o) => o.id)
          )
          for (const slot of store.idempotency.keys()) {
            const { originId, livemode } = idempotencySlotParts(slot)
            if (!livemode && origins.has(originId)) store.idempotency.delete(slot)
          }
          return doomed.size
        })
      })
    })
  )
}
