import { Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../../Api/Api.ts"
import { layerAdmission, layerDecoding } from "./Admission.ts"
import { layerLeadHandlers } from "./Leads.ts"
import { layerPublicHandlers } from "./Public.ts"
import { layerGlobalMiddleware } from "./Routing.ts"

/** The routes of the contract with their middleware; needs the services and `AppConfig`. */
export const layerApp = Layer.mergeAll(
  HttpApiBuilder.layer(Api).pipe(
    Layer.provide([layerPublicHandlers, layerLeadHandlers]),
    Layer.provide([layerAdmission, layerDecoding])
  ),
  layerGlobalMiddleware
)
