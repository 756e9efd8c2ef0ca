import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import {
  AdminSchemaErrors,
  Codigo,
  created,
  IdParam,
  Instant,
  itemsOf,
  OperatorSession,
  OrgQuery,
  StoredText,
  scoped,
  trimmed,
  Unavailable,
  Uuid
} from "./Common.ts"
import { AdminNotFound, Conflict } from "./Errors.ts"

export const Property = Schema.Struct({
  id: Uuid,
  codigo: Schema.String,
  external_code: Schema.NullOr(Schema.String),
  archived: Schema.Boolean,
  created_at: Instant
}).annotate({ identifier: "Property" })

export const NewProperty = Schema.Struct({
  codigo: Codigo,
  external_code: Schema.optional(Schema.NullOr(trimmed(100)))
}).annotate({ identifier: "NewProperty" })

export class CatalogGroup extends HttpApiGroup.make("catalog")
  .add(
    HttpApiEndpoint.get("properties", "/api/properties", {
      query: { org: OrgQuery, q: Schema.optional(StoredText.check(Schema.isMaxLength(200))) },
      success: itemsOf(Property, "PropertyList"),
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.post("createProperty", "/api/properties", {
      ...scoped,
      payload: NewProperty,
      success: created(Property),
      error: [AdminNotFound, Conflict, ...Unavailable]
    }),
    HttpApiEndpoint.post("archiveProperty", "/api/properties/:id/archive", {
      ...scoped,
      params: IdParam,
      success: Property,
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.post("restoreProperty", "/api/properties/:id/restore", {
      ...scoped,
      params: IdParam,
      success: Property,
      error: [AdminNotFound, Conflict, ...Unavailable]
    })
  )
  .middleware(AdminSchemaErrors)
  .middleware(OperatorSession)
  .annotate(
    OpenApi.Description,
    "The property catalog a lead's `codigo` must name: add, archive, restore."
  ) {}
