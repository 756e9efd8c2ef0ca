import { Effect, Option, type Schema } from "effect"
import { CurrentOperator } from "../../AdminApi/AdminApi.ts"
import { LeadRepository } from "../../Intake/LeadRepository.ts"
import { PersonalData } from "../../PersonalData/PersonalData.ts"
import { csvDownload, leadColumns, selectionOf } from "../CsvExport.ts"
import { adminFail } from "../Http/RequestContext.ts"
import { notFound, organizationGroup, orNotFound, unknownToNotFound } from "../Http/Shared.ts"
import { isValidCursor } from "../Rows.ts"
import { findLead, listLeads, streamLeads } from "./Queries.ts"

export const layerLeadsHandlers = organizationGroup(
  "leads",
  Effect.fn(function* (handlers, { organizationOf, organizationOwning, record, logWritten }) {
    const personalData = yield* PersonalData
    const leads = yield* LeadRepository

    return handlers
      .handle(
        "leads",
        Effect.fn("Admin.leads")(function* ({ query }) {
          const organization = yield* organizationOf(query.org)
          if (!isValidCursor(query.cursor, "lead"))
            return yield* adminFail("validation_error", "cursor: not a cursor this API returned", "cursor")
          const page = yield* listLeads(
            organization,
            query.q ?? "",
            { cursor: query.cursor, limit: 50 },
            query.test !== "true"
          )
          return page
        })
      )
      .handle(
        "exportLeads",
        Effect.fn("Admin.exportLeads")(function* ({ query }) {
          const organization = yield* organizationOf(query.org)
          const q = query.q ?? ""
          return yield* csvDownload({
            organizationId: organization.id,
            action: "leads.export_csv",
            // what was searched may be a person's phone, name or e-mail: the audit trail keeps none
            selected: selectionOf("leads", { q: q.trim() === "" ? undefined : "…", test: query.test }),
            name: query.test === "true" ? "leads-test" : "leads",
            columns: leadColumns,
            rows: streamLeads(organization, q, query.test !== "true")
          })
        })
      )
      .handle(
        "lead",
        Effect.fn("Admin.lead")(function* ({ query, params }) {
          const organization = yield* organizationOf(query.org)
          yield* logWritten
          const lead = yield* findLead(organization.id, params.id)
          if (Option.isNone(lead)) return yield* notFound("lead")
          return lead.value
        })
      )
      .handle(
        "exportLead",
        Effect.fn("Admin.exportLead")(function* ({ query, params }) {
          const organization = yield* organizationOwning(query.org, "lead", params.id)
          const document = yield* personalData.export(params.id).pipe(orNotFound)
          yield* record(organization, "lead.export", `lead ${params.id}`)
          return document as unknown as Record<string, Schema.Json>
        })
      )
      .handle(
        "erasures",
        Effect.fn("Admin.erasures")(function* ({ query }) {
          const organization = yield* organizationOf(query.org)
          const rows = yield* personalData.erasures(organization.id, 200).pipe(orNotFound)
          return {
            items: rows.map((row) => ({
              lead_id: row.lead_id,
              erased_at: row.erased_at,
              erased_by: row.erased_by,
              reason: row.reason
            }))
          }
        })
      )
      .handle(
        "eraseLead",
        Effect.fn("Admin.eraseLead")(function* ({ query, params, payload }) {
          const operator = yield* CurrentOperator
          const organization = yield* organizationOwning(query.org, "lead", params.id)
          const erased = yield* personalData
            .erase({ leadId: params.id, reason: payload.reason.trim(), actor: operator.email })
            .pipe(
              Effect.catchTags({
                UnknownEntity: unknownToNotFound,
                Rejected: (error) => adminFail("validation_error", `reason: ${error.reason}`, "reason")
              })
            )
          if (!erased.already_erased) yield* record(organization, "lead.erase", `lead ${params.id}`)
          return erased
        })
      )
      .handle(
        "purgeTestData",
        Effect.fn("Admin.purgeTestData")(function* ({ query }) {
          const organization = yield* organizationOf(query.org)
          const purged = yield* leads.purgeTest(organization.id).pipe(orNotFound)
          yield* record(
            organization,
            "test_data.purged",
            `${purged} test lead${purged === 1 ? "" : "s"} of organization ${organization.id}`
          )
          return { purged }
        })
      )
  })
)
