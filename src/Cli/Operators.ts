import { Effect, Layer, Option } from "effect"
import { Flag } from "effect/cli"
import { Operators } from "../Console/Operators.ts"
import { layerServices } from "../Intake/Services.ts"
import * as Input from "./Input.ts"
import { emit } from "./Output.ts"
import { layerCommand } from "./Services.ts"

/** The operator commands' services plus the console's accounts. */
export const withConsole = Effect.provide(layerCommand(Layer.merge(layerServices, Operators.layer)))

const email = Input.text("email").pipe(
  Flag.withDescription("The operator's e-mail, used to sign in to the console")
)

const shown = (o: { readonly id: string; readonly email: string; readonly password: string }) =>
  ({ id: o.id, email: o.email, password: o.password }) as const

const operatorAdd = Input.command(
  "add",
  "Add a console operator with a generated password (printed this once)",
  {
    org: Input.optional(Input.org, "The organization the operator works for"),
    allOrgs: Input.toggle("all-orgs", "A platform administrator, who sees every organization"),
    email,
    role: Flag.Literals("role", ["admin", "viewer"]).pipe(
      Flag.withDescription("admin changes things; viewer only looks (default admin)"),
      Flag.withDefault("admin" as const)
    )
  },
  Effect.fn("Cli.operatorAdd")(function* ({ org, allOrgs, email, role }) {
    const scope = yield* Input.exactlyOne(
      ["org", org],
      ["all-orgs", allOrgs ? Option.some(true) : Option.none()]
    )
    const operator = yield* Operators.use((operators) =>
      operators.add({ organizationId: scope._tag === "first" ? scope.value : null, email, role })
    ).pipe(withConsole)
    yield* emit(shown(operator), (o) =>
      [
        `Added operator ${o.email} (${role}${scope._tag === "second" ? ", every organization" : ""}): ${o.id}`,
        `Password (shown this once): ${o.password}`
      ].join("\n")
    )
  })
)

const operatorResetPassword = Input.command(
  "reset-password",
  "Generate a new password for the operator and sign out its sessions",
  { email },
  Effect.fn("Cli.operatorResetPassword")(function* ({ email }) {
    const operator = yield* Operators.use((operators) => operators.resetPassword(email))
    yield* emit(shown(operator), (o) =>
      [`New password for ${o.email} (shown this once): ${o.password}`, "Its sessions were signed out."].join(
        "\n"
      )
    )
  }, withConsole)
)

const operatorRemove = Input.command(
  "remove",
  "Remove the operator; its sessions end at once",
  { email },
  Effect.fn("Cli.operatorRemove")(function* ({ email }) {
    const operator = yield* Operators.use((operators) => operators.remove(email))
    yield* emit({ id: operator.id, email: operator.email }, (o) => `Removed operator ${o.email} (${o.id})`)
  }, withConsole)
)

export const operator = Input.group("operator", "Console operators: who may sign in to the console", [
  operatorAdd,
  operatorResetPassword,
  operatorRemove
])
