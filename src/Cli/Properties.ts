import { Effect, Option } from "effect"
import { PropertyCatalog } from "../Intake/PropertyCatalog.ts"
import * as Input from "./Input.ts"
import { emit } from "./Output.ts"
import { withOperator } from "./Services.ts"

const propertyAdd = Input.command(
  "add",
  "Add a property to the organization's catalog",
  {
    org: Input.org,
    codigo: Input.codigo,
    externalCode: Input.optional(Input.text("external-code"), "The organization's own code for it"),
    archived: Input.toggle("archived", "Add it already archived (leads cannot name it)")
  },
  Effect.fn("Cli.propertyAdd")(function* ({ org, codigo, externalCode, archived }) {
    const property = yield* PropertyCatalog.use((catalog) =>
      catalog.add({ organizationId: org, codigo, externalCode: Option.getOrNull(externalCode), archived })
    )
    yield* emit(
      {
        id: property.id,
        codigo: property.codigo,
        external_code: property.external_code,
        archived: property.archived
      },
      (p) =>
        `Added property ${p.codigo}${p.external_code === null ? "" : ` (${p.external_code})`}` +
        `${p.archived ? ", archived" : ""}: ${p.id}`
    )
  }, withOperator)
)

const propertyArchive = Input.command(
  "archive",
  "Archive a property: leads can no longer name it",
  { id: Input.id("id", "property") },
  Effect.fn("Cli.propertyArchive")(function* ({ id }) {
    const property = yield* PropertyCatalog.use((catalog) => catalog.archive(id))
    yield* emit({ id: property.id, archived: true as const }, (p) => `Archived property ${p.id}`)
  }, withOperator)
)

export const property = Input.group("property", "The property catalog", [propertyAdd, propertyArchive])
