import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import {
  AdminSchemaErrors,
  IdParam,
  Instant,
  itemsOf,
  OperatorSession,
  RateLimitValue,
  scoped,
  trimmed,
  Unavailable,
  Uuid
} from "./Common.ts"
import { AdminNotFound, Conflict } from "./Errors.ts"

export const OriginItem = Schema.Struct({
  id: Uuid,
  label: Schema.String,
  prefix: Schema.NullOr(Schema.String),
  created_at: Instant,
  last_used_at: Schema.NullOr(Instant),
  requests_24h: Schema.Int.annotate({ description: "Live requests only." }),
  rate_limit: Schema.Int,
  revoked: Schema.Boolean,
  test_prefix: Schema.NullOr(Schema.String).annotate({
    description: "The active test key's prefix (`lk_test_…`); null when the origin has none."
  })
}).annotate({ identifier: "Origin" })

export const NewOrigin = Schema.Struct({
  label: trimmed(100),
  rate_limit: Schema.optional(RateLimitValue)
}).annotate({ identifier: "NewOrigin" })

export const CreatedOrigin = Schema.Struct({
  id: Uuid,
  label: Schema.String,
  key: Schema.String.annotate({ description: "The full key: shown this once, never again." }),
  prefix: Schema.String,
  rate_limit: Schema.Int
})
  .annotate({ identifier: "CreatedOrigin" })
  .pipe(HttpApiSchema.status(201))

export const RateLimitChange = Schema.Struct({ rate_limit: RateLimitValue })

export const IssuedKey = Schema.Struct({
  key: Schema.String.annotate({ description: "The new key: shown this once; the old one no longer works." }),
  prefix: Schema.String
}).annotate({ identifier: "IssuedKey" })

export const RevokedKey = Schema.Struct({ prefix: Schema.String, revoked_at: Instant }).annotate({
  identifier: "RevokedKey"
})

export class OriginsGroup extends HttpApiGroup.make("origins")
  .add(
    HttpApiEndpoint.get("origins", "/api/origins", {
      ...scoped,
      success: itemsOf(OriginItem, "OriginList"),
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.post("createOrigin", "/api/origins", {
      ...scoped,
      payload: NewOrigin,
      success: CreatedOrigin,
      error: [AdminNotFound, Conflict, ...Unavailable]
    }),
    HttpApiEndpoint.post("rotateKey", "/api/origins/:id/rotate", {
      ...scoped,
      params: IdParam,
      success: IssuedKey,
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.post("revokeKey", "/api/origins/:id/revoke", {
      ...scoped,
      params: IdParam,
      success: RevokedKey,
      error: [AdminNotFound, Conflict, ...Unavailable]
    }),
    HttpApiEndpoint.post("rotateTestKey", "/api/origins/:id/test-key/rotate", {
      ...scoped,
      params: IdParam,
      success: IssuedKey,
      error: [AdminNotFound, ...Unavailable]
    }).annotateMerge(
      OpenApi.annotations({
        summary:
          "Create the origin's test key (`lk_test_…`), or replace it: an earlier test key is revoked at that instant"
      })
    ),
    HttpApiEndpoint.post("revokeTestKey", "/api/origins/:id/test-key/revoke", {
      ...scoped,
      params: IdParam,
      success: RevokedKey,
      error: [AdminNotFound, Conflict, ...Unavailable]
    }).annotateMerge(OpenApi.annotations({ summary: "Revoke the origin's test key (409 when it has none)" })),
    HttpApiEndpoint.patch("setRateLimit", "/api/origins/:id", {
      ...scoped,
      params: IdParam,
      payload: RateLimitChange,
      success: Schema.Struct({ id: Uuid, rate_limit: Schema.Int }),
      error: [AdminNotFound, ...Unavailable]
    })
  )
  .middleware(AdminSchemaErrors)
  .middleware(OperatorSession)
  .annotate(
    OpenApi.Description,
    "The sites that send leads: their API keys (live and test) and rate limits."
  ) {}
