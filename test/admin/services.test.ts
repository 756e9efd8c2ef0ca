import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Layer, Option, type Scope } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { Organizations } from "../../src/Accounts/Organizations.ts"
import { type AuditAction, auditActions } from "../../src/AdminApi/Audit.ts"
import { Audit } from "../../src/Console/AuditLog.ts"
import { LoginThrottle } from "../../src/Console/LoginThrottle.ts"
import { Operators } from "../../src/Console/Operators.ts"
import { defaultSessionPolicy, Sessions } from "../../src/Console/Sessions.ts"
import { layerFreshDatabase } from "../support/Database.ts"

type Services = Operators | Sessions | Audit | LoginThrottle | Organizations

/** The policy the console runs with: the tests below prove its 30 idle minutes and 12 hours. */
const sessionPolicy = defaultSessionPolicy
const throttlePolicy = {
  perPair: 3,
  perAddress: 5,
  firstDelay: Duration.seconds(10),
  maxDelay: Duration.minutes(2),
  forgetAfter: Duration.minutes(15)
}

const layerPostgres = Layer.mergeAll(
  Operators.layer,
  Sessions.layerWith(sessionPolicy),
  Audit.layer,
  LoginThrottle.layerWith(throttlePolicy),
  Organizations.layer
).pipe(Layer.provideMerge(layerFreshDatabase))

const organization = Effect.flatMap(Effect.service(Organizations), (organizations) =>
  organizations.create({ name: "Inmobiliaria Consola", country: "MX" })
)

const uniqueEmail = (name: string) => `${name}-${crypto.randomUUID().slice(0, 8)}@Example.com`

const minute = 60_000

