import { Cause, Clock, Effect, Exit, Layer, Option, Redacted, Stream } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiBuilder, HttpApiError } from "effect/http-api"
import {
  Api,
  Authentication,
  BodyGuard,
  Caller,
  type CallerShape,
  errorCatalog,
  Journal,
  RateLimit,
  RateWindow,
  RequestBody
} from "../Api.ts"
import { AppConfig } from "../Config.ts"
import { requestFingerprint } from "../Domain/Fingerprint.ts"
import { decodeLeadInput, type LeadInput, Limits } from "../Domain/LeadRequest.ts"
import { phoneMatchKey } from "../Domain/Phone.ts"
import { IdempotencyStore, type StoredResponse } from "../IdempotencyStore.ts"
import { KeyStore } from "../KeyStore.ts"
import { LeadRepository, leadUrl } from "../LeadRepository.ts"
import { PropertyCatalog } from "../PropertyCatalog.ts"
import { RequestLog } from "../RequestLog.ts"
import { fail, RequestContext, setResponseHeaders } from "./RequestContext.ts"

const unavailable = () =>
  fail("temporarily_unavailable", "The database could not be reached; nothing was written", {
    headers: { "retry-after": "5" }
  })

const errorCodeOf = (error: unknown): keyof typeof errorCatalog | undefined => {
  const code = (error as { error?: { code?: unknown } } | undefined)?.error?.code
  return typeof code === "string" && code in errorCatalog ? (code as keyof typeof errorCatalog) : undefined
}

/** Records every request in the request log, whatever it ends with; a log failure never changes the answer. */
export const layerJournal = Layer.effect(
  Journal,
  Effect.gen(function* () {
    const requestLog = yield* RequestLog
    return Journal.of((httpEffect) =>
      Effect.gen(function* () {
        const context = yield* RequestContext
        const exit = yield* Effect.exit(httpEffect)
        if (Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)) return yield* exit
        const failure = Exit.isFailure(exit)
          ? Option.getOrUndefined(Cause.findErrorOption(exit.cause))
          : undefined
        const code = Exit.isFailure(exit) ? (errorCodeOf(failure) ?? "internal_error") : undefined
        const { journal } = context
        yield* requestLog
          .record({
            requestId: context.requestId,
            at: yield* Clock.currentTimeMillis,
            originId: journal.originId,
            keyPrefix: journal.keyPrefix,
            status: Exit.isSuccess(exit) ? exit.value.status : errorCatalog[code!].status,
            outcome: code ?? journal.outcome ?? "unknown",
            leadId: journal.leadId,
            idempotencyKey: journal.idempotencyKey,
            durationMs: performance.now() - context.startedAt
          })
          .pipe(Effect.catchCause((cause) => Effect.logError("request log write failed", cause)))
        return yield* exit
      })
    )
  })
)

export const layerAuthentication = Layer.effect(
  Authentication,
  Effect.gen(function* () {
    const keys = yield* KeyStore
    return Authentication.of({
      bearer: (httpEffect, { credential }) =>
        Effect.gen(function* () {
          const { journal } = yield* RequestContext
          const token = Redacted.value(credential)
          if (token === "")
            return yield* fail("invalid_key", "Send the API key as Authorization: Bearer <key>")
          const { caller, window } = yield* keys.admit(token).pipe(
            Effect.catchTags({
              KeyRejected: (rejected) => {
                journal.keyPrefix = rejected.prefix
                journal.originId = rejected.originId
                return fail("invalid_key", `The API key is ${rejected.reason}`)
              },
              StoreUnavailable: unavailable
            })
          )
          journal.keyPrefix = caller.prefix
          journal.originId = caller.originId
          return yield* httpEffect.pipe(
            Effect.provideService(Caller, caller),
            Effect.provideService(RateWindow, window)
          )
        })
    })
  })
)

/** The window was counted with the key check (`KeyStore.admit`); this answers 429 past the limit. */
export const layerRateLimit = Layer.succeed(
  RateLimit,
  RateLimit.of((httpEffect) =>
    Effect.gen(function* () {
      const window = yield* RateWindow
      yield* setResponseHeaders({
        "x-ratelimit-limit": String(window.limit),
        "x-ratelimit-remaining": String(window.remaining),
        "x-ratelimit-reset": String(window.resetAt),
        "ratelimit-policy": `"default";q=${window.limit};w=60`,
        ratelimit: `"default";r=${window.remaining};t=${window.retryAfter}`
      })
      if (!window.allowed) {
        return yield* fail("rate_limited", `More than ${window.limit} requests this minute for this key`, {
          headers: { "retry-after": String(window.retryAfter) }
        })
      }
      return yield* httpEffect
    })
  )
)

