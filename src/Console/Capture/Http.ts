import { Effect } from "effect"
import { CaptureRules } from "../../Intake/CaptureRules.ts"
import { adminFail } from "../Http/RequestContext.ts"
import { notFound, organizationGroup, orNotFound, unknownToNotFound } from "../Http/Shared.ts"
import type { OrganizationRow } from "../Organizations.ts"
import { deleteRule, listAgents, listRules } from "./Queries.ts"

export const layerCaptureHandlers = organizationGroup(
  "capture",
  Effect.fn(function* (handlers, { organizationOf, organizationItems, record }) {
    const rules = yield* CaptureRules

    const ruleView = Effect.fn("Admin.rule")(function* (organization: OrganizationRow, id: string) {
      const all = yield* listRules(organization.id)
      const rule = all.find((item) => item.id === id)
      if (rule === undefined) return yield* notFound("rule")
      return rule
    })

    return handlers
      .handle("agents", organizationItems("Admin.agents", listAgents))
      .handle(
        "createAgent",
        Effect.fn("Admin.createAgent")(function* ({ query, payload }) {
          const organization = yield* organizationOf(query.org)
          const agent = yield* rules
            .addAgent({ organizationId: organization.id, name: payload.name.trim() })
            .pipe(orNotFound)
          yield* record(organization, "agent.create", `agent ${agent.id} "${agent.name}"`)
          return agent
        })
      )
      .handle("rules", organizationItems("Admin.rules", listRules))
      .handle(
        "createRule",
        Effect.fn("Admin.createRule")(function* ({ query, payload }) {
          const organization = yield* organizationOf(query.org)
          const agentIds = [...new Set(payload.agent_ids)]
          if (!payload.round_robin && agentIds.length !== 1) {
            return yield* adminFail(
              "validation_error",
              "agent_ids: exactly one agent unless round_robin is true",
              "agent_ids"
            )
          }
          const created = yield* rules
            .addRule({
              organizationId: organization.id,
              originId: payload.origin_id ?? null,
              propertyId: payload.property_id ?? null,
              agentIds,
              roundRobin: payload.round_robin,
              priority: payload.priority ?? 100
            })
            .pipe(
              Effect.catchTags({
                UnknownEntity: unknownToNotFound,
                Rejected: (error) => adminFail("validation_error", error.reason, "agent_ids")
              })
            )
          yield* record(organization, "rule.create", `rule ${created.id}`)
          return yield* ruleView(organization, created.id)
        })
      )
      .handle(
        "deleteRule",
        Effect.fn("Admin.deleteRule")(function* ({ query, params }) {
          const organization = yield* organizationOf(query.org)
          if (!(yield* deleteRule(organization.id, params.id))) return yield* notFound("rule")
          yield* record(organization, "rule.delete", `rule ${params.id}`)
        })
      )
  })
)