layer(layerPostgres, { excludeTestServices: true })("console services (postgres)", (it) => {
  const test = <A, E>(name: string, self: () => Effect.Effect<A, E, Services | Scope.Scope>) =>
    it.effect(name, () => Effect.suspend(self).pipe(Effect.provide(TestClock.layer())))

  test("an operator signs in with the generated password only; e-mail is case-insensitive and unique", () =>
    Effect.gen(function* () {
      const operators = yield* Operators
      const org = yield* organization
      const email = uniqueEmail("ana")
      const added = yield* operators.add({ organizationId: org.id, email, role: "viewer" })
      assert.strictEqual(added.email, email.toLowerCase())
      assert.strictEqual(added.role, "viewer")
      assert.strictEqual(added.organizationId, org.id)
      assert.isAtLeast(added.password.length, 20)
      const signedIn = yield* operators.authenticate(email.toUpperCase(), added.password)
      assert.deepStrictEqual(
        Option.map(signedIn, (o) => o.id),
        Option.some(added.id)
      )
      assert.isTrue(Option.isNone(yield* operators.authenticate(email, `${added.password}x`)))
      assert.isTrue(Option.isNone(yield* operators.authenticate(uniqueEmail("nobody"), added.password)))
      const duplicate = yield* Effect.flip(
        operators.add({ organizationId: org.id, email: email.toUpperCase(), role: "admin" })
      )
      assert.strictEqual(duplicate._tag, "Rejected")
      const badEmail = yield* Effect.flip(
        operators.add({ organizationId: org.id, email: "not-an-email", role: "admin" })
      )
      assert.strictEqual(badEmail._tag, "Rejected")
      const unknownOrg = yield* Effect.flip(
        operators.add({ organizationId: crypto.randomUUID(), email: uniqueEmail("x"), role: "admin" })
      )
      assert.strictEqual(unknownOrg._tag, "UnknownEntity")
      const platform = yield* operators.add({
        organizationId: null,
        email: uniqueEmail("root"),
        role: "admin"
      })
      assert.isNull(platform.organizationId)
    }))

  test("reset-password replaces the password and ends the sessions; remove ends everything", () =>
    Effect.gen(function* () {
      const operators = yield* Operators
      const sessions = yield* Sessions
      const org = yield* organization
      const added = yield* operators.add({
        organizationId: org.id,
        email: uniqueEmail("luis"),
        role: "admin"
      })
      const session = yield* sessions.create({ operatorId: added.id, ip: "127.0.0.1" })
      const reset = yield* operators.resetPassword(added.email)
      assert.notStrictEqual(reset.password, added.password)
      assert.isTrue(Option.isNone(yield* operators.authenticate(added.email, added.password)))
      assert.isTrue(Option.isSome(yield* operators.authenticate(added.email, reset.password)))
      assert.isTrue(Option.isNone(yield* sessions.resolve(session.token)))
      const again = yield* sessions.create({ operatorId: added.id, ip: null })
      const removed = yield* operators.remove(added.email.toUpperCase())
      assert.strictEqual(removed.id, added.id)
      assert.isTrue(Option.isNone(yield* sessions.resolve(again.token)))
      assert.isTrue(Option.isNone(yield* operators.authenticate(added.email, reset.password)))
      assert.strictEqual((yield* Effect.flip(operators.remove(added.email)))._tag, "UnknownEntity")
      assert.strictEqual((yield* Effect.flip(operators.resetPassword(added.email)))._tag, "UnknownEntity")
    }))

  test("a session slides on use, ends after 30 idle minutes and 12 hours at most", () =>
    Effect.gen(function* () {
      const operators = yield* Operators
      const sessions = yield* Sessions
      const org = yield* organization
      const added = yield* operators.add({
        organizationId: org.id,
        email: uniqueEmail("eva"),
        role: "admin"
      })
      yield* TestClock.setTime(Date.parse("2026-01-01T00:00:00Z"))
      const idle = yield* sessions.create({ operatorId: added.id, ip: null })
      assert.notStrictEqual(idle.token, idle.csrfToken)
      const live = yield* sessions.resolve(idle.token)
      assert.deepStrictEqual(
        Option.map(live, (s) => [s.id, s.csrfToken, s.operator.id, s.operator.role]),
        Option.some([idle.id, idle.csrfToken, added.id, "admin"])
      )
      yield* TestClock.adjust(29 * minute)
      assert.isTrue(Option.isSome(yield* sessions.resolve(idle.token)), "used within 30 min")
      yield* TestClock.adjust(29 * minute)
      assert.isTrue(Option.isSome(yield* sessions.resolve(idle.token)), "slid by the last use")
      yield* TestClock.adjust(30 * minute)
      assert.isTrue(Option.isNone(yield* sessions.resolve(idle.token)), "30 idle minutes")

      const busy = yield* sessions.create({ operatorId: added.id, ip: null })
      for (let hour = 0; hour < 12 * 3 - 1; hour++) {
        yield* TestClock.adjust(20 * minute)
        assert.isTrue(Option.isSome(yield* sessions.resolve(busy.token)), `still live after ${hour}`)
      }
      yield* TestClock.adjust(20 * minute)
      assert.isTrue(Option.isNone(yield* sessions.resolve(busy.token)), "12 hours at most")
      assert.isTrue(Option.isNone(yield* sessions.resolve("not-a-token")))
    }))

  test("revoke ends one session, revokeAll every session of the operator and no one else's", () =>
    Effect.gen(function* () {
      const operators = yield* Operators
      const sessions = yield* Sessions
      const org = yield* organization
      const one = yield* operators.add({ organizationId: org.id, email: uniqueEmail("one"), role: "admin" })
      const other = yield* operators.add({
        organizationId: org.id,
        email: uniqueEmail("two"),
        role: "admin"
      })
      const [a, b, c] = yield* Effect.all([
        sessions.create({ operatorId: one.id, ip: null }),
        sessions.create({ operatorId: one.id, ip: null }),
        sessions.create({ operatorId: other.id, ip: null })
      ])
      yield* sessions.revoke(a!.id)
      assert.isTrue(Option.isNone(yield* sessions.resolve(a!.token)))
      assert.isTrue(Option.isSome(yield* sessions.resolve(b!.token)))
      yield* sessions.revokeAll(one.id)
      assert.isTrue(Option.isNone(yield* sessions.resolve(b!.token)))
      assert.isTrue(Option.isSome(yield* sessions.resolve(c!.token)))
    }))

  test("purge deletes dead sessions and ended throttle windows, and nothing live", () =>
    Effect.gen(function* () {
      const operators = yield* Operators
      const sessions = yield* Sessions
      const throttle = yield* LoginThrottle
      const org = yield* organization
      const added = yield* operators.add({
        organizationId: org.id,
        email: uniqueEmail("purge"),
        role: "admin"
      })
      yield* TestClock.setTime(Date.parse("2026-04-01T00:00:00Z"))
      const revoked = yield* sessions.create({ operatorId: added.id, ip: null })
      yield* sessions.revoke(revoked.id)
      const stale = yield* sessions.create({ operatorId: added.id, ip: null })
      const oldAttempt = { email: uniqueEmail("old"), ip: crypto.randomUUID() }
      yield* throttle.recordFailure(oldAttempt)
      yield* TestClock.adjust(31 * minute)
      const live = yield* sessions.create({ operatorId: added.id, ip: null })
      const recentAttempt = { email: uniqueEmail("recent"), ip: crypto.randomUUID() }
      for (let i = 0; i < 3; i++) yield* throttle.recordFailure(recentAttempt)
      assert.isAtLeast(yield* sessions.purge(), 2)
      assert.isAtLeast(yield* throttle.purge(), 2)
      assert.isTrue(Option.isSome(yield* sessions.resolve(live.token)))
      assert.isTrue(Option.isNone(yield* sessions.resolve(stale.token)))
      assert.isAbove(yield* throttle.check(recentAttempt), 0, "a live window is kept")
    }))

  test("login throttling: per (e-mail, address) after 3 failures, per address after 5; a doubling backoff, never a lock", () =>
    Effect.gen(function* () {
      const throttle = yield* LoginThrottle
      yield* TestClock.setTime(Date.parse("2026-02-01T00:00:00Z"))
      const ip = `10.0.0.${Math.floor(Math.random() * 250)}-${crypto.randomUUID()}`
      const guessing = { email: uniqueEmail("target"), ip }
      for (let failure = 0; failure < 3; failure++) {
        assert.strictEqual(yield* throttle.admit(guessing), 0)
      }
      assert.strictEqual(yield* throttle.check(guessing), 10)
      assert.strictEqual(yield* throttle.check({ ...guessing, email: guessing.email.toUpperCase() }), 10)
      assert.strictEqual(
        yield* throttle.check({ email: guessing.email, ip: "elsewhere" }),
        0,
        "the owner at another address"
      )
      for (let i = 0; i < 5; i++) {
        assert.strictEqual(yield* throttle.admit(guessing), 10, "refused attempts do not count")
      }
      const waits: Array<number> = []
      for (let i = 0; i < 6; i++) {
        yield* TestClock.adjust((yield* throttle.check(guessing)) * 1000)
        assert.strictEqual(yield* throttle.admit(guessing), 0, "admitted once the backoff is over")
        waits.push(yield* throttle.check(guessing))
      }
      assert.deepStrictEqual(waits, [20, 40, 80, 120, 120, 120], "doubling up to maxDelay")

      const bystander = { email: uniqueEmail("bystander"), ip }
      assert.isAbove(yield* throttle.check(bystander), 0, "9 failures from the address: it waits too")
      const fresh = `fresh-${crypto.randomUUID()}`
      for (let i = 0; i < 5; i++) {
        assert.strictEqual(yield* throttle.admit({ email: uniqueEmail(`many${i}`), ip: fresh }), 0)
      }
      assert.strictEqual(yield* throttle.check({ email: uniqueEmail("sixth"), ip: fresh }), 10)

      yield* TestClock.adjust(15 * minute)
      assert.strictEqual(yield* throttle.check(guessing), 0, "forgotten after 15 quiet minutes")
      yield* throttle.recordFailure(guessing)
      assert.strictEqual(yield* throttle.check(guessing), 0, "a forgotten count starts again from 1")

      const cleared = { email: uniqueEmail("cleared"), ip: crypto.randomUUID() }
      yield* throttle.recordFailure(cleared)
      yield* throttle.recordFailure(cleared)
      yield* throttle.recordSuccess(cleared)
      yield* throttle.recordFailure(cleared)
      yield* throttle.recordFailure(cleared)
      assert.strictEqual(yield* throttle.check(cleared), 0, "success cleared the pair's count")
    }))

  test("admit counts concurrent attempts one at a time: exactly the limit get through", () =>
    Effect.gen(function* () {
      const throttle = yield* LoginThrottle
      yield* TestClock.setTime(Date.parse("2026-05-01T00:00:00Z"))
      const attempt = { email: uniqueEmail("burst"), ip: crypto.randomUUID() }
      const waits = yield* Effect.all(
        Array.from({ length: 10 }, () => throttle.admit(attempt)),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(waits.filter((wait) => wait === 0).length, 3)
      assert.isTrue(waits.filter((wait) => wait > 0).every((wait) => wait === 10))
      const fresh = { email: uniqueEmail("ok"), ip: crypto.randomUUID() }
      assert.strictEqual(yield* throttle.admit(fresh), 0)
      yield* throttle.recordSuccess(fresh)
      for (let i = 0; i < 3; i++)
        assert.strictEqual(yield* throttle.admit(fresh), 0, "a success counts nothing")
      assert.isAbove(yield* throttle.admit(fresh), 0)
    }))

  test("the audit log lists an organization's entries newest first, by cursor, platform entries for admins", () =>
    Effect.gen(function* () {
      const audit = yield* Audit
      const org = yield* organization
      const other = yield* organization
      const entry = (organizationId: string | null, action: AuditAction) =>
        audit.record({
          organizationId,
          operatorId: null,
          operatorEmail: "ana@example.com",
          action,
          target: "origin x",
          ip: "127.0.0.1"
        })
      yield* TestClock.setTime(Date.parse("2026-03-01T10:00:00Z"))
      const actions = auditActions.slice(0, 12)
      for (const action of actions) yield* entry(org.id, action)
      yield* entry(other.id, "webhook.test")
      yield* entry(null, "session.sign_in")
      const first = yield* audit.list({ organizationId: org.id, includePlatform: false }, { limit: 3 })
      assert.deepStrictEqual(
        first.items.map((e) => e.action),
        actions.slice(9).reverse()
      )
      assert.strictEqual(first.items[0]!.at.toISOString(), "2026-03-01T10:00:00.000Z")
      assert.strictEqual(first.items[0]!.ip, "127.0.0.1")
      assert.isString(first.nextCursor)
      const second = yield* audit.list(
        { organizationId: org.id, includePlatform: false },
        { cursor: first.nextCursor!, limit: 9 }
      )
      assert.deepStrictEqual(
        second.items.map((e) => e.action),
        actions.slice(0, 9).reverse()
      )
      assert.isNull(second.nextCursor)
      const platform = yield* audit.list({ organizationId: org.id, includePlatform: true }, { limit: 100 })
      assert.include(
        platform.items.map((e) => e.action),
        "session.sign_in"
      )
      assert.notInclude(
        platform.items.map((e) => e.action),
        "webhook.test"
      )
      const garbage = yield* audit.list(
        { organizationId: org.id, includePlatform: false },
        { cursor: "x'; --", limit: 2 }
      )
      assert.strictEqual(garbage.items.length, 2, "a malformed cursor starts from the top")
    }))
})

layer(layerPostgres, { excludeTestServices: true })("console storage (postgres)", (it) => {
  it.effect("stores the password as a salted scrypt hash and the session token only as its SHA-256", () =>
    Effect.gen(function* () {
      const operators = yield* Operators
      const sessions = yield* Sessions
      const sql = yield* SqlClient.SqlClient
      const org = yield* organization
      const one = yield* operators.add({ organizationId: org.id, email: uniqueEmail("hash"), role: "admin" })
      const two = yield* operators.add({ organizationId: org.id, email: uniqueEmail("hash"), role: "admin" })
      const session = yield* sessions.create({ operatorId: one.id, ip: null })
      const rows = yield* sql<{ password_hash: string }>`
        SELECT password_hash FROM operators WHERE id IN (${one.id}, ${two.id}) ORDER BY email`
      for (const row of rows) {
        assert.match(row.password_hash, /^scrypt\$131072\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/)
        assert.notInclude(row.password_hash, one.password)
      }
      assert.notStrictEqual(
        rows[0]!.password_hash.split("$")[4],
        rows[1]!.password_hash.split("$")[4],
        "per-user salt"
      )
      const dump = yield* sql<{ row: string }>`SELECT s::text AS row FROM operator_sessions s`
      assert.isTrue(dump.length > 0)
      for (const { row } of dump) assert.notInclude(row, session.token)
    })
  )
})
