import { Effect, Option } from "effect"
import { Flag } from "effect/cli"
import { Organizations } from "../Accounts/Organizations.ts"
import { CaptureRules } from "../Intake/CaptureRules.ts"
import * as Input from "./Input.ts"
import { emit } from "./Output.ts"
import { withOperator } from "./Services.ts"

const orgCreate = Input.command(
  "create",
  "Create an organization",
  { name: Input.text("name").pipe(Flag.withDescription("The organization's name")), country: Input.country },
  Effect.fn("Cli.orgCreate")(function* ({ name, country }) {
    const organization = yield* Organizations.use((organizations) => organizations.create({ name, country }))
    yield* emit(organization, (o) => `Created organization "${o.name}" (${o.country}): ${o.id}`)
  }, withOperator)
)

export const org = Input.group("org", "Organizations", [orgCreate])

const agentAdd = Input.command(
  "add",
  "Add an agent who can be assigned leads",
  {
    org: Input.org,
    name: Input.text("name").pipe(Flag.withDescription("The agent's name"))
  },
  Effect.fn("Cli.agentAdd")(function* ({ org, name }) {
    const agent = yield* CaptureRules.use((rules) => rules.addAgent({ organizationId: org, name }))
    yield* emit(agent, (a) => `Added agent "${a.name}": ${a.id}`)
  }, withOperator)
)

export const agent = Input.group("agent", "Agents", [agentAdd])

const ruleAdd = Input.command(
  "add",
  "Add a capture rule: which agent gets the new leads it matches",
  {
    org: Input.org,
    origin: Input.optional(Input.id("origin", "origin"), "Match only leads from this origin"),
    property: Input.optional(Input.id("property", "property"), "Match only leads about this property"),
    agent: Input.optional(Input.id("agent", "agent"), "Assign to this agent"),
    roundRobin: Input.optional(Input.idList("round-robin", "agent"), "Assign in turn to these agents"),
    priority: Flag.Int("priority").pipe(
      Flag.withDescription("Lower runs first (default 100)"),
      Flag.withDefault(100)
    )
  },
  Effect.fn("Cli.ruleAdd")(function* (input) {
    const assignment = yield* Input.exactlyOne(["agent", input.agent], ["round-robin", input.roundRobin])
    const rule = yield* CaptureRules.use((rules) =>
      rules.addRule({
        organizationId: input.org,
        originId: Option.getOrNull(input.origin),
        propertyId: Option.getOrNull(input.property),
        agentIds: assignment._tag === "first" ? [assignment.value] : assignment.value,
        roundRobin: assignment._tag === "second",
        priority: input.priority
      })
    ).pipe(withOperator)
    yield* emit(rule, (r) => `Added capture rule ${r.id}`)
  })
)

export const rule = Input.group("rule", "Capture rules", [ruleAdd])
