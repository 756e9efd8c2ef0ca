import type { IncomingMessage, Server, ServerResponse } from "node:http"
import { Clock, Context, Effect, Exit, Logger, Option, References } from "effect"
import { Headers } from "effect/http"
import { Limits } from "../Api/LeadRequest.ts"
import { errorHeaders, isIdempotencyKey } from "../Api.ts"
import { AppConfig } from "../Config.ts"
import { requestFingerprint } from "../Domain/Fingerprint.ts"
import { decodeLeadInput } from "../Domain/LeadRequest.ts"
import { carriesTraceContext } from "../FastPath.ts"
import { KeyCheck, type KeyRejected } from "../KeyCheck.ts"
import { type AdmittedWrite, admitOnly, LeadIntake } from "../LeadIntake.ts"
import { type Attribution, type Outcome, observeRequest } from "../Observability/Request.ts"
import { RequestLog } from "../RequestLog.ts"
import type { OutcomeUnknown, StoreUnavailable } from "../Sql.ts"
import { isJsonMediaType, parseBody } from "./Body.ts"
import { type Handoff, handOff } from "./Handoff.ts"
import { dryRunAnswer, leadAnswer } from "./Leads.ts"
import { idempotencyKeyOf, rateLimitHeaders, refusedKeyMessage } from "./Middleware.ts"

export type DirectCreateServices = LeadIntake | KeyCheck | RequestLog | AppConfig

const bearer = "Bearer "

/** A header node:http gives as one string (only `set-cookie` and the like come as arrays). */
const headerText = (request: IncomingMessage, name: string) => {
  const value = request.headers[name]
  return typeof value === "string" ? value : undefined
}

/**
 * The API key of a `POST /v1/leads` the direct create takes, or undefined to leave the request to
 * the router untouched. It takes only what the router would take past the headers without a
 * doubt: a JSON body of a declared size within the limit, a `Bearer` key, no dry-run header or
 * `X-Service-Dry-Run: true`, an Idempotency-Key (if any, and not a dry run) the contract accepts,
 * and no trace context to continue.
 */
const directToken = (request: IncomingMessage): string | undefined => {
  const { headers } = request
  if (request.method !== "POST" || request.url !== "/v1/leads" || carriesTraceContext(request))
    return undefined
  if (!isJsonMediaType(headers["content-type"]) || headers["transfer-encoding"] !== undefined)
    return undefined
  const length = headers["content-length"]
  if (length === undefined || !/^[0-9]{1,6}$/u.test(length) || Number(length) > Limits.bodyBytes)
    return undefined
  const dryRun = headers["x-service-dry-run"]
  if (dryRun !== undefined && dryRun !== "true") return undefined
  const key = headers["idempotency-key"]
  if (dryRun === undefined && key !== undefined && (typeof key !== "string" || !isIdempotencyKey(key)))
    return undefined
  const authorization = headers.authorization
  if (authorization === undefined || !authorization.startsWith(bearer)) return undefined
  const token = authorization.slice(bearer.length)
  return token === "" || token.startsWith(" ") ? undefined : token
}

/** What the router's answer to a written lead would be, when that is what the round trip answered. */
const written = (admission: Exit.Exit<AdmittedWrite, unknown>) =>
  Exit.isSuccess(admission) &&
  admission.value.window.allowed &&
  admission.value.accepted !== undefined &&
  Exit.isSuccess(admission.value.accepted)
    ? { ...admission.value, accepted: admission.value.accepted.value }
    : undefined

/** The refusal of a key, when that is what the round trip (or the key check alone) answered. */
const refusedKey = (admission: Exit.Exit<unknown, KeyRejected | StoreUnavailable | OutcomeUnknown>) => {
  if (Exit.isSuccess(admission)) return undefined
  const error = Exit.findErrorOption(admission)
  return Option.isSome(error) && error.value._tag === "KeyRejected" ? error.value : undefined
}

export interface DirectCreate {
  /** Resolves once every create the direct path has started has answered and been recorded. */
  readonly drained: () => Promise<void>
  /** How many creates it answered itself, since the start (the rest went to the router). */
  readonly answered: () => number
}

