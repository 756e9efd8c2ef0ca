import { Effect, Option } from "effect"
import { PropertyCatalog } from "../../Intake/PropertyCatalog.ts"
import {
  notFound,
  organizationGroup,
  orNotFound,
  rejectedToConflict,
  unknownToNotFound
} from "../Http/Shared.ts"
import type { OrganizationRow } from "../Organizations.ts"
import { findProperty, listProperties } from "./Queries.ts"

export const layerCatalogHandlers = organizationGroup(
  "catalog",
  Effect.fn(function* (handlers, { organizationOf, organizationOwning, record }) {
    const catalog = yield* PropertyCatalog

    const propertyView = Effect.fn("Admin.property")(function* (organization: OrganizationRow, id: string) {
      const property = yield* findProperty(organization.id, id)
      if (Option.isNone(property)) return yield* notFound("property")
      return property.value
    })

    /** Archives or restores one of the organization's properties, audited as `property.<action>`. */
    const setArchived = (action: "archive" | "restore") =>
      Effect.fn(`Admin.${action}Property`)(function* ({
        query,
        params
      }: {
        readonly query: { readonly org?: string | undefined }
        readonly params: { readonly id: string }
      }) {
        const organization = yield* organizationOwning(query.org, "property", params.id)
        const property = yield* catalog[action](params.id).pipe(orNotFound)
        yield* record(organization, `property.${action}`, `property ${property.id} ${property.codigo}`)
        return yield* propertyView(organization, params.id)
      })

    return handlers
      .handle(
        "properties",
        Effect.fn("Admin.properties")(function* ({ query }) {
          const organization = yield* organizationOf(query.org)
          return { items: yield* listProperties(organization.id, query.q ?? "") }
        })
      )
      .handle(
        "createProperty",
        Effect.fn("Admin.createProperty")(function* ({ query, payload }) {
          const organization = yield* organizationOf(query.org)
          const externalCode = payload.external_code?.trim() ?? null
          const property = yield* catalog
            .add({
              organizationId: organization.id,
              codigo: payload.codigo.trim().toUpperCase(),
              externalCode: externalCode === "" ? null : externalCode,
              archived: false
            })
            .pipe(
              Effect.catchTags({ UnknownEntity: unknownToNotFound, Rejected: rejectedToConflict("codigo") })
            )
          yield* record(organization, "property.create", `property ${property.id} ${property.codigo}`)
          return yield* propertyView(organization, property.id)
        })
      )
      .handle("archiveProperty", setArchived("archive"))
      .handle("restoreProperty", setArchived("restore"))
  })
)
