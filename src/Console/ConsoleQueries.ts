import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { isAcceptablePhone, phoneMatchKey } from "../Domain/Phone.ts"
import { MemoryStore } from "../Platform/MemoryStore.ts"
import { decodeFirst, decodeRows, IdRow } from "../Platform/Sql.ts"
import type { Operator } from "./Operators.ts"

export interface OrganizationRow {
  readonly id: string
  readonly name: string
  readonly country: string
}

export interface RequestRow {
  readonly request_id: string
  readonly at: string
  readonly status: number
  readonly outcome: string
  readonly lead_id: string | null
  readonly key_prefix: string | null
  readonly idempotency_key: string | null
  readonly duration_ms: number
  readonly origin_id: string | null
  readonly origin_label: string | null
  /** False: a request made with a test key (docs/contract.md#10-test-mode). */
  readonly livemode: boolean
}

export type RequestScope =
  | { readonly _tag: "organization"; readonly organizationId: string }
  | { readonly _tag: "origin"; readonly originId: string }
  | { readonly _tag: "unattributed" }

export interface RequestFilter {
  readonly statusClass?: "2xx" | "4xx" | "5xx" | undefined
  readonly outcome?: string | undefined
  readonly from?: Date | undefined
  readonly to?: Date | undefined
  readonly requestId?: string | undefined
  readonly idempotencyKey?: string | undefined
  /** Live requests (the default) or test requests only: the two are never listed together. */
  readonly livemode?: boolean | undefined
}

export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly nextCursor: string | null
}

export interface PropertyRow {
  readonly id: string
  readonly codigo: string
  readonly external_code: string | null
  readonly archived: boolean
  readonly created_at: string
}

export interface RuleRow {
  readonly id: string
  readonly priority: number
  readonly origin: { readonly id: string; readonly label: string } | null
  readonly property: { readonly id: string; readonly codigo: string } | null
  readonly agents: ReadonlyArray<{ readonly id: string; readonly name: string }>
  readonly round_robin: boolean
}

const OrganizationRecord = Schema.Struct({ id: Schema.String, name: Schema.String, country: Schema.String })

const RequestRecord = Schema.Struct({
  id: Schema.String,
  request_id: Schema.String,
  at: Schema.Date,
  status: Schema.Number,
  outcome: Schema.String,
  lead_id: Schema.NullOr(Schema.String),
  key_prefix: Schema.NullOr(Schema.String),
  idempotency_key: Schema.NullOr(Schema.String),
  duration_ms: Schema.Number,
  origin_id: Schema.NullOr(Schema.String),
  origin_label: Schema.NullOr(Schema.String),
  livemode: Schema.Boolean
})

const PropertyRecord = Schema.Struct({
  id: Schema.String,
  codigo: Schema.String,
  external_code: Schema.NullOr(Schema.String),
  archived: Schema.Boolean,
  created_at: Schema.Date
})

const MinuteCount = Schema.Struct({
  minute: Schema.Date,
  origin_id: Schema.String,
  label: Schema.String,
  count: Schema.Number
})
const DayCount = Schema.Struct({ day: Schema.String, created: Schema.Number, enriched: Schema.Number })
const CodeCount = Schema.Struct({ code: Schema.String, count: Schema.Number })

const OriginRecord = Schema.Struct({
  id: Schema.String,
  label: Schema.String,
  prefix: Schema.NullOr(Schema.String),
  created_at: Schema.Date,
  last_used_at: Schema.NullOr(Schema.Date),
  requests_24h: Schema.Number,
  rate_limit: Schema.Number,
  revoked: Schema.Boolean,
  test_prefix: Schema.NullOr(Schema.String)
})

const LeadSummaryRecord = Schema.Struct({
  id: Schema.String,
  nombre: Schema.NullOr(Schema.String),
  telefono: Schema.NullOr(Schema.String),
  email: Schema.NullOr(Schema.String),
  origin_id: Schema.String,
  origin_label: Schema.String,
  created_at: Schema.Date
})

const LeadRecord = Schema.Struct({
  id: Schema.String,
  nombre: Schema.NullOr(Schema.String),
  telefono: Schema.NullOr(Schema.String),
  email: Schema.NullOr(Schema.String),
  origin_id: Schema.String,
  origin_label: Schema.String,
  property_id: Schema.NullOr(Schema.String),
  codigo: Schema.NullOr(Schema.String),
  assignee_id: Schema.NullOr(Schema.String),
  assignee_name: Schema.NullOr(Schema.String),
  created_at: Schema.Date,
  updated_at: Schema.Date,
  erased_at: Schema.NullOr(Schema.Date),
  livemode: Schema.Boolean
})
const NoteRecord = Schema.Struct({ body: Schema.String, created_at: Schema.Date })
const TaskRecord = Schema.Struct({
  kind: Schema.String,
  assignee: Schema.NullOr(Schema.String),
  due_at: Schema.Date
})
const EventRecord = Schema.Struct({ type: Schema.String, created_at: Schema.Date })

const AgentRecord = Schema.Struct({ id: Schema.String, name: Schema.String })

