import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The repeatable step after the SQL functions (`Migrations.migrate`): every key's entry in
 * `api_key_directory` made to say what its key and origin say (migration 0027). `KeyStore` keeps the
 * two in step from then on; this fills what existed before 0027, and what instances of the release
 * before wrote during a deploy (a key they issued, revoked, or an origin's limit they changed), so a
 * deploy ends with `migrate` run once more (docs/sre.md#upgrades-and-migrations). Only entries that
 * differ are written: each write to a reference table is a transaction on every node of a cluster.
 */
export const syncKeyDirectory = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const stale = yield* sql<{
    public_id: string
    key_hash: string
    livemode: boolean
    revoked_at: Date | null
    origin_id: string
    origin_label: string
    rate_limit: number
  }>`
    SELECT d.public_id, k.key_hash, k.livemode, k.revoked_at, o.id AS origin_id, o.label AS origin_label,
           o.rate_limit
    FROM api_key_directory d
    JOIN api_keys k ON k.organization_id = d.organization_id AND k.id = d.key_id
    JOIN origins o ON o.organization_id = k.organization_id AND o.id = k.origin_id
    WHERE d.key_hash IS DISTINCT FROM k.key_hash OR d.livemode IS DISTINCT FROM k.livemode
       OR d.revoked_at IS DISTINCT FROM k.revoked_at OR d.origin_id IS DISTINCT FROM o.id
       OR d.origin_label IS DISTINCT FROM o.label OR d.rate_limit IS DISTINCT FROM o.rate_limit`
  for (const entry of stale) {
    yield* sql`
      UPDATE api_key_directory
      SET key_hash = ${entry.key_hash}, livemode = ${entry.livemode}, revoked_at = ${entry.revoked_at},
          origin_id = ${entry.origin_id}, origin_label = ${entry.origin_label}, rate_limit = ${entry.rate_limit}
      WHERE public_id = ${entry.public_id}`
  }
  return stale.length
})
