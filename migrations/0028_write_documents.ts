import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { inShortTransactions, shortTransaction } from "./outsideTransaction.ts"

/**
 * Write functions with a fixed signature, the contract release: the positional write functions go.
 * The release before this one writes through `lead_write`, `lead_write_keyed` and `lead_rescue`
 * (the organization and one `jsonb` document) and their helpers `lead_create_or_enrich`,
 * `idempotency_key_reserve` and `outbox_event_add`; what only the releases before it called goes,
 * every signature of each name (an older database may hold more than one): the create and
 * enrichment with its 14 arguments and the functions around it, the 9-argument reservation and the
 * 8-argument outbox event, the procedure of the keyed write before `reserve_and_write_lead_json`,
 * and `intake_lead` and `admit_and_intake`, which no release that may run beside this one calls. No function of
 * the schema then has more than 6 arguments (`test/integration/sql-functions.test.ts`).
 *
 * A function is dropped in a short transaction of its own (`shortTransaction`); nothing holds a
 * lock on a function while calling it, so no request waits for one. Safe to run again from the start.
 */
export const droppedNames = [
  "write_lead_json",
  "reserve_and_write_lead_json",
  "reserve_and_write_lead",
  "rescue_write_lead",
  "rescue_lead",
  "write_lead",
  "create_or_enrich_lead",
  "reserve_idempotency_key",
  "add_outbox_event",
  "intake_lead",
  "admit_and_intake"
]

/** The entries of `migrations/functions.ts` that the functions above were applied from. */
const droppedEntries = [
  "write_lead_json",
  "reserve_and_write_lead_json",
  "reserve_and_write_lead",
  "rescue_write_lead",
  "rescue_lead",
  "write_lead",
  "create_or_enrich_lead",
  "create_or_enrich_lead(livemode)",
  "reserve_idempotency_key",
  "reserve_idempotency_key(organization)",
  "add_outbox_event"
]

export default inShortTransactions(
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const found = yield* sql<{ signature: string; procedure: boolean }>`
      SELECT p.oid::regprocedure::text AS signature, p.prokind = 'p' AS procedure FROM pg_proc p
      WHERE p.pronamespace = current_schema()::regnamespace AND p.proname::text IN ${sql.in(droppedNames)}
      ORDER BY 1`
    for (const { signature, procedure } of found)
      yield* shortTransaction(
        signature,
        sql.unsafe(`DROP ${procedure ? "PROCEDURE" : "FUNCTION"} IF EXISTS ${signature}`)
      )
    const [recorded] = yield* sql<{
      present: boolean
    }>`SELECT to_regclass('schema_functions') IS NOT NULL AS present`
    if (recorded?.present === true)
      yield* sql`DELETE FROM schema_functions WHERE name IN ${sql.in(droppedEntries)}`
  })
)
