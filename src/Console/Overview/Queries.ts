import { Clock, Effect, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { Overview } from "../../AdminApi/Overview.ts"
import { defaultTimeZone, midnightInZone } from "../../Domain/Locale.ts"
import { decodeFirst } from "../../Platform/Sql/Sql.ts"
import { decodeAs } from "../Rows.ts"

const day = 24 * 60 * 60 * 1000

const ZoneRow = Schema.Struct({ country: Schema.String, time_zone: Schema.NullOr(Schema.String) })

/** The leads chart's days: today in the organization's zone and the 29 before it. */
const chartDays = 30

/**
 * Live data only: what test keys send is left out of every figure. Leads are counted per day of
 * the organization's time zone (the one an admin set, else its country's), as the console shows it,
 * from that zone's midnight 29 days ago.
 */
export const overviewOf = Effect.fn("Console.overview")(function* (organizationId: string) {
  const sql = yield* SqlClient.SqlClient
  const now = yield* Clock.currentTimeMillis
  const organization = yield* sql`
    SELECT country, time_zone FROM organizations WHERE id = ${organizationId}`.pipe(decodeFirst(ZoneRow))
  const zone = Option.match(organization, {
    onNone: () => "UTC",
    onSome: (row) => row.time_zone ?? defaultTimeZone(row.country)
  })
  const since = new Date(now - day)
  const [requests_per_minute, leads_per_day, error_codes, [waiting]] = yield* Effect.all([
    sql`
      SELECT date_trunc('minute', r.at) AS minute, r.origin_id, o.label, count(*)::int AS count
      FROM logged_requests r JOIN origins o ON o.id = r.origin_id AND o.organization_id = r.organization_id
      WHERE o.organization_id = ${organizationId} AND r.at > ${since} AND r.livemode
      GROUP BY 1, 2, 3 ORDER BY 1, 3`,
    sql`
      SELECT to_char((created_at AT TIME ZONE ${zone})::date, 'YYYY-MM-DD') AS day,
             count(*) FILTER (WHERE type = 'lead.created')::int AS created,
             count(*) FILTER (WHERE type = 'lead.enriched')::int AS enriched
      FROM outbox_events
      WHERE organization_id = ${organizationId} AND created_at >= ${midnightInZone(now, zone, chartDays - 1)} AND livemode
      GROUP BY 1 ORDER BY 1`,
    sql`
      SELECT r.outcome AS code, count(*)::int AS count
      FROM logged_requests r JOIN origins o ON o.id = r.origin_id AND o.organization_id = r.organization_id
      WHERE o.organization_id = ${organizationId} AND r.at > ${since} AND r.status >= 400 AND r.livemode
      GROUP BY 1 ORDER BY 2 DESC, 1`,
    sql`
      SELECT count(*)::int AS count
      FROM logged_requests r JOIN origins o ON o.id = r.origin_id AND o.organization_id = r.organization_id
      WHERE o.organization_id = ${organizationId} AND r.kept_body IS NOT NULL AND r.livemode`
  ]).pipe(Effect.orDie)
  return yield* decodeAs(Overview, {
    requests_per_minute,
    leads_per_day,
    error_codes,
    waiting_for_rescue: waiting?.count ?? 0
  })
})
