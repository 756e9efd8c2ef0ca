import { Effect, Layer } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../../Api/Api.ts"
import { openApiDocument } from "../../Api/OpenApiDocument.ts"
import { endpointList } from "../../Api/Routes.ts"
import { AppConfig } from "../../Platform/Config.ts"
import { docsResponse } from "./Docs.ts"
import { CurrentRequest } from "./Outcome.ts"

export { openApiDocument } from "../../Api/OpenApiDocument.ts"

/** The body of `GET /v1`. */
export const indexBody = (publicBaseUrl: string, requestId: string) => ({
  name: "Lead Intake API",
  version: "1" as const,
  openapi: `${publicBaseUrl}/v1/openapi.json`,
  docs: `${publicBaseUrl}/v1/docs`,
  endpoints: endpointList,
  request_id: requestId
})

/** The documents are rendered once, from the configuration, when the group is built. */
export const layerPublicHandlers = Layer.unwrap(
  Effect.map(AppConfig, (config) =>
    HttpApiBuilder.group(
      Api,
      "public",
      Effect.fn(function* (handlers) {
        const document = JSON.stringify(openApiDocument(config.publicBaseUrl))
        const docs = yield* docsResponse("Lead Intake API reference")
        return handlers
          .handle("index", () =>
            Effect.map(Effect.service(CurrentRequest), (request) =>
              indexBody(config.publicBaseUrl, request.requestId)
            )
          )
          .handle("openapi", () =>
            Effect.succeed(
              HttpServerResponse.text(document, {
                contentType: "application/json",
                headers: { "cache-control": "public, max-age=300" }
              })
            )
          )
          .handle("docs", ({ request }) => docs(request.url))
      })
    )
  )
)
