import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { step } from "./Observability/Steps.ts"
import { pipelinedSql } from "./Sql/Sql.ts"

/**
 * What a request-path service on PostgreSQL takes when its layer is built: the pooled client (writes
 * and transactions), the client its one-statement reads share with other requests' with the bound
 * that fits it (`readOrFail`), and its steps.
 */
export const sqlService = Effect.gen(function* () {
  const { sql: read, orFail: readOrFail } = yield* pipelinedSql
  return { sql: yield* SqlClient.SqlClient, read, readOrFail, fn: yield* step }
})
