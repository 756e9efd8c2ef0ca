import { type LeadRequest, normalizeEmail, normalizeNombre } from "../../Api/LeadRequest.ts"
import type { LeadInput, PropertyReference } from "../LeadInput.ts"

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

/** The request as stored: names and e-mails normalised, the note's parts trimmed, empty parts dropped. */
export const leadInputOf = (request: LeadRequest): LeadInput => {
  const mensaje = request.mensaje?.trim() ?? ""
  return {
    nombre: normalizeNombre(request.nombre),
    telefono: request.telefono ?? null,
    email: request.email == null ? null : normalizeEmail(request.email),
    mensaje: mensaje === "" ? null : mensaje,
    propiedad: request.propiedad == null ? null : propertyOf(request.propiedad),
    extras: request.extras == null ? [] : extrasOf(request.extras)
  }
}
