import { type ErrorCode, errorCatalog, errorCodes, fixedMessages } from "./Errors.ts"

/**
 * The named examples of the OpenAPI document (requests, answers, every error code, header values):
 * data only, placed in the document by `Document.ts`, since no annotation can carry named examples.
 */

export interface Example {
  readonly summary: string
  readonly description?: string
  readonly value: unknown
}

const exampleHost = "https://leads.example.com"
const leadId = "6f1c2a4e-8b3d-4c5f-9a7e-2d1b0c9e8f70"
const propertyId = "0b7d9c1e-3f5a-4e2b-8c6d-9a1b2c3d4e5f"
const organizationId = "4a2e6c8b-1d3f-4b5a-9c7e-6f8a0b2c4d6e"
const requestId = "80ae270d-4a4e-47d4-9e65-65bc350c5e6d"
const leadUrl = `https://crm.example.com/leads/${leadId}`

export const requestExamples: Record<string, Example> = {
  full: {
    summary: "Every field, property by codigo",
    value: {
      nombre: "Ana López",
      telefono: "+52 55 1234 5678",
      email: "ana@example.com",
      mensaje: "Me interesa, ¿sigue disponible?",
      propiedad: { codigo: "DEM-0001" },
      extras: { presupuesto: 2500000, recamaras: "3", credito_infonavit: true }
    }
  },
  minimal: {
    summary: "Only the required name and a phone",
    value: { nombre: "Luis Pérez", telefono: "55-1234-5678" }
  },
  property_by_external_code: {
    summary: "Property by the partner's own code",
    value: { nombre: "Ana López", telefono: "+52 55 1234 5678", propiedad: { external_code: "CASA-CENTRO" } }
  },
  property_by_id: {
    summary: "Property by its id",
    value: { nombre: "Ana López", email: "ana@example.com", propiedad: { id: propertyId } }
  }
}

export const successExamples: Record<string, Record<string, Example>> = {
  "201": {
    created: {
      summary: "A new lead",
      value: { lead_id: leadId, status: "created", lead_url: leadUrl, request_id: requestId }
    },
    created_replay: {
      summary: "The same request repeated with its Idempotency-Key",
      description: "Also sent with the header `Idempotent-Replayed: true`.",
      value: { lead_id: leadId, status: "created", lead_url: leadUrl, request_id: requestId, replay: true }
    }
  },
  "200": {
    enriched: {
      summary: "An existing lead with the same phone was enriched",
      value: {
        lead_id: leadId,
        status: "enriched",
        matched_on: "telefono",
        lead_url: leadUrl,
        request_id: requestId
      }
    },
    dry_run_create: {
      summary: "Dry-run (X-Service-Dry-Run: true): would create",
      value: {
        status: "dry_run",
        would: "create",
        would_match: null,
        resolved: {
          organizacion: organizationId,
          origen: "sitio-web",
          development_id: propertyId,
          nombre: "Ana López",
          telefono: "+52 55 1234 5678",
          email: "ana@example.com",
          extras: { presupuesto: "2500000", recamaras: "3", credito_infonavit: "true" }
        },
        request_id: requestId
      }
    },
    dry_run_enrich: {
      summary: "Dry-run (X-Service-Dry-Run: true): would enrich",
      value: {
        status: "dry_run",
        would: "enrich",
        would_match: { lead_id: leadId, matched_on: "telefono" },
        resolved: {
          organizacion: organizationId,
          origen: "sitio-web",
          development_id: null,
          nombre: "Luis Pérez",
          telefono: "55-1234-5678",
          email: null,
          extras: {}
        },
        request_id: requestId
      }
    }
  }
}

/** A realistic message and field per code, as the server words them. */
const errorDetails: Record<ErrorCode, { readonly message: string; readonly field?: string }> = {
  validation_error: { message: "telefono must have at least 10 digits", field: "telefono" },
  invalid_key: { message: "The API key is revoked" },
  not_found: { message: "No route /v1/lead" },
  method_not_allowed: { message: "GET is not allowed here" },
  idempotency_conflict: { message: fixedMessages.idempotency_conflict },
  idempotency_in_progress: { message: fixedMessages.idempotency_in_progress },
  payload_too_large: { message: "The body is over 64000 bytes" },
  unsupported_media_type: { message: fixedMessages.unsupported_media_type },
  property_not_found: {
    message: "No active property of your organization matches propiedad",
    field: "propiedad"
  },
  rate_limited: { message: "More than 60 requests this minute for this key" },
  internal_error: { message: fixedMessages.internal_error },
  temporarily_unavailable: { message: fixedMessages.temporarily_unavailable }
}

export const errorExample = (code: ErrorCode, docsBase = `${exampleHost}/v1/docs`) => {
  const { message, field } = errorDetails[code]
  return {
    error: { code, message, ...(field === undefined ? {} : { field }), docs_url: `${docsBase}#${code}` },
    request_id: requestId
  }
}

/** One example per code a response declares (`x-error-codes`), in the catalog's order. */
export const errorExamples = (
  declared: ReadonlyArray<ErrorCode> | undefined
): Record<string, Example> | undefined => {
  const codes = errorCodes.filter((code) => declared?.includes(code) === true)
  if (codes.length === 0) return undefined
  return Object.fromEntries(
    codes.map((code) => [code, { summary: errorCatalog[code].title, value: errorExample(code) }])
  )
}

const publicExamples: Record<string, Record<string, Record<string, Example>>> = {
  "GET /v1": {
    "application/json": {
      index: {
        summary: "The index",
        value: {
          name: "Lead Intake API",
          version: "1",
          openapi: `${exampleHost}/v1/openapi.json`,
          docs: `${exampleHost}/v1/docs`,
          endpoints: ["GET /v1", "GET /v1/openapi.json", "GET /v1/docs", "POST /v1/leads"],
          request_id: requestId
        }
      }
    }
  },
  "GET /v1/openapi.json": {
    "application/json": {
      document: {
        summary: "The beginning of this document",
        value: { openapi: "3.1.0", info: { title: "Lead Intake API", version: "1.2.0" } }
      }
    }
  },
  "GET /v1/docs": {
    "text/html": {
      page: { summary: "The HTML page", value: '<!doctype html><html lang="en">…</html>' }
    }
  }
}

export const parameterExamples: Record<string, string> = {
  "x-service-dry-run": "true",
  "idempotency-key": "form-4711"
}

/** The examples of a success answer of an operation (`"POST /v1/leads"`), by status and media type. */
export const responseExamples = (operation: string, status: string, mediaType: string) => {
  if (operation === "POST /v1/leads") return successExamples[status]
  return publicExamples[operation]?.[mediaType]
}
