import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { openApiDocument } from "../Api/OpenApiDocument.ts"
import { endpointList } from "../Api/Routes.ts"
import { Api } from "../Api.ts"
import { AppConfig } from "../Config.ts"
import { docsPage } from "./Docs.ts"
import { RequestContext } from "./RequestContext.ts"

export { openApiDocument } from "../Api/OpenApiDocument.ts"

export const layerPublicHandlers = HttpApiBuilder.group(
  Api,
  "public",
  Effect.fn(function* (handlers) {
    const config = yield* AppConfig
    const document = JSON.stringify(openApiDocument(config.publicBaseUrl))
    const page = docsPage(config.publicBaseUrl)
    return handlers
      .handle("index", () =>
        Effect.map(Effect.service(RequestContext), (context) => ({
          name: "Lead Intake API",
          version: "1" as const,
          openapi: `${config.publicBaseUrl}/v1/openapi.json`,
          docs: `${config.publicBaseUrl}/v1/docs`,
          endpoints: endpointList,
          request_id: context.requestId
        }))
      )
      .handle("openapi", () =>
        Effect.succeed(
          HttpServerResponse.text(document, {
            contentType: "application/json",
            headers: { "cache-control": "public, max-age=300" }
          })
        )
      )
      .handle("docs", () =>
        Effect.succeed(HttpServerResponse.text(page, { contentType: "text/html; charset=utf-8" }))
      )
  })
)
