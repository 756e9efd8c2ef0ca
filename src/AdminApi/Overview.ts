import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { AdminSchemaErrors, Instant, OperatorSession, scoped, Unavailable, Uuid } from "./Common.ts"
import { AdminNotFound } from "./Errors.ts"

export const Organization = Schema.Struct({ id: Uuid, name: Schema.String, country: Schema.String }).annotate(
  {
    identifier: "Organization"
  }
)

export const Overview = Schema.Struct({
  requests_per_minute: Schema.Array(
    Schema.Struct({ minute: Instant, origin_id: Uuid, label: Schema.String, count: Schema.Int })
  ),
  leads_per_day: Schema.Array(
    Schema.Struct({
      day: Schema.String.annotate({ format: "date", description: "A day in the organization's time zone." }),
      created: Schema.Int,
      enriched: Schema.Int
    })
  ),
  error_codes: Schema.Array(Schema.Struct({ code: Schema.String, count: Schema.Int })),
  waiting_for_rescue: Schema.Int.annotate({
    description:
      "Live requests whose body is kept for rescue (docs/contract.md#11-rejected-leads-are-kept-for-rescue)."
  })
}).annotate({
  identifier: "Overview",
  description: "Live data only: the requests and leads of test keys count in no figure."
})

/** An endpoint operators must look at: failing, or paused by the service (a 410, or failing too long). */
export const WebhookAlert = Schema.Struct({
  id: Uuid,
  url: Schema.String,
  state: Schema.Literals(["failing", "paused"]),
  since: Instant.annotate({
    description: "Failing: its first failed attempt since the last success. Paused: when."
  }),
  disabled_reason: Schema.NullOr(Schema.Literals(["gone", "failing"])),
  last_error: Schema.NullOr(Schema.String)
}).annotate({ identifier: "WebhookAlert" })

export class OverviewGroup extends HttpApiGroup.make("overview")
  .add(
    HttpApiEndpoint.get("organizations", "/api/organizations", {
      success: Schema.Array(Organization),
      error: Unavailable
    }).annotateMerge(
      OpenApi.annotations({
        summary: "The organizations the operator may see (all, for platform administrators)"
      })
    ),
    HttpApiEndpoint.get("overview", "/api/overview", {
      ...scoped,
      success: Overview,
      error: [AdminNotFound, ...Unavailable]
    }),
    HttpApiEndpoint.get("webhookAlerts", "/api/overview/webhooks", {
      ...scoped,
      success: Schema.Struct({ items: Schema.Array(WebhookAlert) }).annotate({
        identifier: "WebhookAlertList",
        description: "The organization's endpoints that are failing or were paused automatically."
      }),
      error: [AdminNotFound, ...Unavailable]
    })
  )
  .middleware(AdminSchemaErrors)
  .middleware(OperatorSession)
  .annotate(
    OpenApi.Description,
    "The organizations the operator may see and an organization's figures at a glance."
  ) {}
