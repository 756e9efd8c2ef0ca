import { Effect, Option } from "effect"
import { CurrentOperator } from "../../AdminApi/AdminApi.ts"
import { decodeLeadBody } from "../../Api/LeadBody.ts"
import { type RescueFailure, Rescues } from "../../Intake/Rescue.ts"
import { adminFail } from "../Http/RequestContext.ts"
import { notFound, organizationGroup } from "../Http/Shared.ts"
import { isValidCursor } from "../Rows.ts"
import { findRequest, listRequests, type RequestScope } from "./Queries.ts"

type RescueAnswerError = Effect.Error<
  ReturnType<
    typeof adminFail<
      | "validation_error"
      | "property_not_found"
      | "conflict"
      | "not_found"
      | "temporarily_unavailable"
      | "internal_error"
    >
  >
>

export const layerRequestsHandlers = organizationGroup(
  "requests",
  Effect.fn(function* (handlers, { organizationOf, requireOwned, logWritten, record }) {
    const rescues = yield* Rescues

    /** Kept bodies are admins' data (docs/contract.md#11-rejected-leads-are-kept-for-rescue): a viewer is refused. */
    const requireAdmin = Effect.gen(function* () {
      const operator = yield* CurrentOperator
      if (operator.role !== "admin")
        return yield* adminFail("forbidden", "Only admins see and rescue the bodies kept for rescue")
    })

    /** A request of the organization (or, for a platform administrator, an unattributed one), else 404. */
    const requestOf = Effect.fn("Admin.requestOf")(function* (organizationId: string, requestId: string) {
      const operator = yield* CurrentOperator
      yield* logWritten
      const row = yield* findRequest(organizationId, requestId, operator.organizationId === null)
      if (Option.isNone(row)) return yield* notFound("request")
      return row.value
    })

    const rescueRefused = (failure: RescueFailure): Effect.Effect<never, RescueAnswerError> => {
      switch (failure._tag) {
        case "UnknownProperty":
          return adminFail("property_not_found", failure.message, failure.field)
        case "NotRescuable":
          return adminFail("conflict", failure.message)
        case "UnknownEntity":
          return notFound("request")
        case "StoreUnavailable":
          return adminFail(
            "temporarily_unavailable",
            "The database could not be reached; nothing was written"
          )
        case "OutcomeUnknown":
          return adminFail("internal_error", "The database stopped answering after the write was sent")
      }
    }

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
              kept: query.kept === "true",
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
          const organization = yield* organizationOf(query.org)
          return yield* requestOf(organization.id, params.request_id)
        })
      )
      .handle(
        "keptBody",
        Effect.fn("Admin.keptBody")(function* ({ query, params }) {
          yield* requireAdmin
          const organization = yield* organizationOf(query.org)
          yield* requestOf(organization.id, params.request_id)
          const shown = yield* rescues
            .show(params.request_id)
            .pipe(Effect.catchTag("UnknownEntity", () => notFound("request")))
          return { request_id: shown.request_id, body: shown.body, rescued_lead_id: shown.rescued_lead_id }
        })
      )
      .handle(
        "rescue",
        Effect.fn("Admin.rescue")(function* ({ query, params, payload }) {
          yield* requireAdmin
          const organization = yield* organizationOf(query.org)
          yield* requestOf(organization.id, params.request_id)
          const decoded = decodeLeadBody(payload.body)
          if (decoded._tag === "Invalid")
            return yield* adminFail("validation_error", decoded.message, decoded.field)
          const rescued = yield* rescues
            .rescue(params.request_id, decoded.lead)
            .pipe(Effect.catch(rescueRefused))
          yield* record(organization, "request.rescue", params.request_id)
          return rescued.answer
        })
      )
  })
)
