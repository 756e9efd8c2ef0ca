import { Array as Arr, Context, Effect, Layer, Option, Schema } from "effect"
import { Rejected, UnknownEntity } from "../Domain/Errors.ts"
import { MemoryStore } from "../Platform/MemoryStore.ts"
import { decodeFirst, IdRow, requireExisting, type StoreUnavailable } from "../Platform/Sql.ts"
import { sqlService } from "../Platform/SqlService.ts"
import type { PropertyReference } from "./LeadInput.ts"

const PropertyRow = Schema.Struct({
  id: Schema.String,
  codigo: Schema.String,
  external_code: Schema.NullOr(Schema.String),
  archived: Schema.Boolean
})
export type Property = typeof PropertyRow.Type

export interface NewProperty {
  readonly organizationId: string
  readonly codigo: string
  readonly externalCode: string | null
  readonly archived: boolean
}

export class PropertyCatalog extends Context.Service<
  PropertyCatalog,
  {
    /** The active property of the organization that the reference names, if any. */
    resolve(
      organizationId: string,
      reference: PropertyReference
    ): Effect.Effect<Option.Option<string>, StoreUnavailable>
    add(property: NewProperty): Effect.Effect<Property, UnknownEntity | Rejected>
    archive(id: string): Effect.Effect<Property, UnknownEntity>
    /** Resolves again: the inverse of `archive`. */
    restore(id: string): Effect.Effect<Property, UnknownEntity>
  }
>()("lead-intake/PropertyCatalog") {
  static readonly layer = Layer.effect(
    PropertyCatalog,
    Effect.gen(function* () {
      const { sql, read, readOrFail, fn } = yield* sqlService
      const column = { codigo: sql("codigo"), external_code: sql("external_code"), id: sql("id") }
      const decodeIds = Schema.decodeUnknownEffect(Schema.Array(IdRow))
      const decodeProperty = Schema.decodeUnknownEffect(PropertyRow)
      const setArchived = Effect.fn("PropertyCatalog.setArchived")(function* (id: string, archived: boolean) {
        const row = yield* sql`
          UPDATE properties SET archived = ${archived} WHERE id = ${id}
          RETURNING id, codigo, external_code, archived`.pipe(decodeFirst(PropertyRow))
        if (Option.isNone(row)) return yield* new UnknownEntity({ entity: "property", id })
        return row.value
      })

      return PropertyCatalog.of({
        resolve: fn("PropertyCatalog.resolve")(function* (organizationId, reference) {
          yield* Effect.annotateCurrentSpan({ "property.by": reference.by })
          const rows = yield* read`
            SELECT id FROM properties
            WHERE organization_id = ${organizationId} AND ${column[reference.by]} = ${reference.value} AND NOT archived`.pipe(
            Effect.flatMap(decodeIds),
            readOrFail("PropertyCatalog.resolve")
          )
          return Option.map(Arr.head(rows), (row) => row.id)
        }),
        add: Effect.fn("PropertyCatalog.add")(function* (property) {
          yield* requireExisting(sql, "organization", property.organizationId)
          return yield* sql`
            INSERT INTO properties (organization_id, codigo, external_code, archived)
            VALUES (${property.organizationId}, ${property.codigo}, ${property.externalCode}, ${property.archived})
            RETURNING id, codigo, external_code, archived`.pipe(
            Effect.flatMap(([row]) => Effect.orDie(decodeProperty(row))),
            Effect.catchIf(
              (error) => error.reason._tag === "UniqueViolation",
              () =>
                Effect.fail(
                  new Rejected({ reason: "the organization already has a property with that code" })
                )
            ),
            Effect.catchTag("SqlError", Effect.die)
          )
        }),
        archive: (id) => setArchived(id, true),
        restore: (id) => setArchived(id, false)
      })
    })
  )

  static readonly layerMemory = Layer.effect(
    PropertyCatalog,
    Effect.gen(function* () {
      const store = yield* MemoryStore
      const view = (p: {
        id: string
        codigo: string
        externalCode: string | null
        archived: boolean
      }): Property => ({
        id: p.id,
        codigo: p.codigo,
        external_code: p.externalCode,
        archived: p.archived
      })
      const setArchived = Effect.fn("PropertyCatalog.setArchived")(function* (id: string, archived: boolean) {
        const property = store.properties.get(id)
        if (property === undefined) return yield* new UnknownEntity({ entity: "property", id })
        property.archived = archived
        return view(property)
      })

      return PropertyCatalog.of({
        resolve: Effect.fn("PropertyCatalog.resolve")(function* (organizationId, reference) {
          for (const p of store.properties.values()) {
            if (p.organizationId !== organizationId || p.archived) continue
            const value = reference.by === "codigo" ? p.codigo : reference.by === "id" ? p.id : p.externalCode
            if (value === reference.value) return Option.some(p.id)
          }
          return Option.none()
        }),
        add: Effect.fn("PropertyCatalog.add")(function* (property) {
          if (!store.organizations.has(property.organizationId)) {
            return yield* new UnknownEntity({ entity: "organization", id: property.organizationId })
          }
          const clash = [...store.properties.values()].some(
            (p) =>
              p.organizationId === property.organizationId &&
              (p.codigo === property.codigo ||
                (property.externalCode !== null && p.externalCode === property.externalCode))
          )
          if (clash)
            return yield* new Rejected({ reason: "the organization already has a property with that code" })
          const stored = { id: crypto.randomUUID(), ...property }
          store.properties.set(stored.id, stored)
          return view(stored)
        }),
        archive: (id) => setArchived(id, true),
        restore: (id) => setArchived(id, false)
      })
    })
  )
}
