import { Effect, Option } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AdminApi, CurrentOperator } from "../../AdminApi/AdminApi.ts"
import { adminFail } from "../Http/RequestContext.ts"
import { notFound, organizationScope } from "../Http/Shared.ts"
import { isValidCursor } from "../Rows.ts"
import { findRequest, listRequests, type RequestScope } from "./Queries.ts"

export const layerRequestsHandlers = HttpApiBuilder.group(
  AdminApi,
  "requests",
  Effect.fn(function* (handlers) {
    const { organizationOf, requireOwned, logWritten } = yield* organizationScope

    return handlers
      .handle(
        "requests",
        Effect.fn("Admin.requests")(function* ({ query }) {
          const operator = yield* CurrentOperator
          const organization = yield* organizationOf(query.org)
          let scope: RequestScope = { _tag: "organization", organizationId: organization.id }
          if (query.origin !== undefined && query.unattributed === "true") {
            return yield* adminFail(
              "validation_error",
              "origin and unattributed exclude each other",
              "unattributed"
            )
          }
          if (query.origin !== undefined) {
            yield* requireOwned(organization, "origin", query.origin)
            scope = { _tag: "origin", originId: query.origin }
          } else if (query.unattributed === "true") {
            if (operator.organizationId !== null) {
              return yield* adminFail("forbidden", "Only platform administrators see unattributed requests")
            }
            scope = { _tag: "unattributed" }
          }
          const from = query.from === undefined ? undefined : new Date(query.from)
          const to = query.to === undefined ? undefined : new Date(query.to)
          if (from !== undefined && Number.isNaN(from.getTime()))
            return yield* adminFail("validation_error", "from: expected an ISO-8601 instant", "from")
          if (to !== undefined && Number.isNaN(to.getTime()))
            return yield* adminFail("validation_error", "to: expected an ISO-8601 instant", "to")
          if (!isValidCursor(query.cursor, "request"))
            return yield* adminFail("validation_error", "cursor: not a cursor this API returned", "cursor")
          yield* logWritten
          const page = yield* listRequests(
            scope,
            {
              statusClass: query.status_class,
              outcome: query.outcome,
              from,
              to,
              requestId: query.request_id,
              idempotencyKey: query.idempotency_key,
              livemode: query.test !== "true"
            },
            { cursor: query.cursor, limit: query.limit ?? 50 }
          )
          return page
        })
      )
      .handle(
        "request",
        Effect.fn("Admin.request")(function* ({ query, params }) {
          const operator = yield* CurrentOperator
          const organization = yield* organizationOf(query.org)
          yield* logWritten
          const row = yield* findRequest(organization.id, params.request_id, operator.organizationId === null)
          if (Option.isNone(row)) return yield* notFound("request")
          return row.value
        })
      )
  })
)
