import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import {
  AdminSchemaErrors,
  CsvFile,
  Cursor,
  cursorQuery,
  IdParam,
  Instant,
  itemsOf,
  OperatorSession,
  OrgQuery,
  StoredText,
  scoped,
  TestDataQuery,
  trimmed,
  Unavailable,
  Uuid
} from "./Common.ts"
import { AdminNotFound, AdminValidationError } from "./Errors.ts"
import { RequestItem } from "./Requests.ts"

export const PurgedTestData = Schema.Struct({
  purged: Schema.Int.annotate({
    description:
      "Test leads removed, with their notes, tasks, events, deliveries and idempotency records; the request log keeps its rows."
  })
}).annotate({ identifier: "PurgedTestData" })

export const LeadItem = Schema.Struct({
  id: Uuid,
  nombre: Schema.NullOr(Schema.String).annotate({ description: "Null once the lead was erased." }),
  telefono: Schema.NullOr(Schema.String),
  email: Schema.NullOr(Schema.String),
  origin: Schema.Struct({ id: Uuid, label: Schema.String }),
  created_at: Instant
}).annotate({ identifier: "LeadSummary" })

/** The lead list's filters: `q` matches a phone in any format, a name or an e-mail. */
export const LeadFilters = {
  org: OrgQuery,
  q: Schema.optional(StoredText.check(Schema.isMaxLength(200))),
  test: TestDataQuery
}

export const LeadPage = Schema.Struct({ items: Schema.Array(LeadItem), next_cursor: Cursor }).annotate({
  identifier: "LeadPage"
})

export const LeadDetail = Schema.Struct({
  id: Uuid,
  nombre: Schema.NullOr(Schema.String).annotate({ description: "Null once the lead was erased." }),
  erased_at: Schema.NullOr(Instant.annotate({ description: "When its personal data was erased." })),
  telefono: Schema.NullOr(Schema.String),
  email: Schema.NullOr(Schema.String),
  origin: Schema.Struct({ id: Uuid, label: Schema.String }),
  property: Schema.NullOr(Schema.Struct({ id: Uuid, codigo: Schema.String })),
  assignee: Schema.NullOr(Schema.Struct({ id: Uuid, name: Schema.String })),
  created_at: Instant,
  updated_at: Instant,
  livemode: Schema.Boolean.annotate({ description: "false: a test lead, sent with a test key." }),
  notes: Schema.Array(Schema.Struct({ body: Schema.String, created_at: Instant })),
  tasks: Schema.Array(
    Schema.Struct({ kind: Schema.String, assignee: Schema.NullOr(Schema.String), due_at: Instant })
  ),
  events: Schema.Array(Schema.Struct({ type: Schema.String, created_at: Instant })),
  requests: Schema.Array(RequestItem)
}).annotate({ identifier: "LeadDetail" })

export const LeadErasure = Schema.Struct({
  reason: trimmed(500).annotate({
    description: "Why (kept in the audit trail; must not contain the person's name, phone or e-mail)."
  })
}).annotate({ identifier: "LeadErasure" })

export const ErasedLead = Schema.Struct({
  id: Uuid,
  erased_at: Instant,
  already_erased: Schema.Boolean
}).annotate({ identifier: "ErasedLead" })

export class LeadsGroup extends HttpApiGroup.make("leads")
  .add(
    HttpApiEndpoint.get("leads", "/api/leads", {
      query: { ...LeadFilters, ...cursorQuery },
      success: LeadPage,
      error: [AdminNotFound, AdminValidationError, ...Unavailable]
    }),
    HttpApiEndpoint.get("exportLeads", "/api/leads.csv", {
      query: LeadFilters,
      success: CsvFile,
      error: [AdminNotFound, AdminValidationError, ...Unavailable]
    }).annotateMerge(
      OpenApi.annotations({
        summary:
          "The lead list as a CSV file: every lead the search keeps, newest first, streamed (audited as leads.export_csv once the last row is sent)"
      })
    ),
    HttpApiEndpoint.get("lead", "/api/leads/:id", {
      ...scoped,
      params: IdParam,
      success: LeadDetail,
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.post("exportLead", "/api/leads/:id/export", {
      ...scoped,
      params: IdParam,
      success: Schema.Record(Schema.String, Schema.Json).annotate({
        identifier: "LeadExport",
        description: "Everything held about the lead, as `lead-intake lead export` prints it."
      }),
      error: [AdminNotFound, ...Unavailable]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Export a lead's personal data (admins only; a POST because it is audited)"
      })
    ),
    HttpApiEndpoint.get("erasures", "/api/erasures", {
      ...scoped,
      success: itemsOf(
        Schema.Struct({ lead_id: Uuid, erased_at: Instant, erased_by: Schema.String, reason: Schema.String }),
        "ErasureList"
      ).annotate({ description: "The organization's erasures, newest first (at most 200)." }),
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.post("eraseLead", "/api/leads/:id/erase", {
      ...scoped,
      params: IdParam,
      payload: LeadErasure,
      success: ErasedLead,
      error: [AdminNotFound, AdminValidationError, ...Unavailable]
    }).annotateMerge(
      OpenApi.annotations({
        summary:
          "Erase a lead's personal data, leaving a tombstone (admins only; audited without personal data)"
      })
    ),
    HttpApiEndpoint.post("purgeTestData", "/api/test-data/purge", {
      ...scoped,
      success: PurgedTestData,
      error: [AdminNotFound, ...Unavailable]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Remove the organization's test data in one action (admins only; audited)"
      })
    )
  )
  .middleware(AdminSchemaErrors)
  .middleware(OperatorSession)
  .annotate(
    OpenApi.Description,
    "The leads received, their personal data (export, erasure) and the removal of test data."
  ) {}
