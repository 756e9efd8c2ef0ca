import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import { Organization } from "../AdminApi/Overview.ts"
import { decodeItem, decodeItems, isUuid } from "./Rows.ts"

export type OrganizationRow = typeof Organization.Type

/** What an operator sees of the organizations: a platform administrator (no organization) sees them all. */
export const organizationsFor = Effect.fn("Console.organizationsFor")(function* (operator: {
  readonly organizationId: string | null
}) {
  const sql = yield* SqlClient.SqlClient
  return yield* sql`
    SELECT id, name, country FROM organizations
    ${operator.organizationId === null ? sql`` : sql`WHERE id = ${operator.organizationId}`}
    ORDER BY name, id`.pipe(decodeItems(Organization))
})

/** The organization an operator acts on: its own, or for a platform administrator the one asked for (or the first by name). */
export const organizationFor = Effect.fn("Console.organizationFor")(function* (
  operator: { readonly organizationId: string | null },
  requested: string | undefined
) {
  const sql = yield* SqlClient.SqlClient
  const wanted = operator.organizationId ?? requested
  if (wanted !== undefined && !isUuid(wanted)) return Option.none<OrganizationRow>()
  return yield* sql`
    SELECT id, name, country FROM organizations
    ${wanted === undefined ? sql`` : sql`WHERE id = ${wanted}`}
    ORDER BY name, id LIMIT 1`.pipe(decodeItem(Organization))
})

const tables = {
  origin: "origins",
  property: "properties",
  agent: "agents",
  rule: "capture_rules",
  lead: "leads"
} as const

export type OwnedEntity = keyof typeof tables

/** Whether the organization owns the entity: every id an operator names is checked before it is acted on. */
export const owns = Effect.fn("Console.owns")(function* (
  organizationId: string,
  entity: OwnedEntity,
  id: string
) {
  if (!isUuid(id)) return false
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql`
    SELECT 1 FROM ${sql(tables[entity])} WHERE id = ${id} AND organization_id = ${organizationId}`.pipe(
    Effect.orDie
  )
  return rows.length > 0
})
