import { createServer } from "node:http"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, Option } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { layerHealthRoutes } from "../Admin/Health.ts"
import { AppConfig } from "../Config.ts"
import { logListening } from "../Listening.ts"

const urlOf = (host: string, port: number) => `http://${host.includes(":") ? `[${host}]` : host}:${port}`

/**
 * The management listener (`HEALTH_HOST:HEALTH_PORT`, default `HOST:8082`): `GET /healthz` and
 * `GET /readyz` only, whether or not the console listens; nothing when `HEALTH_PORT=off`. The API's
 * port serves `/v1` routes only and the console's port serves the console only.
 */
export const layerHealthServer = Layer.unwrap(
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (Option.isNone(config.healthPort)) {
      return Layer.effectDiscard(Effect.logInfo("health probes disabled (HEALTH_PORT=off)"))
    }
    const listener = NodeHttpServer.layer(
      () =>
        createServer({
          requestTimeout: 5_000,
          headersTimeout: 5_000,
          keepAliveTimeout: 5_000,
          maxHeaderSize: 8_192,
          connectionsCheckingInterval: 1_000
        }),
      { port: config.healthPort.value, host: config.healthHost, gracefulShutdownTimeout: "2 seconds" }
    )
    const announce = Layer.effectDiscard(
      Effect.gen(function* () {
        const server = yield* HttpServer.HttpServer
        const port =
          "port" in server.address ? server.address.port : Option.getOrElse(config.healthPort, () => 0)
        yield* logListening("health", urlOf(config.healthHost, port))
      })
    )
    return HttpRouter.serve(layerHealthRoutes, {
      disableLogger: true,
      disableListenLog: true
    }).pipe(Layer.merge(announce), Layer.provide(listener))
  })
)
