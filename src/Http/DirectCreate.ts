import type { IncomingMessage, Server, ServerResponse } from "node:http"
import { Clock, Context, Effect, Exit, References } from "effect"
import { Headers } from "effect/http"
import { Limits } from "../Api/LeadRequest.ts"
import { isIdempotencyKey } from "../Api.ts"
import { AppConfig } from "../Config.ts"
import { requestFingerprint } from "../Domain/Fingerprint.ts"
import { decodeLeadInput } from "../Domain/LeadRequest.ts"
import { type AdmittedWrite, LeadIntake } from "../LeadIntake.ts"
import { observeRequest } from "../Observability/Request.ts"
import { RequestLog } from "../RequestLog.ts"
import { isJsonMediaType, parseBody } from "./Body.ts"
import { type Handoff, handOff } from "./Handoff.ts"
import { leadAnswer } from "./Leads.ts"
import { rateLimitHeaders } from "./Middleware.ts"

export type DirectCreateServices = LeadIntake | RequestLog | AppConfig

const bearer = "Bearer "

/** A header node:http gives as one string (only `set-cookie` and the like come as arrays). */
const headerText = (request: IncomingMessage, name: string) => {
  const value = request.headers[name]
  return typeof value === "string" ? value : undefined
}

const carriesTraceContext = (request: IncomingMessage) =>
  request.headers.traceparent !== undefined ||
  request.headers.b3 !== undefined ||
  request.headers["x-b3-traceid"] !== undefined

/**
 * The API key of a `POST /v1/leads` the direct create takes, or undefined to leave the request to
 * the router untouched. It takes only what the router would take to a write without a doubt from
 * the headers alone: a JSON body of a declared size within the limit, a `Bearer` key, no dry run,
 * an Idempotency-Key (if any) the contract accepts, and no trace context to continue.
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
  if (headers["x-service-dry-run"] !== undefined) return undefined
  const key = headers["idempotency-key"]
  if (key !== undefined && (typeof key !== "string" || !isIdempotencyKey(key))) return undefined
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

export interface DirectCreate {
  /** Resolves once every create the direct path has started has answered and been recorded. */
  readonly drained: () => Promise<void>
  /** How many creates it answered itself, since the start (the rest went to the router). */
  readonly answered: () => number
}

/**
 * `POST /v1/leads` answered by node:http itself when it is a write that succeeds: the body read,
 * checked (contract order 4-7) and admitted, counted and written in one round trip
 * (`LeadIntake.admitAndAccept`) without the router's per-request machinery, which costs about as
 * much CPU as the rest of the create together. The 201 or 200 carries the same body, headers,
 * request-log row, metrics and log line as the router's.
 *
 * Everything else goes on to the router, which answers it by the contract: a request the headers
 * leave in doubt goes untouched; one whose body fails a check, or whose round trip answered
 * anything but a write (401, 429, 409, 422, 503), goes with a `Handoff`, so the router neither
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
  const run = Effect.runPromiseWith(context)
  const intake = Context.get(context, LeadIntake)
  const requestLog = Context.get(context, RequestLog)
  const { dashboardUrl } = Context.get(context, AppConfig)
  const emit = server.emit as (event: string | symbol, ...args: Array<unknown>) => boolean

  /** Contract order 7, then 2-3 and 9-11 in one round trip; the answer if it wrote, else the router. */
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
      const key = headerText(request, "idempotency-key") ?? null
      const admission = yield* Effect.exit(
        intake.admitAndAccept(token, {
          input: checked.value,
          requestId,
          idempotency: key === null ? null : { key, fingerprint: requestFingerprint(parsed.value) }
        })
      )
      const write = written(admission)
      if (write === undefined) return toRouter(admission)

      const { caller, window, accepted } = write
      const status = accepted.outcome === "created" ? 201 : 200
      const text = JSON.stringify(leadAnswer(accepted, requestId, dashboardUrl))
      response.writeHead(status, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(text),
        "x-request-id": requestId,
        ...rateLimitHeaders(window),
        ...(accepted.replay ? { "idempotent-replayed": "true" } : {})
      })
      response.end(text)
      answeredCount++

      const outcome = accepted.replay ? "replay" : accepted.outcome
      yield* requestLog
        .record({
          requestId,
          at: yield* Clock.currentTimeMillis,
          originId: caller.originId,
          keyPrefix: caller.prefix,
          status,
          outcome,
          leadId: accepted.leadId,
          idempotencyKey: key,
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
          outcome,
          attribution: { keyPrefix: caller.prefix, originId: caller.originId },
          leadId: accepted.leadId
        }
      )
    })

  /** Reads the declared body, then creates; a client that goes away mid-body gets nothing, as from the router. */
  const take = (request: IncomingMessage, response: ServerResponse, token: string) => {
    const chunks: Array<Buffer> = []
    let total = 0
    request.on("data", (chunk: Buffer) => {
      total += chunk.length
      chunks.push(chunk)
    })
    request.on("error", () => {})
    request.on("end", () => {
      const startedAt = performance.now()
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
