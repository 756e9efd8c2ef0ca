import * as NodeServices from "@effect/platform-node/NodeServices"
import {
  Cause,
  Config,
  Console,
  Effect,
  Exit,
  Layer,
  Logger,
  Option,
  Predicate,
  type Runtime,
  Schema,
  type SchemaIssue
} from "effect"
import { CliConfig, CliError, CliOutput, Command, GlobalFlag } from "effect/cli"
import packageJson from "../../package.json" with { type: "json" }
import { certificateRefusal } from "../Platform/Sql/Sql.ts"
import { demo } from "./Demo.ts"
import { lead } from "./Leads.ts"
import { operator } from "./Operators.ts"
import { agent, org, rule } from "./Organizations.ts"
import { key, origin } from "./Origins.ts"
import { Json } from "./Output.ts"
import { property } from "./Properties.ts"
import { request, requests } from "./Requests.ts"
import { migrate, serve } from "./Serve.ts"
import { webhook, worker } from "./Webhooks.ts"

const programName = "lead-intake"

export const cli = Command.make(programName).pipe(
  Command.withDescription("Lead Intake API: the server and its operator commands"),
  Command.withSubcommands([
    serve,
    migrate,
    org,
    agent,
    rule,
    origin,
    key,
    property,
    requests,
    request,
    lead,
    operator,
    demo,
    webhook,
    worker
  ]),
  Command.withGlobalFlags([Json])
)

/** `LOG_LEVEL` is the one log-level setting; the wizard and completion scripts have no use here. */
const layerCliConfig = CliConfig.layer({ builtIns: [GlobalFlag.Help, GlobalFlag.Version] })

/** Help and version go to stdout when asked for; every error is left to `report`, as one line. */
const layerPresenter = CliOutput.layerPresenter({
  present: (event) =>
    event._tag === "Help" && event.reason === "Implicit"
      ? Effect.void
      : CliOutput.defaultPresenter.present(event)
})

const oneLine = (text: string) =>
  text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .join(" ")

const firstLine = (text: string) => text.split("\n")[0]?.trim() ?? ""

const pointerPath = (issue: SchemaIssue.Issue): Array<string> => {
  const path: Array<string> = []
  let current = issue
  while (current._tag === "Pointer") {
    path.push(...current.path.map(String))
    current = current.issue
  }
  return path
}

/** "invalid configuration: PORT: Expected ...": the variable first, so the operator knows what to fix. */
const describeConfigError = (error: Config.ConfigError) => {
  const cause = error.cause
  if (Schema.isSchemaError(cause)) {
    const variable = pointerPath(cause.issue).join("_")
    const reason = firstLine(cause.message)
    return variable === ""
      ? `invalid configuration: ${reason}`
      : `invalid configuration: ${variable}: ${reason}`
  }
  return `invalid configuration: ${oneLine(cause.message)}`
}

/** "PgConnection: Failed to connect: connect ECONNREFUSED 127.0.0.1:1": the error and what caused it. */
const withCauses = (error: unknown) => {
  const messages: Array<string> = []
  let current: unknown = error
  while (current instanceof Error && messages.length < 5) {
    const message = oneLine(current.message)
    if (message !== "" && !messages.includes(message)) messages.push(message)
    current = current.cause
  }
  return messages.join(": ")
}

const describeCliError = (error: CliError.NonShowHelpErrors) => {
  switch (error._tag) {
    case "UnrecognizedOption":
      return `unknown flag ${error.option}${didYouMean(error.suggestions)}`
    case "UnknownSubcommand":
      return `unknown command "${error.subcommand}"${didYouMean(error.suggestions)}`
    default:
      return oneLine(error.message)
  }
}

const didYouMean = (suggestions: ReadonlyArray<string>) =>
  suggestions.length === 0 ? "" : ` (did you mean ${suggestions.join(" or ")}?)`

/** The whole line for stderr: the command it concerns, then what is wrong. */
const describe = (error: unknown): string => {
  if (CliError.isCliError(error)) {
    if (error._tag !== "ShowHelp") return `${programName}: ${describeCliError(error)}`
    const [first] = error.errors
    const command = error.commandPath.join(" ")
    return first === undefined
      ? `${command}: a command is missing (see ${command} --help)`
      : `${command}: ${describeCliError(first)}`
  }
  if (error instanceof Config.ConfigError) return `${programName}: ${describeConfigError(error)}`
  if (Predicate.isTagged(error, "SqlError"))
    return `${programName}: database: ${certificateRefusal(error) ?? withCauses(error)}`
  if (Predicate.isTagged(error, "ServeError")) return `${programName}: cannot listen: ${withCauses(error)}`
  if (error instanceof Error) return `${programName}: ${oneLine(error.message)}`
  return `${programName}: ${oneLine(String(error))}`
}

/**
 * A failure the operator can act on is one line. An unreachable database is one too, although
 * the layers treat it as a defect; any other defect is a bug and gets the full cause.
 */
const report = (cause: Cause.Cause<unknown>) => {
  if (Cause.hasInterruptsOnly(cause)) return Effect.void
  const error = Option.orElse(Cause.findErrorOption(cause), () =>
    Option.filter(Option.fromNullishOr(Cause.squash(cause)), (defect) =>
      Predicate.isTagged(defect, "SqlError")
    )
  )
  return Option.match(error, {
    onSome: (error) => Console.error(describe(error)),
    onNone: () => Console.error(`${programName}: unexpected failure\n${Cause.pretty(cause)}`)
  })
}

/** The command line from `Stdio`, its failure reported on stderr; `main` runs it on Node. */
export const runCli = Command.run(cli, { version: packageJson.version, renderErrors: false }).pipe(
  Effect.tapCause(report),
  Effect.provide(Layer.mergeAll(layerPresenter, layerCliConfig))
)

export const main = runCli.pipe(
  Effect.provide(NodeServices.layer),
  Effect.provideService(Logger.LogToStderr, true)
)

/** 0 on success and on a signal that stopped `serve`; 130 for an interrupted one-shot command; else 1. */
export const teardown: Runtime.Teardown = (exit, onExit) => {
  if (Exit.isSuccess(exit)) return onExit(0)
  if (Cause.hasInterruptsOnly(exit.cause)) return onExit(process.exitCode === 0 ? 0 : 130)
  return onExit(1)
}
