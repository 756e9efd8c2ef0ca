import { assert, layer } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { SqlClient } from "effect/sql"
import { syncKeyDirectory } from "../../migrations/keyDirectory.ts"
import { KeyStore } from "../../src/Accounts/KeyStore.ts"
import { generateApiKey } from "../../src/Domain/ApiKey.ts"
import { layerPostgresServices, seed } from "../support/Client.ts"

/**
 * `authenticate` reads the global key directory alone (migration 0027: on Citus a reference table the
 * coordinator answers). These hold it to the keys and origins it repeats: every write of the key store
 * keeps it in step, and `migrate` brings in step what the release before 0027 wrote during a deploy.
 */

/** Where the directory and the key's own rows disagree, by public id (none: in step). */
const outOfStep = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ public_id: string }>`
    SELECT d.public_id
    FROM api_key_directory d
    JOIN api_keys k ON k.organization_id = d.organization_id AND k.id = d.key_id
    JOIN origins o ON o.organization_id = k.organization_id AND o.id = k.origin_id
    WHERE d.key_hash IS DISTINCT FROM k.key_hash OR d.livemode IS DISTINCT FROM k.livemode
       OR d.revoked_at IS DISTINCT FROM k.revoked_at OR d.origin_id IS DISTINCT FROM o.id
       OR d.origin_label IS DISTINCT FROM o.label OR d.rate_limit IS DISTINCT FROM o.rate_limit
    ORDER BY 1`.pipe(Effect.orDie)
  return rows.map((row) => row.public_id)
})

layer(layerPostgresServices, { excludeTestServices: true })("the key directory (postgres)", (it) => {
  it.effect("every write of the key store leaves the directory saying what the keys and origins say", () =>
    Effect.gen(function* () {
      const keys = yield* KeyStore
      const fixture = yield* seed({ rateLimit: 40 })
      assert.deepStrictEqual(yield* outOfStep, [], "a new origin's key")
      yield* keys.rotate(fixture.originId, "test")
      assert.deepStrictEqual(yield* outOfStep, [], "a test key issued")
      yield* keys.setRateLimit(fixture.originId, 7)
      assert.deepStrictEqual(yield* outOfStep, [], "the origin's limit changed")
      const rotated = yield* keys.rotate(fixture.originId)
      assert.deepStrictEqual(yield* outOfStep, [], "a rotation revokes one key and issues another")
      yield* keys.revoke(fixture.originId, "test")
      yield* keys.revoke(fixture.originId)
      assert.deepStrictEqual(yield* outOfStep, [], "revocations")
      const refused = yield* Effect.exit(keys.authenticate(rotated.key))
      assert.isTrue(Exit.isFailure(refused), "a revoked key is refused on its next request")
      assert.strictEqual(yield* syncKeyDirectory, 0, "migrate finds nothing to bring in step")
    })
  )

  it.effect(
    "a key the release before wrote authenticates, and migrate brings its directory entry in step",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const keys = yield* KeyStore
        const fixture = yield* seed({ rateLimit: 25 })
        // As the release before 0027 rotates a key: the directory names only the new key's organization and id.
        yield* keys.revoke(fixture.originId)
        const issued = generateApiKey("live")
        yield* sql`
        WITH key AS (
          INSERT INTO api_keys (organization_id, origin_id, public_id, prefix, key_hash, livemode)
          VALUES (${fixture.organizationId}, ${fixture.originId}, ${issued.publicId}, ${issued.prefix}, ${issued.hash}, true)
          RETURNING id
        )
        INSERT INTO api_key_directory (public_id, organization_id, key_id)
        SELECT ${issued.publicId}, ${fixture.organizationId}, id FROM key`.pipe(Effect.orDie)
        const caller = yield* keys.authenticate(issued.key)
        assert.strictEqual(caller.originId, fixture.originId)
        assert.strictEqual(caller.rateLimit, 25)
        assert.deepStrictEqual(yield* outOfStep, [issued.publicId])

        assert.strictEqual(yield* syncKeyDirectory, 1)
        assert.deepStrictEqual(yield* outOfStep, [])
        // The release before revokes it by its own row alone; migrate carries that to the directory.
        yield* sql`UPDATE api_keys SET revoked_at = now() WHERE public_id = ${issued.publicId}`.pipe(
          Effect.orDie
        )
        assert.deepStrictEqual(yield* outOfStep, [issued.publicId])
        assert.strictEqual(yield* syncKeyDirectory, 1)
        const refused = yield* Effect.flip(keys.authenticate(issued.key))
        assert.strictEqual(refused._tag === "KeyRejected" ? refused.reason : refused._tag, "revoked")
      })
  )
})
