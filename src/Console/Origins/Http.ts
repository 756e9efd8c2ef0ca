import { Effect } from "effect"
import { KeyStore } from "../../Accounts/KeyStore.ts"
import type { KeyMode } from "../../Domain/ApiKey.ts"
import { organizationGroup, orNotFound, rejectedToConflict, unknownToNotFound } from "../Http/Shared.ts"

/** The audit log's names for a key action, per mode. */
const audited = {
  live: { rotated: "key.rotate", revoked: "key.revoke", key: "key" },
  test: { rotated: "key.test_rotated", revoked: "key.test_revoked", key: "test key" }
} as const

export const layerOriginsHandlers = organizationGroup(
  "origins",
  Effect.fn(function* (handlers, { organizationOf, organizationOwning, record, logWritten }) {
    const keys = yield* KeyStore

    /** The origin's live or test key, issued anew (the previous one of that mode stops at once), audited. */
    const rotate = Effect.fn("Admin.rotateKey")(function* (
      org: string | undefined,
      originId: string,
      mode: KeyMode
    ) {
      const organization = yield* organizationOwning(org, "origin", originId)
      const issued = yield* keys.rotate(originId, mode).pipe(orNotFound)
      yield* record(
        organization,
        audited[mode].rotated,
        `origin ${originId} new ${audited[mode].key} ${issued.prefix}`
      )
      return { key: issued.key, prefix: issued.prefix }
    })

    const revoke = Effect.fn("Admin.revokeKey")(function* (
      org: string | undefined,
      originId: string,
      mode: KeyMode
    ) {
      const organization = yield* organizationOwning(org, "origin", originId)
      const revoked = yield* keys
        .revoke(originId, mode)
        .pipe(Effect.catchTags({ UnknownEntity: unknownToNotFound, Rejected: rejectedToConflict() }))
      yield* record(
        organization,
        audited[mode].revoked,
        `origin ${originId} ${audited[mode].key} ${revoked.prefix}`
      )
      return { prefix: revoked.prefix, revoked_at: revoked.revokedAt.toISOString() }
    })

    return handlers
      .handle(
        "origins",
        Effect.fn("Admin.origins")(function* ({ query }) {
          const organization = yield* organizationOf(query.org)
          yield* logWritten
          return {
            items: yield* keys.listOrigins(organization.id).pipe(orNotFound)
          }
        })
      )
      .handle(
        "createOrigin",
        Effect.fn("Admin.createOrigin")(function* ({ query, payload }) {
          const organization = yield* organizationOf(query.org)
          const origin = yield* keys
            .createOrigin({
              organizationId: organization.id,
              label: payload.label.trim(),
              rateLimit: payload.rate_limit ?? 60
            })
            .pipe(
              Effect.catchTags({ UnknownEntity: unknownToNotFound, Rejected: rejectedToConflict("label") })
            )
          yield* record(
            organization,
            "origin.create",
            `origin ${origin.id} "${origin.label}" key ${origin.prefix}`
          )
          return {
            id: origin.id,
            label: origin.label,
            key: origin.key,
            prefix: origin.prefix,
            rate_limit: origin.rateLimit
          }
        })
      )
      .handle("rotateKey", ({ query, params }) => rotate(query.org, params.id, "live"))
      .handle("revokeKey", ({ query, params }) => revoke(query.org, params.id, "live"))
      .handle("rotateTestKey", ({ query, params }) => rotate(query.org, params.id, "test"))
      .handle("revokeTestKey", ({ query, params }) => revoke(query.org, params.id, "test"))
      .handle(
        "setRateLimit",
        Effect.fn("Admin.setRateLimit")(function* ({ query, params, payload }) {
          const organization = yield* organizationOwning(query.org, "origin", params.id)
          yield* keys.setRateLimit(params.id, payload.rate_limit).pipe(orNotFound)
          yield* record(
            organization,
            "origin.set_rate_limit",
            `origin ${params.id} rate limit ${payload.rate_limit}`
          )
          return { id: params.id, rate_limit: payload.rate_limit }
        })
      )
  })
)
