import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { KeyStore } from "../../Accounts/KeyStore.ts"
import { AdminApi } from "../../AdminApi/AdminApi.ts"
import { ConsoleQueries } from "../ConsoleQueries.ts"
import { organizationScope, rejectedToConflict, unknownToNotFound } from "./Shared.ts"

export const layerOriginsHandlers = HttpApiBuilder.group(
  AdminApi,
  "origins",
  Effect.fn(function* (handlers) {
    const queries = yield* ConsoleQueries
    const keys = yield* KeyStore
    const { organizationOf, requireOwned, record, logWritten } = yield* organizationScope

    return handlers
      .handle(
        "origins",
        Effect.fn("Admin.origins")(function* ({ query }) {
          const organization = yield* organizationOf(query.org)
          yield* logWritten
          return { items: yield* queries.origins(organization.id) }
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
      .handle(
        "rotateKey",
        Effect.fn("Admin.rotateKey")(function* ({ query, params }) {
          const organization = yield* organizationOf(query.org)
          yield* requireOwned(organization, "origin", params.id)
          const issued = yield* keys
            .rotate(params.id)
            .pipe(Effect.catchTag("UnknownEntity", unknownToNotFound))
          yield* record(organization, "key.rotate", `origin ${params.id} new key ${issued.prefix}`)
          return { key: issued.key, prefix: issued.prefix }
        })
      )
      .handle(
        "revokeKey",
        Effect.fn("Admin.revokeKey")(function* ({ query, params }) {
          const organization = yield* organizationOf(query.org)
          yield* requireOwned(organization, "origin", params.id)
          const revoked = yield* keys
            .revoke(params.id)
            .pipe(Effect.catchTags({ UnknownEntity: unknownToNotFound, Rejected: rejectedToConflict() }))
          yield* record(organization, "key.revoke", `origin ${params.id} key ${revoked.prefix}`)
          return { prefix: revoked.prefix, revoked_at: revoked.revokedAt.toISOString() }
        })
      )
      .handle(
        "rotateTestKey",
        Effect.fn("Admin.rotateTestKey")(function* ({ query, params }) {
          const organization = yield* organizationOf(query.org)
          yield* requireOwned(organization, "origin", params.id)
          const issued = yield* keys
            .rotate(params.id, "test")
            .pipe(Effect.catchTag("UnknownEntity", unknownToNotFound))
          yield* record(organization, "key.test_rotated", `origin ${params.id} new test key ${issued.prefix}`)
          return { key: issued.key, prefix: issued.prefix }
        })
      )
      .handle(
        "revokeTestKey",
        Effect.fn("Admin.revokeTestKey")(function* ({ query, params }) {
          const organization = yield* organizationOf(query.org)
          yield* requireOwned(organization, "origin", params.id)
          const revoked = yield* keys
            .revoke(params.id, "test")
            .pipe(Effect.catchTags({ UnknownEntity: unknownToNotFound, Rejected: rejectedToConflict() }))
          yield* record(organization, "key.test_revoked", `origin ${params.id} test key ${revoked.prefix}`)
          return { prefix: revoked.prefix, revoked_at: revoked.revokedAt.toISOString() }
        })
      )
      .handle(
        "setRateLimit",
        Effect.fn("Admin.setRateLimit")(function* ({ query, params, payload }) {
          const organization = yield* organizationOf(query.org)
          yield* requireOwned(organization, "origin", params.id)
          yield* keys
            .setRateLimit(params.id, payload.rate_limit)
            .pipe(Effect.catchTag("UnknownEntity", unknownToNotFound))
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