const isJsonMediaType = (contentType: string | undefined) =>
  contentType !== undefined && contentType.split(";")[0]!.trim().toLowerCase() === "application/json"

const tooLarge = () =>
  fail("payload_too_large", `The body is over ${Limits.bodyBytes} bytes`, {
    headers: { connection: "close" }
  })

const readBody = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function* () {
    const chunks: Array<Uint8Array> = []
    let total = 0
    let over = false
    yield* request.stream.pipe(
      Stream.runForEachWhile((chunk) =>
        Effect.sync(() => {
          total += chunk.length
          over = total > Limits.bodyBytes
          if (!over) chunks.push(chunk)
          return !over
        })
      ),
      Effect.orDie
    )
    if (over) return yield* tooLarge()
    return Buffer.concat(chunks, total)
  })

/** Media type and size, before anything reads headers or parses the body (contract order 4-6). */
export const layerBodyGuard = Layer.succeed(
  BodyGuard,
  BodyGuard.of((httpEffect) =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      if (!isJsonMediaType(request.headers["content-type"])) {
        return yield* fail("unsupported_media_type", "Content-Type must be application/json")
      }
      if (Number(request.headers["content-length"] ?? 0) > Limits.bodyBytes) return yield* tooLarge()
      const body = yield* readBody(request)
      return yield* httpEffect.pipe(
        Effect.provideService(RequestBody, body),
        Effect.catchIf(HttpApiError.HttpApiSchemaError.is, () => {
          const dryRun = request.headers["x-service-dry-run"]
          return dryRun !== undefined && dryRun !== "true"
            ? fail("validation_error", "X-Service-Dry-Run only accepts the value true", {
                field: "X-Service-Dry-Run"
              })
            : fail("validation_error", "Idempotency-Key must be 1 to 200 printable ASCII characters", {
                field: "Idempotency-Key"
              })
        })
      )
    })
  )
)

const idempotencyResults = {
  Reserved: "new",
  Replay: "replay",
  Conflict: "conflict",
  InProgress: "in_progress"
} as const

const utf8 = new TextDecoder("utf-8", { fatal: true })

const hasLoneSurrogate = (value: unknown): boolean => {
  const pending: Array<unknown> = [value]
  while (pending.length > 0) {
    const next = pending.pop()
    if (typeof next === "string") {
      if (!next.isWellFormed()) return true
    } else if (typeof next === "object" && next !== null) {
      for (const [key, item] of Object.entries(next)) {
        if (!key.isWellFormed()) return true
        pending.push(item)
      }
    }
  }
  return false
}

const parseBody = (bytes: Uint8Array) =>
  Effect.gen(function* () {
    let text: string
    try {
      text = utf8.decode(bytes)
    } catch {
      return yield* fail("validation_error", "The body is not valid UTF-8", { field: "body" })
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      return yield* fail("validation_error", "The body is not valid JSON", { field: "body" })
    }
    if (hasLoneSurrogate(parsed)) {
      return yield* fail("validation_error", "The body contains an unpaired UTF-16 surrogate escape", {
        field: "body"
      })
    }
    return parsed
  })

const validate = Effect.fn("LeadRequest.validate")(function* (parsed: unknown) {
  const result = decodeLeadInput(parsed)
  if (result.ok) return result.value
  yield* Effect.annotateCurrentSpan({ "validation.field": result.problem.field })
  return yield* fail("validation_error", result.problem.message, { field: result.problem.field })
})

