import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { KeyStore } from "../../src/Accounts/KeyStore.ts"
import { Organizations } from "../../src/Accounts/Organizations.ts"
import { apiKeyChecksum, generateApiKey, parseApiKey } from "../../src/Domain/ApiKey.ts"
import { RequestLog } from "../../src/Intake/RequestLog.ts"
import { acrossLayers, expectFailure, setClock } from "./Suite.ts"

const newOrganization = (country = "MX") =>
  Effect.gen(function* () {
    const organizations = yield* Organizations
    return yield* organizations.create({ name: "Inmobiliaria Llaves", country })
  })

/** The caller the request path's key check finds for a token. */
const authenticate = (token: string) => Effect.flatMap(KeyStore, (keys) => keys.authenticate(token))

const authenticateRejected = (token: string) =>
  Effect.gen(function* () {
    const error = yield* expectFailure(authenticate(token))
    assert.strictEqual(error._tag, "KeyRejected")
    return error as Extract<typeof error, { _tag: "KeyRejected" }>
  })

acrossLayers("KeyStore", (it) => {
  it.effect("issues a key in the contract's shape that authenticates to the caller's origin", () =>
    Effect.gen(function* () {
      const keys = yield* KeyStore
      const organization = yield* newOrganization("CO")
      const origin = yield* keys.createOrigin({
        organizationId: organization.id,
        label: "web-form",
        rateLimit: 45
      })
      assert.deepStrictEqual(origin, {
        id: origin.id,
        label: "web-form",
        rateLimit: 45,
        key: origin.key,
        prefix: origin.key.slice(0, 16)
      })
      assert.strictEqual(origin.key.length, 55)
      assert.deepStrictEqual(parseApiKey(origin.key)?.prefix, origin.prefix)

      const caller = yield* authenticate(origin.key)
      assert.isString(caller.keyId)
      assert.deepStrictEqual(
        { ...caller, keyId: "" },
        {
          keyId: "",
          prefix: origin.prefix,
          originId: origin.id,
          originLabel: "web-form",
          organizationId: organization.id,
          country: "CO",
          rateLimit: 45,
          livemode: true
        }
      )
    })
  )

  it.effect(
    "rejects malformed tokens without attributing them, keeping the visible prefix when there is one",
    () =>
      Effect.gen(function* () {
        const keys = yield* KeyStore
        const organization = yield* newOrganization()
        const origin = yield* keys.createOrigin({
          organizationId: organization.id,
          label: "bot",
          rateLimit: 60
        })

        const garbage = yield* authenticateRejected("not-a-key")
        assert.deepStrictEqual(
          { reason: garbage.reason, prefix: garbage.prefix, originId: garbage.originId },
          { reason: "malformed", prefix: null, originId: null }
        )

        const truncated = yield* authenticateRejected(origin.key.slice(0, -1))
        assert.deepStrictEqual(
          { reason: truncated.reason, prefix: truncated.prefix, originId: truncated.originId },
          { reason: "malformed", prefix: origin.prefix, originId: null }
        )

        const last = origin.key.at(-1)
        const badChecksum = yield* authenticateRejected(
          `${origin.key.slice(0, -1)}${last === "0" ? "1" : "0"}`
        )
        assert.deepStrictEqual(
          { reason: badChecksum.reason, prefix: badChecksum.prefix, originId: badChecksum.originId },
          { reason: "malformed", prefix: origin.prefix, originId: null }
        )
      })
  )

  it.effect(
    "rejects an unknown key, attributing it to an origin only when its public id is one of ours",
    () =>
      Effect.gen(function* () {
        const keys = yield* KeyStore
        const organization = yield* newOrganization()
        const origin = yield* keys.createOrigin({
          organizationId: organization.id,
          label: "call-center",
          rateLimit: 60
        })

        const stranger = generateApiKey()
        const unknown = yield* authenticateRejected(stranger.key)
        assert.deepStrictEqual(
          { reason: unknown.reason, prefix: unknown.prefix, originId: unknown.originId },
          { reason: "unknown", prefix: stranger.prefix, originId: null }
        )

        // Our public id with another secret, and a checksum that is valid for it.
        const body = `${origin.prefix}_${"x".repeat(32)}`
        const forged = yield* authenticateRejected(body + apiKeyChecksum(body))
        assert.deepStrictEqual(
          { reason: forged.reason, prefix: forged.prefix, originId: forged.originId },
          { reason: "unknown", prefix: origin.prefix, originId: origin.id }
        )
      })
  )

  it.effect("revokes the active key at once; the revoked key is attributed to its origin", () =>
    Effect.gen(function* () {
      const keys = yield* KeyStore
      const now = yield* setClock("2026-03-01T10:00:00.000Z")
      const organization = yield* newOrganization()
      const origin = yield* keys.createOrigin({
        organizationId: organization.id,
        label: "zapier",
        rateLimit: 60
      })

      const revoked = yield* keys.revoke(origin.id)
      assert.deepStrictEqual(revoked, { prefix: origin.prefix, revokedAt: new Date(now) })

      const rejected = yield* authenticateRejected(origin.key)
      assert.deepStrictEqual(
        { reason: rejected.reason, prefix: rejected.prefix, originId: rejected.originId },
        { reason: "revoked", prefix: origin.prefix, originId: origin.id }
      )

      const again = yield* expectFailure(keys.revoke(origin.id))
      assert.strictEqual(again._tag, "Rejected")

      assert.deepStrictEqual(yield* keys.listOrigins(organization.id), [
        {
          id: origin.id,
          label: "zapier",
          prefix: origin.prefix,
          created_at: "2026-03-01T10:00:00.000Z",
          last_used_at: null,
          requests_24h: 0,
          rate_limit: 60,
          revoked: true,
          test_prefix: null
        }
      ])
    })
  )

  it.effect("rotates: the previous key is revoked in the same instant and the new one works", () =>
    Effect.gen(function* () {
      const keys = yield* KeyStore
      yield* setClock("2026-03-01T11:00:00.000Z")
      const organization = yield* newOrganization()
      const origin = yield* keys.createOrigin({
        organizationId: organization.id,
        label: "landing",
        rateLimit: 60
      })

      const rotated = yield* keys.rotate(origin.id)
      assert.notStrictEqual(rotated.prefix, origin.prefix)
      assert.deepStrictEqual(rotated, { key: rotated.key, prefix: rotated.key.slice(0, 16) })
      assert.strictEqual((yield* authenticate(rotated.key)).originId, origin.id)
      assert.strictEqual((yield* authenticateRejected(origin.key)).reason, "revoked")

      assert.deepStrictEqual(yield* keys.listOrigins(organization.id), [
        {
          id: origin.id,
          label: "landing",
          prefix: rotated.prefix,
          created_at: "2026-03-01T11:00:00.000Z",
          last_used_at: null,
          requests_24h: 0,
          rate_limit: 60,
          revoked: false,
          test_prefix: null
        }
      ])
    })
  )

  it.effect("keeps one active key per origin across rotations and after a revocation", () =>
    Effect.gen(function* () {
      const keys = yield* KeyStore
      yield* setClock("2026-03-01T12:00:00.000Z")
      const organization = yield* newOrganization()
      const origin = yield* keys.createOrigin({
        organizationId: organization.id,
        label: "portal",
        rateLimit: 60
      })
      const second = yield* keys.rotate(origin.id)
      const third = yield* keys.rotate(origin.id)

      for (const key of [origin.key, second.key]) {
        assert.strictEqual((yield* authenticateRejected(key)).reason, "revoked")
      }
      assert.strictEqual((yield* authenticate(third.key)).originId, origin.id)

      yield* keys.revoke(origin.id)
      const fourth = yield* keys.rotate(origin.id)
      for (const key of [origin.key, second.key, third.key]) {
        assert.strictEqual((yield* authenticateRejected(key)).reason, "revoked")
      }
      assert.strictEqual((yield* authenticate(fourth.key)).originId, origin.id)
      assert.deepStrictEqual(yield* keys.listOrigins(organization.id), [
        {
          id: origin.id,
          label: "portal",
          prefix: fourth.prefix,
          created_at: "2026-03-01T12:00:00.000Z",
          last_used_at: null,
          requests_24h: 0,
          rate_limit: 60,
          revoked: false,
          test_prefix: null
        }
      ])
    })
  )

  it.effect("lists the organization's origins in creation order, then by label, and only those", () =>
    Effect.gen(function* () {
      const keys = yield* KeyStore
      const organization = yield* newOrganization()
      const other = yield* newOrganization()
      assert.deepStrictEqual(yield* keys.listOrigins(organization.id), [])

      yield* setClock("2026-03-01T09:00:00.000Z")
      const web = yield* keys.createOrigin({ organizationId: organization.id, label: "web", rateLimit: 60 })
      yield* setClock("2026-03-01T09:00:01.000Z")
      const zeta = yield* keys.createOrigin({ organizationId: organization.id, label: "zeta", rateLimit: 60 })
      const chat = yield* keys.createOrigin({
        organizationId: organization.id,
        label: "chatbot",
        rateLimit: 30
      })
      yield* keys.createOrigin({ organizationId: other.id, label: "web", rateLimit: 60 })

      assert.deepStrictEqual(yield* keys.listOrigins(organization.id), [
        {
          id: web.id,
          label: "web",
          prefix: web.prefix,
          created_at: "2026-03-01T09:00:00.000Z",
          last_used_at: null,
          requests_24h: 0,
          rate_limit: 60,
          revoked: false,
          test_prefix: null
        },
        {
          id: chat.id,
          label: "chatbot",
          prefix: chat.prefix,
          created_at: "2026-03-01T09:00:01.000Z",
          last_used_at: null,
          requests_24h: 0,
          rate_limit: 30,
          revoked: false,
          test_prefix: null
        },
        {
          id: zeta.id,
          label: "zeta",
          prefix: zeta.prefix,
          created_at: "2026-03-01T09:00:01.000Z",
          last_used_at: null,
          requests_24h: 0,
          rate_limit: 60,
          revoked: false,
          test_prefix: null
        }
      ])
    })
  )

  it.effect("lists when an origin was last used and its requests of the last 24 h, live requests only", () =>
    Effect.gen(function* () {
      const keys = yield* KeyStore
      const log = yield* RequestLog
      const organization = yield* newOrganization()
      yield* setClock("2026-03-01T08:00:00.000Z")
      const origin = yield* keys.createOrigin({
        organizationId: organization.id,
        label: "web",
        rateLimit: 60
      })
      const request = (at: string, livemode: boolean) =>
        log.record({
          requestId: crypto.randomUUID(),
          at: Date.parse(at),
          originId: origin.id,
          keyPrefix: origin.prefix,
          status: 201,
          outcome: "created",
          leadId: null,
          idempotencyKey: null,
          durationMs: 2,
          livemode
        })
      yield* request("2026-03-01T09:00:00.000Z", true)
      yield* request("2026-03-02T09:30:00.000Z", true)
      yield* request("2026-03-02T09:45:00.000Z", false)
      yield* log.flush
      yield* setClock("2026-03-02T10:00:00.000Z")
      assert.deepStrictEqual(yield* keys.listOrigins(organization.id), [
        {
          id: origin.id,
          label: "web",
          prefix: origin.prefix,
          created_at: "2026-03-01T08:00:00.000Z",
          last_used_at: "2026-03-02T09:30:00.000Z",
          requests_24h: 1,
          rate_limit: 60,
          revoked: false,
          test_prefix: null
        }
      ])
    })
  )

  it.effect("applies a new rate limit to the next authentication", () =>
    Effect.gen(function* () {
      const keys = yield* KeyStore
      const organization = yield* newOrganization()
      const origin = yield* keys.createOrigin({
        organizationId: organization.id,
        label: "crm-sync",
        rateLimit: 60
      })
      assert.strictEqual((yield* authenticate(origin.key)).rateLimit, 60)
      yield* keys.setRateLimit(origin.id, 5)
      assert.strictEqual((yield* authenticate(origin.key)).rateLimit, 5)
    })
  )

  it.effect("rejects a duplicate label within an organization but allows it in another", () =>
    Effect.gen(function* () {
      const keys = yield* KeyStore
      const organization = yield* newOrganization()
      const other = yield* newOrganization()
      yield* keys.createOrigin({ organizationId: organization.id, label: "web", rateLimit: 60 })

      const duplicate = yield* expectFailure(
        keys.createOrigin({ organizationId: organization.id, label: "web", rateLimit: 10 })
      )
      assert.strictEqual(duplicate._tag, "Rejected")
      assert.strictEqual((yield* keys.listOrigins(organization.id)).length, 1)

      const elsewhere = yield* keys.createOrigin({ organizationId: other.id, label: "web", rateLimit: 60 })
      assert.strictEqual(elsewhere.label, "web")
    })
  )

  it.effect("answers UnknownEntity for ids that do not exist", () =>
    Effect.gen(function* () {
      const keys = yield* KeyStore
      const missing = crypto.randomUUID()
      const failures = [
        yield* expectFailure(keys.createOrigin({ organizationId: missing, label: "web", rateLimit: 60 })),
        yield* expectFailure(keys.listOrigins(missing)),
        yield* expectFailure(keys.setRateLimit(missing, 10)),
        yield* expectFailure(keys.rotate(missing)),
        yield* expectFailure(keys.revoke(missing))
      ]
      for (const failure of failures) {
        assert.strictEqual(failure._tag, "UnknownEntity")
        assert.strictEqual((failure as { id: string }).id, missing)
      }
    })
  )
})
