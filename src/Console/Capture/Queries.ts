import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { Agent, Rule } from "../../AdminApi/Capture.ts"
import { decodeItems, isUuid } from "../Rows.ts"

export const listAgents = Effect.fn("Capture.agents")(function* (organizationId: string) {
  const sql = yield* SqlClient.SqlClient
  return yield* sql`
    SELECT id, name FROM agents WHERE organization_id = ${organizationId} ORDER BY name, id`.pipe(
    decodeItems(Agent)
  )
})

/** The organization's capture rules in the order they apply: priority (lowest first), then age. */
export const listRules = Effect.fn("Capture.rules")(function* (organizationId: string) {
  const sql = yield* SqlClient.SqlClient
  return yield* sql`
    SELECT r.id, r.priority, r.round_robin,
           CASE WHEN r.origin_id IS NULL THEN NULL
                ELSE json_build_object('id', r.origin_id, 'label', COALESCE(o.label, '')) END AS origin,
           CASE WHEN r.property_id IS NULL THEN NULL
                ELSE json_build_object('id', r.property_id, 'codigo', COALESCE(p.codigo, '')) END AS property,
           COALESCE((SELECT jsonb_agg(jsonb_build_object('id', a.id, 'name', a.name) ORDER BY x.ord)
                     FROM unnest(r.agent_ids) WITH ORDINALITY AS x(id, ord) JOIN agents a ON a.organization_id = r.organization_id AND a.id = x.id),
                    '[]'::jsonb) AS agents
    FROM capture_rules r
    LEFT JOIN origins o ON o.id = r.origin_id AND o.organization_id = r.organization_id
    LEFT JOIN properties p ON p.id = r.property_id AND p.organization_id = r.organization_id
    WHERE r.organization_id = ${organizationId}
    ORDER BY r.priority, r.created_at, r.id`.pipe(decodeItems(Rule))
})

/** Removes the organization's rule; false when it has no such rule. */
export const deleteRule = Effect.fn("Capture.deleteRule")(function* (organizationId: string, id: string) {
  if (!isUuid(id)) return false
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql`
    DELETE FROM capture_rules WHERE id = ${id} AND organization_id = ${organizationId} RETURNING id`.pipe(
    Effect.orDie
  )
  return rows.length > 0
})
