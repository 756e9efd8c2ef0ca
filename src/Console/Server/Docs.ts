import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder, OpenApi } from "effect/http-api"
import { AdminApi } from "../../AdminApi/AdminApi.ts"

export const adminOpenApiDocument = () => OpenApi.fromApi(AdminApi)

export const layerAdminDocsHandlers = HttpApiBuilder.group(AdminApi, "adminDocs", (handlers) => {
  const document = JSON.stringify(adminOpenApiDocument())
  return handlers.handle("openapi", () =>
    Effect.succeed(HttpServerResponse.text(document, { contentType: "application/json" }))
  )
})
