import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { Rejected, UnknownEntity } from "../Domain/Errors.ts"
import { MemoryStore } from "../Platform/MemoryStore.ts"
import { decodeRows, decodeSingle, IdRow, requireExisting } from "../Platform/Sql/Sql.ts"

const AgentRow = Schema.Struct({ id: Schema.String, name: Schema.String })
export type Agent = typeof AgentRow.Type

export interface NewRule {
  readonly organizationId: string
  readonly originId: string | null
  readonly propertyId: string | null
  readonly agentIds: ReadonlyArray<string>
  readonly roundRobin: boolean
  readonly priority: number
}

/**
 * The organization's capture rules: ordered by priority (lowest first, then age); the first
 * rule whose origin and property match (null matches anything) assigns the lead, to its one
 * agent or round-robin over its agents. Assignment itself happens in the lead write.
 */
export class CaptureRules extends Context.Service<
  CaptureRules,
  {
    addAgent(input: {
      readonly organizationId: string
      readonly name: string
    }): Effect.Effect<Agent, UnknownEntity>
    addRule(rule: NewRule): Effect.Effect<{ readonly id: string }, UnknownEntity | Rejected>
  }
>()("lead-intake/CaptureRules") {
  static readonly layer = Layer.effect(
    CaptureRules,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient

      const requireInOrganization = Effect.fn("CaptureRules.requireInOrganization")(function* (
        table: "origins" | "properties" | "agents",
        entity: string,
        organizationId: string,
        ids: ReadonlyArray<string>
      ) {
        if (ids.length === 0) return
        const found = yield* sql`
          SELECT id FROM ${sql(table)} WHERE organization_id = ${organizationId} AND id IN ${sql.in(ids)}`.pipe(
          decodeRows(IdRow)
        )
        const missing = ids.find((id) => !found.some((row) => row.id === id))
        if (missing !== undefined) return yield* new UnknownEntity({ entity, id: missing })
      })

      const requireOrganization = (id: string) => requireExisting(sql, "organization", id)

      return CaptureRules.of({
        addAgent: Effect.fn("CaptureRules.addAgent")(function* (input) {
          yield* requireOrganization(input.organizationId)
          return yield* sql`
            INSERT INTO agents (organization_id, name) VALUES (${input.organizationId}, ${input.name})
            RETURNING id, name`.pipe(decodeSingle(AgentRow))
        }),
        addRule: Effect.fn("CaptureRules.addRule")(function* (rule) {
          yield* requireOrganization(rule.organizationId)
          if (rule.agentIds.length === 0)
            return yield* new Rejected({ reason: "a rule needs at least one agent" })
          yield* requireInOrganization("agents", "agent", rule.organizationId, rule.agentIds)
          yield* requireInOrganization(
            "origins",
            "origin",
            rule.organizationId,
            rule.originId === null ? [] : [rule.originId]
          )
          yield* requireInOrganization(
            "properties",
            "property",
            rule.organizationId,
            rule.propertyId === null ? [] : [rule.propertyId]
          )
          return yield* sql`
            INSERT INTO capture_rules (organization_id, priority, origin_id, property_id, agent_ids, round_robin)
            VALUES (${rule.organizationId}, ${rule.priority}, ${rule.originId}, ${rule.propertyId},
                    ${`{${rule.agentIds.join(",")}}`}::uuid[], ${rule.roundRobin})
            RETURNING id`.pipe(decodeSingle(IdRow))
        })
      })
    })
  )

  static readonly layerMemory = Layer.effect(
    CaptureRules,
    Effect.gen(function* () {
      const store = yield* MemoryStore
      const requireOrganization = (id: string) =>
        store.organizations.has(id)
          ? Effect.void
          : Effect.fail(new UnknownEntity({ entity: "organization", id }))
      const requireIn = (
        entity: string,
        organizationId: string,
        ids: ReadonlyArray<string>,
        lookup: (id: string) => { organizationId: string } | undefined
      ) => {
        const missing = ids.find((id) => lookup(id)?.organizationId !== organizationId)
        return missing === undefined ? Effect.void : Effect.fail(new UnknownEntity({ entity, id: missing }))
      }
      return CaptureRules.of({
        addAgent: Effect.fn("CaptureRules.addAgent")(function* (input) {
          yield* requireOrganization(input.organizationId)
          const agent = { id: crypto.randomUUID(), organizationId: input.organizationId, name: input.name }
          store.agents.set(agent.id, agent)
          return { id: agent.id, name: agent.name }
        }),
        addRule: Effect.fn("CaptureRules.addRule")(function* (rule) {
          yield* requireOrganization(rule.organizationId)
          if (rule.agentIds.length === 0)
            return yield* new Rejected({ reason: "a rule needs at least one agent" })
          yield* requireIn("agent", rule.organizationId, rule.agentIds, (id) => store.agents.get(id))
          yield* requireIn(
            "origin",
            rule.organizationId,
            rule.originId === null ? [] : [rule.originId],
            (id) => store.origins.get(id)
          )
          yield* requireIn(
            "property",
            rule.organizationId,
            rule.propertyId === null ? [] : [rule.propertyId],
            (id) => store.properties.get(id)
          )
          const id = crypto.randomUUID()
          store.rules.push({ id, ...rule, rotation: 0, seq: store.rules.length })
          return { id }
        })
      })
    })
  )
}
