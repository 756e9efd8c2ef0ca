import { PgClient } from "@effect/sql-pg"
import { Cause, Clock, Context, Duration, Effect, Layer, Metric, Queue, Random, Schedule } from "effect"
import packageJson from "../../package.json" with { type: "json" }
import { webhookBody } from "../Domain/WebhookPayload.ts"
import { nextRetryDelay, parseRetryAfter } from "../Domain/WebhookRetry.ts"
import { signatureHeader } from "../Domain/WebhookSignature.ts"
import { AppConfig, WebhookConfig } from "../Platform/Config.ts"
import { layerHealthServer } from "../Platform/Health.ts"
import { layerWorkerListeners } from "../Platform/Listening.ts"
import * as Migrations from "../Platform/Migrations.ts"
import * as Observability from "../Platform/Observability/Observability.ts"
import { refuseUnfitProduction } from "../Platform/ProductionStart.ts"
import { type AttemptResult, type ClaimedDelivery, WebhookDeliveries } from "./Deliveries.ts"
import * as WebhookMetrics from "./Metrics.ts"
import { type SendResult, WebhookSender } from "./Sender.ts"

const warnIfPrivateAllowed = (config: { readonly allowPrivate: boolean }) =>
  config.allowPrivate
    ? Effect.logWarning(
        "WEBHOOK_ALLOW_PRIVATE is set: webhooks may target http:// and private addresses (development only)"
      )
    : Effect.void

export const userAgent = `lead-intake-webhooks/${packageJson.version}`

export const notifyChannel = "lead_intake_webhooks"

type Outcome = "delivered" | "http_error" | "gone" | "timeout" | "connection_error" | "blocked"

type Finished = Exclude<SendResult, { readonly _tag: "Abandoned" }>

const outcomeOf = (sent: Finished): Outcome => {
  if (sent._tag === "NoAnswer") return sent.reason === "connection" ? "connection_error" : sent.reason
  if (sent.status >= 200 && sent.status < 300) return "delivered"
  return sent.status === 410 ? "gone" : "http_error"
}

export const connectionErrors: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  EPIPE: "connection reset",
  ECONNABORTED: "connection reset",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host not found"
}

const tlsError = /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH|ERR_OSSL)/

/** What an attempt's failure is, in one line for an operator (`webhook attempts`, `last_error`). */
export const describeFailure = (sent: Finished): string => {
  const line = (text: string) => text.replace(/\s+/g, " ").trim().slice(0, 300)
  if (sent._tag === "Answered")
    return sent.status >= 300 && sent.status < 400
      ? `redirect: HTTP ${sent.status} (not followed)`
      : `HTTP ${sent.status}`
  switch (sent.reason) {
    case "timeout":
      return line(`timeout: ${sent.error}`)
    case "blocked":
      return line(`address not allowed: ${sent.error}`)
    case "connection": {
      if (tlsError.test(sent.error)) return line(`TLS: ${sent.error}`)
      const known = connectionErrors[sent.error]
      return line(known === undefined ? `connection error: ${sent.error}` : `${known} (${sent.error})`)
    }
  }
}

/**
 * The delivery loop: claim what is due, send it, record the answer, schedule the retry. It wakes
 * on the NOTIFY a write sends at its commit (`outbox_event_add`, a resend), when an attempt ends,
 * and every poll interval (due retries, a missed notification, a database that came back). Attempts
 * in flight are bounded per endpoint and in total, and each endpoint's slots are its own, so a
 * hanging receiver only ever holds its own slots.
 */
export class WebhookWorker extends Context.Service<
  WebhookWorker,
  {
    /** Attempts in flight in this process, by endpoint. */
    readonly inFlight: () => ReadonlyMap<string, number>
  }
