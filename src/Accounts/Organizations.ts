import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { UnknownEntity } from "../Domain/Errors.ts"
import { MemoryStore } from "../Platform/MemoryStore.ts"
import { decodeFirst, decodeSingle } from "../Platform/Sql/Sql.ts"

const OrganizationRow = Schema.Struct({ id: Schema.String, name: Schema.String, country: Schema.String })
export type Organization = typeof OrganizationRow.Type

export class Organizations extends Context.Service<
  Organizations,
  {
    create(input: { readonly name: string; readonly country: string }): Effect.Effect<Organization>
    get(id: string): Effect.Effect<Organization, UnknownEntity>
  }
>()("lead-intake/Organizations") {
  static readonly layer = Layer.effect(
    Organizations,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      return Organizations.of({
        create: Effect.fn("Organizations.create")(function* (input) {
          return yield* sql`
            INSERT INTO organizations (name, country) VALUES (${input.name}, ${input.country})
            RETURNING id, name, country`.pipe(decodeSingle(OrganizationRow))
        }),
        get: Effect.fn("Organizations.get")(function* (id) {
          const row = yield* sql`SELECT id, name, country FROM organizations WHERE id = ${id}`.pipe(
            decodeFirst(OrganizationRow)
          )
          if (Option.isNone(row)) return yield* new UnknownEntity({ entity: "organization", id })
          return row.value
        })
      })
    })
  )

  static readonly layerMemory = Layer.effect(
    Organizations,
    Effect.gen(function* () {
      const store = yield* MemoryStore
      return Organizations.of({
        create: Effect.fn("Organizations.create")(function* (input) {
          const organization = { id: crypto.randomUUID(), ...input }
          store.organizations.set(organization.id, organization)
          return organization
        }),
        get: Effect.fn("Organizations.get")(function* (id) {
          const organization = store.organizations.get(id)
          if (organization === undefined) return yield* new UnknownEntity({ entity: "organization", id })
          return organization
        })
      })
    })
  )
}
