import { Effect, Option, Schema, Stream } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import { RequestItem } from "../../AdminApi/Requests.ts"
import { decodeAs, decodeCursor, decodeItem, decodeItems, encodeCursor, pageOf } from "../Rows.ts"

export type RequestRow = typeof RequestItem.Type

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
  /** Only the requests whose body is kept for rescue. */
  readonly kept?: boolean | undefined
  /** Live requests (the default) or test requests only: the page never lists the two together; the CLI's export does ("both"). */
  readonly livemode?: boolean | "both" | undefined
}

/** A request log row with the key its page is sorted by. */
const KeyedRequest = Schema.Struct({ ...RequestItem.fields, seq: Schema.String })

const withoutSeq = ({ seq: _, ...row }: typeof KeyedRequest.Type): RequestRow => row

const columns = (
  sql: SqlClient.SqlClient
) => sql`r.request_id, r.at, r.status, r.outcome, r.lead_id, r.key_prefix,
  r.idempotency_key, r.duration_ms, r.origin_id, o.label AS origin_label, r.livemode,
  r.kept_body IS NOT NULL AS kept, r.rescued_lead_id`

/**
 * The table a scope reads: the request log, or `unattributed_requests` (rows whose key prefix named no
 * key: no organization, origin, lead or kept body) in the request log's shape.
 */
const sourceOf = (sql: SqlClient.SqlClient, unattributed: boolean) =>
  unattributed
    ? sql`(SELECT id, NULL::uuid AS organization_id, request_id, at, status, outcome, NULL::uuid AS lead_id, key_prefix,
                 idempotency_key, duration_ms, NULL::uuid AS origin_id, livemode, NULL::text AS kept_body,
                 NULL::uuid AS rescued_lead_id
          FROM unattributed_requests) r`
    : sql`logged_requests r`

/** The origin a row names, in the row's organization. */
const withOrigin = (sql: SqlClient.SqlClient) =>
  sql`LEFT JOIN origins o ON o.organization_id = r.organization_id AND o.id = r.origin_id`

/** The rows of `scope` that `filter` keeps: the one rule the page, the CLI and the CSV export share. */
const filtered = (sql: SqlClient.SqlClient, scope: RequestScope, filter: RequestFilter) => {
  const low = filter.statusClass === undefined ? undefined : Number(filter.statusClass[0]) * 100
  return [
    scope._tag === "origin"
      ? sql`r.origin_id = ${scope.originId}`
      : scope._tag === "unattributed"
        ? sql`true`
        : sql`r.organization_id = ${scope.organizationId}`,
    low === undefined ? sql`true` : sql`r.status BETWEEN ${low} AND ${low + 99}`,
    filter.outcome === undefined ? sql`true` : sql`r.outcome = ${filter.outcome}`,
    filter.from === undefined ? sql`true` : sql`r.at >= ${filter.from}`,
    filter.to === undefined ? sql`true` : sql`r.at < ${filter.to}`,
    filter.requestId === undefined ? sql`true` : sql`r.request_id = ${filter.requestId}`,
    filter.idempotencyKey === undefined ? sql`true` : sql`r.idempotency_key = ${filter.idempotencyKey}`,
    filter.kept === true ? sql`r.kept_body IS NOT NULL` : sql`true`,
    filter.livemode === "both" ? sql`true` : sql`r.livemode = ${filter.livemode ?? true}`
  ]
}

export const listRequests = Effect.fn("Requests.list")(function* (
  scope: RequestScope,
  filter: RequestFilter,
  page: { readonly cursor?: string | undefined; readonly limit: number }
) {
  const sql = yield* SqlClient.SqlClient
  const after = decodeCursor(page.cursor, "request")
  const where = sql.and([
    ...filtered(sql, scope, filter),
    Option.match(after, {
      onNone: () => sql`true`,
      onSome: ([at, id]) => sql`(r.at, r.id) < (${at}, ${id}::bigint)`
    })
  ])
  const rows = yield* sql`
    SELECT ${columns(sql)}, r.id::text AS seq
    FROM ${sourceOf(sql, scope._tag === "unattributed")} ${withOrigin(sql)}
    WHERE ${where}
    ORDER BY r.at DESC, r.id DESC
    LIMIT ${page.limit + 1}`.pipe(decodeItems(KeyedRequest))
  const found = pageOf(rows, page.limit, (last) => encodeCursor(last.at, last.seq))
  return { items: found.items.map(withoutSeq), next_cursor: found.next_cursor }
})

/**
 * Every row of `scope` that `filter` keeps, newest first, as PostgreSQL sends them: the connection
 * reads the next rows only as the consumer takes them, so an export of any size holds a few at a time.
 */
export const streamRequests = (scope: RequestScope, filter: RequestFilter) =>
  Stream.unwrap(
    Effect.map(Effect.service(SqlClient.SqlClient), (sql) =>
      sql`
        SELECT ${columns(sql)}
        FROM ${sourceOf(sql, scope._tag === "unattributed")} ${withOrigin(sql)}
        WHERE ${sql.and(filtered(sql, scope, filter))}
        ORDER BY r.at DESC, r.id DESC`.stream.pipe(
        Stream.orDie,
        Stream.mapEffect((row) => decodeAs(RequestItem, row))
      )
    )
  )

/** Request-log rows as the console shows them, with their origin's label, picked by `where`. */
const requestsWhere = (sql: SqlClient.SqlClient, where: Statement.Fragment, unattributed = false) => sql`
    SELECT ${columns(sql)}
    FROM ${sourceOf(sql, unattributed)} ${withOrigin(sql)}
    WHERE ${where}`

/** A request of the organization (or, for a platform administrator, an unattributed one). */
export const findRequest = Effect.fn("Requests.find")(function* (
  organizationId: string,
  requestId: string,
  includeUnattributed: boolean
) {
  const sql = yield* SqlClient.SqlClient
  const owned =
    yield* sql`${requestsWhere(sql, sql`r.organization_id = ${organizationId} AND r.request_id = ${requestId}`)}
    ORDER BY r.id DESC LIMIT 1`.pipe(decodeItem(RequestItem))
  if (Option.isSome(owned) || !includeUnattributed) return owned
  return yield* sql`${requestsWhere(sql, sql`r.request_id = ${requestId}`, true)}
    ORDER BY r.id DESC LIMIT 1`.pipe(decodeItem(RequestItem))
})

/** The newest requests that named the lead, at most 200. */
export const requestsOfLead = Effect.fn("Requests.ofLead")(function* (
  organizationId: string,
  leadId: string
) {
  const sql = yield* SqlClient.SqlClient
  return yield* sql`${requestsWhere(sql, sql`r.lead_id = ${leadId} AND r.organization_id = ${organizationId}`)}
    ORDER BY r.at DESC, r.id DESC LIMIT 200`.pipe(decodeItems(RequestItem))
})
