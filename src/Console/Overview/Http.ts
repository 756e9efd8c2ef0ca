import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AdminApi, CurrentOperator } from "../../AdminApi/AdminApi.ts"
import { organizationScope, orNotFound } from "../Http/Shared.ts"
import { organizationsFor } from "../Organizations.ts"
import { overviewOf } from "./Queries.ts"
import { webhookAlertsOf } from "./WebhookAlerts.ts"

export const layerOverviewHandlers = HttpApiBuilder.group(
  AdminApi,
  "overview",
  Effect.fn(function* (handlers) {
    const { organizationOf, logWritten } = yield* organizationScope

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
