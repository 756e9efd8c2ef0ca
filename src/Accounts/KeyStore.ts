import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { type SqlError, SqlSchema } from "effect/sql"
import { OriginItem } from "../AdminApi/Origins.ts"
import {
  generateApiKey,
  hashApiKey,
  hashesEqual,
  type KeyMode,
  parseApiKey,
  visiblePrefixOf
} from "../Domain/ApiKey.ts"
import type { CallerShape } from "../Domain/Caller.ts"
import { Rejected, UnknownEntity } from "../Domain/Errors.ts"
import { MemoryStore } from "../Platform/MemoryStore.ts"
import {
  decodeFirst,
  decodeItems,
  IdRow,
  requireExisting,
  type StoreUnavailable
} from "../Platform/Sql/Sql.ts"
import { sqlService } from "../Platform/SqlService.ts"

/** Why a bearer token was refused; `originId` is known when the prefix names a key (a revoked one, say). */
export class KeyRejected extends Schema.TaggedError<KeyRejected>()("KeyRejected", {
  reason: Schema.Literals(["missing", "malformed", "unknown", "revoked"]),
  prefix: Schema.NullOr(Schema.String),
  originId: Schema.NullOr(Schema.String)
}) {}

/** What the lookup finds for a token's public id: the key, its origin and organization. */
const KeyRow = Schema.Struct({
  key_id: Schema.String,
  key_hash: Schema.String,
  revoked: Schema.Boolean,
  livemode: Schema.Boolean,
  origin_id: Schema.String,
  label: Schema.String,
  rate_limit: Schema.Number,
  organization_id: Schema.String,
  country: Schema.String
})
type KeyRow = typeof KeyRow.Type

/** A missing or malformed token is refused here, before any lookup (docs/contract.md#6-keys). */
const parseToken = (token: string) => {
  if (token === "") return Effect.fail(new KeyRejected({ reason: "missing", prefix: null, originId: null }))
  const parsed = parseApiKey(token)
  return parsed === undefined
    ? Effect.fail(
        new KeyRejected({ reason: "malformed", prefix: visiblePrefixOf(token) ?? null, originId: null })
      )
    : Effect.succeed(parsed)
}

/** The caller a key row stands for, or why the token does not match it. */
const callerOf = (
  token: string,
  prefix: string,
  row: KeyRow | undefined
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
    rateLimit: row.rate_limit,
    livemode: row.livemode
  })
}

const annotateCaller = (caller: CallerShape) =>
  Effect.annotateCurrentSpan({
    "origin.id": caller.originId,
    "organization.id": caller.organizationId,
    "key.livemode": caller.livemode
  })

export type OriginSummary = typeof OriginItem.Type

const day = 24 * 60 * 60 * 1000

const OriginRow = Schema.Struct({ id: Schema.String, label: Schema.String, rate_limit: Schema.Number })
const decodeOrigin = Schema.decodeUnknownEffect(OriginRow)
const RevokedRow = Schema.Struct({ public_id: Schema.String, prefix: Schema.String, revoked_at: Schema.Date })

/** An origin with what its keys' directory entries repeat of it. */
interface OwnedOrigin {
  readonly id: string
  readonly organizationId: string
  readonly label: string
  readonly rateLimit: number
}

export interface IssuedKey {
  readonly key: string
  readonly prefix: string
}

/** Which of an origin's keys a rotation or revocation concerns. */
const modeText = (mode: KeyMode) => (mode === "live" ? "key" : "test key")

/**
 * Origins and their keys: `authenticate` turns a bearer token into its caller on every request (no
 * cache, so a revocation holds on the next request of every instance); operators create origins,
 * set their rate limits, rotate and revoke keys. An origin holds at most one active key per mode:
 * its live key and a test key (docs/contract.md#10-test-mode), issued and revoked independently.
 */
