import { Schema } from "effect"

/** A property named by one of its references, normalised (codes upper case, ids lower case). */
export const PropertyReference = Schema.Struct({
  by: Schema.Literals(["codigo", "external_code", "id"]),
  value: Schema.String
})
export type PropertyReference = typeof PropertyReference.Type

/**
 * The lead's input, the one type of it: a request once the contract's schema accepted it and
 * normalisation ran (`normalisedLead` in `Api/LeadBody.ts`, docs/contract.md#2-normalisation), as the
 * write, the dry run and a rescue take it. The write sends it whole, in its document
 * (`LeadWriteDocument` in Intake/LeadRepository.ts), to the SQL that stores it and to the memory fake.
 */
export const LeadInput = Schema.Struct({
  nombre: Schema.String,
  telefono: Schema.NullOr(Schema.String),
  email: Schema.NullOr(Schema.String),
  mensaje: Schema.NullOr(Schema.String),
  propiedad: Schema.NullOr(PropertyReference),
  /** Stored extras in the order sent, values as text; null and blank values already dropped. */
  extras: Schema.Array(Schema.Tuple([Schema.String, Schema.String]))
})
export type LeadInput = typeof LeadInput.Type

/** The note a request adds to its lead: the message, then one `key: value` line per extra. */
export const noteBody = (input: LeadInput): string | null => {
  const lines = [
    ...(input.mensaje === null ? [] : [input.mensaje]),
    ...input.extras.map(([key, value]) => `${key}: ${value}`)
  ]
  return lines.length === 0 ? null : lines.join("\n")
}