>()("lead-intake/WebhookWorker") {
  static readonly layerWorker = Layer.effect(
    WebhookWorker,
    Effect.gen(function* () {
      const deliveries = yield* WebhookDeliveries
      const sender = yield* WebhookSender
      const config = yield* WebhookConfig
      const { dashboardUrl } = yield* AppConfig
      const pg = yield* PgClient.PgClient

      const wake = yield* Queue.sliding<void>(1)
      const signal = Queue.offer(wake, undefined).pipe(Effect.asVoid)
      const inFlight = new Map<string, number>()
      let total = 0
      const leaseMillis = 2 * config.timeoutMillis + 5_000

      const attempt = Effect.fn("WebhookWorker.attempt")(function* (claimed: ClaimedDelivery) {
        yield* Effect.annotateCurrentSpan({
          "webhook.endpoint_id": claimed.endpointId,
          "webhook.event_id": claimed.event.eventId,
          "webhook.event_type": claimed.event.type,
          "webhook.attempt": claimed.attempt
        })
        const startedAt = yield* Clock.currentTimeMillis
        // The body is built from the rows as they are once the connection is open, under the guard,
        // so an erasure that committed meanwhile is honoured (nothing is sent).
        const sent = yield* sender.send({
          url: claimed.url,
          timeoutMillis: config.timeoutMillis,
          policy: config,
          compose: (write) =>
            deliveries
              .guard(claimed, (event) =>
                Effect.gen(function* () {
                  const body = webhookBody(event, dashboardUrl)
                  const timestamp = Math.floor((yield* Clock.currentTimeMillis) / 1000)
                  yield* write({
                    body,
                    headers: {
                      "content-type": "application/json",
                      "user-agent": userAgent,
                      "webhook-id": event.eventId,
                      "webhook-timestamp": String(timestamp),
                      "webhook-signature": signatureHeader(claimed.secrets, {
                        id: event.eventId,
                        timestamp,
                        body
                      })
                    }
                  })
                })
              )
              .pipe(
                Effect.catchTag("StoreUnavailable", () =>
                  Effect.logWarning(
                    "webhook attempt not sent: the database is unavailable; retried after the lease"
                  )
                ),
                Effect.asVoid
              )
        })
        if (sent._tag === "Abandoned") {
          yield* Effect.annotateCurrentSpan({ "webhook.outcome": "abandoned" })
          yield* Effect.logInfo("webhook attempt abandoned: not sent").pipe(
            Effect.annotateLogs({
              endpoint_id: claimed.endpointId,
              event_id: claimed.event.eventId,
              attempt: claimed.attempt
            })
          )
          return
        }
        const endedAt = yield* Clock.currentTimeMillis
        const outcome = outcomeOf(sent)
        const status = sent._tag === "Answered" ? sent.status : null
        let result: AttemptResult
        if (outcome === "delivered") {
          result = {
            _tag: "Delivered",
            status: status!,
            attemptedAt: startedAt,
            durationMillis: endedAt - startedAt
          }
        } else {
          const delay =
            outcome === "gone"
              ? undefined
              : nextRetryDelay(
                  config.retrySchedule,
                  {
                    failedAttempts: claimed.failures + 1,
                    status,
                    retryAfterMillis:
                      sent._tag === "Answered" ? parseRetryAfter(sent.retryAfter, endedAt) : undefined
                  },
                  yield* Random.next
                )
          result = {
            _tag: "Failed",
            status,
            error: describeFailure(sent),
            attemptedAt: startedAt,
            durationMillis: endedAt - startedAt,
            retryAt: delay === undefined ? undefined : endedAt + delay,
            disableEndpoint: outcome === "gone"
          }
        }
        yield* Effect.annotateCurrentSpan({
          "webhook.outcome": outcome,
          ...(status === null ? {} : { "http.response.status_code": status })
        })
        const recorded = yield* deliveries.record(claimed, result).pipe(
          Effect.retry({
            schedule: Schedule.spaced("1 second"),
            times: 60
          }),
          Effect.catchTag("StoreUnavailable", () => Effect.succeed(false))
        )
        yield* Metric.update(Metric.withAttributes(WebhookMetrics.attempts, { outcome }), 1)
        if (outcome === "delivered") {
          yield* Metric.update(
            WebhookMetrics.deliveryLatency,
            Math.max(0, endedAt - claimed.event.createdAt.getTime()) / 1000
          )
        }
        const nextAttemptAt =
          result._tag === "Failed" && result.retryAt !== undefined
            ? new Date(result.retryAt).toISOString()
            : null
        const line = Effect.annotateLogs(
          outcome === "delivered" ? Effect.logInfo("webhook attempt") : Effect.logWarning("webhook attempt"),
          {
            endpoint_id: claimed.endpointId,
            event_id: claimed.event.eventId,
            event_type: claimed.event.type,
            attempt: claimed.attempt,
            outcome,
            status,
            duration_ms: endedAt - startedAt,
            ...(result._tag === "Failed"
              ? {
                  error: result.error,
                  next_attempt_at: nextAttemptAt,
                  endpoint_disabled: result.disableEndpoint
                }
              : {}),
            ...(recorded ? {} : { recorded: false })
          }
        )
        yield* line
      })

      const release = (endpointId: string) =>
        Effect.sync(() => {
          total -= 1
          const count = (inFlight.get(endpointId) ?? 1) - 1
          if (count === 0) inFlight.delete(endpointId)
          else inFlight.set(endpointId, count)
        }).pipe(Effect.andThen(signal))

      const dispatch = Effect.gen(function* () {
        while (total < config.concurrency) {
          const saturated = [...inFlight]
            .filter(([, n]) => n >= config.concurrencyPerEndpoint)
            .map(([id]) => id)
          const busiest = Math.max(
            0,
            ...[...inFlight.values()].filter((n) => n < config.concurrencyPerEndpoint)
          )
          const limit = config.concurrency - total
          const claimed = yield* deliveries.claim({
            limit,
            perEndpoint: config.concurrencyPerEndpoint - busiest,
            excludeEndpoints: saturated,
            leaseMillis
          })
          for (const delivery of claimed) {
            total += 1
            inFlight.set(delivery.endpointId, (inFlight.get(delivery.endpointId) ?? 0) + 1)
            yield* attempt(delivery).pipe(
              Effect.onInterrupt(() =>
                deliveries.release(delivery).pipe(Effect.timeout("2 seconds"), Effect.ignore)
              ),
              Effect.catchCause((cause) =>
                Effect.logError("webhook attempt failed with a defect").pipe(
                  Effect.annotateLogs({ endpoint_id: delivery.endpointId, error: Cause.pretty(cause) })
                )
              ),
              Effect.ensuring(release(delivery.endpointId)),
              Effect.forkScoped
            )
          }
          if (claimed.length < limit) return
        }
      })

      let outage = false
      const loop = Effect.gen(function* () {
        yield* dispatch.pipe(
          Effect.catchDefect((defect) =>
            Effect.logError("webhook worker failed to claim; retrying").pipe(
              Effect.annotateLogs({ error: String(defect) })
            )
          ),
          Effect.tap(() =>
            outage
              ? Effect.sync(() => (outage = false)).pipe(
                  Effect.andThen(Effect.logInfo("webhook worker resumed"))
                )
              : Effect.void
          ),
          Effect.catchTag("StoreUnavailable", () =>
            outage
              ? Effect.void
              : Effect.sync(() => (outage = true)).pipe(
                  Effect.andThen(Effect.logWarning("webhook worker cannot reach the database; retrying"))
                )
          )
        )
        yield* Queue.take(wake).pipe(Effect.timeoutOption(Duration.millis(config.pollIntervalMillis)))
      }).pipe(Effect.forever)

      const listen = Effect.scoped(
        Effect.gen(function* () {
          const notifications = yield* pg.listen(notifyChannel)
          yield* signal
          yield* Effect.forever(Effect.andThen(Queue.take(notifications), signal))
        })
      ).pipe(Effect.retry(Schedule.spaced("1 second")), Effect.ignore)

      const sampleStats = deliveries.pending().pipe(
        Effect.flatMap((stats) =>
          Effect.gen(function* () {
            const now = yield* Clock.currentTimeMillis
            yield* Metric.update(WebhookMetrics.pending, stats.count)
            yield* Metric.update(
              WebhookMetrics.oldestPendingAge,
              stats.oldestCreatedAt === null ? 0 : Math.max(0, (now - stats.oldestCreatedAt) / 1000)
            )
          })
        ),
        Effect.ignore
      )

      const retentionMillis = config.retentionDays * 86_400_000
      const prune = Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const pruned = yield* deliveries.prune(now - retentionMillis)
        if (pruned.deliveries + pruned.events > 0) {
          yield* Effect.logInfo("webhook history pruned").pipe(Effect.annotateLogs(pruned))
        }
      }).pipe(
        Effect.catchCause((cause) => Effect.logWarning("webhook janitor failed; will retry", cause)),
        Effect.withSpan("WebhookJanitor.prune")
      )

      yield* Effect.forkScoped(listen)
      yield* Effect.forkScoped(loop)
      yield* Effect.forkScoped(Effect.repeat(sampleStats, Schedule.spaced("10 seconds")))
      yield* Effect.forkScoped(Effect.repeat(prune, Schedule.spaced("1 hour")))
      yield* warnIfPrivateAllowed(config)
      return WebhookWorker.of({ inFlight: () => new Map(inFlight) })
    })
  )

  /** The worker with its services on PostgreSQL; needs `PgClient`, `SqlClient` and `AppConfig`. */
  static readonly layer = WebhookWorker.layerWorker.pipe(
    Layer.provide(Layer.mergeAll(WebhookDeliveries.layer, WebhookSender.layer)),
    Layer.provideMerge(WebhookConfig.layer)
  )
}

