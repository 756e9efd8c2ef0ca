import { OpenApi } from "effect/http-api"
import { Api } from "./Api.ts"
import { describeDocument } from "./Documentation.ts"
import { documentGuide } from "./Guide.ts"

/** Where the committed `openapi.json` says the API is; a running server names its own PUBLIC_BASE_URL. */
export const defaultServerUrl = "http://127.0.0.1:8080"

/**
 * The OpenAPI document for partners reaching the API at `publicBaseUrl`: the one `HttpApi.fromApi`
 * makes, with the examples and prose of `Documentation.ts`, the license and the server.
 */
export const openApiDocument = (publicBaseUrl: string) => {
  const document = documentGuide(publicBaseUrl)(describeDocument(OpenApi.fromApi(Api)))
  return {
    ...document,
    info: {
      ...document.info,
      license: { name: "Proprietary", url: `${publicBaseUrl}/v1/docs#license` }
    },
    servers: [
      {
        url: publicBaseUrl,
        description:
          publicBaseUrl === defaultServerUrl
            ? "A local server (npm start)"
            : "This deployment (PUBLIC_BASE_URL)"
      }
    ]
  }
}
