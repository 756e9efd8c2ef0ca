import { Effect } from "effect"
import { CurrentOperator } from "../../AdminApi/AdminApi.ts"
import { organizationGroup, orNotFound } from "../Http/Shared.ts"
import { organizationsFor } from "../Organizations.ts"
import { overviewOf } from "./Queries.ts"
import { webhookAlertsOf } from "./WebhookAlerts.ts"

export const layerOverviewHandlers = organizationGroup(
  "overview",
  Effect.fn(function* (handlers, { forOrganization, organizationItems, logWritten }) {
    return handlers
      .handle("organizations", () =>
        Effect.flatMap(Effect.service(CurrentOperator), (operator) => organizationsFor(operator))
      )
      .handle(
        "overview",
        forOrganization("Admin.overview", (organization) =>
          Effect.andThen(logWritten, overviewOf(organization.id))
        )
      )
      .handle(
        "webhookAlerts",
        organizationItems("Admin.webhookAlerts", (organizationId) =>
          webhookAlertsOf(organizationId).pipe(orNotFound)
        )
      )
  })
)