export class KeyStore extends Context.Service<
  KeyStore,
  {
    authenticate(token: string): Effect.Effect<CallerShape, KeyRejected | StoreUnavailable>
    createOrigin(input: {
      readonly organizationId: string
      readonly label: string
      readonly rateLimit: number
    }): Effect.Effect<
      { readonly id: string; readonly label: string; readonly rateLimit: number } & IssuedKey,
      UnknownEntity | Rejected
    >
    setRateLimit(originId: string, rateLimit: number): Effect.Effect<void, UnknownEntity>
    /**
     * The organization's origins, each with its live key and active test key; the figures count live
     * requests only. The console's list and `lead-intake origin list` both read this.
     */
    listOrigins(organizationId: string): Effect.Effect<ReadonlyArray<OriginSummary>, UnknownEntity>
    /** Issues a new key of the mode for the origin; the previous one of that mode is revoked in the same instant. */
    rotate(originId: string, mode?: KeyMode): Effect.Effect<IssuedKey, UnknownEntity>
    revoke(
      originId: string,
      mode?: KeyMode
    ): Effect.Effect<{ readonly prefix: string; readonly revokedAt: Date }, UnknownEntity | Rejected>
  }
>()("lead-intake/KeyStore") {
  static readonly layer = Layer.effect(
    KeyStore,
    Effect.gen(function* () {
      const { sql, read, readOrFail, fn } = yield* sqlService
      const lookup = SqlSchema.findOneOption({
        Request: Schema.String,
        Result: KeyRow,
        execute: (publicId) => read`
          SELECT key_id, key_hash, revoked, livemode, origin_id, label, rate_limit, organization_id, country
          FROM api_key_by_public_id(${publicId})`
      })

      /**
       * A key of the origin, and its entry in the global directory with everything `authenticate` reads
       * (migration 0027), in the caller's transaction.
       */
      const insertKey = (origin: OwnedOrigin, mode: KeyMode) => {
        const issued = generateApiKey(mode)
        return sql`
          WITH key AS (
            INSERT INTO api_keys (organization_id, origin_id, public_id, prefix, key_hash, livemode)
            VALUES (${origin.organizationId}, ${origin.id}, ${issued.publicId}, ${issued.prefix}, ${issued.hash}, ${mode === "live"})
            RETURNING id
          )
          INSERT INTO api_key_directory (public_id, organization_id, key_id, key_hash, livemode, origin_id,
                                         origin_label, rate_limit)
          SELECT ${issued.publicId}, ${origin.organizationId}, id, ${issued.hash}, ${mode === "live"}, ${origin.id},
                 ${origin.label}, ${origin.rateLimit}
          FROM key`.pipe(Effect.as({ key: issued.key, prefix: issued.prefix }))
      }

      /**
       * The origin, its row locked for the caller's transaction. The organization is read first and
       * the lock taken by both keys: a lock must name the row's organization on Citus, where `origins`
       * is distributed by it.
       */
      const requireOrigin = Effect.fn("KeyStore.requireOrigin")(function* (id: string) {
        const owner = yield* sql`SELECT organization_id AS id FROM origins WHERE id = ${id}`.pipe(
          decodeFirst(IdRow)
        )
        if (Option.isNone(owner)) return yield* new UnknownEntity({ entity: "origin", id })
        const row = yield* sql`
          SELECT id, label, rate_limit FROM origins WHERE organization_id = ${owner.value.id} AND id = ${id}
          FOR UPDATE`.pipe(decodeFirst(OriginRow))
        if (Option.isNone(row)) return yield* new UnknownEntity({ entity: "origin", id })
        return { id, organizationId: owner.value.id, label: row.value.label, rateLimit: row.value.rate_limit }
      })

      /**
       * In one transaction: the origin must exist, its active key of the mode (if any) is revoked at
       * this instant, and `then` runs with what was revoked. Rotating and revoking both start so.
       */
      const revokingActive = <A, E>(
        originId: string,
        mode: KeyMode,
        then: (
          revoked: Option.Option<typeof RevokedRow.Type>,
          origin: OwnedOrigin
        ) => Effect.Effect<A, E | SqlError.SqlError>
      ) =>
        Effect.gen(function* () {
          const now = new Date(yield* Clock.currentTimeMillis)
          return yield* sql
            .withTransaction(
              Effect.gen(function* () {
                const origin = yield* requireOrigin(originId)
                const row = yield* sql`
                  UPDATE api_keys SET revoked_at = ${now}
                  WHERE organization_id = ${origin.organizationId} AND origin_id = ${originId}
                    AND livemode = ${mode === "live"} AND revoked_at IS NULL
                  RETURNING public_id, prefix, revoked_at`.pipe(decodeFirst(RevokedRow))
                if (Option.isSome(row))
                  yield* sql`
                    UPDATE api_key_directory SET revoked_at = ${now} WHERE public_id = ${row.value.public_id}`
                return yield* then(row, origin)
              })
            )
            .pipe(Effect.catchTag("SqlError", Effect.die))
        })

      return KeyStore.of({
        authenticate: fn("KeyStore.authenticate")(function* (token) {
          const { publicId, prefix } = yield* parseToken(token)
          yield* Effect.annotateCurrentSpan({ "key.prefix": prefix })
          const row = yield* lookup(publicId).pipe(readOrFail("KeyStore.authenticate"))
          return yield* callerOf(token, prefix, Option.getOrUndefined(row)).pipe(Effect.tap(annotateCaller))
        }),

        createOrigin: Effect.fn("KeyStore.createOrigin")(function* (input) {
          yield* requireExisting(sql, "organization", input.organizationId)
          return yield* sql
            .withTransaction(
              Effect.gen(function* () {
                const now = new Date(yield* Clock.currentTimeMillis)
                const origin = yield* sql`
                  INSERT INTO origins (organization_id, label, rate_limit, created_at)
                  VALUES (${input.organizationId}, ${input.label}, ${input.rateLimit}, ${now})
                  RETURNING id, label, rate_limit`.pipe(
                  Effect.flatMap(([row]) => Effect.orDie(decodeOrigin(row)))
                )
                const issued = yield* insertKey(
                  {
                    id: origin.id,
                    organizationId: input.organizationId,
                    label: origin.label,
                    rateLimit: origin.rate_limit
                  },
                  "live"
                )
                return { id: origin.id, label: origin.label, rateLimit: origin.rate_limit, ...issued }
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
          // With its keys' directory entries, which the next request of every instance reads.
          yield* sql
            .withTransaction(
              Effect.gen(function* () {
                const origin = yield* requireOrigin(originId)
                yield* sql`
                  UPDATE origins SET rate_limit = ${rateLimit}
                  WHERE organization_id = ${origin.organizationId} AND id = ${originId}`
                yield* sql`UPDATE api_key_directory SET rate_limit = ${rateLimit} WHERE origin_id = ${originId}`
              })
            )
            .pipe(Effect.catchTag("SqlError", Effect.die))
        }),

        listOrigins: Effect.fn("KeyStore.listOrigins")(function* (organizationId) {
          yield* requireExisting(sql, "organization", organizationId)
          const since = new Date((yield* Clock.currentTimeMillis) - day)
          return yield* sql`
            SELECT o.id, o.label, k.prefix, o.created_at, o.rate_limit,
                   (k.id IS NULL OR k.revoked_at IS NOT NULL) AS revoked,
                   (SELECT max(at) FROM logged_requests r
                    WHERE r.organization_id = o.organization_id AND r.origin_id = o.id AND r.livemode) AS last_used_at,
                   (SELECT count(*)::int FROM logged_requests r
                    WHERE r.organization_id = o.organization_id AND r.origin_id = o.id AND r.livemode
                      AND r.at > ${since}) AS requests_24h,
                   (SELECT t.prefix FROM api_keys t
                    WHERE t.organization_id = o.organization_id AND t.origin_id = o.id AND NOT t.livemode
                      AND t.revoked_at IS NULL) AS test_prefix
            FROM origins o
            LEFT JOIN LATERAL (
              SELECT id, prefix, revoked_at FROM api_keys
              WHERE organization_id = o.organization_id AND origin_id = o.id AND livemode
              ORDER BY created_at DESC, id LIMIT 1
            ) k ON true
            WHERE o.organization_id = ${organizationId}
            ORDER BY o.created_at, o.label`.pipe(decodeItems(OriginItem))
        }),

        rotate: Effect.fn("KeyStore.rotate")(function* (originId, mode = "live") {
          return yield* revokingActive(originId, mode, (_, origin) => insertKey(origin, mode))
        }),

        revoke: Effect.fn("KeyStore.revoke")(function* (originId, mode = "live") {
          return yield* revokingActive(originId, mode, (row) =>
            Option.isNone(row)
              ? Effect.fail(new Rejected({ reason: `the origin has no active ${modeText(mode)}` }))
              : Effect.succeed({ prefix: row.value.prefix, revokedAt: row.value.revoked_at })
          )
        })
      })
    })
  )

  static readonly layerMemory = Layer.effect(
    KeyStore,
    Effect.gen(function* () {
      const store = yield* MemoryStore

      const issue = Effect.fnUntraced(function* (originId: string, mode: KeyMode) {
        const now = yield* Clock.currentTimeMillis
        for (const key of store.keys.values()) {
          if (key.originId === originId && key.mode === mode && key.revokedAt === null) key.revokedAt = now
        }
        const issued = generateApiKey(mode)
        store.keys.set(issued.publicId, {
          id: crypto.randomUUID(),
          originId,
          mode,
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

      // The active key of the mode, else its newest; insertion order breaks ties that equal timestamps cannot.
      const latestKey = (originId: string, mode: KeyMode) => {
        const keys = [...store.keys.values()].filter((key) => key.originId === originId && key.mode === mode)
        return keys.find((key) => key.revokedAt === null) ?? keys.at(-1)
      }

      const lookup = (publicId: string): KeyRow | undefined => {
        const key = store.keys.get(publicId)
        const origin = key === undefined ? undefined : store.origins.get(key.originId)
        const organization = origin === undefined ? undefined : store.organizations.get(origin.organizationId)
        if (key === undefined || origin === undefined || organization === undefined) return undefined
        return {
          key_id: key.id,
          key_hash: key.hash,
          revoked: key.revokedAt !== null,
          livemode: key.mode === "live",
          origin_id: origin.id,
          label: origin.label,
          rate_limit: origin.rateLimit,
          organization_id: organization.id,
          country: organization.country
        }
      }

      return KeyStore.of({
        authenticate: Effect.fn("KeyStore.authenticate")(function* (token) {
          const { publicId, prefix } = yield* parseToken(token)
          yield* Effect.annotateCurrentSpan({ "key.prefix": prefix })
          return yield* callerOf(token, prefix, lookup(publicId)).pipe(Effect.tap(annotateCaller))
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
          const origin = { id: crypto.randomUUID(), ...input, createdAt: yield* Clock.currentTimeMillis }
          store.origins.set(origin.id, origin)
          const issued = yield* issue(origin.id, "live")
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
          const since = (yield* Clock.currentTimeMillis) - day
          return [...store.origins.values()]
            .filter((origin) => origin.organizationId === organizationId)
            .sort((a, b) => a.createdAt - b.createdAt || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0))
            .map((origin): OriginSummary => {
              const key = latestKey(origin.id, "live")
              const testKey = latestKey(origin.id, "test")
              const used = store.requests.filter((row) => row.originId === origin.id && row.livemode)
              return {
                id: origin.id,
                label: origin.label,
                prefix: key?.prefix ?? null,
                created_at: new Date(origin.createdAt).toISOString(),
                last_used_at:
                  used.length === 0 ? null : new Date(Math.max(...used.map((row) => row.at))).toISOString(),
                requests_24h: used.filter((row) => row.at > since).length,
                rate_limit: origin.rateLimit,
                revoked: key === undefined || key.revokedAt !== null,
                test_prefix: testKey?.revokedAt === null ? testKey.prefix : null
              }
            })
        }),
        rotate: Effect.fn("KeyStore.rotate")(function* (originId, mode = "live") {
          yield* requireOrigin(originId)
          return yield* issue(originId, mode)
        }),
        revoke: Effect.fn("KeyStore.revoke")(function* (originId, mode = "live") {
          yield* requireOrigin(originId)
          const key = latestKey(originId, mode)
          if (key === undefined || key.revokedAt !== null) {
            return yield* new Rejected({ reason: `the origin has no active ${modeText(mode)}` })
          }
          key.revokedAt = yield* Clock.currentTimeMillis
          return { prefix: key.prefix, revokedAt: new Date(key.revokedAt) }
        })
      })
    })
  )
}