const RuleRecord = Schema.Struct({
  id: Schema.String,
  priority: Schema.Number,
  origin_id: Schema.NullOr(Schema.String),
  origin_label: Schema.NullOr(Schema.String),
  property_id: Schema.NullOr(Schema.String),
  codigo: Schema.NullOr(Schema.String),
  agents: Schema.Array(AgentRecord),
  round_robin: Schema.Boolean
})

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** An id that is not a UUID names nothing: the same 404 as an id of another organization. */
export const isUuid = (id: string) => uuidPattern.test(id)

const iso = (date: Date) => date.toISOString()

/** Keyset cursors: the last row's sort key, opaque to the client. */
const encodeCursor = (at: Date, id: string) =>
  Buffer.from(JSON.stringify([iso(at), id])).toString("base64url")

type CursorKind = "request" | "lead"

const cursorIdPatterns: Record<CursorKind, RegExp> = { request: /^[0-9]{1,18}$/, lead: uuidPattern }

const decodeCursor = (
  cursor: string | undefined,
  kind: CursorKind
): Option.Option<readonly [Date, string]> => {
  if (cursor === undefined) return Option.none()
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as [unknown, unknown]
    const date = typeof at === "string" ? new Date(at) : new Date(Number.NaN)
    return Number.isNaN(date.getTime()) || typeof id !== "string" || !cursorIdPatterns[kind].test(id)
      ? Option.none()
      : Option.some([date, id] as const)
  } catch {
    return Option.none()
  }
}

export const isValidCursor = (cursor: string | undefined, kind: CursorKind) =>
  cursor === undefined || Option.isSome(decodeCursor(cursor, kind))

const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

const day = 24 * 60 * 60 * 1000

/**
 * What the console reads that the domain services do not answer (lists with counts, filters and
 * cursors, a lead with its names), plus the two console actions they lack: restoring a property
 * and deleting a capture rule. Every read is scoped by organization.
 */
export class ConsoleQueries extends Context.Service<
  ConsoleQueries,
  {
    organizationsFor(operator: Operator): Effect.Effect<ReadonlyArray<OrganizationRow>>
    /** The organization an operator acts on: its own, or for a platform administrator the one asked for (or the first by name). */
    organizationFor(
      operator: Operator,
      requested: string | undefined
    ): Effect.Effect<Option.Option<OrganizationRow>>
    /** Live data only: what test keys send is left out of every figure. */
    overview(organizationId: string): Effect.Effect<{
      readonly requests_per_minute: ReadonlyArray<{
        minute: string
        origin_id: string
        label: string
        count: number
      }>
      readonly leads_per_day: ReadonlyArray<{ day: string; created: number; enriched: number }>
      readonly error_codes: ReadonlyArray<{ code: string; count: number }>
    }>
    /** Each origin with its live key and active test key; its figures count live requests only. */
    origins(organizationId: string): Effect.Effect<
      ReadonlyArray<{
        id: string
        label: string
        prefix: string | null
        created_at: string
        last_used_at: string | null
        requests_24h: number
        rate_limit: number
        revoked: boolean
        test_prefix: string | null
      }>
    >
    owns(
      organizationId: string,
      entity: "origin" | "property" | "agent" | "rule" | "lead",
      id: string
    ): Effect.Effect<boolean>
    requests(
      scope: RequestScope,
      filter: RequestFilter,
      page: { readonly cursor?: string | undefined; readonly limit: number }
    ): Effect.Effect<Page<RequestRow>>
    /** A request of the organization (or, for a platform administrator, an unattributed one). */
    request(
      organizationId: string,
      requestId: string,
      includeUnattributed: boolean
    ): Effect.Effect<Option.Option<RequestRow>>
    /** Live leads, or with `livemode` false the test leads instead. */
    leads(
      organization: OrganizationRow,
      query: string,
      page: { readonly cursor?: string | undefined; readonly limit: number },
      livemode?: boolean
    ): Effect.Effect<
      Page<{
        id: string
        nombre: string | null
        telefono: string | null
        email: string | null
        origin: { id: string; label: string }
        created_at: string
      }>
    >
    lead(organizationId: string, id: string): Effect.Effect<Option.Option<LeadDetailRow>>
    properties(organizationId: string, query: string): Effect.Effect<ReadonlyArray<PropertyRow>>
    property(organizationId: string, id: string): Effect.Effect<Option.Option<PropertyRow>>
    agents(organizationId: string): Effect.Effect<ReadonlyArray<{ id: string; name: string }>>
    rules(organizationId: string): Effect.Effect<ReadonlyArray<RuleRow>>
    deleteRule(organizationId: string, id: string): Effect.Effect<boolean>
  }
