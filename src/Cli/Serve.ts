import { ConfigProvider, Effect, Layer, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { AppConfig } from "../Platform/Config.ts"
import * as Migrations from "../Platform/Migrations.ts"
import * as Sql from "../Platform/Sql/Sql.ts"
import * as Input from "./Input.ts"
import { emit } from "./Output.ts"
import { layerLogLevel } from "./Services.ts"

/** Flags win over `PORT`/`HOST`, and go through the same validation as the variables. */
export const layerOverrides = (overrides: Record<string, Option.Option<string>>) =>
  ConfigProvider.layerAdd(
    ConfigProvider.fromUnknown(
      Object.fromEntries(
        Object.entries(overrides).flatMap(([name, value]) => Option.toArray(value).map((v) => [name, v]))
      )
    ),
    { asPrimary: true }
  )

/** Loaded when needed: the HTTP stack would double the start-up time of every operator command. */
const layerServer = Layer.unwrap(
  Effect.promise(() => import("../Server.ts")).pipe(Effect.map((server) => server.layerServer))
)

/** A signal ends `serve` normally: the listener drains, the pool closes, exit status 0. */
const markGracefulStop = Effect.sync(() => {
  process.exitCode = 0
})

export const serve = Command.make(
  "serve",
  {
    port: Input.optional(Input.integer("port", 1, 65535), "Listening port (PORT)"),
    host: Input.optional(Input.text("host"), "Listening address (HOST)"),
    migrate: Input.optional(
      Flag.Boolean("migrate"),
      "Apply pending migrations at start (MIGRATE_ON_START, default true); --no-migrate only checks that the schema is current and refuses to start otherwise"
    )
  },
  ({ port, host, migrate }) =>
    Layer.launch(layerServer).pipe(
      Effect.provide(
        layerOverrides({
          PORT: Option.map(port, String),
          HOST: host,
          MIGRATE_ON_START: Option.map(migrate, String)
        })
      ),
      Effect.onInterrupt(() => markGracefulStop)
    )
).pipe(Command.withDescription("Run the API (PORT/HOST, default 127.0.0.1:8080)"))

const statusText = (current: Migrations.MigrationStatus) =>
  [
    `Applied (${current.applied.length}):`,
    ...current.applied.map((migration) => `  ${migration.name}  ${migration.applied_at}`),
    current.pending.length === 0 ? "Pending: none" : `Pending (${current.pending.length}):`,
    ...current.pending.map((name) => `  ${name}`),
    ...(current.schema_newer_than_code
      ? [`The schema is newer than this code: applied here but unknown to it: ${current.unknown.join(", ")}`]
      : [])
  ].join("\n")

export const migrate = Command.make(
  "migrate",
  {
    status: Flag.Boolean("status").pipe(
      Flag.withDescription(
        "Apply nothing: list the applied and pending migrations, and whether the schema is newer than this code"
      ),
      Flag.withDefault(false)
    )
  },
  Effect.fn("Cli.migrate")(
    function* ({ status }) {
      if (status) {
        yield* emit(yield* Migrations.status, statusText)
        return
      }
      const applied = yield* Migrations.migrate
      yield* emit({ applied }, ({ applied }) =>
        applied.length === 0 ? "The schema is up to date." : `Applied: ${applied.join(", ")}`
      )
    },
    Effect.provide(
      Layer.mergeAll(Sql.layerClient, layerLogLevel).pipe(Layer.provideMerge(AppConfig.layerMigrate))
    )
  )
).pipe(
  Command.withDescription(
    "Apply pending migrations (--status: only list them), as MIGRATE_DATABASE_URL's role when set, else DATABASE_URL's"
  )
)
