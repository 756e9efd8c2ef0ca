import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import {
  AdminSchemaErrors,
  created,
  IdParam,
  itemsOf,
  OperatorSession,
  scoped,
  trimmed,
  Unavailable,
  Uuid,
  UuidField
} from "./Common.ts"
import { AdminNotFound, AdminValidationError } from "./Errors.ts"

export const Agent = Schema.Struct({ id: Uuid, name: Schema.String }).annotate({ identifier: "Agent" })

export const Rule = Schema.Struct({
  id: Uuid,
  priority: Schema.Int,
  origin: Schema.NullOr(Schema.Struct({ id: Uuid, label: Schema.String })),
  property: Schema.NullOr(Schema.Struct({ id: Uuid, codigo: Schema.String })),
  agents: Schema.Array(Agent),
  round_robin: Schema.Boolean
}).annotate({ identifier: "CaptureRule" })

export const NewRule = Schema.Struct({
  origin_id: Schema.optional(Schema.NullOr(UuidField)),
  property_id: Schema.optional(Schema.NullOr(UuidField)),
  agent_ids: Schema.Array(UuidField).check(Schema.isMinLength(1), Schema.isMaxLength(100)),
  round_robin: Schema.Boolean,
  priority: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: -1_000_000, maximum: 1_000_000 })))
}).annotate({ identifier: "NewCaptureRule" })

export class CaptureGroup extends HttpApiGroup.make("capture")
  .add(
    HttpApiEndpoint.get("agents", "/api/agents", {
      ...scoped,
      success: itemsOf(Agent, "AgentList"),
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.post("createAgent", "/api/agents", {
      ...scoped,
      payload: Schema.Struct({ name: trimmed(100) }),
      success: created(Agent),
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.get("rules", "/api/rules", {
      ...scoped,
      success: itemsOf(Rule, "CaptureRuleList").annotate({
        description: "In the order they apply: priority (lowest first), then age."
      }),
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.post("createRule", "/api/rules", {
      ...scoped,
      payload: NewRule,
      success: created(Rule),
      error: [AdminNotFound, AdminValidationError, ...Unavailable]
    }),
    HttpApiEndpoint.delete("deleteRule", "/api/rules/:id", {
      ...scoped,
      params: IdParam,
      success: HttpApiSchema.NoContent,
      error: [AdminNotFound, ...Unavailable]
    })
  )
  .middleware(AdminSchemaErrors)
  .middleware(OperatorSession)
  .annotate(OpenApi.Description, "Who receives a lead: the agents and the capture rules that assign them.") {}
