import { Clock, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { decodeItems } from "../Rows.ts"
import { OriginItem } from "./Api.ts"

const day = 24 * 60 * 60 * 1000

/**
 * The organization's origins, each with its live key and active test key; the figures count live
 * requests only. The console's list and `lead-intake origin list` both read this.
 */
export const listOrigins = Effect.fn("Origins.list")(function* (organizationId: string) {
  const sql = yield* SqlClient.SqlClient
  const since = new Date((yield* Clock.currentTimeMillis) - day)
  return yield* sql`
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
    ORDER BY o.created_at, o.label`.pipe(decodeItems(OriginItem))
})
