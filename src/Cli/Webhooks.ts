import { Effect, Layer, Option } from "effect"
import { Command, Flag } from "effect/cli"
import type { AuditAction } from "../AdminApi/Audit.ts"
import { Audit } from "../Console/AuditLog.ts"
import { type EventType, eventTypes, isEventType } from "../Domain/WebhookPayload.ts"
import { WebhookConfig } from "../Platform/Config.ts"
import { WebhookAttempts } from "../Webhooks/Attempts.ts"
import { WebhookDeliveries } from "../Webhooks/Deliveries.ts"
import { type WebhookEndpoint, WebhookEndpoints } from "../Webhooks/Endpoints.ts"
import * as Input from "./Input.ts"
import { emit, emitTable, orDash } from "./Output.ts"
import { layerCommand } from "./Services.ts"

const withWebhooks = Effect.provide(
  layerCommand(
    Layer.mergeAll(WebhookEndpoints.layer, WebhookDeliveries.layer, WebhookAttempts.layer, Audit.layer).pipe(
      Layer.provide(WebhookConfig.layer)
    )
  )
)

const events = Input.storable(Flag.String("events")).pipe(
  Flag.withMetavar("TYPE,..."),
  Flag.withDescription(`Event types to receive (default: ${eventTypes.join(",")})`),
  Flag.filterMap(
    (raw) => {
      const types = [...new Set(raw.split(",").map((type) => type.trim()))]
      return types.length > 0 && types.every(isEventType)
        ? Option.some(types as Array<EventType>)
        : Option.none()
    },
    () => `Expected a comma-separated list of event types from ${eventTypes.join(", ")}`
  ),
  Flag.withDefault([...eventTypes] as Array<EventType>)
)

const url = Input.storable(Flag.String("url")).pipe(
  Flag.withMetavar("URL"),
  Flag.withDescription("Where to POST the events: https:// to a public address")
)

const testEvents = Input.toggle("test-events", 'Also send the events of test leads ("livemode": false)')

const endpointView = (endpoint: WebhookEndpoint) => ({
  id: endpoint.id,
  url: endpoint.url,
  events: endpoint.events,
  test_events: endpoint.testEvents,
  disabled: endpoint.disabled,
  disabled_reason: endpoint.disabledReason,
  created_at: endpoint.createdAt.toISOString()
})

const isoTimePattern = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i

/** An ISO-8601 time; one without a zone is read as UTC, like every time the CLI prints. */
const isoTime = (name: string) =>
  Flag.String(name).pipe(
    Flag.withMetavar("ISO_TIME"),
    Flag.filterMap(
      (raw) => {
        const text = raw.trim()
        if (!isoTimePattern.test(text)) return Option.none()
        const zoned = /T/i.test(text) && !/(Z|[+-]\d{2}:?\d{2})$/i.test(text) ? `${text}Z` : text
        const millis = Date.parse(zoned)
        return Number.isNaN(millis) ? Option.none() : Option.some(new Date(millis))
      },
      () => "Expected an ISO-8601 time such as 2026-11-23T10:00:00Z"
    )
  )

const webhookId = Input.id("id", "webhook")

const webhookAdd = Input.command(
  "add",
  "Send the organization's lead events to a URL (the only time the secret is printed)",
  { org: Input.org, url, events, testEvents },
  Effect.fn("Cli.webhookAdd")(function* ({ org, url, events, testEvents }) {
    const added = yield* WebhookEndpoints.use((endpoints) =>
      endpoints.add({ organizationId: org, url, events, testEvents })
    )
    yield* emit(
      {
        id: added.endpoint.id,
        url: added.endpoint.url,
        events: added.endpoint.events,
        test_events: added.endpoint.testEvents,
        secret: added.secret
      },
      (w) =>
        [
          `Added webhook ${w.id} → ${w.url} (${w.events.join(", ")}${w.test_events ? "; test events too" : ""})`,
          `Signing secret (shown this once, store it now): ${w.secret}`
        ].join("\n")
    )
  }, withWebhooks)
)

