import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { foreignKeys, referencedKeys } from "./0024_organization_foreign_keys.ts"
import { outsideTransaction, shortTransaction } from "./outsideTransaction.ts"

/**
 * Keys that distribute (docs/sre.md#distributing-by-organization-citus), step 4 of 5, the last of
 * the expand release: every foreign key between tenant tables gets a twin on `(organization_id, …)`,
 * pointing at the unique indexes 0023 built, beside the old one (kept until 0026, for the previous
 * release).
 *
 * Each key is added `NOT VALID` in a short transaction of its own (it locks its table and the one it
 * points at for a moment, and checks no row), then validated outside any transaction (a validation
 * reads the table under a lock that blocks no writer). The SQL functions were applied before this
 * one: a key depends on nothing they do, nor they on a key. Safe to run again: a key that exists is
 * not added again, a validated one not validated again.
 */
export default outsideTransaction(
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const state = (table: string, name: string) =>
      sql<{ validated: boolean }>`
        SELECT convalidated AS validated FROM pg_constraint WHERE conrelid = ${table}::regclass AND conname = ${name}`
    for (const [table, , name, columns, references, action] of foreignKeys) {
      const [key] = yield* state(table, name)
      if (key === undefined)
        yield* shortTransaction(
          `${table}.${name}`,
          sql.unsafe(
            `ALTER TABLE ${table} ADD CONSTRAINT ${name} FOREIGN KEY (${columns})
             REFERENCES ${references} (${referencedKeys[references]}) ${action ?? ""} NOT VALID`
          )
        )
    }
    for (const [table, , name] of foreignKeys) {
      const [key] = yield* state(table, name)
      if (key?.validated === false) yield* sql.unsafe(`ALTER TABLE ${table} VALIDATE CONSTRAINT ${name}`)
    }
  })
)
