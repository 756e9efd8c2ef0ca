import { Effect } from "effect"
import { CurrentOperator } from "../../AdminApi/AdminApi.ts"
import { organizationGroup, orNotFound } from "../Http/Shared.ts"
import { organizationsFor } from "../Organizations.ts"
import { overviewOf } from "./Queries.ts"
import { webhookAlertsOf } from "./WebhookAlerts.ts"

export const layerOverviewHandlers = organizationGroup(
  "overview",
  Effect.fn(function* (handlers, { organizationOf, logWritten }) {
    return handlers
      .handle("organizations", () =>
        Effect.flatMap(Effect.service(CurrentOperator), (operator) => organizationsFor(operator))
      )
      .handle(
        "overview",
        Effect.fn("Admin.overview")(function* ({ query }) {
          const organization = yield* organizationOf(query.org)
          yield* logWritten
          return yield* overviewOf(organization.id)
        })
      )
      .handle(
        "webhookAlerts",
        Effect.fn("Admin.webhookAlerts")(function* ({ query }) {
          const organization = yield* organizationOf(query.org)
          const items = yield* webhookAlertsOf(organization.id).pipe(orNotFound)
          return { items }
        })
      )
  })
)
