import { Effect, Layer, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { type EventType, eventTypes, isEventType } from "../Domain/WebhookPayload.ts"
import { AppConfig, WebhookConfig } from "../Platform/Config.ts"
import * as Migrations from "../Platform/Migrations.ts"
import { WebhookAttempts } from "../Webhooks/Attempts.ts"
import { WebhookDeliveries } from "../Webhooks/Deliveries.ts"
import { type WebhookEndpoint, WebhookEndpoints } from "../Webhooks/Endpoints.ts"
import * as Input from "./Input.ts"
import { emit, orDash, table } from "./Output.ts"
import { layerLogLevel } from "./Services.ts"

const withWebhooks = Effect.provide(
  Layer.mergeAll(WebhookEndpoints.layer, WebhookDeliveries.layer, WebhookAttempts.layer, layerLogLevel).pipe(
    Layer.provide(WebhookConfig.layer),
    Layer.provideMerge(Migrations.layer),
    Layer.provideMerge(AppConfig.layer)
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

const testEvents = Flag.Boolean("test-events").pipe(
  Flag.withDescription('Also send the events of test leads ("livemode": false)'),
  Flag.withDefault(false)
)

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

const webhookAdd = Command.make(
  "add",
  { org: Input.id("org", "organization"), url, events, testEvents },
  Effect.fn("Cli.webhookAdd")(function* ({ org, url, events, testEvents }) {
    const endpoints = yield* WebhookEndpoints
    const added = yield* endpoints.add({ organizationId: org, url, events, testEvents })
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
).pipe(
  Command.withDescription(
    "Send the organization's lead events to a URL (the only time the secret is printed)"
  )
)

const webhookList = Command.make(
  "list",
  { org: Input.id("org", "organization") },
  Effect.fn("Cli.webhookList")(function* ({ org }) {
    const endpoints = yield* WebhookEndpoints
    const listed = yield* endpoints.list(org)
    yield* emit(listed.map(endpointView), (rows) =>
      table(
        ["ID", "URL", "EVENTS", "TEST EVENTS", "DISABLED", "CREATED"],
        rows.map((w) => [
          w.id,
          w.url,
          w.events.join(","),
          w.test_events ? "yes" : "no",
          w.disabled ? `yes (${w.disabled_reason ?? "operator"})` : "no",
          w.created_at
        ]),
        "No webhooks."
      )
    )
  }, withWebhooks)
).pipe(Command.withDescription("List the organization's webhooks (never their secrets)"))

const webhookRemove = Command.make(
  "remove",
  { id: Input.id("id", "webhook") },
  Effect.fn("Cli.webhookRemove")(function* ({ id }) {
    const endpoints = yield* WebhookEndpoints
    yield* endpoints.remove(id)
    yield* emit({ id, removed: true }, (w) => `Removed webhook ${w.id} and its delivery history`)
  }, withWebhooks)
).pipe(Command.withDescription("Remove a webhook; its pending deliveries are dropped"))

const webhookEnable = Command.make(
  "enable",
  { id: Input.id("id", "webhook") },
  Effect.fn("Cli.webhookEnable")(function* ({ id }) {
    const endpoints = yield* WebhookEndpoints
    const enabled = yield* endpoints.enable(id)
    yield* emit({ id: enabled.id, disabled: enabled.disabled }, (w) => `Webhook ${w.id} is enabled`)
  }, withWebhooks)
).pipe(
  Command.withDescription(
    "Enable a disabled webhook (a 410 answer, or failing for WEBHOOK_DISABLE_AFTER); its waiting deliveries resume"
  )
)

const webhookTest = Command.make(
  "test",
  { id: Input.id("id", "webhook") },
  Effect.fn("Cli.webhookTest")(function* ({ id }) {
    const deliveries = yield* WebhookDeliveries
    const queued = yield* deliveries.sendTest(id)
    yield* emit(
      { event_id: queued.eventId, type: "webhook.test" as const, state: "pending" as const },
      (e) => `Queued test event ${e.event_id} for webhook ${id}; see \`webhook deliveries --id ${id}\``
    )
  }, withWebhooks)
).pipe(
  Command.withDescription("Send a webhook.test event to this webhook, signed and retried like any other")
)

const webhookRotateSecret = Command.make(
  "rotate-secret",
  { id: Input.id("id", "webhook") },
  Effect.fn("Cli.webhookRotateSecret")(function* ({ id }) {
    const endpoints = yield* WebhookEndpoints
    const rotated = yield* endpoints.rotateSecret(id)
    yield* emit({ id: rotated.id, secret: rotated.secret }, (w) =>
      [
        `New signing secret for webhook ${w.id} (shown this once, store it now): ${w.secret}`,
        "The previous secret keeps signing beside it for 24 hours."
      ].join("\n")
    )
  }, withWebhooks)
).pipe(Command.withDescription("Issue a new signing secret; the old one keeps signing beside it for 24 h"))

const webhookDeliveries = Command.make(
  "deliveries",
  { id: Input.id("id", "webhook"), limit: Input.limit },
  Effect.fn("Cli.webhookDeliveries")(function* ({ id, limit }) {
    const deliveries = yield* WebhookDeliveries
    const rows = yield* deliveries.list(id, limit)
    yield* emit(rows, (rows) =>
      table(
        ["EVENT", "TYPE", "STATE", "ATTEMPTS", "LAST STATUS", "LAST ERROR", "LAST ATTEMPT", "NEXT ATTEMPT"],
        rows.map((d) => [
          d.event_id,
          d.type,
          d.state,
          String(d.attempts),
          d.last_status === null ? "-" : String(d.last_status),
          orDash(d.last_error),
          orDash(d.last_attempt_at),
          orDash(d.next_attempt_at)
        ]),
        "No deliveries."
      )
    )
  }, withWebhooks)
).pipe(Command.withDescription("The webhook's deliveries, newest first"))

const webhookResend = Command.make(
  "resend",
  { id: Input.id("id", "webhook"), event: Input.id("event", "event") },
  Effect.fn("Cli.webhookResend")(function* ({ id, event }) {
    const deliveries = yield* WebhookDeliveries
    yield* deliveries.resend(id, event)
    yield* emit(
      { event_id: event, state: "pending" as const },
      (d) => `Event ${d.event_id} queued again for webhook ${id} (same webhook-id)`
    )
  }, withWebhooks)
).pipe(
  Command.withDescription(
    "Queue an event of the webhook again, failed or delivered, with the same webhook-id"
  )
)

const webhookAttempts = Command.make(
  "attempts",
  { id: Input.id("id", "webhook"), event: Input.id("event", "event") },
  Effect.fn("Cli.webhookAttempts")(function* ({ id, event }) {
    const attempts = yield* WebhookAttempts
    const rows = yield* attempts.list(id, event)
    yield* emit(rows, (rows) =>
      table(
        ["AT", "STATUS", "ERROR", "DURATION"],
        rows.map((a) => [
          a.at,
          a.status === null ? "-" : String(a.status),
          orDash(a.error),
          `${a.duration_ms} ms`
        ]),
        "No attempts yet."
      )
    )
  }, withWebhooks)
).pipe(Command.withDescription("Every attempt of one delivery, oldest first: time, status, error, duration"))

const webhookResendFailed = Command.make(
  "resend-failed",
  { id: Input.id("id", "webhook"), since: isoTime("since") },
  Effect.fn("Cli.webhookResendFailed")(function* ({ id, since }) {
    const deliveries = yield* WebhookDeliveries
    const queued = yield* deliveries.resendFailed(id, since)
    yield* emit(
      { queued },
      (r) =>
        `${r.queued} failed ${r.queued === 1 ? "delivery" : "deliveries"} since ${since.toISOString()} queued again for webhook ${id}`
    )
  }, withWebhooks)
).pipe(
  Command.withDescription(
    "Queue again every failed delivery of the webhook created at or after --since, each with its own webhook-id"
  )
)

export const webhook = Command.make("webhook").pipe(
  Command.withDescription("Webhooks: lead events pushed to the organization's own systems"),
  Command.withSubcommands([
    webhookAdd,
    webhookList,
    webhookRemove,
    webhookEnable,
    webhookTest,
    webhookRotateSecret,
    webhookDeliveries,
    webhookAttempts,
    webhookResend,
    webhookResendFailed
  ])
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
