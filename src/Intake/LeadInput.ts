import { type LeadRequest, normalizeEmail, normalizeNombre } from "../Api/LeadRequest.ts"

export type PropertyReference =
  | { readonly by: "codigo"; readonly value: string }
  | { readonly by: "external_code"; readonly value: string }
  | { readonly by: "id"; readonly value: string }

/** A lead request as the write takes it, once the contract's schema has accepted it (docs/contract.md#2-normalisation). */
export interface LeadInput {
  readonly nombre: string
  readonly telefono: string | null
  readonly email: string | null
  readonly mensaje: string | null
  readonly propiedad: PropertyReference | null
  /** Stored extras in the order sent, values as text; null and blank values already dropped. */
  readonly extras: ReadonlyArray<readonly [key: string, value: string]>
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

/** The note a request adds to its lead: the message, then one `key: value` line per extra. */
export const noteBody = (input: LeadInput): string | null => {
  const lines = [
    ...(input.mensaje === null ? [] : [input.mensaje]),
    ...input.extras.map(([key, value]) => `${key}: ${value}`)
  ]
  return lines.length === 0 ? null : lines.join("\n")
}