/** What `serve` starts: the worker unless `WEBHOOK_WORKER=false` hands delivery to `lead-intake worker`. */
export const layerInServe = Layer.unwrap(
  WebhookConfig.useSync((config) =>
    config.workerInServe
      ? Layer.effectDiscard(Effect.void).pipe(Layer.provide(WebhookWorker.layer))
      : Layer.effectDiscard(warnIfPrivateAllowed(config))
  )
).pipe(Layer.provide(WebhookConfig.layer))

/** `lead-intake worker`: the delivery worker alone, with the server's logging, telemetry and database. */
const layerWorkerAlone = Layer.effectDiscard(
  Effect.gen(function* () {
    const config = yield* WebhookConfig
    yield* Effect.logInfo("webhook worker started").pipe(
      Effect.annotateLogs({ concurrency: config.concurrency, per_endpoint: config.concurrencyPerEndpoint })
    )
    yield* Effect.addFinalizer(() => Effect.logInfo("stopping"))
  })
).pipe(
  Layer.provide(WebhookWorker.layer),
  Layer.merge(Observability.layerPoolMetrics),
  Layer.merge(layerHealthServer),
  Layer.provide(Migrations.layer),
  Layer.provide(Observability.layer),
  Layer.provide(layerWorkerListeners),
  Layer.provide(AppConfig.layer)
)

/** Webhook bodies carry `lead_url`: in production, the worker refuses to start with one on this machine. */
export const layerWorkerProcess = Layer.unwrap(
  refuseUnfitProduction(["DASHBOARD_URL"]).pipe(Effect.as(layerWorkerAlone), Effect.provide(AppConfig.layer))
)
