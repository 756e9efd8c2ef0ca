import { Clock, Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import type { CallerShape } from "../Api/Api.ts"
import { hashApiKey, hashesEqual, parseApiKey, visiblePrefixOf } from "../Domain/ApiKey.ts"
import type { RateWindowShape } from "../Domain/RateWindow.ts"
import { windowIndexOf, windowOf, windowStartOf } from "../Domain/RateWindow.ts"
import { MemoryStore } from "../Platform/MemoryStore.ts"
import { step } from "../Platform/Observability/Steps.ts"
import { availableOrFail, type StoreUnavailable } from "../Platform/Sql.ts"

/** Why a bearer token was refused; `originId` is known when the prefix names a key (a revoked one, say). */
export class KeyRejected extends Schema.TaggedError<KeyRejected>()("KeyRejected", {
  reason: Schema.Literals(["malformed", "unknown", "revoked"]),
  prefix: Schema.NullOr(Schema.String),
  originId: Schema.NullOr(Schema.String)
}) {}

export interface Admitted {
  readonly caller: CallerShape
  readonly window: RateWindowShape
}

/** What the lookup found for the token's public id: the key, its origin and organization. */
export const KeyRow = Schema.Struct({
  key_id: Schema.String,
  key_hash: Schema.String,
  revoked: Schema.Boolean,
  origin_id: Schema.String,
  label: Schema.String,
  rate_limit: Schema.Number,
  organization_id: Schema.String,
  country: Schema.String,
  count: Schema.NullOr(Schema.Number)
})
type KeyRow = typeof KeyRow.Type

/** A malformed or mistyped token is refused here, before any lookup. */
export const parseToken = (token: string) => {
  const parsed = parseApiKey(token)
  return parsed === undefined
    ? Effect.fail(
        new KeyRejected({ reason: "malformed", prefix: visiblePrefixOf(token) ?? null, originId: null })
      )
    : Effect.succeed(parsed)
}

/** The caller a key row stands for, or why the token does not match it. */
export const callerOf = (
  token: string,
  prefix: string,
  row: Omit<KeyRow, "count"> | undefined
): Effect.Effect<CallerShape, KeyRejected> => {
  if (row === undefined || !hashesEqual(row.key_hash, hashApiKey(token))) {
    return Effect.fail(new KeyRejected({ reason: "unknown", prefix, originId: row?.origin_id ?? null }))
  }
  if (row.revoked) return Effect.fail(new KeyRejected({ reason: "revoked", prefix, originId: row.origin_id }))
  return Effect.succeed({
    keyId: row.key_id,
    prefix,
    originId: row.origin_id,
    originLabel: row.label,
    organizationId: row.organization_id,
    country: row.country,
    rateLimit: row.rate_limit
  })
}

/** The caller's admission, its window counted as `count` (`null`: over the limit, nothing counted). */
export const admissionOf = (caller: CallerShape, count: number | null, nowMillis: number) =>
  Effect.gen(function* () {
    const admitted: Admitted = { caller, window: windowOf(nowMillis, caller.rateLimit, count) }
    yield* Effect.annotateCurrentSpan({
      "origin.id": caller.originId,
      "organization.id": caller.organizationId,
      "ratelimit.remaining": admitted.window.remaining,
      "ratelimit.allowed": admitted.window.allowed
    })
    return admitted
  })

/**
 * The request path's key check: authenticates a bearer token and counts the request in its
 * origin's current rate-limit window (fixed windows aligned to Unix minutes, shared by every
 * instance), in one round trip. A refused key counts nothing, and neither does a request over
 * the limit.
 */
export class KeyCheck extends Context.Service<
  KeyCheck,
  {
    admit(token: string): Effect.Effect<Admitted, KeyRejected | StoreUnavailable>
  }
>()("lead-intake/KeyCheck") {
  static readonly layer = Layer.effect(
    KeyCheck,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const fn = yield* step
      const lookupAndCount = SqlSchema.findAll({
        Request: Schema.Struct({ publicId: Schema.String, hash: Schema.String, windowStart: Schema.Date }),
        Result: KeyRow,
        execute: ({ publicId, hash, windowStart }) => sql`
          WITH key AS (
            SELECT k.id AS key_id, k.key_hash, k.revoked_at IS NOT NULL AS revoked, o.id AS origin_id, o.label,
                   o.rate_limit, g.id AS organization_id, g.country
            FROM api_keys k
            JOIN origins o ON o.id = k.origin_id
            JOIN organizations g ON g.id = o.organization_id
            WHERE k.public_id = ${publicId}
          ),
          counted AS (
            INSERT INTO rate_limit_windows AS w (origin_id, window_start, count)
            SELECT origin_id, ${windowStart}, 1 FROM key WHERE key_hash = ${hash} AND NOT revoked
            ON CONFLICT (origin_id, window_start) DO UPDATE SET count = w.count + 1
              WHERE w.count < (SELECT rate_limit FROM key)
            RETURNING count
          )
          SELECT key.*, (SELECT count FROM counted) AS count FROM key`
      })
      return KeyCheck.of({
        admit: fn("KeyCheck.admit")(function* (token) {
          const parsed = yield* parseToken(token)
          yield* Effect.annotateCurrentSpan({ "key.prefix": parsed.prefix })
          const now = yield* Clock.currentTimeMillis
          const [row] = yield* lookupAndCount({
            publicId: parsed.publicId,
            hash: hashApiKey(token),
            windowStart: windowStartOf(now)
          }).pipe(availableOrFail("KeyCheck.admit"))
          const caller = yield* callerOf(token, parsed.prefix, row)
          return yield* admissionOf(caller, row?.count ?? null, now)
        })
      })
    })
  )

  static readonly layerMemory = Layer.effect(
    KeyCheck,
    Effect.gen(function* () {
      const store = yield* MemoryStore

      const lookup = (publicId: string): Omit<KeyRow, "count"> | undefined => {
        const key = store.keys.get(publicId)
        const origin = key === undefined ? undefined : store.origins.get(key.originId)
        const organization = origin === undefined ? undefined : store.organizations.get(origin.organizationId)
        if (key === undefined || origin === undefined || organization === undefined) return undefined
        return {
          key_id: key.id,
          key_hash: key.hash,
          revoked: key.revokedAt !== null,
          origin_id: origin.id,
          label: origin.label,
          rate_limit: origin.rateLimit,
          organization_id: organization.id,
          country: organization.country
        }
      }

      const count = (caller: CallerShape, nowMillis: number) => {
        const slot = `${caller.originId}@${windowIndexOf(nowMillis)}`
        const counted = store.windows.get(slot) ?? 0
        if (counted >= caller.rateLimit) return null
        store.windows.set(slot, counted + 1)
        return counted + 1
      }

      return KeyCheck.of({
        admit: Effect.fn("KeyCheck.admit")(function* (token) {
          const parsed = yield* parseToken(token)
          yield* Effect.annotateCurrentSpan({ "key.prefix": parsed.prefix })
          const now = yield* Clock.currentTimeMillis
          const caller = yield* callerOf(token, parsed.prefix, lookup(parsed.publicId))
          return yield* admissionOf(caller, count(caller, now), now)
        })
      })
    })
  )
}
