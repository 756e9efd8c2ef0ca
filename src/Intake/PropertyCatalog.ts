import { Context, Data, Effect, Layer, Option, Schema } from "effect"
import { Rejected, UnknownEntity } from "../Domain/Errors.ts"
import type { PropertyReference } from "../Domain/LeadInput.ts"
import { type MemoryState, MemoryStore } from "../Platform/MemoryStore.ts"
import { decodeFirst, requireExisting, type StoreUnavailable } from "../Platform/Sql/Sql.ts"
import { sqlService } from "../Platform/SqlService.ts"

const PropertyRow = Schema.Struct({
  id: Schema.String,
  codigo: Schema.String,
  external_code: Schema.NullOr(Schema.String),
  archived: Schema.Boolean
})
export type Property = typeof PropertyRow.Type

/** 10. The property a request names is unknown or archived in the writer's catalog: 422 `property_not_found`. */
export class UnknownProperty extends Data.TaggedError("UnknownProperty")<{}> {
  override readonly message = "No active property of your organization matches propiedad"
  readonly field = "propiedad"
}

/**
 * The in-memory layers' text of `resolve_property` (migrations/functions.ts): the active property
 * of the organization that the reference names.
 */
export const activePropertyIn = (
  state: MemoryState,
  organizationId: string,
  reference: PropertyReference
): string | undefined => {
  for (const p of state.properties.values()) {
    if (p.organizationId !== organizationId || p.archived) continue
    const value = reference.by === "codigo" ? p.codigo : reference.by === "id" ? p.id : p.externalCode
    if (value === reference.value) return p.id
  }
  return undefined
}

const ResolvedRow = Schema.Struct({ id: Schema.NullOr(Schema.String) })

export interface NewProperty {
  readonly organizationId: string
  readonly codigo: string
  readonly externalCode: string | null
  readonly archived: boolean
}

export class PropertyCatalog extends Context.Service<
  PropertyCatalog,
  {
    /** The active property of the organization that the reference names, if any (`resolve_property`). */
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
      const decodeResolved = Schema.decodeUnknownEffect(ResolvedRow)
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
          const row = yield* read`
            SELECT resolve_property(${organizationId}, ${reference.by}, ${reference.value}) AS id`.pipe(
            Effect.flatMap(([row]) => decodeResolved(row)),
            readOrFail("PropertyCatalog.resolve")
          )
          return Option.fromNullishOr(row.id)
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
          return Option.fromNullishOr(activePropertyIn(store, organizationId, reference))
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
