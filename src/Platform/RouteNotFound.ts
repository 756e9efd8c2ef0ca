import { Cause } from "effect"
import { HttpServerError } from "effect/http"

/** Whether the router found no route for the request's method and path (a failure, not a defect). */
export const isRouteNotFound = (cause: Cause.Cause<unknown>) =>
  cause.reasons.some(
    (reason) =>
      Cause.isFailReason(reason) &&
      HttpServerError.isHttpServerError(reason.error) &&
      reason.error.reason._tag === "RouteNotFound"
  )
