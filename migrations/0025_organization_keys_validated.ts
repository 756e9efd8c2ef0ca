import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { foreignKeys } from "./0024_organization_foreign_keys.ts"
import { outsideTransaction } from "./outsideTransaction.ts"

/**
 * Keys that distribute, step 4 of 5: the foreign keys 0024 added `NOT VALID` are validated, outside
 * a transaction, one at a time (a validation reads the table under a lock that blocks no writer).
 * Safe to run again: a validated key is skipped.
 */
export default outsideTransaction(
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    for (const [table, , name] of foreignKeys) {
      const [key] = yield* sql<{ validated: boolean }>`
        SELECT convalidated AS validated FROM pg_constraint WHERE conrelid = ${table}::regclass AND conname = ${name}`
      if (key?.validated === false) yield* sql.unsafe(`ALTER TABLE ${table} VALIDATE CONSTRAINT ${name}`)
    }
  })
)
