// A measuring instrument of `npm run bench`: `GET /v1` answered by the shape the service must keep
// (HttpApi on @effect/platform-node, the same Effect and the same response Schema) with nothing of
// the service's own: one global middleware that sets `X-Request-Id`, no request log line, no
// metrics, no 404/405 of the contract. What separates it from raw node:http is the framework's
// cost; what separates the service from it is the service's (docs/performance.md#findings).
//
//   INDEX_JSON='{...}' PORT=... node scripts/reference-httpapi.ts
import { createServer } from "node:http"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { IndexResponse } from "../src/Api/Api.ts"

const port = Number(process.env.PORT ?? 8091)
/** The service's GET /v1 body without its request_id (added per request, as the service does). */
const index = JSON.parse(process.env.INDEX_JSON ?? "{}") as Omit<typeof IndexResponse.Type, "request_id">

const Api = HttpApi.make("reference").add(
  HttpApiGroup.make("public").add(HttpApiEndpoint.get("index", "/v1", { success: IndexResponse }))
)

const handlers = HttpApiBuilder.group(Api, "public", (handlers) =>
  handlers.handle("index", () => Effect.sync(() => ({ ...index, request_id: crypto.randomUUID() })))
)

const requestId = HttpRouter.middleware(
  (httpEffect) =>
    Effect.map(httpEffect, (response) =>
      HttpServerResponse.setHeader(response, "x-request-id", crypto.randomUUID())
    ),
  { global: true }
)

const app = Layer.mergeAll(HttpApiBuilder.layer(Api).pipe(Layer.provide(handlers)), requestId)

HttpRouter.serve(app, { disableLogger: true, disableListenLog: true }).pipe(
  Layer.provide(
    NodeHttpServer.layer(() => createServer({ keepAliveTimeout: 5_000 }), { port, host: "127.0.0.1" })
  ),
  Layer.launch,
  NodeRuntime.runMain
)
