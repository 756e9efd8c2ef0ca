import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * `serve` can run as a role with DML rights only (SELECT/INSERT/UPDATE/DELETE on the tables, USAGE
 * on the sequences, EXECUTE on the functions) while migrations run as the schema's owner.
 *
 * One thing stood in the way: each capture rule has a sequence of its own (0009), created and
 * dropped by a trigger when the console adds or deletes a rule, and taken from by every create.
 * Creating and dropping a sequence needs the owner's rights, and a sequence created later carries
 * no grant for the service's role. The three functions that touch those sequences now run as their
 * owner (`SECURITY DEFINER`), with `search_path` pinned to this schema so no caller can redirect
 * what they name. Nothing else changes: old and new code call them alike.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    DO $do$
    BEGIN
      EXECUTE format('ALTER FUNCTION capture_rules_turns() SECURITY DEFINER SET search_path = %I, pg_temp', current_schema());
      EXECUTE format('ALTER FUNCTION capture_rule_take_turn(uuid) SECURITY DEFINER SET search_path = %I, pg_temp', current_schema());
      EXECUTE format('ALTER FUNCTION capture_rule_turns_taken(uuid) SECURITY DEFINER SET search_path = %I, pg_temp', current_schema());
    END
    $do$`
})
