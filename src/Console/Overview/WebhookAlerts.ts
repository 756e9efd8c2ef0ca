import { Effect } from "effect"
import type { WebhookAlert } from "../../AdminApi/Overview.ts"
import { WebhookEndpoints } from "../../Webhooks/Endpoints.ts"

/**
 * The endpoints to look at, read through `WebhookEndpoints.list` like the webhooks page and
 * `webhook list`: paused by the service (a 410, or failing for WEBHOOK_DISABLE_AFTER) first, then
 * failing ones, longest first. An endpoint an operator disabled is not a problem to report.
 */
export const webhookAlertsOf = Effect.fn("Console.webhookAlerts")(function* (organizationId: string) {
  const endpoints = yield* WebhookEndpoints
  const listed = yield* endpoints.list(organizationId)
  const alerts: Array<typeof WebhookAlert.Type> = []
  for (const endpoint of listed) {
    const reason = endpoint.disabledReason
    if (endpoint.disabled && endpoint.disabledAt !== null && (reason === "gone" || reason === "failing"))
      alerts.push({
        id: endpoint.id,
        url: endpoint.url,
        state: "paused",
        since: endpoint.disabledAt.toISOString(),
        disabled_reason: reason,
        last_error: endpoint.lastError
      })
    else if (!endpoint.disabled && endpoint.failingSince !== null)
      alerts.push({
        id: endpoint.id,
        url: endpoint.url,
        state: "failing",
        since: endpoint.failingSince.toISOString(),
        disabled_reason: null,
        last_error: endpoint.lastError
      })
  }
  return alerts.sort((a, b) =>
    a.state === b.state ? a.since.localeCompare(b.since) : a.state === "paused" ? -1 : 1
  )
})