>()("lead-intake/ConsoleQueries") {
  static readonly layer = Layer.effect(
    ConsoleQueries,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const tables = {
        origin: sql("origins"),
        property: sql("properties"),
        agent: sql("agents"),
        rule: sql("capture_rules"),
        lead: sql("leads")
      }

      const requestView = ({ id: _, ...row }: typeof RequestRecord.Type): RequestRow => ({
        ...row,
        at: iso(row.at)
      })
      const requestColumns = sql`r.id::text AS id, r.request_id, r.at, r.status, r.outcome, r.lead_id, r.key_prefix,
        r.idempotency_key, r.duration_ms, r.origin_id, o.label AS origin_label, r.livemode`

      const propertyView = (row: typeof PropertyRecord.Type): PropertyRow => ({
        ...row,
        created_at: iso(row.created_at)
      })

      const organizationFor = Effect.fn("ConsoleQueries.organizationFor")(function* (
        operator: Operator,
        requested: string | undefined
      ) {
        const wanted = operator.organizationId ?? requested
        if (wanted !== undefined && !isUuid(wanted)) return Option.none()
        return yield* sql`
          SELECT id, name, country FROM organizations
          ${wanted === undefined ? sql`` : sql`WHERE id = ${wanted}`}
          ORDER BY name, id LIMIT 1`.pipe(decodeFirst(OrganizationRecord))
      })

      return ConsoleQueries.of({
        organizationsFor: Effect.fn("ConsoleQueries.organizationsFor")(function* (operator) {
          return yield* sql`
            SELECT id, name, country FROM organizations
            ${operator.organizationId === null ? sql`` : sql`WHERE id = ${operator.organizationId}`}
            ORDER BY name, id`.pipe(decodeRows(OrganizationRecord))
        }),
        organizationFor,
        overview: Effect.fn("ConsoleQueries.overview")(function* (organizationId) {
          const now = yield* Clock.currentTimeMillis
          const since = new Date(now - day)
          const perMinute = yield* sql`
            SELECT date_trunc('minute', r.at) AS minute, r.origin_id, o.label, count(*)::int AS count
            FROM request_log r JOIN origins o ON o.id = r.origin_id
            WHERE o.organization_id = ${organizationId} AND r.at > ${since} AND r.livemode
            GROUP BY 1, 2, 3 ORDER BY 1, 3`.pipe(decodeRows(MinuteCount))
          const perDay = yield* sql`
            SELECT to_char(date_trunc('day', created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day,
                   count(*) FILTER (WHERE type = 'lead.created')::int AS created,
                   count(*) FILTER (WHERE type = 'lead.enriched')::int AS enriched
            FROM outbox_events
            WHERE organization_id = ${organizationId} AND created_at > ${new Date(now - 30 * day)} AND livemode
            GROUP BY 1 ORDER BY 1`.pipe(decodeRows(DayCount))
          const errors = yield* sql`
            SELECT r.outcome AS code, count(*)::int AS count
            FROM request_log r JOIN origins o ON o.id = r.origin_id
            WHERE o.organization_id = ${organizationId} AND r.at > ${since} AND r.status >= 400 AND r.livemode
            GROUP BY 1 ORDER BY 2 DESC, 1`.pipe(decodeRows(CodeCount))
          return {
            requests_per_minute: perMinute.map((row) => ({ ...row, minute: iso(row.minute) })),
            leads_per_day: perDay,
            error_codes: errors
          }
        }),
        origins: Effect.fn("ConsoleQueries.origins")(function* (organizationId) {
          const since = new Date((yield* Clock.currentTimeMillis) - day)
          const rows = yield* sql`
            SELECT o.id, o.label, k.prefix, o.created_at, o.rate_limit,
                   (k.id IS NULL OR k.revoked_at IS NOT NULL) AS revoked,
                   (SELECT max(at) FROM request_log r WHERE r.origin_id = o.id AND r.livemode) AS last_used_at,
                   (SELECT count(*)::int FROM request_log r
                    WHERE r.origin_id = o.id AND r.livemode AND r.at > ${since}) AS requests_24h,
                   (SELECT t.prefix FROM api_keys t
                    WHERE t.origin_id = o.id AND NOT t.livemode AND t.revoked_at IS NULL) AS test_prefix
            FROM origins o
            LEFT JOIN LATERAL (
              SELECT id, prefix, revoked_at FROM api_keys WHERE origin_id = o.id AND livemode
              ORDER BY created_at DESC, id LIMIT 1
            ) k ON true
            WHERE o.organization_id = ${organizationId}
            ORDER BY o.created_at, o.label`.pipe(decodeRows(OriginRecord))
          return rows.map((row) => ({
            ...row,
            created_at: iso(row.created_at),
            last_used_at: row.last_used_at === null ? null : iso(row.last_used_at)
          }))
        }),
        owns: Effect.fn("ConsoleQueries.owns")(function* (organizationId, entity, id) {
          if (!isUuid(id)) return false
          const rows = yield* sql`
            SELECT 1 FROM ${tables[entity]} WHERE id = ${id} AND organization_id = ${organizationId}`.pipe(
            Effect.orDie
          )
          return rows.length > 0
        }),
        requests: Effect.fn("ConsoleQueries.requests")(function* (scope, filter, page) {
          const after = decodeCursor(page.cursor, "request")
          const statusRange =
            filter.statusClass === undefined
              ? sql``
              : sql`AND r.status BETWEEN ${Number(filter.statusClass[0]) * 100} AND ${Number(filter.statusClass[0]) * 100 + 99}`
          const where = sql.and([
            scope._tag === "origin"
              ? sql`r.origin_id = ${scope.originId}`
              : scope._tag === "unattributed"
                ? sql`r.origin_id IS NULL`
                : sql`r.origin_id IN (SELECT id FROM origins WHERE organization_id = ${scope.organizationId})`,
            filter.outcome === undefined ? sql`true` : sql`r.outcome = ${filter.outcome}`,
            filter.from === undefined ? sql`true` : sql`r.at >= ${filter.from}`,
            filter.to === undefined ? sql`true` : sql`r.at < ${filter.to}`,
            filter.requestId === undefined ? sql`true` : sql`r.request_id = ${filter.requestId}`,
            filter.idempotencyKey === undefined
              ? sql`true`
              : sql`r.idempotency_key = ${filter.idempotencyKey}`,
            sql`r.livemode = ${filter.livemode ?? true}`,
            Option.match(after, {
              onNone: () => sql`true`,
              onSome: ([at, id]) => sql`(r.at, r.id) < (${at}, ${id}::bigint)`
            })
          ])
          const rows = yield* sql`
            SELECT ${requestColumns}
            FROM request_log r LEFT JOIN origins o ON o.id = r.origin_id
            WHERE ${where} ${statusRange}
            ORDER BY r.at DESC, r.id DESC
            LIMIT ${page.limit + 1}`.pipe(decodeRows(RequestRecord))
          const items = rows.slice(0, page.limit)
          const last = items.at(-1)
          return {
            items: items.map(requestView),
            nextCursor: rows.length > page.limit && last !== undefined ? encodeCursor(last.at, last.id) : null
          }
        }),
        request: Effect.fn("ConsoleQueries.request")(
          function* (organizationId, requestId, includeUnattributed) {
            const row = yield* sql`
            SELECT ${requestColumns}
            FROM request_log r LEFT JOIN origins o ON o.id = r.origin_id
            WHERE r.request_id = ${requestId}
              AND (o.organization_id = ${organizationId} ${includeUnattributed ? sql`OR r.origin_id IS NULL` : sql``})
            ORDER BY r.id DESC LIMIT 1`.pipe(decodeFirst(RequestRecord))
            return Option.map(row, requestView)
          }
        ),
        leads: Effect.fn("ConsoleQueries.leads")(function* (organization, query, page, livemode = true) {
          const after = decodeCursor(page.cursor, "lead")
          const text = query.trim()
          const match =
            text === ""
              ? sql`true`
              : sql.or([
                  ...(isAcceptablePhone(text)
                    ? [
                        sql`l.phone_key = lead_match_key(${phoneMatchKey(text, organization.country)}, ${livemode})`
                      ]
                    : []),
                  sql`l.nombre ILIKE ${likePattern(text)}`,
                  sql`l.email ILIKE ${likePattern(text)}`
                ])
          const rows = yield* sql`
            SELECT l.id, l.nombre, l.telefono, l.email, l.origin_id, o.label AS origin_label, l.created_at
            FROM leads l JOIN origins o ON o.id = l.origin_id
            WHERE l.organization_id = ${organization.id} AND l.livemode = ${livemode} AND ${match}
              ${Option.match(after, {
                onNone: () => sql``,
                onSome: ([at, id]) => sql`AND (l.created_at, l.id) < (${at}, ${id}::uuid)`
              })}
            ORDER BY l.created_at DESC, l.id DESC
            LIMIT ${page.limit + 1}`.pipe(decodeRows(LeadSummaryRecord))
          const items = rows.slice(0, page.limit)
          const last = items.at(-1)
          return {
            items: items.map((row) => ({
              id: row.id,
              nombre: row.nombre,
              telefono: row.telefono,
              email: row.email,
              origin: { id: row.origin_id, label: row.origin_label },
              created_at: iso(row.created_at)
            })),
            nextCursor:
              rows.length > page.limit && last !== undefined ? encodeCursor(last.created_at, last.id) : null
          }
        }),
        lead: Effect.fn("ConsoleQueries.lead")(function* (organizationId, id) {
          if (!isUuid(id)) return Option.none()
          const found = yield* sql`
            SELECT l.id, l.nombre, l.telefono, l.email, l.origin_id, o.label AS origin_label, l.property_id, p.codigo,
                   l.assignee_id, a.name AS assignee_name, l.created_at, l.updated_at, l.erased_at, l.livemode
            FROM leads l
            JOIN origins o ON o.id = l.origin_id
            LEFT JOIN properties p ON p.id = l.property_id
            LEFT JOIN agents a ON a.id = l.assignee_id
            WHERE l.id = ${id} AND l.organization_id = ${organizationId}`.pipe(decodeFirst(LeadRecord))
          if (Option.isNone(found)) return Option.none()
          const lead = found.value
          const notes = yield* sql`
            SELECT body, created_at FROM lead_notes WHERE lead_id = ${id} ORDER BY created_at, id`.pipe(
            decodeRows(NoteRecord)
          )
          const tasks = yield* sql`
            SELECT t.kind, a.name AS assignee, t.due_at
            FROM lead_tasks t LEFT JOIN agents a ON a.id = t.assignee_id
            WHERE t.lead_id = ${id} ORDER BY t.created_at, t.id`.pipe(decodeRows(TaskRecord))
          const events = yield* sql`
            SELECT type, created_at FROM outbox_events WHERE lead_id = ${id} ORDER BY id`.pipe(
            decodeRows(EventRecord)
          )
          const requests = yield* sql`
            SELECT ${requestColumns}
            FROM request_log r LEFT JOIN origins o ON o.id = r.origin_id
            WHERE r.lead_id = ${id} AND o.organization_id = ${organizationId}
            ORDER BY r.at DESC, r.id DESC LIMIT 200`.pipe(decodeRows(RequestRecord))
          return Option.some({
            id: lead.id,
            nombre: lead.nombre,
            telefono: lead.telefono,
            email: lead.email,
            origin: { id: lead.origin_id, label: lead.origin_label },
            property: lead.property_id === null ? null : { id: lead.property_id, codigo: lead.codigo ?? "" },
            assignee:
              lead.assignee_id === null ? null : { id: lead.assignee_id, name: lead.assignee_name ?? "" },
            created_at: iso(lead.created_at),
            updated_at: iso(lead.updated_at),
            erased_at: lead.erased_at === null ? null : iso(lead.erased_at),
            livemode: lead.livemode,
            notes: notes.map((note) => ({ body: note.body, created_at: iso(note.created_at) })),
            tasks: tasks.map((task) => ({
              kind: task.kind,
              assignee: task.assignee,
              due_at: iso(task.due_at)
            })),
            events: events.map((event) => ({ type: event.type, created_at: iso(event.created_at) })),
            requests: requests.map(requestView)
          })
        }),
        properties: Effect.fn("ConsoleQueries.properties")(function* (organizationId, query) {
          const text = query.trim()
          const rows = yield* sql`
            SELECT id, codigo, external_code, archived, created_at FROM properties
            WHERE organization_id = ${organizationId}
              ${text === "" ? sql`` : sql`AND (codigo ILIKE ${likePattern(text)} OR external_code ILIKE ${likePattern(text)})`}
            ORDER BY archived, codigo`.pipe(decodeRows(PropertyRecord))
          return rows.map(propertyView)
        }),
        property: Effect.fn("ConsoleQueries.property")(function* (organizationId, id) {
          if (!isUuid(id)) return Option.none()
          const row = yield* sql`
            SELECT id, codigo, external_code, archived, created_at FROM properties
            WHERE id = ${id} AND organization_id = ${organizationId}`.pipe(decodeFirst(PropertyRecord))
          return Option.map(row, propertyView)
        }),
        agents: Effect.fn("ConsoleQueries.agents")(function* (organizationId) {
          return yield* sql`
            SELECT id, name FROM agents WHERE organization_id = ${organizationId} ORDER BY name, id`.pipe(
            decodeRows(AgentRecord)
          )
        }),
        rules: Effect.fn("ConsoleQueries.rules")(function* (organizationId) {
          const rows = yield* sql`
            SELECT r.id, r.priority, r.origin_id, o.label AS origin_label, r.property_id, p.codigo, r.round_robin,
                   COALESCE((SELECT jsonb_agg(jsonb_build_object('id', a.id, 'name', a.name) ORDER BY x.ord)
                             FROM unnest(r.agent_ids) WITH ORDINALITY AS x(id, ord) JOIN agents a ON a.id = x.id),
                            '[]'::jsonb) AS agents
            FROM capture_rules r
            LEFT JOIN origins o ON o.id = r.origin_id
            LEFT JOIN properties p ON p.id = r.property_id
            WHERE r.organization_id = ${organizationId}
            ORDER BY r.priority, r.created_at, r.id`.pipe(decodeRows(RuleRecord))
          return rows.map((row) => ({
            id: row.id,
            priority: row.priority,
            origin: row.origin_id === null ? null : { id: row.origin_id, label: row.origin_label ?? "" },
            property: row.property_id === null ? null : { id: row.property_id, codigo: row.codigo ?? "" },
            agents: row.agents,
            round_robin: row.round_robin
          }))
        }),
        deleteRule: Effect.fn("ConsoleQueries.deleteRule")(function* (organizationId, id) {
          if (!isUuid(id)) return false
          const rows = yield* sql`
            DELETE FROM capture_rules WHERE id = ${id} AND organization_id = ${organizationId} RETURNING id`.pipe(
            decodeRows(IdRow)
          )
          return rows.length > 0
        })
      })
    })
  )

  /**
   * The same reads over the in-memory store. It keeps no creation time for properties (reported as
   * the epoch) and none for origins (the first key's), and a lead's `updated_at` is its last
   * note, event or erasure, since the fakes record nothing else.
   */
  static readonly layerMemory = Layer.effect(
    ConsoleQueries,
    Effect.gen(function* () {
      const store = yield* MemoryStore
      const byName = (a: OrganizationRow, b: OrganizationRow) =>
        a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0
      const organizationRow = (o: OrganizationRow): OrganizationRow => ({
        id: o.id,
        name: o.name,
        country: o.country
      })
      const originIdsOf = (organizationId: string) =>
        new Set(
          [...store.origins.values()].filter((o) => o.organizationId === organizationId).map((o) => o.id)
        )
      /** Newest first; keys issued within one clock tick are told apart by the order they were stored. */
      const keysOf = (originId: string) =>
        [...store.keys.values()]
          .map((key, index) => ({ key, index }))
          .filter(({ key }) => key.originId === originId)
          .sort((a, b) => b.key.createdAt - a.key.createdAt || b.index - a.index)
          .map(({ key }) => key)
      const requestRows = () => store.requests.map((row, index) => ({ row, id: index + 1 }))
      const requestView = ({ row }: { readonly row: (typeof store.requests)[number] }): RequestRow => ({
        request_id: row.requestId,
        at: iso(new Date(row.at)),
        status: row.status,
        outcome: row.outcome,
        lead_id: row.leadId,
        key_prefix: row.keyPrefix,
        idempotency_key: row.idempotencyKey,
        duration_ms: row.durationMs,
        origin_id: row.originId,
        origin_label: row.originId === null ? null : (store.origins.get(row.originId)?.label ?? null),
        livemode: row.livemode
      })
      const propertyView = (p: {
        id: string
        codigo: string
        externalCode: string | null
        archived: boolean
      }): PropertyRow => ({
        id: p.id,
        codigo: p.codigo,
        external_code: p.externalCode,
        archived: p.archived,
        created_at: iso(new Date(0))
      })
      const ownedProperty = (organizationId: string, id: string) => {
        const property = store.properties.get(id)
        return property !== undefined && property.organizationId === organizationId ? property : undefined
      }
      const organizationFor = Effect.fn("ConsoleQueries.organizationFor")(function* (
        operator: Operator,
        requested: string | undefined
      ) {
        const wanted = operator.organizationId ?? requested
        if (wanted !== undefined && !isUuid(wanted)) return Option.none()
        const rows = [...store.organizations.values()].filter((o) => wanted === undefined || o.id === wanted)
        return Option.map(Option.fromNullishOr(rows.sort(byName)[0]), organizationRow)
      })
      const erasureOf = (leadId: string) => store.erasures.find((e) => e.leadId === leadId)

      return ConsoleQueries.of({
        organizationsFor: Effect.fn("ConsoleQueries.organizationsFor")(function* (operator) {
          return [...store.organizations.values()]
            .filter((o) => operator.organizationId === null || o.id === operator.organizationId)
            .sort(byName)
            .map(organizationRow)
        }),
        organizationFor,
        overview: Effect.fn("ConsoleQueries.overview")(function* (organizationId) {
          const now = yield* Clock.currentTimeMillis
          const origins = originIdsOf(organizationId)
          const recent = store.requests.filter(
            (r) => r.livemode && r.originId !== null && origins.has(r.originId) && r.at > now - day
          )
          const perMinute = new Map<
            string,
            { minute: string; origin_id: string; label: string; count: number }
          >()
          for (const r of recent) {
            const minute = iso(new Date(Math.floor(r.at / 60_000) * 60_000))
            const slot = `${minute} ${r.originId}`
            const entry = perMinute.get(slot) ?? {
              minute,
              origin_id: r.originId!,
              label: store.origins.get(r.originId!)?.label ?? "",
              count: 0
            }
            entry.count++
            perMinute.set(slot, entry)
          }
          const perDay = new Map<string, { day: string; created: number; enriched: number }>()
          for (const e of store.events) {
            if (e.organizationId !== organizationId || e.livemode === false || e.createdAt <= now - 30 * day)
              continue
            const date = iso(new Date(e.createdAt)).slice(0, 10)
            const entry = perDay.get(date) ?? { day: date, created: 0, enriched: 0 }
            if (e.type === "lead.created") entry.created++
            if (e.type === "lead.enriched") entry.enriched++
            perDay.set(date, entry)
          }
          const errors = new Map<string, number>()
          for (const r of recent) if (r.status >= 400) errors.set(r.outcome, (errors.get(r.outcome) ?? 0) + 1)
          return {
            requests_per_minute: [...perMinute.values()].sort((a, b) =>
              a.minute !== b.minute ? (a.minute < b.minute ? -1 : 1) : a.label < b.label ? -1 : 1
            ),
            leads_per_day: [...perDay.values()].sort((a, b) => (a.day < b.day ? -1 : 1)),
            error_codes: [...errors]
              .map(([code, count]) => ({ code, count }))
              .sort((a, b) => b.count - a.count || (a.code < b.code ? -1 : 1))
          }
        }),
        origins: Effect.fn("ConsoleQueries.origins")(function* (organizationId) {
          const since = (yield* Clock.currentTimeMillis) - day
          return [...store.origins.values()]
            .filter((o) => o.organizationId === organizationId)
            .map((o) => {
              const keys = keysOf(o.id).filter((key) => key.mode === "live")
              const latest = keys[0]
              const testKey = keysOf(o.id).find((key) => key.mode === "test" && key.revokedAt === null)
              const used = store.requests.filter((r) => r.originId === o.id && r.livemode)
              const createdAt = keys.length === 0 ? 0 : Math.min(...keys.map((k) => k.createdAt))
              return {
                id: o.id,
                label: o.label,
                prefix: latest?.prefix ?? null,
                created_at: iso(new Date(createdAt)),
                last_used_at: used.length === 0 ? null : iso(new Date(Math.max(...used.map((r) => r.at)))),
                requests_24h: used.filter((r) => r.at > since).length,
                rate_limit: o.rateLimit,
                revoked: latest === undefined || latest.revokedAt !== null,
                test_prefix: testKey?.prefix ?? null
              }
            })
            .sort((a, b) =>
              a.created_at !== b.created_at
                ? a.created_at < b.created_at
                  ? -1
                  : 1
                : a.label < b.label
                  ? -1
                  : 1
            )
        }),
        owns: Effect.fn("ConsoleQueries.owns")(function* (organizationId, entity, id) {
          if (!isUuid(id)) return false
          switch (entity) {
            case "origin":
              return store.origins.get(id)?.organizationId === organizationId
            case "property":
              return store.properties.get(id)?.organizationId === organizationId
            case "agent":
              return store.agents.get(id)?.organizationId === organizationId
            case "rule":
              return store.rules.some((r) => r.id === id && r.organizationId === organizationId)
            case "lead":
              return store.leads.get(id)?.organizationId === organizationId
          }
        }),
        requests: Effect.fn("ConsoleQueries.requests")(function* (scope, filter, page) {
          const after = decodeCursor(page.cursor, "request")
          const origins = scope._tag === "organization" ? originIdsOf(scope.organizationId) : undefined
          const low = filter.statusClass === undefined ? undefined : Number(filter.statusClass[0]) * 100
          const rows = requestRows()
            .filter(({ row, id }) => {
              const inScope =
                scope._tag === "origin"
                  ? row.originId === scope.originId
                  : scope._tag === "unattributed"
                    ? row.originId === null
                    : row.originId !== null && origins!.has(row.originId)
              return (
                inScope &&
                (low === undefined || (row.status >= low && row.status <= low + 99)) &&
                (filter.outcome === undefined || row.outcome === filter.outcome) &&
                (filter.from === undefined || row.at >= filter.from.getTime()) &&
                (filter.to === undefined || row.at < filter.to.getTime()) &&
                (filter.requestId === undefined || row.requestId === filter.requestId) &&
                (filter.idempotencyKey === undefined || row.idempotencyKey === filter.idempotencyKey) &&
                row.livemode === (filter.livemode ?? true) &&
                Option.match(after, {
                  onNone: () => true,
                  onSome: ([at, last]) =>
                    row.at < at.getTime() || (row.at === at.getTime() && id < Number(last))
                })
              )
            })
            .sort((a, b) => b.row.at - a.row.at || b.id - a.id)
          const items = rows.slice(0, page.limit)
          const last = items.at(-1)
          return {
            items: items.map(requestView),
            nextCursor:
              rows.length > page.limit && last !== undefined
                ? encodeCursor(new Date(last.row.at), String(last.id))
                : null
          }
        }),
        request: Effect.fn("ConsoleQueries.request")(
          function* (organizationId, requestId, includeUnattributed) {
            const origins = originIdsOf(organizationId)
            const found = requestRows()
              .filter(
                ({ row }) =>
                  row.requestId === requestId &&
                  (row.originId === null ? includeUnattributed : origins.has(row.originId))
              )
              .at(-1)
            return Option.map(Option.fromNullishOr(found), requestView)
          }
        ),
        leads: Effect.fn("ConsoleQueries.leads")(function* (organization, query, page, livemode = true) {
          const after = decodeCursor(page.cursor, "lead")
          const text = query.trim()
          const needle = text.toLowerCase()
          const phoneKey =
            text !== "" && isAcceptablePhone(text) ? phoneMatchKey(text, organization.country) : null
          const rows = [...store.leads.values()]
            .filter(
              (l) =>
                l.organizationId === organization.id &&
                l.livemode === livemode &&
                (text === "" ||
                  (phoneKey !== null && l.phoneKey === phoneKey) ||
                  (l.nombre ?? "").toLowerCase().includes(needle) ||
                  (l.email ?? "").toLowerCase().includes(needle)) &&
                Option.match(after, {
                  onNone: () => true,
                  onSome: ([at, id]) =>
                    l.createdAt < at.getTime() || (l.createdAt === at.getTime() && l.id < id)
                })
            )
            .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1))
          const items = rows.slice(0, page.limit)
          const last = items.at(-1)
          return {
            items: items.map((l) => ({
              id: l.id,
              nombre: l.nombre,
              telefono: l.telefono,
              email: l.email,
              origin: { id: l.originId, label: store.origins.get(l.originId)?.label ?? "" },
              created_at: iso(new Date(l.createdAt))
            })),
            nextCursor:
              rows.length > page.limit && last !== undefined
                ? encodeCursor(new Date(last.createdAt), last.id)
                : null
          }
        }),
        lead: Effect.fn("ConsoleQueries.lead")(function* (organizationId, id) {
          if (!isUuid(id)) return Option.none()
          const lead = store.leads.get(id)
          if (lead === undefined || lead.organizationId !== organizationId) return Option.none()
          const property = lead.propertyId === null ? undefined : store.properties.get(lead.propertyId)
          const assignee = lead.assigneeId === null ? undefined : store.agents.get(lead.assigneeId)
          const notes = store.notes.filter((n) => n.leadId === id)
          const events = store.events.filter((e) => e.leadId === id)
          const erasure = erasureOf(id)
          const origins = originIdsOf(organizationId)
          const updatedAt = Math.max(
            lead.createdAt,
            ...notes.map((n) => n.createdAt),
            ...events.map((e) => e.createdAt),
            erasure?.erasedAt ?? 0
          )
          return Option.some({
            id: lead.id,
            nombre: lead.nombre,
            telefono: lead.telefono,
            email: lead.email,
            origin: { id: lead.originId, label: store.origins.get(lead.originId)?.label ?? "" },
            property:
              lead.propertyId === null ? null : { id: lead.propertyId, codigo: property?.codigo ?? "" },
            assignee: lead.assigneeId === null ? null : { id: lead.assigneeId, name: assignee?.name ?? "" },
            created_at: iso(new Date(lead.createdAt)),
            updated_at: iso(new Date(updatedAt)),
            erased_at: erasure === undefined ? null : iso(new Date(erasure.erasedAt)),
            livemode: lead.livemode,
            notes: notes.map((n) => ({ body: n.body, created_at: iso(new Date(n.createdAt)) })),
            tasks: store.tasks
              .filter((t) => t.leadId === id)
              .map((t) => ({
                kind: t.kind,
                assignee: t.assigneeId === null ? null : (store.agents.get(t.assigneeId)?.name ?? null),
                due_at: iso(new Date(t.dueAt))
              })),
            events: events.map((e) => ({ type: e.type, created_at: iso(new Date(e.createdAt)) })),
            requests: requestRows()
              .filter(({ row }) => row.leadId === id && row.originId !== null && origins.has(row.originId))
              .sort((a, b) => b.row.at - a.row.at || b.id - a.id)
              .slice(0, 200)
              .map(requestView)
          })
        }),
        properties: Effect.fn("ConsoleQueries.properties")(function* (organizationId, query) {
          const needle = query.trim().toLowerCase()
          return [...store.properties.values()]
            .filter(
              (p) =>
                p.organizationId === organizationId &&
                (needle === "" ||
                  p.codigo.toLowerCase().includes(needle) ||
                  (p.externalCode ?? "").toLowerCase().includes(needle))
            )
            .sort((a, b) => Number(a.archived) - Number(b.archived) || (a.codigo < b.codigo ? -1 : 1))
            .map(propertyView)
        }),
        property: Effect.fn("ConsoleQueries.property")(function* (organizationId, id) {
          return Option.map(Option.fromNullishOr(ownedProperty(organizationId, id)), propertyView)
        }),
        agents: Effect.fn("ConsoleQueries.agents")(function* (organizationId) {
          return [...store.agents.values()]
            .filter((a) => a.organizationId === organizationId)
            .sort((a, b) => (a.name !== b.name ? (a.name < b.name ? -1 : 1) : a.id < b.id ? -1 : 1))
            .map((a) => ({ id: a.id, name: a.name }))
        }),
        rules: Effect.fn("ConsoleQueries.rules")(function* (organizationId) {
          return store.rules
            .filter((r) => r.organizationId === organizationId)
            .sort((a, b) => a.priority - b.priority || a.seq - b.seq)
            .map((r) => ({
              id: r.id,
              priority: r.priority,
              origin:
                r.originId === null
                  ? null
                  : { id: r.originId, label: store.origins.get(r.originId)?.label ?? "" },
              property:
                r.propertyId === null
                  ? null
                  : { id: r.propertyId, codigo: store.properties.get(r.propertyId)?.codigo ?? "" },
              agents: r.agentIds.flatMap((agentId) => {
                const agent = store.agents.get(agentId)
                return agent === undefined ? [] : [{ id: agent.id, name: agent.name }]
              }),
              round_robin: r.roundRobin
            }))
        }),
        deleteRule: Effect.fn("ConsoleQueries.deleteRule")(function* (organizationId, id) {
          const index = store.rules.findIndex((r) => r.id === id && r.organizationId === organizationId)
          if (index < 0) return false
          store.rules.splice(index, 1)
          return true
        })
      })
    })
  )
}

export interface LeadDetailRow {
  readonly id: string
  readonly nombre: string | null
  /** Set once the lead's personal data was erased; only the tombstone is left. */
  readonly erased_at: string | null
  readonly telefono: string | null
  readonly email: string | null
  readonly origin: { readonly id: string; readonly label: string }
  readonly property: { readonly id: string; readonly codigo: string } | null
  readonly assignee: { readonly id: string; readonly name: string } | null
  readonly created_at: string
  readonly updated_at: string
  /** False: a test lead (docs/contract.md#10-test-mode). */
  readonly livemode: boolean
  readonly notes: ReadonlyArray<{ readonly body: string; readonly created_at: string }>
  readonly tasks: ReadonlyArray<{
    readonly kind: string
    readonly assignee: string | null
    readonly due_at: string
  }>
  readonly events: ReadonlyArray<{ readonly type: string; readonly created_at: string }>
  readonly requests: ReadonlyArray<RequestRow>
}
