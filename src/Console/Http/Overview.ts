import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AdminApi, CurrentOperator } from "../../AdminApi/AdminApi.ts"
import { ConsoleQueries } from "../ConsoleQueries.ts"
import { organizationScope } from "./Shared.ts"

export const layerOverviewHandlers = HttpApiBuilder.group(
  AdminApi,
  "overview",
  Effect.fn(function* (handlers) {
    const queries = yield* ConsoleQueries
    const { organizationOf, logWritten } = yield* organizationScope

    return handlers
      .handle("organizations", () =>
        Effect.flatMap(Effect.service(CurrentOperator), (operator) => queries.organizationsFor(operator))
      )
      .handle(
        "overview",
        Effect.fn("Admin.overview")(function* ({ query }) {
          const organization = yield* organizationOf(query.org)
          yield* logWritten
          return yield* queries.overview(organization.id)
        })
      )
  })
)
