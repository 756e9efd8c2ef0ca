import { assert } from "@effect/vitest"
import { Effect, Option } from "effect"
import { Organizations } from "../../src/Accounts/Organizations.ts"
import { PropertyCatalog } from "../../src/Intake/PropertyCatalog.ts"
import { acrossLayers, expectFailure } from "./Suite.ts"

const newOrganization = Effect.gen(function* () {
  const organizations = yield* Organizations
  return (yield* organizations.create({ name: "Inmobiliaria Catálogo", country: "MX" })).id
})

acrossLayers("PropertyCatalog", (it) => {
  it.effect("resolves an active property by codigo, external_code or id", () =>
    Effect.gen(function* () {
      const catalog = yield* PropertyCatalog
      const organizationId = yield* newOrganization
      const property = yield* catalog.add({
        organizationId,
        codigo: "ABC-1234",
        externalCode: "TORRE-7",
        archived: false
      })
      assert.deepStrictEqual(property, {
        id: property.id,
        codigo: "ABC-1234",
        external_code: "TORRE-7",
        archived: false
      })

      for (const reference of [
        { by: "codigo", value: "ABC-1234" },
        { by: "external_code", value: "TORRE-7" },
        { by: "id", value: property.id }
      ] as const) {
        assert.deepStrictEqual(yield* catalog.resolve(organizationId, reference), Option.some(property.id))
      }
      for (const reference of [
        { by: "codigo", value: "ABC-1235" },
        { by: "external_code", value: "torre-7" },
        { by: "external_code", value: "ABC-1234" },
        { by: "id", value: crypto.randomUUID() }
      ] as const) {
        assert.isTrue(Option.isNone(yield* catalog.resolve(organizationId, reference)), reference.value)
      }
    })
  )

  it.effect("does not resolve archived properties or another organization's", () =>
    Effect.gen(function* () {
      const catalog = yield* PropertyCatalog
      const organizationId = yield* newOrganization
      const otherId = yield* newOrganization
      const archived = yield* catalog.add({
        organizationId,
        codigo: "OLD-0001",
        externalCode: "VIEJA",
        archived: true
      })
      const foreign = yield* catalog.add({
        organizationId: otherId,
        codigo: "FOR-0001",
        externalCode: "AJENA",
        archived: false
      })
      for (const reference of [
        { by: "codigo", value: "OLD-0001" },
        { by: "external_code", value: "VIEJA" },
        { by: "id", value: archived.id },
        { by: "codigo", value: "FOR-0001" },
        { by: "external_code", value: "AJENA" },
        { by: "id", value: foreign.id }
      ] as const) {
        assert.isTrue(Option.isNone(yield* catalog.resolve(organizationId, reference)), reference.value)
      }
      assert.deepStrictEqual(
        yield* catalog.resolve(otherId, { by: "id", value: foreign.id }),
        Option.some(foreign.id)
      )
    })
  )

  it.effect("stops resolving a property once it is archived", () =>
    Effect.gen(function* () {
      const catalog = yield* PropertyCatalog
      const organizationId = yield* newOrganization
      const property = yield* catalog.add({
        organizationId,
        codigo: "ARC-0001",
        externalCode: null,
        archived: false
      })
      const archived = yield* catalog.archive(property.id)
      assert.deepStrictEqual(archived, { ...property, archived: true })
      assert.isTrue(
        Option.isNone(yield* catalog.resolve(organizationId, { by: "codigo", value: "ARC-0001" }))
      )
      assert.deepStrictEqual(yield* catalog.restore(property.id), property)
      assert.deepStrictEqual(
        yield* catalog.resolve(organizationId, { by: "codigo", value: "ARC-0001" }),
        Option.some(property.id)
      )
      const missing = yield* expectFailure(catalog.restore(crypto.randomUUID()))
      assert.strictEqual(missing._tag, "UnknownEntity")
    })
  )

  it.effect("rejects a duplicate codigo or external_code within an organization, not across", () =>
    Effect.gen(function* () {
      const catalog = yield* PropertyCatalog
      const organizationId = yield* newOrganization
      const otherId = yield* newOrganization
      yield* catalog.add({ organizationId, codigo: "DUP-0001", externalCode: "EXT-A", archived: false })
      yield* catalog.add({ organizationId, codigo: "DUP-0002", externalCode: null, archived: false })
      yield* catalog.add({ organizationId, codigo: "DUP-0003", externalCode: null, archived: false })

      const sameCodigo = yield* expectFailure(
        catalog.add({ organizationId, codigo: "DUP-0001", externalCode: null, archived: true })
      )
      const sameExternal = yield* expectFailure(
        catalog.add({ organizationId, codigo: "DUP-0004", externalCode: "EXT-A", archived: false })
      )
      assert.deepStrictEqual([sameCodigo._tag, sameExternal._tag], ["Rejected", "Rejected"])
      assert.deepStrictEqual(
        yield* catalog.resolve(organizationId, { by: "codigo", value: "DUP-0004" }),
        Option.none()
      )

      const elsewhere = yield* catalog.add({
        organizationId: otherId,
        codigo: "DUP-0001",
        externalCode: "EXT-A",
        archived: false
      })
      assert.deepStrictEqual(
        yield* catalog.resolve(otherId, { by: "codigo", value: "DUP-0001" }),
        Option.some(elsewhere.id)
      )
    })
  )

  it.effect("answers UnknownEntity for an unknown organization or property", () =>
    Effect.gen(function* () {
      const catalog = yield* PropertyCatalog
      const missing = crypto.randomUUID()
      const added = yield* expectFailure(
        catalog.add({ organizationId: missing, codigo: "NOP-0001", externalCode: null, archived: false })
      )
      const archived = yield* expectFailure(catalog.archive(missing))
      assert.deepStrictEqual(
        [added._tag, (added as { entity: string }).entity, archived._tag, archived.entity],
        ["UnknownEntity", "organization", "UnknownEntity", "property"]
      )
    })
  )
})