/**
 * `POST /v1/leads` answered by node:http itself when it is a write that succeeds, a dry run
 * that does, or either refused for its key: the body read and checked (contract order 4-7), then
 * admitted, counted and written in one round trip (`LeadIntake.admitAndAccept`), or for a dry run
 * admitted and previewed, without the router's per-request machinery, which costs about as much
 * CPU as the rest of the create together. The 201, 200 or 401 carries the same body, headers,
 * request-log row, metrics and log line as the router's (`test/integration/direct-create.test.ts`).
 *
 * Everything else goes on to the router, which answers it by the contract: a request the headers
 * leave in doubt goes untouched; one whose body fails a check, or whose round trip answered
 * anything but a success or a refused key (429, 409, 422, 503), goes with a `Handoff`, so the router neither
 * reads the body again nor counts the key twice. Only when tracing is off: a traced create takes
 * the router, whose spans the traces document.
 */
export const answerCreateDirectly = (
  server: Server,
  context: Context.Context<DirectCreateServices>
): DirectCreate => {
  const inFlight = new Set<Promise<void>>()
  let answeredCount = 0
  const drained = async () => {
    while (inFlight.size > 0) await Promise.allSettled([...inFlight])
  }
  const answered = () => answeredCount
  if (Context.get(context, References.TracerEnabled)) return { drained, answered }
  // A create's fiber carries only what the path reads: every scope it closes (the reserved
  // connection's, for one) merges the fiber's context into a copy, so the listener's whole context
  // (CLI, platform, every service: 31 entries) made a statement allocate two 31-entry maps.
  const run = Effect.runPromiseWith(
    Context.pick(
      LeadIntake,
      KeyCheck,
      RequestLog,
      AppConfig,
      Logger.CurrentLoggers,
      References.MinimumLogLevel,
      References.TracerEnabled
    )(context)
  )
  const intake = Context.get(context, LeadIntake)
  const keys = Context.get(context, KeyCheck)
  const requestLog = Context.get(context, RequestLog)
  const { dashboardUrl, publicBaseUrl } = Context.get(context, AppConfig)
  const invalidKeyDocs = `${publicBaseUrl}/v1/docs#invalid_key`
  const emit = server.emit as (event: string | symbol, ...args: Array<unknown>) => boolean

  /** Sends an answer and records it as the router would (request log, then metrics and log line). */
  const answer = (
    outgoing: { readonly requestId: string; readonly startedAt: number; readonly attribution: Attribution },
    status: number,
    headers: Record<string, string>,
    body: unknown,
    facts: { readonly outcome: Outcome; readonly leadId: string | null },
    request: IncomingMessage,
    response: ServerResponse
  ) =>
    Effect.gen(function* () {
      const { requestId, startedAt, attribution } = outgoing
      const text = JSON.stringify(body)
      response.writeHead(status, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(text),
        "x-request-id": requestId,
        ...headers
      })
      response.end(text)
      answeredCount++
      yield* requestLog
        .record({
          requestId,
          at: yield* Clock.currentTimeMillis,
          originId: attribution.originId,
          keyPrefix: attribution.keyPrefix,
          status,
          outcome: facts.outcome,
          leadId: facts.leadId,
          idempotencyKey: idempotencyKeyOf({
            "idempotency-key": headerText(request, "idempotency-key"),
            "x-service-dry-run": headerText(request, "x-service-dry-run")
          }),
          durationMs: performance.now() - startedAt
        })
        .pipe(Effect.catchCause((cause) => Effect.logError("request log write failed", cause)))
      yield* observeRequest(
        { method: "POST", headers: Headers.empty },
        {
          requestId,
          startedAt,
          route: "/v1/leads",
          status,
          outcome: facts.outcome,
          attribution,
          leadId: facts.leadId
        }
      )
    })

  /** Contract order 2 refused: the 401 the router sends (envelope, `WWW-Authenticate`), attributed to the key's prefix. */
  const refuse = (
    rejected: KeyRejected,
    outgoing: { readonly requestId: string; readonly startedAt: number },
    request: IncomingMessage,
    response: ServerResponse
  ) =>
    answer(
      { ...outgoing, attribution: { keyPrefix: rejected.prefix, originId: rejected.originId } },
      401,
      errorHeaders("invalid_key"),
      {
        error: {
          code: "invalid_key",
          message: refusedKeyMessage(rejected),
          docs_url: invalidKeyDocs
        },
        request_id: outgoing.requestId
      },
      { outcome: "invalid_key", leadId: null },
      request,
      response
    )

  const attributionOf = (caller: { readonly prefix: string; readonly originId: string }): Attribution => ({
    keyPrefix: caller.prefix,
    originId: caller.originId
  })

  /**
   * Contract order 7, then 2-3 and 9-11 in one round trip, or for a dry run 2-3 and 8; the answer
   * when the write (or the dry run) went through, else the router with what was done.
   */
  const create = (
    request: IncomingMessage,
    response: ServerResponse,
    token: string,
    body: Buffer,
    requestId: string,
    startedAt: number,
    toRouter: (admission: Handoff["admission"]) => void
  ) =>
    Effect.gen(function* () {
      const parsed = parseBody(body)
      const checked = parsed.ok ? decodeLeadInput(parsed.value) : undefined
      if (!parsed.ok || checked === undefined || !checked.ok) return toRouter(undefined)
      const input = checked.value

      if (request.headers["x-service-dry-run"] === "true") {
        const admission = yield* Effect.exit(admitOnly(keys, token))
        const rejected = refusedKey(admission)
        if (rejected !== undefined)
          return yield* refuse(rejected, { requestId, startedAt }, request, response)
        if (Exit.isFailure(admission) || !admission.value.window.allowed) return toRouter(admission)
        const { caller, window } = admission.value
        // A refused preview (unknown property, database away) is the router's to answer: it looks again.
        const preview = yield* Effect.exit(intake.preview(caller, input))
        if (Exit.isFailure(preview)) return toRouter(admission)
        const leadId = Option.getOrNull(preview.value.match)
        return yield* answer(
          { requestId, startedAt, attribution: attributionOf(caller) },
          200,
          rateLimitHeaders(window),
          dryRunAnswer(caller, input, preview.value, requestId),
          { outcome: "dry_run", leadId },
          request,
          response
        )
      }

      const key = headerText(request, "idempotency-key") ?? null
      const admission = yield* Effect.exit(
        intake.admitAndAccept(token, {
          input,
          requestId,
          idempotency: key === null ? null : { key, fingerprint: requestFingerprint(parsed.value) }
        })
      )
      const rejected = refusedKey(admission)
      if (rejected !== undefined) return yield* refuse(rejected, { requestId, startedAt }, request, response)
      const write = written(admission)
      if (write === undefined) return toRouter(admission)
      const { caller, window, accepted } = write
      return yield* answer(
        { requestId, startedAt, attribution: attributionOf(caller) },
        accepted.outcome === "created" ? 201 : 200,
        { ...rateLimitHeaders(window), ...(accepted.replay ? { "idempotent-replayed": "true" } : {}) },
        leadAnswer(accepted, requestId, dashboardUrl),
        { outcome: accepted.replay ? "replay" : accepted.outcome, leadId: accepted.leadId },
        request,
        response
      )
    })

  /** Reads the declared body, then creates; a client that goes away mid-body gets nothing, as from the router. */
  const take = (request: IncomingMessage, response: ServerResponse, token: string) => {
    const startedAt = performance.now()
    const chunks: Array<Buffer> = []
    let total = 0
    request.on("data", (chunk: Buffer) => {
      total += chunk.length
      chunks.push(chunk)
    })
    request.on("error", () => {})
    request.on("end", () => {
      const requestId = crypto.randomUUID()
      const body = Buffer.concat(chunks, total)
      const toRouter = (admission: Handoff["admission"]) => {
        handOff(request, { requestId, startedAt, body, admission })
        emit.call(server, "request", request, response)
      }
      // A defect answers as the router answers one: its 500, logged and recorded, by the router.
      const pending = run(
        create(request, response, token, body, requestId, startedAt, toRouter).pipe(
          Effect.catchDefect((defect) =>
            response.headersSent
              ? Effect.logError("direct create failed after answering", defect)
              : Effect.sync(() => toRouter(Exit.die(defect)))
          )
        )
      )
      inFlight.add(pending)
      void pending.finally(() => inFlight.delete(pending))
    })
  }

  server.emit = function (this: Server, event: string | symbol, ...args: Array<unknown>) {
    if (event !== "request") return emit.call(this, event, ...args)
    const [request, response] = args as [IncomingMessage, ServerResponse]
    const token = directToken(request)
    if (token === undefined) return emit.call(this, event, ...args)
    take(request, response, token)
    return true
  } as Server["emit"]
  return { drained, answered }
}
