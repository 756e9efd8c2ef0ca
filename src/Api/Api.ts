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
import type { CallerShape } from "../Domain/Caller.ts"
import {
  errorCodes,
  IdempotencyConflict,
  IdempotencyInProgress,
  InternalError,
  InvalidKey,
  PayloadTooLarge,
  PropertyNotFound,
  RateLimited,
  TemporarilyUnavailable,
  UnsupportedMediaType,
  ValidationError
} from "./Errors.ts"
import { guide } from "./Guide.ts"
import { leadParseOptions } from "./LeadBody.ts"
import { LeadRequest, Limits } from "./LeadRequest.ts"
import { webhooks } from "./Webhooks.ts"

export * from "./Errors.ts"

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

/**
 * The body of every error, as one component of the document: the per-code classes of `Errors.ts`
 * each declare it with their own code, and the wire tells them apart by `error.code` alone.
 */
export const ErrorBody = Schema.Struct({
  error: Schema.Struct({
    code: Schema.Literals(errorCodes),
    message: Schema.String.annotate({ description: "English text for developers; wording may change." }),
    field: Schema.optionalKey(
      Schema.String.annotate({ description: "The field or header that failed, in dot notation." })
    ),
    docs_url: Uri.annotate({ description: "Link to the explanation of the code." })
  }),
  request_id: RequestId
}).annotate({
  identifier: "Error",
  description:
    "Every error: its code (one per cause, see the docs page), a message for developers, the field that failed."
})

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

/** The lead headers by their names on the wire, as a failing one is named in the error. */
export const leadHeaderNames = {
  "x-service-dry-run": "X-Service-Dry-Run",
  "idempotency-key": "Idempotency-Key"
} as const

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
        "Your own id for this lead (1 to 200 printable ASCII characters), so a retry is safe: for 24 hours after a success the same key with the same body answers the original response again (`replay: true`), per origin. Ignored (not even validated) in dry-run."
    })
  )
}).check(
  Schema.makeFilter((headers) => {
    const key = headers["idempotency-key"]
    if (headers["x-service-dry-run"] === "true" || key === undefined || isIdempotencyKey(key)) return true
    return { path: ["idempotency-key"], issue: "must be 1 to 200 printable ASCII characters" }
  })
)

export type { CallerShape }

/** The origin (and so the organization) that a valid API key identifies. */
export class Caller extends Context.Service<Caller, CallerShape>()("lead-intake/Caller") {}

/** Contract order 2-3 of `POST /v1/leads`: the key names the caller, then the request counts in its rate window. */
export class Admission extends HttpApiMiddleware.Service<Admission, { provides: Caller }>()(
  "lead-intake/Admission",
  {
    security: {
      bearer: HttpApiSecurity.bearer.pipe(
        HttpApiSecurity.annotate(OpenApi.Format, "lk_live_… (lk_test_… in test mode)"),
        HttpApiSecurity.annotate(
          OpenApi.Description,
          "The origin's API key, `Authorization: Bearer lk_live_…`: shown once when generated, one active key per origin."
        )
      )
    },
    error: [InvalidKey, TemporarilyUnavailable, RateLimited]
  }
) {}

/**
 * Contract order 4-7: the media type, the size, then the headers and the body, which the endpoint's
 * schemas decode; their failures are answered as the contract's 400 naming the first failing field.
 */
export class Decoding extends HttpApiMiddleware.Service<Decoding>()("lead-intake/Decoding", {
  error: [UnsupportedMediaType, PayloadTooLarge, ValidationError]
}) {}

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
          "Creates a lead (201), or enriches the existing lead with the same phone in the caller's organization (200). Checks run in this order: key (401/503), rate limit (429), Content-Type (415), size (413), headers (400), body (400), dry-run, idempotency (409), property (422), write (500/503)."
      })
    )
  )
  .middleware(Decoding)
  .middleware(Admission)
  // Every issue of the body is collected, so the first failing field in the contract's order answers.
  .annotate(HttpApi.PayloadParseOptions, leadParseOptions)
  .annotate(
    OpenApi.Description,
    "Deliver leads: create a lead or enrich the existing one with the same phone. Needs an API key."
  ) {}

export class PublicGroup extends HttpApiGroup.make("public")
  .add(
    HttpApiEndpoint.get("index", "/v1", { success: IndexResponse }).annotateMerge(
      OpenApi.annotations({ summary: "API index" })
    ),
    HttpApiEndpoint.get("openapi", "/v1/openapi.json", {
      success: Schema.Record(Schema.String, Schema.Json).annotate({
        description: "The OpenAPI 3.1 document."
      })
    }).annotateMerge(
      OpenApi.annotations({
        summary: "This OpenAPI 3.1 document",
        description: "Cacheable for 5 minutes (`Cache-Control: public, max-age=300`)."
      })
    ),
    HttpApiEndpoint.get("docs", "/v1/docs", {
      success: Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/html" }))
    }).annotateMerge(
      OpenApi.annotations({
        summary: "This reference: the guide, every operation, the webhooks and an anchor per error code"
      })
    )
  )
  .annotate(OpenApi.Description, "The index, this document and the human documentation. No key needed.") {}

export class Api extends HttpApi.make("lead-intake")
  .add(PublicGroup)
  .add(LeadsGroup)
  .annotateMerge(
    OpenApi.annotations({
      title: "Lead Intake API",
      version: "1.2.0",
      description: guide,
      override: { webhooks }
    })
  )
  .annotate(HttpApi.AdditionalSchemas, [ErrorBody]) {}
