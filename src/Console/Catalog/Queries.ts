import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import { Property } from "../../AdminApi/Catalog.ts"
import { decodeItem, decodeItems, isUuid, likePattern } from "../Rows.ts"

/** The organization's properties, active first, matching `query` in the codigo or the external code. */
export const listProperties = Effect.fn("Catalog.list")(function* (organizationId: string, query: string) {
  const sql = yield* SqlClient.SqlClient
  const text = query.trim()
  return yield* sql`
    SELECT id, codigo, external_code, archived, created_at FROM properties
    WHERE organization_id = ${organizationId}
      ${text === "" ? sql`` : sql`AND (codigo ILIKE ${likePattern(text)} OR external_code ILIKE ${likePattern(text)})`}
    ORDER BY archived, codigo`.pipe(decodeItems(Property))
})

export const findProperty = Effect.fn("Catalog.find")(function* (organizationId: string, id: string) {
  if (!isUuid(id)) return Option.none<typeof Property.Type>()
  const sql = yield* SqlClient.SqlClient
  return yield* sql`
    SELECT id, codigo, external_code, archived, created_at FROM properties
    WHERE id = ${id} AND organization_id = ${organizationId}`.pipe(decodeItem(Property))
})
