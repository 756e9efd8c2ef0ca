import { randomBytes, scryptSync } from "node:crypto"
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { Organizations } from "../../src/Accounts/Organizations.ts"
import { Operators } from "../../src/Console/Operators.ts"
import { hashPassword, needsRehash, verifyPassword } from "../../src/Domain/Password.ts"
import { layerFreshDatabase } from "../support/Database.ts"

/** A hash as stored before issue 26: scrypt N=2^15, r=8, p=1. */
const legacyHash = (password: string) => {
  const salt = randomBytes(16)
  const hash = scryptSync(password.normalize("NFC"), salt, 32, {
    N: 2 ** 15,
    r: 8,
    p: 1,
    maxmem: 64 * 1024 * 1024
  })
  return ["scrypt", 2 ** 15, 8, 1, salt.toString("base64url"), hash.toString("base64url")].join("$")
}

describe("password hashes", { timeout: 60_000 }, () => {
  it("are scrypt with N=2^17, r=8, p=1 (OWASP's minimum) and verify only the right password", async () => {
    const stored = await hashPassword("correct horse")
    const [scheme, n, r, p, salt, hash] = stored.split("$")
    expect([scheme, n, r, p]).toEqual(["scrypt", "131072", "8", "1"])
    expect(Buffer.from(salt!, "base64url")).toHaveLength(16)
    expect(Buffer.from(hash!, "base64url")).toHaveLength(32)
    expect(await verifyPassword("correct horse", stored)).toBe(true)
    expect(await verifyPassword("correct horsf", stored)).toBe(false)
    expect(needsRehash(stored)).toBe(false)
    expect(await hashPassword("correct horse")).not.toBe(stored)
  })

  it("made with the old N=2^15 still verify, and are marked for re-hashing", async () => {
    const old = legacyHash("Contraseña")
    expect(await verifyPassword("Contraseña", old)).toBe(true)
    expect(await verifyPassword("Contrasena", old)).toBe(false)
    expect(needsRehash(old)).toBe(true)
    expect(await verifyPassword("x", "bcrypt$whatever")).toBe(false)
  })
})

const setHash = (id: string, hash: string) =>
  Effect.flatMap(
    Effect.service(SqlClient.SqlClient),
    (sql) => sql`UPDATE operators SET password_hash = ${hash} WHERE id = ${id}`
  ).pipe(Effect.orDie, Effect.asVoid)

const getHash = (id: string) =>
  Effect.flatMap(
    Effect.service(SqlClient.SqlClient),
    (sql) => sql<{ password_hash: string }>`SELECT password_hash FROM operators WHERE id = ${id}`
  ).pipe(
    Effect.orDie,
    Effect.map((rows) => rows[0]!.password_hash)
  )

const services = Layer.mergeAll(Operators.layer, Organizations.layer).pipe(
  Layer.provideMerge(layerFreshDatabase)
)

layer(services, { timeout: 60_000 })(
  "an old hash is replaced at the next successful sign-in (postgres)",
  (it) => {
    it.effect(
      "a wrong password leaves the old hash; the right one signs in and stores an N=2^17 hash that still verifies",
      () =>
        Effect.gen(function* () {
          const operators = yield* Operators
          const org = yield* Effect.flatMap(Effect.service(Organizations), (o) =>
            o.create({ name: "Hashes", country: "MX" })
          )
          const added = yield* operators.add({
            organizationId: org.id,
            email: `old-${crypto.randomUUID().slice(0, 8)}@example.com`,
            role: "admin"
          })
          const old = legacyHash("the old password")
          yield* setHash(added.id, old)
          assert.isTrue(Option.isNone(yield* operators.authenticate(added.email, "not it")))
          assert.strictEqual(yield* getHash(added.id), old, "a failed sign-in changes nothing")
          const signedIn = yield* operators.authenticate(added.email, "the old password")
          assert.deepStrictEqual(
            Option.map(signedIn, (o) => o.id),
            Option.some(added.id)
          )
          const fresh = yield* getHash(added.id)
          assert.notStrictEqual(fresh, old)
          assert.match(fresh, /^scrypt\$131072\$8\$1\$/)
          assert.isTrue(Option.isSome(yield* operators.authenticate(added.email, "the old password")))
          assert.strictEqual(yield* getHash(added.id), fresh, "a current hash is left alone")
        })
    )
  }
)
