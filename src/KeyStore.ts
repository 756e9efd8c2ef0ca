import { Clock, Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { CallerShape } from "./Api.ts"
import { generateApiKey, hashApiKey, hashesEqual, parseApiKey, visiblePrefixOf } from "./Domain/ApiKey.ts"
import { Rejected, UnknownEntity } from "./Domain/Errors.ts"
import { MemoryStore } from "./MemoryStore.ts"
import { countInMemory, type WindowState, windowOf, windowStartOf } from "./RateLimiter.ts"
import { availableOrFail, type StoreUnavailable } from "./Sql.ts"

/** Why a bearer token was refused; `originId` is known when the prefix names a key (a revoked one, say). */
export class KeyRejected extends Schema.TaggedError<KeyRejected>()("KeyRejected", {
  reason: Schema.Literals(["missing", "malformed", "unknown", "revoked"]),
  prefix: Schema.NullOr(Schema.String),
  originId: Schema.NullOr(Schema.String)
}) {}

/** A malformed or mistyped token is refused here, before any lookup. */
const parseToken = (token: string) => {
  const parsed = parseApiKey(token)
  return parsed === undefined
    ? Effect.fail(
        new KeyRejected({ reason: "malformed", prefix: visiblePrefixOf(token) ?? null, originId: null })
      )
    : Effect.succeed(parsed)
}

export interface OriginSummary {
  readonly id: string
  readonly label: string
  readonly prefix: string | null
  readonly revoked: boolean
}

export interface Admitted {
  readonly caller: CallerShape
  readonly window: WindowState
}

interface KeyRow {
  readonly key_id: string
  readonly key_hash: string
  readonly revoked: boolean
  readonly origin_id: string
  readonly label: string
  readonly rate_limit: number
  readonly organization_id: string
  readonly country: string
}

/** The caller a key row stands for, or why the token does not match it. */
const callerOf = (token: string, parsed: { readonly prefix: string }, row: KeyRow | undefined) => {
  if (row === undefined || !hashesEqual(row.key_hash, hashApiKey(token))) {
    return Effect.fail(
      new KeyRejected({ reason: "unknown", prefix: parsed.prefix, originId: row?.origin_id ?? null })
    )
  }
  if (row.revoked) {
    return Effect.fail(new KeyRejected({ reason: "revoked", prefix: parsed.prefix, originId: row.origin_id }))
  }
  return Effect.as(
    Effect.annotateCurrentSpan({ "origin.id": row.origin_id, "organization.id": row.organization_id }),
    {
      keyId: row.key_id,
      prefix: parsed.prefix,
      originId: row.origin_id,
      originLabel: row.label,
      organizationId: row.organization_id,
      country: row.country,
      rateLimit: row.rate_limit
    } satisfies CallerShape
  )
}

export interface IssuedKey {
  readonly key: string
  readonly prefix: string
}

export class KeyStore extends Context.Service<
  KeyStore,
  {
    authenticate(token: string): Effect.Effect<CallerShape, KeyRejected | StoreUnavailable>
    /**
     * Authenticates and counts the request in its origin's current rate-limit window, in one
     * round trip; a refused key counts nothing, and neither does a request over the limit.
     */
    admit(token: string): Effect.Effect<Admitted, KeyRejected | StoreUnavailable>
    createOrigin(input: {
      readonly organizationId: string
      readonly label: string
      readonly rateLimit: number
    }): Effect.Effect<
      { readonly id: string; readonly label: string; readonly rateLimit: number } & IssuedKey,
      UnknownEntity | Rejected
    >
    setRateLimit(originId: string, rateLimit: number): Effect.Effect<void, UnknownEntity>
    listOrigins(organizationId: string): Effect.Effect<ReadonlyArray<OriginSummary>, UnknownEntity>
    /** Issues a new key for the origin; the previous one is revoked in the same instant. */
    rotate(originId: string): Effect.Effect<IssuedKey, UnknownEntity>
    revoke(
      originId: string
    ): Effect.Effect<{ readonly prefix: string; readonly revokedAt: Date }, UnknownEntity | Rejected>
  }
>()("lead-intake/KeyStore") {
  static readonly layer = Layer.effect(
    KeyStore,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient

      const insertKey = (originId: string) => {
        const issued = generateApiKey()
        return sql`
          INSERT INTO api_keys (origin_id, public_id, prefix, key_hash)
          VALUES (${originId}, ${issued.publicId}, ${issued.prefix}, ${issued.hash})`.pipe(
          Effect.as({ key: issued.key, prefix: issued.prefix })
        )
      }

      const requireOrigin = Effect.fn("KeyStore.requireOrigin")(function* (id: string) {
        const [row] = yield* sql`SELECT 1 FROM origins WHERE id = ${id} FOR UPDATE`.pipe(Effect.orDie)
        if (row === undefined) return yield* new UnknownEntity({ entity: "origin", id })
      })

      return KeyStore.of({
        authenticate: Effect.fn("KeyStore.authenticate")(function* (token) {
          const parsed = yield* parseToken(token)
          yield* Effect.annotateCurrentSpan({ "key.prefix": parsed.prefix })
          const rows = yield* sql<KeyRow>`
            SELECT k.id AS key_id, k.key_hash, k.revoked_at IS NOT NULL AS revoked, o.id AS origin_id, o.label,
                   o.rate_limit, g.id AS organization_id, g.country
            FROM api_keys k
            JOIN origins o ON o.id = k.origin_id
            JOIN organizations g ON g.id = o.organization_id
            WHERE k.public_id = ${parsed.publicId}`.pipe(availableOrFail("KeyStore.authenticate"))
          return yield* callerOf(token, parsed, rows[0])
        }),

        admit: Effect.fn("KeyStore.admit")(function* (token) {
          const parsed = yield* parseToken(token)
          yield* Effect.annotateCurrentSpan({ "key.prefix": parsed.prefix })
          const now = yield* Clock.currentTimeMillis
          // The window row is counted only for a matching, unrevoked key, and only under the limit.
          const rows = yield* sql<KeyRow & { readonly count: number | null }>`
            WITH key AS (
              SELECT k.id AS key_id, k.key_hash, k.revoked_at IS NOT NULL AS revoked, o.id AS origin_id, o.label,
                     o.rate_limit, g.id AS organization_id, g.country
              FROM api_keys k
              JOIN origins o ON o.id = k.origin_id
              JOIN organizations g ON g.id = o.organization_id
              WHERE k.public_id = ${parsed.publicId}
            ),
            counted AS (
              INSERT INTO rate_limit_windows AS w (origin_id, window_start, count)
              SELECT origin_id, ${windowStartOf(now)}, 1 FROM key WHERE key_hash = ${hashApiKey(token)} AND NOT revoked
              ON CONFLICT (origin_id, window_start) DO UPDATE SET count = w.count + 1
                WHERE w.count < (SELECT rate_limit FROM key)
              RETURNING count
            )
            SELECT key.*, (SELECT count FROM counted) AS count FROM key`.pipe(
            availableOrFail("KeyStore.admit")
          )
          const caller = yield* callerOf(token, parsed, rows[0])
          const window = windowOf(now, caller.rateLimit, rows[0]!.count)
          yield* Effect.annotateCurrentSpan({
            "ratelimit.remaining": window.remaining,
            "ratelimit.allowed": window.allowed
          })
          return { caller, window }
        }),

        createOrigin: Effect.fn("KeyStore.createOrigin")(function* (input) {
          const [organization] =
            yield* sql`SELECT 1 FROM organizations WHERE id = ${input.organizationId}`.pipe(Effect.orDie)
          if (organization === undefined) {
            return yield* new UnknownEntity({ entity: "organization", id: input.organizationId })
          }
          return yield* sql
            .withTransaction(
              Effect.gen(function* () {
                const [origin] = yield* sql<{ id: string; label: string; rate_limit: number }>`
                  INSERT INTO origins (organization_id, label, rate_limit)
                  VALUES (${input.organizationId}, ${input.label}, ${input.rateLimit})
                  RETURNING id, label, rate_limit`
                const issued = yield* insertKey(origin!.id)
                return { id: origin!.id, label: origin!.label, rateLimit: origin!.rate_limit, ...issued }
              })
            )
            .pipe(
              Effect.catchIf(
                (error) => error.reason._tag === "UniqueViolation",
                () =>
                  Effect.fail(
                    new Rejected({
                      reason: `the organization already has an origin labelled "${input.label}"`
                    })
                  )
              ),
              Effect.catchTag("SqlError", Effect.die)
            )
        }),

        setRateLimit: Effect.fn("KeyStore.setRateLimit")(function* (originId, rateLimit) {
          const rows =
            yield* sql`UPDATE origins SET rate_limit = ${rateLimit} WHERE id = ${originId} RETURNING id`.pipe(
              Effect.orDie
            )
          if (rows.length === 0) return yield* new UnknownEntity({ entity: "origin", id: originId })
        }),

        listOrigins: Effect.fn("KeyStore.listOrigins")(function* (organizationId) {
          const [organization] = yield* sql`SELECT 1 FROM organizations WHERE id = ${organizationId}`.pipe(
            Effect.orDie
          )
          if (organization === undefined)
            return yield* new UnknownEntity({ entity: "organization", id: organizationId })
          const rows = yield* sql<{ id: string; label: string; prefix: string | null; revoked: boolean }>`
            SELECT o.id, o.label, k.prefix, (k.id IS NULL OR k.revoked_at IS NOT NULL) AS revoked
            FROM origins o
            LEFT JOIN LATERAL (
              SELECT id, prefix, revoked_at FROM api_keys WHERE origin_id = o.id ORDER BY created_at DESC, id LIMIT 1
            ) k ON true
            WHERE o.organization_id = ${organizationId}
            ORDER BY o.created_at, o.label`.pipe(Effect.orDie)
          return rows
        }),

        rotate: Effect.fn("KeyStore.rotate")(function* (originId) {
          const now = new Date(yield* Clock.currentTimeMillis)
          return yield* sql
            .withTransaction(
              Effect.gen(function* () {
                yield* requireOrigin(originId)
                yield* sql`UPDATE api_keys SET revoked_at = ${now} WHERE origin_id = ${originId} AND revoked_at IS NULL`
                return yield* insertKey(originId)
              })
            )
            .pipe(Effect.catchTag("SqlError", Effect.die))
        }),

        revoke: Effect.fn("KeyStore.revoke")(function* (originId) {
          const now = new Date(yield* Clock.currentTimeMillis)
          return yield* sql
            .withTransaction(
              Effect.gen(function* () {
                yield* requireOrigin(originId)
                const [row] = yield* sql<{ prefix: string; revoked_at: Date }>`
                  UPDATE api_keys SET revoked_at = ${now} WHERE origin_id = ${originId} AND revoked_at IS NULL
                  RETURNING prefix, revoked_at`
                if (row === undefined) return yield* new Rejected({ reason: "the origin has no active key" })
                return { prefix: row.prefix, revokedAt: row.revoked_at }
              })
            )
            .pipe(Effect.catchTag("SqlError", Effect.die))
        })
      })
    })
  )

  static readonly layerMemory = Layer.effect(
    KeyStore,
    Effect.gen(function* () {
      const store = yield* MemoryStore

      const issue = Effect.fnUntraced(function* (originId: string) {
        const now = yield* Clock.currentTimeMillis
        for (const key of store.keys.values()) {
          if (key.originId === originId && key.revokedAt === null) key.revokedAt = now
        }
        const issued = generateApiKey()
        store.keys.set(issued.publicId, {
          id: crypto.randomUUID(),
          originId,
          publicId: issued.publicId,
          prefix: issued.prefix,
          hash: issued.hash,
          createdAt: now,
          revokedAt: null
        })
        return { key: issued.key, prefix: issued.prefix }
      })

      const requireOrigin = (id: string) => {
        const origin = store.origins.get(id)
        return origin === undefined
          ? Effect.fail(new UnknownEntity({ entity: "origin", id }))
          : Effect.succeed(origin)
      }

      // The active key, else the newest; insertion order breaks ties that equal timestamps cannot.
      const latestKey = (originId: string) => {
        const keys = [...store.keys.values()].filter((key) => key.originId === originId)
        return keys.find((key) => key.revokedAt === null) ?? keys.at(-1)
      }

      const authenticate = Effect.fn("KeyStore.authenticate")(function* (token: string) {
        const parsed = yield* parseToken(token)
        const key = store.keys.get(parsed.publicId)
        if (key === undefined || !hashesEqual(key.hash, hashApiKey(token))) {
          return yield* new KeyRejected({
            reason: "unknown",
            prefix: parsed.prefix,
            originId: key?.originId ?? null
          })
        }
        if (key.revokedAt !== null) {
          return yield* new KeyRejected({
            reason: "revoked",
            prefix: parsed.prefix,
            originId: key.originId
          })
        }
        const origin = store.origins.get(key.originId)!
        const organization = store.organizations.get(origin.organizationId)!
        return {
          keyId: key.id,
          prefix: key.prefix,
          originId: origin.id,
          originLabel: origin.label,
          organizationId: organization.id,
          country: organization.country,
          rateLimit: origin.rateLimit
        }
      })

      return KeyStore.of({
        authenticate,
        admit: Effect.fn("KeyStore.admit")(function* (token) {
          const caller = yield* authenticate(token)
          const window = countInMemory(
            store,
            caller.originId,
            caller.rateLimit,
            yield* Clock.currentTimeMillis
          )
          return { caller, window }
        }),
        createOrigin: Effect.fn("KeyStore.createOrigin")(function* (input) {
          if (!store.organizations.has(input.organizationId)) {
            return yield* new UnknownEntity({ entity: "organization", id: input.organizationId })
          }
          const taken = [...store.origins.values()].some(
            (o) => o.organizationId === input.organizationId && o.label === input.label
          )
          if (taken) {
            return yield* new Rejected({
              reason: `the organization already has an origin labelled "${input.label}"`
            })
          }
          const origin = { id: crypto.randomUUID(), ...input }
          store.origins.set(origin.id, origin)
          const issued = yield* issue(origin.id)
          return { id: origin.id, label: origin.label, rateLimit: origin.rateLimit, ...issued }
        }),
        setRateLimit: Effect.fn("KeyStore.setRateLimit")(function* (originId, rateLimit) {
          const origin = yield* requireOrigin(originId)
          origin.rateLimit = rateLimit
        }),
        listOrigins: Effect.fn("KeyStore.listOrigins")(function* (organizationId) {
          if (!store.organizations.has(organizationId)) {
            return yield* new UnknownEntity({ entity: "organization", id: organizationId })
          }
          return [...store.origins.values()]
            .filter((origin) => origin.organizationId === organizationId)
            .map((origin) => {
              const key = latestKey(origin.id)
              return {
                id: origin.id,
                label: origin.label,
                prefix: key?.prefix ?? null,
                revoked: key?.revokedAt !== null
              }
            })
        }),
        rotate: Effect.fn("KeyStore.rotate")(function* (originId) {
          yield* requireOrigin(originId)
          return yield* issue(originId)
        }),
        revoke: Effect.fn("KeyStore.revoke")(function* (originId) {
          yield* requireOrigin(originId)
          const key = latestKey(originId)
          if (key === undefined || key.revokedAt !== null) {
            return yield* new Rejected({ reason: "the origin has no active key" })
          }
          key.revokedAt = yield* Clock.currentTimeMillis
          return { prefix: key.prefix, revokedAt: new Date(key.revokedAt) }
        })
      })
    })
  )
}
