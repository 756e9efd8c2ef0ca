import { Context, Schema } from "effect"
import {
  HttpApi,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSchema,
  HttpApiSecurity,
  OpenApi
} from "effect/http-api"
import {
  IdempotencyConflict,
  IdempotencyInProgress,
  InternalError,
  InvalidKey,
  MethodNotAllowed,
  NotFound,
  PayloadTooLarge,
  PropertyNotFound,
  RateLimited,
  TemporarilyUnavailable,
  UnsupportedMediaType,
  ValidationError
} from "./Api/Errors.ts"
import { LeadRequest, Limits } from "./Domain/LeadRequest.ts"

export * from "./Api/Errors.ts"

const Uuid = Schema.String.annotate({ format: "uuid" })
const Uri = Schema.String.annotate({ format: "uri" })
const RequestId = Schema.String.annotate({ description: "Same as the X-Request-Id header." })
const Replay = Schema.optionalKey(
  Schema.Literal(true).annotate({
    description: "Present, always true, only when the response repeats an earlier one (Idempotency-Key)."
  })
)

export const LeadCreated = Schema.Struct({
  lead_id: Uuid,
  status: Schema.Literal("created"),
  lead_url: Uri.annotate({ description: "Direct link to the lead in the dashboard." }),
  request_id: RequestId,
  replay: Replay
})
  .annotate({ identifier: "LeadCreated", description: "A new lead was created." })
  .pipe(HttpApiSchema.status(201))

export const LeadEnriched = Schema.Struct({
  lead_id: Uuid,
  status: Schema.Literal("enriched"),
  matched_on: Schema.Literal("telefono"),
  lead_url: Uri,
  request_id: RequestId,
  replay: Replay
}).annotate({
  identifier: "LeadEnriched",
  description: "The existing lead with the same phone was enriched."
})

export const DryRunResult = Schema.Struct({
  status: Schema.Literal("dry_run"),
  would: Schema.Literals(["create", "enrich"]),
  would_match: Schema.NullOr(Schema.Struct({ lead_id: Uuid, matched_on: Schema.Literal("telefono") })),
  resolved: Schema.Struct({
    organizacion: Uuid,
    origen: Schema.String,
    development_id: Schema.NullOr(Uuid),
    nombre: Schema.String,
    telefono: Schema.NullOr(Schema.String),
    email: Schema.NullOr(Schema.String),
    extras: Schema.Record(Schema.String, Schema.String)
  }),
  request_id: RequestId
}).annotate({ identifier: "DryRunResult", description: "What the request would do. Nothing was written." })

export const IndexResponse = Schema.Struct({
  name: Schema.String,
  version: Schema.Literal("1"),
  openapi: Uri,
  docs: Uri,
  endpoints: Schema.Array(Schema.String),
  request_id: RequestId
}).annotate({ identifier: "IndexResponse" })

const printableAscii = /^[\x20-\x7E]+$/

export const isIdempotencyKey = (key: string) =>
  key.length <= Limits.idempotencyKey && printableAscii.test(key)

export const LeadHeaders = Schema.Struct({
  "x-service-dry-run": Schema.optionalKey(
    Schema.Literal("true").annotate({
      description:
        "Only allowed value `true`: validate, resolve the property and look for a match, write nothing."
    })
  ),
  "idempotency-key": Schema.optionalKey(
    Schema.String.annotate({
      description:
        "1 to 200 printable ASCII characters. Remembered for 24 hours per origin for successful responses. Ignored (not even validated) in dry-run."
    })
  )
}).check(
  Schema.makeFilter((headers) => {
    const key = headers["idempotency-key"]
    if (headers["x-service-dry-run"] === "true" || key === undefined || isIdempotencyKey(key)) return true
    return { path: ["idempotency-key"], issue: "Expected 1 to 200 printable ASCII characters" }
  })
)

export interface CallerShape {
  readonly keyId: string
  readonly prefix: string
  readonly originId: string
  readonly originLabel: string
  readonly organizationId: string
  readonly country: string
  readonly rateLimit: number
}

/** The origin (and so the organization) that a valid API key identifies. */
export class Caller extends Context.Service<Caller, CallerShape>()("lead-intake/Caller") {}

export interface RateWindowShape {
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  /** Unix seconds at which the next window starts. */
  readonly resetAt: number
  /** Seconds until then, at least 1. */
  readonly retryAfter: number
}

/** The request's place in its origin's rate-limit window, counted in the same round trip as the key check. */
export class RateWindow extends Context.Service<RateWindow, RateWindowShape>()("lead-intake/RateWindow") {}

/** The request body, read once within the size limit before anything parses it. */
export class RequestBody extends Context.Service<RequestBody, Uint8Array>()("lead-intake/RequestBody") {}

export class Journal extends HttpApiMiddleware.Service<Journal>()("lead-intake/Journal") {}

export class Authentication extends HttpApiMiddleware.Service<
  Authentication,
  { provides: Caller | RateWindow }
>()("lead-intake/Authentication", {
  security: { bearer: HttpApiSecurity.bearer.pipe(HttpApiSecurity.annotate(OpenApi.Format, "lk_live_…")) },
  error: [InvalidKey, TemporarilyUnavailable]
}) {}

export class RateLimit extends HttpApiMiddleware.Service<RateLimit, { requires: RateWindow }>()(
  "lead-intake/RateLimit",
  {
    error: [RateLimited, TemporarilyUnavailable]
  }
) {}

