import { Duration, Effect, Layer, Schema } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { SqlClient } from "effect/sql"
import { migrations } from "../../migrations/index.ts"
import { AppConfig } from "./Config.ts"
import { layerListener, listenerStates } from "./Listening.ts"

/** A probe must answer before a load balancer's or kubelet's own timeout (commonly 1-5 s). */
export const readinessTimeout = Duration.seconds(2)

const expectedMigrations = Object.keys(migrations).map((name) => ({ id: Number(name.slice(0, 4)), name }))

const decodeApplied = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ migration_id: Schema.Number })))

export interface Readiness {
  readonly status: "ready" | "not_ready"
  readonly database: "ok" | "unreachable"
  readonly migrations: { readonly applied: number; readonly pending: ReadonlyArray<string> }
  readonly listeners: Record<string, "up" | "down" | "starting">
  /**
   * On a Citus coordinator, each worker (`host:port`) as the coordinator reaches it. An unreachable
   * worker leaves the instance ready: it serves the organizations of the other nodes, and no other
   * instance would serve those of the lost one.
   */
  readonly nodes?: Record<string, "ok" | "unreachable">
}

/**
 * Every listener the process is configured to open accepts connections (`Listeners`), the database
 * answers within the timeout and every migration this build knows is applied.
 */
export const readiness = Effect.fn("Health.readiness")(function* () {
  const [listeners, database, nodes] = yield* Effect.all([listenerStates, databaseReadiness, citusNodes], {
    concurrency: 3
  })
  const listening = Object.values(listeners).every((state) => state === "up")
  return {
    ...database,
    status: database.status === "ready" && listening ? "ready" : "not_ready",
    listeners,
    ...(nodes === undefined ? {} : { nodes })
  } satisfies Readiness
})

const decodeNodes = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ node: Schema.String })))
const decodeReached = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ reached: Schema.Boolean })))

/**
 * The workers a Citus coordinator knows (`pg_dist_node`), each asked for a connection
 * (`citus_check_connection_to_node`) within the readiness timeout; undefined without Citus (or when
 * the coordinator itself does not answer: `database` says so).
 */
const citusNodes = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const listed = yield* Effect.gen(function* () {
    // Asked first, so that a PostgreSQL without Citus logs no error for every probe.
    const [known] = yield* sql`SELECT to_regclass('pg_catalog.pg_dist_node') IS NOT NULL AS citus`
    if (known?.citus !== true) return undefined
    return yield* sql`
      SELECT n.nodename || ':' || n.nodeport AS node FROM pg_dist_node n
      WHERE n.isactive AND n.noderole = 'primary' AND n.groupid <> 0 ORDER BY n.groupid`.pipe(
      Effect.flatMap((rows) => Effect.orDie(decodeNodes(rows)))
    )
  }).pipe(
    Effect.timeoutOrElse({ duration: readinessTimeout, orElse: () => Effect.fail("timeout" as const) }),
    Effect.orElseSucceed(() => undefined)
  )
  if (listed === undefined) return undefined
  const states = yield* Effect.forEach(
    listed,
    ({ node }) => {
      const at = node.lastIndexOf(":")
      return sql`SELECT citus_check_connection_to_node(${node.slice(0, at)}, ${Number(node.slice(at + 1))}) AS reached`.pipe(
        Effect.flatMap((rows) => Effect.orDie(decodeReached(rows))),
        Effect.map((rows): readonly [string, "ok" | "unreachable"] => [
          node,
          rows[0]?.reached === true ? "ok" : "unreachable"
        ]),
        Effect.timeoutOrElse({ duration: readinessTimeout, orElse: () => Effect.fail("timeout" as const) }),
        Effect.orElseSucceed((): readonly [string, "ok" | "unreachable"] => [node, "unreachable"])
      )
    },
    { concurrency: "unbounded" }
  )
  return Object.fromEntries(states)
})

const databaseReadiness = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const applied = yield* sql`SELECT migration_id FROM schema_migrations`.pipe(
    Effect.flatMap((rows) => Effect.orDie(decodeApplied(rows))),
    Effect.map((rows) => new Set(rows.map((row) => row.migration_id))),
    Effect.catchIf(
      (error) => (error.reason.cause as { code?: string } | undefined)?.code === "42P01",
      () => Effect.succeed(new Set<number>())
    ),
    Effect.timeoutOrElse({ duration: readinessTimeout, orElse: () => Effect.fail("timeout" as const) }),
    Effect.option
  )
  if (applied._tag === "None") {
    return {
      status: "not_ready",
      database: "unreachable",
      migrations: { applied: 0, pending: expectedMigrations.map((m) => m.name) }
    } as const
  }
  const pending = expectedMigrations.filter((m) => !applied.value.has(m.id)).map((m) => m.name)
  return {
    status: pending.length === 0 ? ("ready" as const) : ("not_ready" as const),
    database: "ok" as const,
    migrations: { applied: expectedMigrations.length - pending.length, pending }
  }
})

const noStore = { "cache-control": "no-store" }

/**
 * `GET /healthz`: the process is up and serving (liveness; never touches the database).
 * `GET /readyz`: 200 when every configured listener accepts connections, the database answers and
 * the schema is current; 503 otherwise (readiness).
 */
export const layerHealthRoutes = Layer.mergeAll(
  HttpRouter.add("GET", "/healthz", HttpServerResponse.jsonUnsafe({ status: "ok" }, { headers: noStore })),
  HttpRouter.use((router) =>
    Effect.gen(function* () {
      const context = yield* Effect.context<SqlClient.SqlClient>()
      yield* router.add(
        "GET",
        "/readyz",
        readiness().pipe(
          Effect.provideContext(context),
          Effect.map((result) =>
            HttpServerResponse.jsonUnsafe(result, {
              status: result.status === "ready" ? 200 : 503,
              headers: noStore
            })
          )
        )
      )
    })
  )
)

/**
 * The management listener (`HEALTH_HOST:HEALTH_PORT`, default `HOST:8082`): `GET /healthz` and
 * `GET /readyz` only, whether or not the console listens; nothing when `HEALTH_PORT=off`. The API's
 * port serves `/v1` routes only and the console's port serves the console only.
 */
export const layerHealthServer = Layer.unwrap(
  Effect.gen(function* () {
    const config = yield* AppConfig
    return layerListener(
      HttpRouter.serve(layerHealthRoutes, { disableLogger: true, disableListenLog: true }),
      {
        listener: "health",
        host: config.healthHost,
        port: config.healthPort,
        disabled: "health probes disabled (HEALTH_PORT=off)",
        limits: {
          requestTimeout: 5_000,
          headersTimeout: 5_000,
          keepAliveTimeout: 5_000,
          maxHeaderSize: 8_192,
          connectionsCheckingInterval: 1_000
        },
        gracefulShutdownTimeout: "2 seconds"
      }
    )
  })
)