const webhookList = Input.command(
  "list",
  "List the organization's webhooks (never their secrets)",
  { org: Input.org },
  Effect.fn("Cli.webhookList")(function* ({ org }) {
    const listed = yield* WebhookEndpoints.use((endpoints) => endpoints.list(org))
    yield* emitTable(
      listed.map(endpointView),
      [
        ["ID", (w) => w.id],
        ["URL", (w) => w.url],
        ["EVENTS", (w) => w.events.join(",")],
        ["TEST EVENTS", (w) => (w.test_events ? "yes" : "no")],
        ["DISABLED", (w) => (w.disabled ? `yes (${w.disabled_reason ?? "operator"})` : "no")],
        ["CREATED", (w) => w.created_at]
      ],
      "No webhooks."
    )
  }, withWebhooks)
)

const webhookRemove = Input.command(
  "remove",
  "Remove a webhook; its pending deliveries are dropped",
  { id: webhookId },
  Effect.fn("Cli.webhookRemove")(function* ({ id }) {
    yield* WebhookEndpoints.use((endpoints) => endpoints.remove(id))
    yield* emit({ id, removed: true }, (w) => `Removed webhook ${w.id} and its delivery history`)
  }, withWebhooks)
)

/** The audit row of an operator's change to an endpoint, as the console writes it (`webhook.disable`, ...). */
const auditEndpoint = (action: AuditAction, actor: string, endpoint: WebhookEndpoint) =>
  Audit.use((audit) =>
    audit.record({
      organizationId: endpoint.organizationId,
      operatorId: null,
      operatorEmail: `cli:${actor}`,
      action,
      target: `webhook ${endpoint.id} ${endpoint.url}`,
      ip: null
    })
  )

const webhookDisable = Input.command(
  "disable",
  "Stop deliveries to a webhook until `webhook enable`; its pending deliveries wait (audited)",
  { id: webhookId, by: Input.by("disables it") },
  Effect.fn("Cli.webhookDisable")(function* ({ id, by }) {
    const actor = yield* Input.actor(by, "disabling the webhook")
    const disabled = yield* WebhookEndpoints.use((endpoints) => endpoints.disable(id))
    yield* auditEndpoint("webhook.disable", actor, disabled)
    yield* emit(
      { id: disabled.id, disabled: disabled.disabled, disabled_reason: disabled.disabledReason },
      (w) => `Webhook ${w.id} is disabled; its deliveries wait for \`webhook enable --id ${w.id}\``
    )
  }, withWebhooks)
)

const webhookEnable = Input.command(
  "enable",
  "Enable a disabled webhook (by an operator, a 410 answer, or failing for WEBHOOK_DISABLE_AFTER); its waiting deliveries resume (audited)",
  { id: webhookId, by: Input.by("enables it") },
  Effect.fn("Cli.webhookEnable")(function* ({ id, by }) {
    const actor = yield* Input.actor(by, "enabling the webhook")
    const enabled = yield* WebhookEndpoints.use((endpoints) => endpoints.enable(id))
    yield* auditEndpoint("webhook.enable", actor, enabled)
    yield* emit({ id: enabled.id, disabled: enabled.disabled }, (w) => `Webhook ${w.id} is enabled`)
  }, withWebhooks)
)

const webhookTest = Input.command(
  "test",
  "Send a webhook.test event to this webhook, signed and retried like any other",
  { id: webhookId },
  Effect.fn("Cli.webhookTest")(function* ({ id }) {
    const queued = yield* WebhookDeliveries.use((deliveries) => deliveries.sendTest(id))
    yield* emit(
      { event_id: queued.eventId, type: "webhook.test" as const, state: "pending" as const },
      (e) => `Queued test event ${e.event_id} for webhook ${id}; see \`webhook deliveries --id ${id}\``
    )
  }, withWebhooks)
)

const webhookRotateSecret = Input.command(
  "rotate-secret",
  "Issue a new signing secret; the old one keeps signing beside it for 24 h",
  { id: webhookId },
  Effect.fn("Cli.webhookRotateSecret")(function* ({ id }) {
    const rotated = yield* WebhookEndpoints.use((endpoints) => endpoints.rotateSecret(id))
    yield* emit({ id: rotated.id, secret: rotated.secret }, (w) =>
      [
        `New signing secret for webhook ${w.id} (shown this once, store it now): ${w.secret}`,
        "The previous secret keeps signing beside it for 24 hours."
      ].join("\n")
    )
  }, withWebhooks)
)

