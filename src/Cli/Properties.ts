import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { PropertyCatalog } from "../Intake/PropertyCatalog.ts"
import * as Input from "./Input.ts"
import { emit } from "./Output.ts"
import { withOperator } from "./Services.ts"

const propertyAdd = Command.make(
  "add",
  {
    org: Input.id("org", "organization"),
    codigo: Input.codigo,
    externalCode: Input.text("external-code").pipe(
      Flag.withDescription("The organization's own code for it"),
      Flag.optional
    ),
    archived: Flag.Boolean("archived").pipe(
      Flag.withDescription("Add it already archived (leads cannot name it)"),
      Flag.withDefault(false)
    )
  },
  Effect.fn("Cli.propertyAdd")(function* ({ org, codigo, externalCode, archived }) {
    const catalog = yield* PropertyCatalog
    const property = yield* catalog.add({
      organizationId: org,
      codigo,
      externalCode: Option.getOrNull(externalCode),
      archived
    })
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
).pipe(Command.withDescription("Add a property to the organization's catalog"))

const propertyArchive = Command.make(
  "archive",
  { id: Input.id("id", "property") },
  Effect.fn("Cli.propertyArchive")(function* ({ id }) {
    const catalog = yield* PropertyCatalog
    const property = yield* catalog.archive(id)
    yield* emit({ id: property.id, archived: true as const }, (p) => `Archived property ${p.id}`)
  }, withOperator)
).pipe(Command.withDescription("Archive a property: leads can no longer name it"))

export const property = Input.group("property", "The property catalog", [propertyAdd, propertyArchive])