export const layerLeadHandlers = HttpApiBuilder.group(
  Api,
  "leads",
  Effect.fn(function* (handlers) {
    const config = yield* AppConfig
    const catalog = yield* PropertyCatalog
    const leads = yield* LeadRepository
    const idempotency = yield* IdempotencyStore

    const resolveProperty = Effect.fn("Leads.resolveProperty")(function* (
      caller: CallerShape,
      input: LeadInput
    ) {
      if (input.propiedad === null) return null
      const found = yield* catalog
        .resolve(caller.organizationId, input.propiedad)
        .pipe(Effect.catchTag("StoreUnavailable", unavailable))
      if (Option.isNone(found)) {
        return yield* fail(
          "property_not_found",
          "No active property of your organization matches propiedad",
          {
            field: "propiedad"
          }
        )
      }
      return found.value
    })

    const matchKey = (caller: CallerShape, input: LeadInput) =>
      input.telefono === null ? null : phoneMatchKey(input.telefono, caller.country)

    const dryRun = Effect.fn("Leads.dryRun")(function* (caller: CallerShape, input: LeadInput) {
      const context = yield* RequestContext
      const propertyId = yield* resolveProperty(caller, input)
      const phoneKey = matchKey(caller, input)
      const match =
        phoneKey === null
          ? Option.none<string>()
          : yield* leads
              .findMatch(caller.organizationId, phoneKey)
              .pipe(Effect.catchTag("StoreUnavailable", unavailable))
      context.journal.outcome = "dry_run"
      context.journal.leadId = Option.getOrNull(match)
      return {
        status: "dry_run" as const,
        would: Option.isSome(match) ? ("enrich" as const) : ("create" as const),
        would_match: Option.isSome(match) ? { lead_id: match.value, matched_on: "telefono" as const } : null,
        resolved: {
          organizacion: caller.organizationId,
          origen: caller.originLabel,
          development_id: propertyId,
          nombre: input.nombre,
          telefono: input.telefono,
          email: input.email,
          extras: Object.fromEntries(input.extras)
        },
        request_id: context.requestId
      }
    })

    const respond = Effect.fn("Leads.respond")(function* (response: StoredResponse, replay: boolean) {
      const context = yield* RequestContext
      context.journal.outcome = replay ? "replay" : response.body.status
      context.journal.leadId = response.body.lead_id
      if (replay) yield* setResponseHeaders({ "idempotent-replayed": "true" })
      const flag = replay ? { replay: true as const } : {}
      return response.body.status === "created"
        ? { ...response.body, status: "created" as const, request_id: context.requestId, ...flag }
        : {
            ...response.body,
            status: "enriched" as const,
            matched_on: "telefono" as const,
            request_id: context.requestId,
            ...flag
          }
    })

    const write = Effect.fn("Leads.write")(function* (
      caller: CallerShape,
      input: LeadInput,
      reservation: { readonly key: string; readonly token: string } | null
    ) {
      const context = yield* RequestContext
      const propertyId = yield* resolveProperty(caller, input)
      const written = yield* leads
        .createOrEnrich({
          requestId: context.requestId,
          organizationId: caller.organizationId,
          originId: caller.originId,
          input,
          phoneKey: matchKey(caller, input),
          propertyId,
          leadUrlBase: config.dashboardUrl,
          idempotency: reservation
        })
        .pipe(Effect.catchTag("StoreUnavailable", unavailable))
      yield* Effect.annotateCurrentSpan({
        "lead.outcome": written.outcome,
        "capture.assignee_id": written.assigneeId ?? "unassigned"
      })
      return yield* respond(
        {
          status: written.outcome === "created" ? 201 : 200,
          body: {
            lead_id: written.leadId,
            status: written.outcome,
            lead_url: leadUrl(config.dashboardUrl, written.leadId)
          }
        },
        false
      )
    })

    const writeOnce = Effect.fn("Leads.writeOnce")(function* (
      caller: CallerShape,
      input: LeadInput,
      parsed: unknown,
      key: string
    ) {
      const slot = { originId: caller.originId, key }
      const reservation = yield* idempotency
        .reserve(slot, requestFingerprint(parsed))
        .pipe(Effect.catchTag("StoreUnavailable", unavailable))
      yield* Effect.annotateCurrentSpan("idempotency.result", idempotencyResults[reservation._tag])
      switch (reservation._tag) {
        case "Replay":
          return yield* respond(reservation.response, true)
        case "Conflict":
          return yield* fail(
            "idempotency_conflict",
            "This Idempotency-Key was used in the last 24 hours with another body"
          )
        case "InProgress":
          return yield* fail(
            "idempotency_in_progress",
            "The original request with this Idempotency-Key is still running",
            {
              headers: { "retry-after": "1" }
            }
          )
        case "Reserved":
          return yield* write(caller, input, { key, token: reservation.token }).pipe(
            Effect.onExit((exit) =>
              Exit.isSuccess(exit) ? Effect.void : idempotency.release(slot, reservation.token)
            )
          )
      }
    })

    return handlers.handleRaw("createOrEnrich", ({ headers }) =>
      Effect.gen(function* () {
        const caller = yield* Caller
        const context = yield* RequestContext
        const parsed = yield* parseBody(yield* RequestBody)
        const input = yield* validate(parsed)
        if (headers["x-service-dry-run"] === "true") return yield* dryRun(caller, input)
        const key = headers["idempotency-key"]
        if (key === undefined) return yield* write(caller, input, null)
        context.journal.idempotencyKey = key
        return yield* writeOnce(caller, input, parsed, key)
      })
    )
  })
)
