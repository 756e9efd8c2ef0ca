import { Effect } from "effect"
import { canonicalTimeZone } from "../../AdminApi/AdminApi.ts"
import { organizationGroup, orNotFound } from "../Http/Shared.ts"
import { Preferences } from "../Preferences.ts"

export const layerSettingsHandlers = organizationGroup(
  "settings",
  Effect.fn(function* (handlers, { forOrganization, organizationOf, record }) {
    const preferences = yield* Preferences

    return handlers
      .handle(
        "organization",
        forOrganization("Admin.organizationSettings", (organization) =>
          preferences.organization(organization.id).pipe(orNotFound)
        )
      )
      .handle(
        "setTimeZone",
        Effect.fn("Admin.setTimeZone")(function* ({ query, payload }) {
          const organization = yield* organizationOf(query.org)
          const zone = canonicalTimeZone(payload.time_zone) ?? payload.time_zone
          const settings = yield* preferences.setTimeZone(organization.id, zone).pipe(orNotFound)
          yield* record(organization, "organization.set_time_zone", `organization ${organization.id} ${zone}`)
          return settings
        })
      )
  })
)
