import { OpenApi } from "effect/http-api"
import { Api } from "./Api.ts"
import { finishDocument } from "./Document.ts"

/** Where the committed `openapi.json` says the API is; a running server names its own PUBLIC_BASE_URL. */
export const defaultServerUrl = "http://127.0.0.1:8080"

/**
 * The OpenAPI document for partners reaching the API at `publicBaseUrl`: the one `OpenApi.fromApi`
 * derives from the annotated contract, with the deployment's server and license annotated once the
 * URL is known, and the few edits of `Document.ts` no annotation can make.
 */
export const openApiDocument = (publicBaseUrl: string) =>
  finishDocument(
    publicBaseUrl,
    OpenApi.fromApi(
      Api.annotateMerge(
        OpenApi.annotations({
          license: { name: "Proprietary", url: `${publicBaseUrl}/v1/docs#license` },
          servers: [
            {
              url: publicBaseUrl,
              description:
                publicBaseUrl === defaultServerUrl
                  ? "A local server (npm start)"
                  : "This deployment (PUBLIC_BASE_URL)"
            }
          ]
        })
      )
    ) as unknown as Record<string, unknown>
  )