export class BodyGuard extends HttpApiMiddleware.Service<BodyGuard, { provides: RequestBody }>()(
  "lead-intake/BodyGuard",
  { error: [UnsupportedMediaType, PayloadTooLarge, ValidationError] }
) {}

const rateLimitHeaders = {
  "X-RateLimit-Limit": {
    description: "Requests allowed per minute for this key.",
    schema: { type: "integer" }
  },
  "X-RateLimit-Remaining": {
    description: "Requests left in the current window.",
    schema: { type: "integer" }
  },
  "X-RateLimit-Reset": {
    description: "Unix time in seconds when the window restarts (the next Unix minute).",
    schema: { type: "integer" }
  },
  "RateLimit-Policy": {
    description: 'IETF draft policy, e.g. `"default";q=60;w=60`.',
    schema: { type: "string" }
  },
  RateLimit: { description: 'IETF draft state, e.g. `"default";r=59;t=42`.', schema: { type: "string" } }
}
const requestIdHeader = {
  "X-Request-Id": {
    description: "Unique id of this request; equals `request_id` in the body.",
    schema: { type: "string" }
  }
}
const retryAfterHeader = {
  "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "integer", minimum: 1 } }
}
const replayedHeader = {
  "Idempotent-Replayed": {
    description: "`true` when the response repeats an earlier one for the same Idempotency-Key.",
    schema: { type: "string", enum: ["true"] }
  }
}

type OpenApiOperation = { responses?: Record<string, { headers?: Record<string, unknown> }> } & Record<
  string,
  unknown
>

/** Headers set outside the typed body (request id, rate limit, Retry-After) are documented here. */
const documentHeaders =
  (perStatus: (status: string) => Record<string, unknown>) =>
  (operation: Record<string, unknown>): Record<string, unknown> => {
    const typed = operation as OpenApiOperation
    for (const [status, response] of Object.entries(typed.responses ?? {})) {
      response.headers = { ...response.headers, ...requestIdHeader, ...perStatus(status) }
    }
    return typed
  }

const leadResponseHeaders = (status: string) => {
  const retryAfter = status === "409" || status === "429" || status === "503" ? retryAfterHeader : {}
  const limits = status === "401" || status === "503" ? {} : rateLimitHeaders
  const replay = status === "200" || status === "201" ? replayedHeader : {}
  const close = status === "413" ? { Connection: { description: "`close`", schema: { type: "string" } } } : {}
  return { ...limits, ...retryAfter, ...replay, ...close }
}

const documentIdempotencyKey = (operation: Record<string, unknown>) => {
  const parameters = (operation.parameters ?? []) as Array<{ name: string; schema?: Record<string, unknown> }>
  for (const parameter of parameters) {
    if (parameter.name === "idempotency-key") {
      parameter.schema = {
        type: "string",
        minLength: 1,
        maxLength: Limits.idempotencyKey,
        pattern: "^[\\x20-\\x7E]+$"
      }
    }
  }
  return operation
}

export class LeadsGroup extends HttpApiGroup.make("leads")
  .add(
    HttpApiEndpoint.post("createOrEnrich", "/v1/leads", {
      payload: LeadRequest,
      headers: LeadHeaders,
      success: [LeadCreated, LeadEnriched, DryRunResult],
      error: [
        ValidationError,
        PropertyNotFound,
        IdempotencyConflict,
        IdempotencyInProgress,
        InternalError,
        TemporarilyUnavailable
      ]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Create or enrich a lead",
        description:
          "Creates a lead (201), or enriches the existing lead with the same phone in the caller's organization (200). Checks run in this order: key (401/503), rate limit (429), Content-Type (415), size (413), headers (400), body (400), dry-run, idempotency (409), property (422), write (500/503).",
        transform: (operation) => documentIdempotencyKey(documentHeaders(leadResponseHeaders)(operation))
      })
    )
  )
  .middleware(BodyGuard)
  .middleware(RateLimit)
  .middleware(Authentication)
  .middleware(Journal) {}

const publicHeaders = documentHeaders(() => ({}))

export class PublicGroup extends HttpApiGroup.make("public").add(
  HttpApiEndpoint.get("index", "/v1", { success: IndexResponse }).annotateMerge(
    OpenApi.annotations({ summary: "API index", transform: publicHeaders })
  ),
  HttpApiEndpoint.get("openapi", "/v1/openapi.json", {
    success: Schema.Record(Schema.String, Schema.Json).annotate({ description: "The OpenAPI 3.1 document." })
  }).annotateMerge(
    OpenApi.annotations({
      summary: "This OpenAPI 3.1 document",
      description: "Cacheable for 5 minutes (`Cache-Control: public, max-age=300`).",
      transform: documentHeaders(() => ({
        "Cache-Control": { description: "`public, max-age=300`", schema: { type: "string" } }
      }))
    })
  ),
  HttpApiEndpoint.get("docs", "/v1/docs", {
    success: Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/html" }))
  }).annotateMerge(
    OpenApi.annotations({
      summary: "Human documentation, with an anchor per error code",
      transform: publicHeaders
    })
  )
) {}

export class Api extends HttpApi.make("lead-intake")
  .add(PublicGroup)
  .add(LeadsGroup)
  .annotateMerge(
    OpenApi.annotations({
      title: "Lead Intake API",
      version: "1.0.0",
      description:
        "Server-to-server API that receives leads from outside systems (web forms, chatbots, automation tools, call centres) into an organization's CRM. Call it from a backend only: no CORS headers are ever sent."
    })
  ) {}

/** Errors answered outside any endpoint (routing), listed so the document and the docs page know them. */
export const routingErrors = [NotFound, MethodNotAllowed] as const
