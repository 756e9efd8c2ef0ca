import { Metric } from "effect"

/** Webhook delivery metrics; `outcome` is one of a closed set, endpoint ids never become labels. */
export const attempts = Metric.counter("lead_intake_webhook_attempts_total", {
  description:
    "Webhook delivery attempts by outcome: delivered, http_error, gone (410), timeout, connection_error, blocked",
  incremental: true
})

export const deliveryLatency = Metric.histogram("lead_intake_webhook_delivery_latency_seconds", {
  description: "Time from the event's commit to the receiver's 2xx answer, for delivered events",
  boundaries: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 7200, 36000, 86400]
})

export const pending = Metric.gauge("lead_intake_webhook_pending", {
  description: "Deliveries waiting for their first or next attempt (all instances)"
})

export const oldestPendingAge = Metric.gauge("lead_intake_webhook_oldest_pending_age_seconds", {
  description: "Age of the oldest event still waiting to be delivered (0 when none)"
})
