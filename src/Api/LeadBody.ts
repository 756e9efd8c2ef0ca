import { Cause, Exit, Option, Schema, type SchemaAST, type SchemaIssue } from "effect"
import {
  type LeadFields,
  type LeadInput,
  leadFieldNames,
  type PropertyReference
} from "../Domain/LeadInput.ts"
import { fieldAt, LeadRequest, normalizeEmail, normalizeNombre, rankOf } from "./LeadRequest.ts"

const describe = (ast: SchemaAST.AST): string => {
  switch (ast._tag) {
    case "String":
      return "a string"
    case "Number":
      return "a number"
    case "Boolean":
      return "a boolean"
    case "Null":
      return "null"
    case "Objects":
      return "an object"
    case "Literal":
      return JSON.stringify(ast.literal)
    case "Union":
      return ast.types.map(describe).join(" or ")
    default:
      return "of another type"
  }
}

/** A failing field of the request and what it had to be (docs/contract.md#3-order-of-checks 6-7). */
interface Problem {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

const annotatedMessage = (annotations: { readonly message?: unknown } | undefined) =>
  typeof annotations?.message === "string" ? annotations.message : undefined

/**
 * Every leaf of a decoding issue with its path. Messages name what was expected, never the value
 * sent (it may be long, or personal data); a rule's own message wins over its leaves'.
 */
export const problemsOf = (
  issue: SchemaIssue.Issue,
  path: ReadonlyArray<PropertyKey>,
  message?: string
): Array<Problem> => {
  switch (issue._tag) {
    case "Filter":
      return problemsOf(issue.issue, path, message ?? annotatedMessage(issue.filter.annotations))
    case "Encoding":
      return problemsOf(issue.issue, path, message)
    case "Pointer":
      return problemsOf(issue.issue, [...path, ...issue.path], message)
    case "Composite":
    case "AnyOf":
      if (issue.issues.length > 0) return issue.issues.flatMap((inner) => problemsOf(inner, path, message))
      return [
        {
          path,
          message: message ?? annotatedMessage(issue.ast.annotations) ?? `must be ${describe(issue.ast)}`
        }
      ]
    case "MissingKey":
      return [{ path, message: message ?? "is required" }]
    case "UnexpectedKey":
      return [{ path, message: message ?? "is not a field of this object" }]
    case "InvalidType":
      return [
        {
          path,
          message: message ?? annotatedMessage(issue.ast.annotations) ?? `must be ${describe(issue.ast)}`
        }
      ]
    case "InvalidValue":
      return [{ path, message: message ?? annotatedMessage(issue.annotations) ?? "is not valid" }]
    default:
      return [{ path, message: message ?? "is not valid" }]
  }
}

/** Contract order 7: the body's first failing field in the contract's order (the body itself first). */
export const bodyProblem = (issue: SchemaIssue.Issue) => {
  let first: Problem | undefined
  for (const problem of problemsOf(issue, [])) {
    if (first === undefined || rankOf(problem.path) < rankOf(first.path)) first = problem
  }
  if (first !== undefined && first.path.length > 0) {
    const field = fieldAt(first.path)
    return { field, message: `${field} ${first.message}` }
  }
  return {
    field: "body",
    message: issue._tag === "InvalidValue" ? "The body is not valid JSON" : "The body must be a JSON object"
  }
}

const propertyOf = (propiedad: NonNullable<LeadRequest["propiedad"]>): PropertyReference => {
  if (propiedad.codigo !== undefined) return { by: "codigo", value: propiedad.codigo.toUpperCase() }
  if (propiedad.id !== undefined) return { by: "id", value: propiedad.id.toLowerCase() }
  return { by: "external_code", value: propiedad.external_code ?? "" }
}

const extrasOf = (extras: NonNullable<LeadRequest["extras"]>) => {
  const stored: Array<readonly [string, string]> = []
  for (const key in extras) {
    const value = extras[key]
    if (value === null || value === undefined) continue
    const text = typeof value === "string" ? value.trim() : JSON.stringify(value)
    if (text !== "") stored.push([key.trim(), text])
  }
  return stored
}

/**
 * The lead's fields as the contract's schema decoded them, where that schema states their
 * normalisation: each field of `LeadFields` the request gives. The type says that every field of
 * the request that the lead stores decodes to the stored field's type.
 */
const givenFields = (request: LeadRequest & { readonly [K in keyof LeadFields]?: LeadFields[K] | null }) => {
  const given: Partial<Record<keyof LeadFields, unknown>> = {}
  for (const name of leadFieldNames) if (request[name] !== undefined) given[name] = request[name]
  return given as Partial<LeadFields>
}

/** The request as stored: names and e-mails normalised, the note's parts trimmed, empty parts dropped. */
export const normalisedLead = (request: LeadRequest): LeadInput => {
  const mensaje = request.mensaje?.trim() ?? ""
  return {
    ...givenFields(request),
    nombre: normalizeNombre(request.nombre),
    telefono: request.telefono ?? null,
    email: request.email == null ? null : normalizeEmail(request.email),
    mensaje: mensaje === "" ? null : mensaje,
    propiedad: request.propiedad == null ? null : propertyOf(request.propiedad),
    extras: request.extras == null ? [] : extrasOf(request.extras)
  }
}

/** The endpoint's parse options: every issue collected, unknown fields refused. */
export const leadParseOptions = { errors: "all", onExcessProperty: "error" } as const

const decodeRequest = Schema.decodeUnknownExit(LeadRequest)

export type LeadBodyDecoded =
  | { readonly _tag: "Accepted"; readonly lead: LeadInput }
  | { readonly _tag: "Invalid"; readonly field: string; readonly message: string }

/**
 * A body given as text (a rescue, or the console's form before it sends one) decoded as
 * `POST /v1/leads` decodes it: the endpoint's schema and parse options, the same first failing
 * field and message (order 7), then normalised.
 */
export const decodeLeadBody = (text: string): LeadBodyDecoded => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return { _tag: "Invalid", field: "body", message: "The body is not valid JSON" }
  }
  const decoded = decodeRequest(parsed, leadParseOptions)
  if (Exit.isSuccess(decoded)) return { _tag: "Accepted", lead: normalisedLead(decoded.value) }
  const error = Cause.findErrorOption(decoded.cause)
  if (Option.isNone(error))
    return { _tag: "Invalid", field: "body", message: "The body must be a JSON object" }
  return { _tag: "Invalid", ...bodyProblem(error.value.issue) }
}
