import { OpenApi } from "effect/http-api"
import { Api } from "./Api.ts"
import { defaultServerUrl, finishDocument } from "./Document.ts"

export { defaultServerUrl }

/**
 * The OpenAPI document for partners reaching the API at `publicBaseUrl`: the one `OpenApi.fromApi`
 * derives from the annotated contract, with the few edits of `Document.ts` no annotation can make.
 */
export const openApiDocument = (publicBaseUrl: string) =>
  finishDocument(publicBaseUrl, OpenApi.fromApi(Api) as unknown as Record<string, unknown>)
