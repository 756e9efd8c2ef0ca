import { Effect, Option, type Schema } from "effect"
import { CurrentOperator, type RequestExportFilters } from "../../AdminApi/AdminApi.ts"
import { decodeLeadBody } from "../../Api/LeadBody.ts"
import { type RescueFailure, Rescues } from "../../Intake/Rescue.ts"
import { csvDownload, requestColumns, selectionOf } from "../CsvExport.ts"
import { adminFail } from "../Http/RequestContext.ts"
import { notFound, organizationGroup } from "../Http/Shared.ts"
import { isValidCursor } from "../Rows.ts"
import {
  findRequest,
  listRequests,
  type RequestFilter,
  type RequestScope,
  streamRequests
} from "./Queries.ts"

/** The request log's filters as the list and its export take them. */
type RequestQuery = Schema.Struct<typeof RequestExportFilters>["Type"]

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

    /**
     * The rows the filters select and whether the operator may read them: the organization's, one of
     * its origins', or (platform administrators only) the unattributed ones. The list and its export
     * both read through here, so an export holds exactly what its operator can page through.
     */
    const selectionFor = Effect.fn("Admin.requestSelection")(function* (query: RequestQuery) {
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
      const filter: RequestFilter = {
        statusClass: query.status_class,
        outcome: query.outcome,
        from,
        to,
        requestId: query.request_id,
        idempotencyKey: query.idempotency_key,
        kept: query.kept === "true",
        livemode: query.test !== "true"
      }
      return { organization, scope, filter }
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
          const { scope, filter } = yield* selectionFor(query)
          if (!isValidCursor(query.cursor, "request"))
            return yield* adminFail("validation_error", "cursor: not a cursor this API returned", "cursor")
          yield* logWritten
          return yield* listRequests(scope, filter, { cursor: query.cursor, limit: query.limit ?? 50 })
        })
      )
      .handle(
        "exportRequests",
        Effect.fn("Admin.exportRequests")(function* ({ query }) {
          const { organization, scope, filter } = yield* selectionFor(query)
          yield* logWritten
          const { org: _, ...filters } = query
          return yield* csvDownload({
            organizationId: scope._tag === "unattributed" ? null : organization.id,
            action: "requests.export_csv",
            selected: selectionOf("requests", filters),
            name: query.test === "true" ? "requests-test" : "requests",
            columns: requestColumns,
            rows: streamRequests(scope, filter)
          })
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
