import { createServer } from "node:http"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { layerAdminServer } from "./Console/Server/App.ts"
import { layerApp, layerTracedRoutes } from "./Intake/Http/App.ts"
import { layerJanitor } from "./Intake/Janitor.ts"
import { layerServices } from "./Intake/Services.ts"
import { AppConfig } from "./Platform/Config.ts"
import { layerHealthServer } from "./Platform/Health.ts"
import { layerRecordAnnounced, layerServeListeners, logListening } from "./Platform/Listening.ts"
import * as Migrations from "./Platform/Migrations.ts"
import * as Observability from "./Platform/Observability/Observability.ts"
import { runningFrom } from "./Platform/PackageFiles.ts"
import { refuseUnfitProduction } from "./Platform/ProductionStart.ts"
import * as Sql from "./Platform/Sql/Sql.ts"
import { layerInServe as layerWebhookWorker } from "./Webhooks/Worker.ts"

const bodyDeadlineMillis = 15_000

/**
 * The HTTP listener: Node's own timeouts cut off clients that trickle headers or a body. Node
 * enforces them only when it checks its connections (every 30 s by default), so it checks every
 * second: otherwise a trickling client holds its socket for up to 30 s whatever the timeouts say.
 */
export const makeListener = () =>
  createServer({
    requestTimeout: bodyDeadlineMillis,
    headersTimeout: 10_000,
    keepAliveTimeout: 5_000,
    maxHeaderSize: 16_384,
    connectionsCheckingInterval: 1_000
  })

const layerListener = Layer.unwrap(
  Effect.map(AppConfig, (config) =>
    NodeHttpServer.layer(makeListener, {
      port: config.port,
      host: config.host,
      gracefulShutdownTimeout: "10 seconds"
    })
  )
)

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
const layerService = HttpRouter.serve(layerApp, { disableLogger: true, disableListenLog: true }).pipe(
  Layer.merge(announce),
  Layer.merge(layerAdminServer),
  Layer.merge(layerHealthServer),
  Layer.merge(layerRecordAnnounced),
  Layer.merge(Observability.layerPoolMetrics),
  Layer.merge(layerJanitor),
  Layer.merge(layerWebhookWorker),
  Layer.provide(layerServices),
  Layer.provide(layerListener),
  Layer.provide(Migrations.layer),
  Layer.provide(layerTracedRoutes),
  Layer.provide(Observability.layer),
  // Every listener above announces itself here; /readyz waits for them all.
  Layer.provide(layerServeListeners),
  Layer.provide(AppConfig.layer)
)

/** In production, nothing starts that would hand partners a link to this machine. */
export const layerServer = Layer.unwrap(
  refuseUnfitProduction(["PUBLIC_BASE_URL", "DASHBOARD_URL"]).pipe(
    Effect.as(layerService),
    Effect.provide(AppConfig.layer)
  )
)
