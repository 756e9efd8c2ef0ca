import { Layer } from "effect"
import { HttpMiddleware } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../../Api/Api.ts"
import { routeTable } from "../../Api/Routes.ts"
import { LeadIntake } from "../LeadIntake.ts"
import { layerAdmission, layerDecoding } from "./Admission.ts"
import { layerLeadHandlers } from "./Leads.ts"
import { layerPublicHandlers } from "./Public.ts"
import { layerGlobalMiddleware, pathOf } from "./Routing.ts"

/**
 * Only the contract's paths are traced, so a path a client made up (and whatever it put in it)
 * never reaches a span; those requests are still logged and counted.
 */
export const layerTracedRoutes = Layer.succeed(
  HttpMiddleware.TracerDisabledWhen,
  (request) => !routeTable.has(pathOf(request.url))
)

/** The routes of the contract with their middleware; needs the services and `AppConfig`. */
export const layerApp = Layer.mergeAll(
  HttpApiBuilder.layer(Api).pipe(
    Layer.provide([layerPublicHandlers, layerLeadHandlers.pipe(Layer.provide(LeadIntake.layer))]),
    Layer.provide([layerAdmission, layerDecoding])
  ),
  layerGlobalMiddleware
)
