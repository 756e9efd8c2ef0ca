import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { KeyStore } from "../../src/Accounts/KeyStore.ts"
import { Organizations } from "../../src/Accounts/Organizations.ts"
import { CaptureRules } from "../../src/Intake/CaptureRules.ts"
import { PropertyCatalog } from "../../src/Intake/PropertyCatalog.ts"
import { acrossLayers, expectFailure } from "./Suite.ts"

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

acrossLayers("Organizations", (it) => {
  it.effect("creates an organization and reads it back, every field", () =>
    Effect.gen(function* () {
      const organizations = yield* Organizations
      const created = yield* organizations.create({ name: "Inmobiliaria Ñandú", country: "AR" })
      assert.match(created.id, uuid)
      assert.deepStrictEqual(created, { id: created.id, name: "Inmobiliaria Ñandú", country: "AR" })
      assert.deepStrictEqual(yield* organizations.get(created.id), created)
    })
  )

  it.effect("answers UnknownEntity for an organization that does not exist", () =>
    Effect.gen(function* () {
      const missing = crypto.randomUUID()
      const failure = yield* expectFailure((yield* Organizations).get(missing))
      assert.deepStrictEqual(
        [failure._tag, failure.entity, failure.id],
        ["UnknownEntity", "organization", missing]
      )
    })
  )
})

acrossLayers("CaptureRules", (it) => {
  it.effect("adds an agent and a rule, answering every field", () =>
    Effect.gen(function* () {
      const rules = yield* CaptureRules
      const organization = yield* (yield* Organizations).create({ name: "Reglas", country: "MX" })
      const origin = yield* (yield* KeyStore).createOrigin({
        organizationId: organization.id,
        label: "web",
        rateLimit: 60
      })
      const property = yield* (yield* PropertyCatalog).add({
        organizationId: organization.id,
        codigo: "REG-0001",
        externalCode: null,
        archived: false
      })
      const agent = yield* rules.addAgent({ organizationId: organization.id, name: "Ana" })
      assert.match(agent.id, uuid)
      assert.deepStrictEqual(agent, { id: agent.id, name: "Ana" })
      const rule = yield* rules.addRule({
        organizationId: organization.id,
        originId: origin.id,
        propertyId: property.id,
        agentIds: [agent.id],
        roundRobin: false,
        priority: 1
      })
      assert.match(rule.id, uuid)
      assert.deepStrictEqual(rule, { id: rule.id })
    })
  )

  it.effect("refuses a rule without agents, or naming another organization's agent, origin or property", () =>
    Effect.gen(function* () {
      const rules = yield* CaptureRules
      const organizations = yield* Organizations
      const mine = yield* organizations.create({ name: "Mía", country: "MX" })
      const other = yield* organizations.create({ name: "Ajena", country: "MX" })
      const agent = yield* rules.addAgent({ organizationId: mine.id, name: "Ana" })
      const foreignAgent = yield* rules.addAgent({ organizationId: other.id, name: "Beto" })
      const foreignOrigin = yield* (yield* KeyStore).createOrigin({
        organizationId: other.id,
        label: "web",
        rateLimit: 60
      })
      const foreignProperty = yield* (yield* PropertyCatalog).add({
        organizationId: other.id,
        codigo: "AJE-0001",
        externalCode: null,
        archived: false
      })
      const base = {
        organizationId: mine.id,
        originId: null,
        propertyId: null,
        agentIds: [agent.id],
        roundRobin: true,
        priority: 0
      }
      const failures = [
        yield* expectFailure(rules.addRule({ ...base, agentIds: [] })),
        yield* expectFailure(rules.addRule({ ...base, agentIds: [agent.id, foreignAgent.id] })),
        yield* expectFailure(rules.addRule({ ...base, originId: foreignOrigin.id })),
        yield* expectFailure(rules.addRule({ ...base, propertyId: foreignProperty.id })),
        yield* expectFailure(rules.addRule({ ...base, organizationId: crypto.randomUUID() })),
        yield* expectFailure(rules.addAgent({ organizationId: crypto.randomUUID(), name: "Nadie" }))
      ]
      assert.deepStrictEqual(
        failures.map((failure) =>
          failure._tag === "Rejected" ? [failure._tag, failure.reason] : [failure._tag, failure.entity]
        ),
        [
          ["Rejected", "a rule needs at least one agent"],
          ["UnknownEntity", "agent"],
          ["UnknownEntity", "origin"],
          ["UnknownEntity", "property"],
          ["UnknownEntity", "organization"],
          ["UnknownEntity", "organization"]
        ]
      )
    })
  )
})
