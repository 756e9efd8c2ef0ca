import { createServer } from "node:http"
import { NodeHttpServer } from "@effect/platform-node"
import { type Context, Effect, Layer } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { layerAdminServer } from "./Admin/App.ts"
import { layerHealthServer } from "./Admin/Health.ts"
import { AppConfig } from "./Config.ts"
import { answerIndexDirectly } from "./FastPath.ts"
import { layerApp } from "./Http/App.ts"
import { answerCreateDirectly, type DirectCreate, type DirectCreateServices } from "./Http/DirectCreate.ts"
import { indexBody } from "./Http/Public.ts"
import { layerJanitor } from "./Janitor.ts"
import { logListening } from "./Listening.ts"
import * as Observability from "./Observability.ts"
import { runningFrom } from "./PackageFiles.ts"
import { layerServices } from "./Services.ts"
import * as Sql from "./Sql.ts"
import { layerInServe as layerWebhookWorker } from "./WebhookWorker.ts"

const bodyDeadlineMillis = 15_000

/**
 * The HTTP listener: Node's own timeouts cut off clients that trickle headers or a body. Node
 * enforces them only when it checks its connections (every 30 s by default), so it checks every
 * second: otherwise a trickling client holds its socket for up to 30 s whatever the timeouts say.
 * `GET /v1`, a create that writes and a refused key are answered ahead of the router (`FastPath.ts`,
 * `Http/DirectCreate.ts`); the router answers everything else.
 */
export const makeListener = (
  context: Context.Context<DirectCreateServices>,
  index: (requestId: string) => unknown
) => {
  const server = answerIndexDirectly(
    createServer({
      requestTimeout: bodyDeadlineMillis,
      headersTimeout: 10_000,
      keepAliveTimeout: 5_000,
      maxHeaderSize: 16_384,
      connectionsCheckingInterval: 1_000
    }),
    index,
    context
  )
  return { server, direct: answerCreateDirectly(server, context) }
}

/** The listener on the configured port; on shutdown it waits for the direct creates still running. */
const layerListener = Layer.unwrap(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const context = yield* Effect.context<DirectCreateServices>()
    const index = (requestId: string) => indexBody(config.publicBaseUrl, requestId)
    const started: Array<DirectCreate> = []
    yield* Effect.addFinalizer(() =>
      Effect.promise(() => Promise.all(started.map((direct) => direct.drained())))
    )
    return NodeHttpServer.layer(
      () => {
        const { server, direct } = makeListener(context, index)
        started.push(direct)
        return server
      },
      { port: config.port, host: config.host, gracefulShutdownTimeout: "10 seconds" }
    )
  })
).pipe(Layer.provide(layerServices))

const announce = Layer.effectDiscard(
  Effect.gen(function* () {
    const server = yield* HttpServer.HttpServer
    const database = yield* Sql.Database
    const config = yield* AppConfig
    const port = "port" in server.address ? server.address.port : config.port
    const host = config.host.includes(":") ? `[${config.host}]` : config.host
    const url = `http://${host}:${port}`
    yield* logListening("api", url, {
      public_url: config.publicBaseUrl,
      database: database.description,
      code: runningFrom()
    })
    yield* Effect.addFinalizer(() => Effect.logInfo("stopping"))
  })
)

/** The whole service: API on the listener, PostgreSQL (embedded unless DATABASE_URL), migrations applied. */
export const layerServer = HttpRouter.serve(layerApp, { disableLogger: true, disableListenLog: true }).pipe(
  Layer.merge(announce),
  Layer.merge(layerAdminServer),
  Layer.merge(layerHealthServer),
  Layer.merge(Observability.layerPoolMetrics),
  Layer.merge(layerJanitor),
  Layer.merge(layerWebhookWorker),
  Layer.provide(layerServices),
  Layer.provide(layerListener),
  Layer.provide(Sql.layer),
  Layer.provide(Observability.layer),
  Layer.provide(AppConfig.layer)
)
