import { Schema } from "effect"
import {
  Codigo,
  Email,
  ExternalCode,
  ExtrasKey,
  ExtrasValue,
  Limits,
  Mensaje,
  Nombre,
  PropertyId,
  Telefono
} from "../Api/LeadRequest.ts"

const hasNul = (text: string) => text.includes("\u0000")

const nulProblem = (field: string) => problem(field, `${field} must not contain NUL (U+0000) characters`)

import type { LeadInput, PropertyReference } from "../Api/LeadRequest.ts"

export type { LeadInput, PropertyReference }

export interface FieldProblem {
  readonly field: string
  readonly message: string
}

type Checked<A> =
  | { readonly ok: true; readonly value: A }
  | { readonly ok: false; readonly problem: FieldProblem }

const ok = <A>(value: A): Checked<A> => ({ ok: true, value })
const problem = (field: string, message: string): Checked<never> => ({
  ok: false,
  problem: { field, message }
})

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const knownFields = new Set(["nombre", "telefono", "email", "mensaje", "propiedad", "extras"])
const propertyKeys = new Set(["codigo", "external_code", "id"])

const isNombre = Schema.is(Nombre)
const isTelefono = Schema.is(Telefono)
const isEmail = Schema.is(Email)
const isMensaje = Schema.is(Mensaje)
const isCodigo = Schema.is(Codigo)
const isExternalCode = Schema.is(ExternalCode)
const isPropertyId = Schema.is(PropertyId)
const isExtrasKey = Schema.is(ExtrasKey)
const isExtrasValue = Schema.is(ExtrasValue)

export const normalizeNombre = (raw: string) => raw.normalize("NFC").trim().replace(/\s+/gu, " ")

const checkNombre = (raw: unknown): Checked<string> => {
  if (typeof raw !== "string") return problem("nombre", "nombre is required and must be a string")
  if (hasNul(raw)) return nulProblem("nombre")
  const nombre = normalizeNombre(raw)
  return isNombre(nombre) ? ok(nombre) : problem("nombre", `nombre must be 1 to ${Limits.nombre} characters`)
}

const checkTelefono = (raw: unknown): Checked<string | null> => {
  if (raw === undefined || raw === null) return ok(null)
  return typeof raw === "string" && isTelefono(raw)
    ? ok(raw)
    : problem(
        "telefono",
        "telefono must have at least 10 digits and only digits, spaces, hyphens, dots, parentheses and a leading +"
      )
}

const checkEmail = (raw: unknown): Checked<string | null> => {
  if (raw === undefined || raw === null) return ok(null)
  if (typeof raw !== "string") return problem("email", "email must be a string")
  if (hasNul(raw)) return nulProblem("email")
  const email = raw.trim().toLowerCase()
  return isEmail(email) ? ok(email) : problem("email", "email must look like local@domain.tld")
}

const checkMensaje = (raw: unknown): Checked<string | null> => {
  if (raw === undefined || raw === null) return ok(null)
  if (typeof raw !== "string") return problem("mensaje", "mensaje must be a string")
  if (hasNul(raw)) return nulProblem("mensaje")
  if (!isMensaje(raw)) return problem("mensaje", `mensaje must be at most ${Limits.mensaje} characters`)
  const mensaje = raw.trim()
  return ok(mensaje === "" ? null : mensaje)
}

const checkPropiedad = (raw: unknown): Checked<PropertyReference | null> => {
  if (raw === undefined || raw === null) return ok(null)
  const shapeMessage = "propiedad must be an object with exactly one of codigo, external_code or id"
  if (!isPlainObject(raw)) return problem("propiedad", shapeMessage)
  const keys = Object.keys(raw)
  const [key] = keys
  if (keys.length !== 1 || key === undefined || !propertyKeys.has(key))
    return problem("propiedad", shapeMessage)
  const value = raw[key]
  if (typeof value !== "string" || value === "")
    return problem("propiedad", `propiedad.${key} must be a non-empty string`)
  switch (key) {
    case "codigo":
      return isCodigo(value)
        ? ok({ by: "codigo", value: value.toUpperCase() })
        : problem("propiedad.codigo", "propiedad.codigo must be three letters, a hyphen and four digits")
    case "id":
      return isPropertyId(value)
        ? ok({ by: "id", value: value.toLowerCase() })
        : problem("propiedad.id", "propiedad.id must be a UUID")
    default:
      if (hasNul(value)) return nulProblem("propiedad")
      return isExternalCode(value)
        ? ok({ by: "external_code", value })
        : problem("propiedad", `propiedad.external_code must be at most ${Limits.externalCode} characters`)
  }
}

const extrasText = (value: string | number | boolean) =>
  typeof value === "string" ? value.trim() : JSON.stringify(value)

const checkExtras = (raw: unknown): Checked<LeadInput["extras"]> => {
  if (raw === undefined || raw === null) return ok([])
  if (!isPlainObject(raw)) return problem("extras", "extras must be an object")
  const entries = Object.entries(raw)
  if (entries.length > Limits.extrasEntries) {
    return problem("extras", `extras must have at most ${Limits.extrasEntries} entries`)
  }
  const stored: Array<readonly [string, string]> = []
  for (const [key, value] of entries) {
    if (key.trim() === "") return problem("extras", "extras keys must not be empty")
    if (hasNul(key) || (typeof value === "string" && hasNul(value))) return nulProblem(`extras.${key}`)
    if (!isExtrasKey(key))
      return problem(`extras.${key}`, `extras keys must be at most ${Limits.extrasKey} characters`)
    if (!isExtrasValue(value)) {
      return problem(
        `extras.${key}`,
        `extras values must be a string of at most ${Limits.extrasValue} characters, a number, a boolean or null`
      )
    }
    if (value === null) continue
    const text = extrasText(value)
    if (text !== "") stored.push([key.trim(), text])
  }
  return ok(stored)
}

/**
 * Validates and normalises a parsed body. Checks run in the contract's order, so the first
 * failing field is the one reported: nombre, telefono, email, mensaje, propiedad, extras,
 * then unknown fields.
 */
export const decodeLeadInput = (body: unknown): Checked<LeadInput> => {
  if (!isPlainObject(body)) return problem("body", "The body must be a JSON object")
  const nombre = checkNombre(body.nombre)
  if (!nombre.ok) return nombre
  const telefono = checkTelefono(body.telefono)
  if (!telefono.ok) return telefono
  const email = checkEmail(body.email)
  if (!email.ok) return email
  const mensaje = checkMensaje(body.mensaje)
  if (!mensaje.ok) return mensaje
  const propiedad = checkPropiedad(body.propiedad)
  if (!propiedad.ok) return propiedad
  const extras = checkExtras(body.extras)
  if (!extras.ok) return extras
  const unknownField = Object.keys(body).find((key) => !knownFields.has(key))
  if (unknownField !== undefined) return problem(unknownField, `Unknown field "${unknownField}"`)
  return ok({
    nombre: nombre.value,
    telefono: telefono.value,
    email: email.value,
    mensaje: mensaje.value,
    propiedad: propiedad.value,
    extras: extras.value
  })
}

/** The note a request adds to its lead: the message, then one `key: value` line per extra. */
export const noteBody = (input: LeadInput): string | null => {
  const lines = [
    ...(input.mensaje === null ? [] : [input.mensaje]),
    ...input.extras.map(([k, v]) => `${k}: ${v}`)
  ]
  return lines.length === 0 ? null : lines.join("\n")
}
