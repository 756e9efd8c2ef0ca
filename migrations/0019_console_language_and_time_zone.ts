import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The console speaks its operators' language (docs/contract.md#12-the-console-speaks-its-operators-language).
 *
 * - `operators.language`: the language an operator chose in the console (`es` or `en`); null until
 *   they choose, when the browser's languages and then the organization's country decide.
 * - `organizations.time_zone`: the IANA zone the console shows the organization's times in; null
 *   means its country's zone (`America/Mexico_City` for MX), so a row written by the previous
 *   release, which names no zone, reads right.
 *
 * Both are new nullable columns the previous release never names. Written so that it can be applied
 * again (the production test re-applies the newest migration).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE operators ADD COLUMN IF NOT EXISTS language text CHECK (language IN ('es', 'en'))`
  yield* sql`
    ALTER TABLE organizations ADD COLUMN IF NOT EXISTS time_zone text
    CHECK (time_zone <> '' AND length(time_zone) <= 64)`
})