const webhookDeliveries = Input.command(
  "deliveries",
  "The webhook's deliveries, newest first",
  { id: webhookId, limit: Input.limit },
  Effect.fn("Cli.webhookDeliveries")(function* ({ id, limit }) {
    const rows = yield* WebhookDeliveries.use((deliveries) => deliveries.list(id, limit))
    yield* emitTable(
      rows,
      [
        ["EVENT", (d) => d.event_id],
        ["TYPE", (d) => d.type],
        ["STATE", (d) => d.state],
        ["ATTEMPTS", (d) => String(d.attempts)],
        ["LAST STATUS", (d) => (d.last_status === null ? "-" : String(d.last_status))],
        ["LAST ERROR", (d) => orDash(d.last_error)],
        ["LAST ATTEMPT", (d) => orDash(d.last_attempt_at)],
        ["NEXT ATTEMPT", (d) => orDash(d.next_attempt_at)]
      ],
      "No deliveries."
    )
  }, withWebhooks)
)

const webhookResend = Input.command(
  "resend",
  "Queue an event of the webhook again, failed or delivered, with the same webhook-id",
  { id: webhookId, event: Input.id("event", "event") },
  Effect.fn("Cli.webhookResend")(function* ({ id, event }) {
    yield* WebhookDeliveries.use((deliveries) => deliveries.resend(id, event))
    yield* emit(
      { event_id: event, state: "pending" as const },
      (d) => `Event ${d.event_id} queued again for webhook ${id} (same webhook-id)`
    )
  }, withWebhooks)
)

const webhookAttempts = Input.command(
  "attempts",
  "Every attempt of one delivery, oldest first: time, status, error, duration",
  { id: webhookId, event: Input.id("event", "event") },
  Effect.fn("Cli.webhookAttempts")(function* ({ id, event }) {
    const rows = yield* WebhookAttempts.use((attempts) => attempts.list(id, event))
    yield* emitTable(
      rows,
      [
        ["AT", (a) => a.at],
        ["STATUS", (a) => (a.status === null ? "-" : String(a.status))],
        ["ERROR", (a) => orDash(a.error)],
        ["DURATION", (a) => `${a.duration_ms} ms`]
      ],
      "No attempts yet."
    )
  }, withWebhooks)
)

const webhookResendFailed = Input.command(
  "resend-failed",
  "Queue again every failed delivery of the webhook created at or after --since, each with its own webhook-id",
  { id: webhookId, since: isoTime("since") },
  Effect.fn("Cli.webhookResendFailed")(function* ({ id, since }) {
    const queued = yield* WebhookDeliveries.use((deliveries) => deliveries.resendFailed(id, since))
    yield* emit(
      { queued },
      (r) =>
        `${r.queued} failed ${r.queued === 1 ? "delivery" : "deliveries"} since ${since.toISOString()} queued again for webhook ${id}`
    )
  }, withWebhooks)
)

export const webhook = Input.group(
  "webhook",
  "Webhooks: lead events pushed to the organization's own systems",
  [
    webhookAdd,
    webhookList,
    webhookRemove,
    webhookDisable,
    webhookEnable,
    webhookTest,
    webhookRotateSecret,
    webhookDeliveries,
    webhookAttempts,
    webhookResend,
    webhookResendFailed
  ]
)

/** Loaded when needed, like `serve`'s HTTP stack. */
const layerWorker = Layer.unwrap(
  Effect.promise(() => import("../Webhooks/Worker.ts")).pipe(
    Effect.map((worker) => worker.layerWorkerProcess)
  )
)

export const worker = Command.make("worker", {}, () =>
  Layer.launch(layerWorker).pipe(
    Effect.onInterrupt(() =>
      Effect.sync(() => {
        process.exitCode = 0
      })
    )
  )
).pipe(Command.withDescription("Deliver webhooks without serving the API (serve runs the same worker)"))
