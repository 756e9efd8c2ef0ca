import { userInfo } from "node:os"
import { Effect, Option, Schema } from "effect"
import { Command, Flag } from "effect/cli"
import { isStorableText, unstorableReason } from "../AdminApi/StoredText.ts"

/** A command line that parsed but asks for something contradictory (two exclusive flags, say). */
export class UsageError extends Schema.TaggedError<UsageError>()("UsageError", {
  message: Schema.String
}) {}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const asUuid = (raw: string): Option.Option<string> => {
  const value = raw.trim()
  return uuidPattern.test(value) ? Option.some(value.toLowerCase()) : Option.none()
}

/** An id flag: malformed ids are refused while parsing, before anything touches the database. */
export const id = (name: string, entity: string) =>
  Flag.String(name).pipe(
    Flag.withMetavar(entity.toUpperCase()),
    Flag.filterMap(asUuid, () => `Expected ${entity} id (a UUID)`)
  )

/** `--org`: the organization a command acts on. */
export const org = id("org", "organization")

export const idList = (name: string, entity: string) =>
  Flag.String(name).pipe(
    Flag.withMetavar(`${entity.toUpperCase()},...`),
    Flag.filterMap(
      (raw) => {
        const ids = raw.split(",").map(asUuid)
        return ids.length > 0 && ids.every(Option.isSome)
          ? Option.some(ids.map((id) => id.value))
          : Option.none()
      },
      () => `Expected a comma-separated list of ${entity} ids (UUIDs)`
    )
  )

/** Any text flag: PostgreSQL cannot store U+0000 or a lone surrogate, so they are refused while parsing. */
export const storable = (flag: Flag.Flag<string>) =>
  flag.pipe(
    Flag.filterMap(
      (raw) => (isStorableText(raw) ? Option.some(raw) : Option.none()),
      (raw) => unstorableReason(raw) ?? ""
    )
  )

export const text = (name: string) =>
  storable(Flag.String(name)).pipe(
    Flag.filterMap(
      (raw) => (raw.trim() === "" ? Option.none() : Option.some(raw.trim())),
      () => "Expected a non-empty value"
    )
  )

/** A switch: off unless given. */
export const toggle = (name: string, description: string) =>
  Flag.Boolean(name).pipe(Flag.withDescription(description), Flag.withDefault(false))

/** A flag that may be left out (`Option.none()`), with its help. */
export const optional = <A>(flag: Flag.Flag<A>, description: string) =>
  flag.pipe(Flag.withDescription(description), Flag.optional)

export const integer = (name: string, minimum: number, maximum: number) =>
  Flag.Int(name).pipe(
    Flag.filterMap(
      (value) => (value >= minimum && value <= maximum ? Option.some(value) : Option.none()),
      () => `Expected an integer from ${minimum} to ${maximum}`
    )
  )

export const limit = integer("limit", 1, 1000).pipe(
  Flag.withDescription("How many rows to print (1-1000)"),
  Flag.withDefault(50)
)

export const rateLimit = integer("rate-limit", 1, 1_000_000).pipe(
  Flag.withDescription("Requests per minute allowed for the origin's key")
)

export const country = Flag.String("country").pipe(
  Flag.withDescription("Two-letter country whose phone numbering applies (default MX)"),
  Flag.filterMap(
    (raw) => (/^[A-Za-z]{2}$/.test(raw.trim()) ? Option.some(raw.trim().toUpperCase()) : Option.none()),
    () => "Expected a two-letter country code such as MX"
  ),
  Flag.withDefault("MX")
)

export const codigo = Flag.String("codigo").pipe(
  Flag.withMetavar("ABC-1234"),
  Flag.withDescription("The property's code: three letters, a hyphen and four digits"),
  Flag.filterMap(
    (raw) =>
      /^[A-Za-z]{3}-[0-9]{4}$/.test(raw.trim()) ? Option.some(raw.trim().toUpperCase()) : Option.none(),
    () => "Expected three letters, a hyphen and four digits, such as ABC-1234"
  )
)

/** Exactly one of two exclusive choices, named by their flags for the message. */
export const exactlyOne = <A, B>(
  first: readonly [flag: string, value: Option.Option<A>],
  second: readonly [flag: string, value: Option.Option<B>]
): Effect.Effect<
  { readonly _tag: "first"; readonly value: A } | { readonly _tag: "second"; readonly value: B },
  UsageError
> => {
  const [firstFlag, a] = first
  const [secondFlag, b] = second
  if (Option.isSome(a) && Option.isSome(b)) {
    return Effect.fail(new UsageError({ message: `--${firstFlag} and --${secondFlag} exclude each other` }))
  }
  if (Option.isSome(a)) return Effect.succeed({ _tag: "first", value: a.value })
  if (Option.isSome(b)) return Effect.succeed({ _tag: "second", value: b.value })
  return Effect.fail(new UsageError({ message: `one of --${firstFlag} or --${secondFlag} is required` }))
}

/** An operator command: its name and help first, then its flags and what it does. */
export const command = <const Name extends string, const Config extends Command.Command.Config, E, R>(
  name: Name,
  description: string,
  config: Config,
  handler: (input: Command.Command.Config.Infer<Config>) => Effect.Effect<void, E, R>
) => Command.make(name, config, handler).pipe(Command.withDescription(description))

/** A command that only names a group of subcommands (`lead-intake org create …`). */
export const group = <
  const Name extends string,
  const Subcommands extends ReadonlyArray<Command.Command.SubcommandEntry>
>(
  name: Name,
  description: string,
  subcommands: Subcommands
) => Command.make(name).pipe(Command.withDescription(description), Command.withSubcommands(subcommands))

/** Who runs a command, for the audit trail: the OS user (a `--by` flag names someone else). */
export const currentUser = (): Option.Option<string> => {
  try {
    const name = userInfo().username.trim()
    if (name !== "") return Option.some(name)
  } catch {}
  const fromEnv = (process.env.USER ?? process.env.LOGNAME ?? "").trim()
  return fromEnv === "" ? Option.none() : Option.some(fromEnv)
}

/** `--by NAME`: who does it, for the audit trail. */
export const by = (does: string) => optional(text("by"), `Who ${does} (default: the OS user)`)

/** Who acts: `--by`, else the OS user; a usage error when neither tells. */
export const actor = (by: Option.Option<string>, doing: string): Effect.Effect<string, UsageError> => {
  const name = Option.orElse(by, currentUser)
  return Option.isSome(name)
    ? Effect.succeed(name.value)
    : Effect.fail(new UsageError({ message: `cannot tell who is ${doing}: pass --by NAME` }))
}
