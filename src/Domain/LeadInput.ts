import { Schema, Struct } from "effect"

/** A property named by one of its references, normalised (codes upper case, ids lower case). */
export const PropertyReference = Schema.Struct({
  by: Schema.Literals(["codigo", "external_code", "id"]),
  value: Schema.String
})
export type PropertyReference = typeof PropertyReference.Type

/**
 * The lead's own fields as a request gives them, normalised: each is stored in the `leads` column of
 * its name and read back from it, by name, on every path (`lead_create_or_enrich` in
 * migrations/functions.ts writes the document's keys that name a column; `readLead`, `lead show` and
 * the memory fake read `StoredLeadFields`). A new field of the lead is a field here
 * (`Schema.optionalKey`, so every other builder of an input stays as it is) and a column.
 */
export const LeadFields = Schema.Struct({
  nombre: Schema.String,
  telefono: Schema.NullOr(Schema.String),
  email: Schema.NullOr(Schema.String)
})
export type LeadFields = typeof LeadFields.Type

/** The names of `LeadFields`, in their order (the order `lead show` prints them in). */
export const leadFieldNames = Object.keys(LeadFields.fields) as ReadonlyArray<keyof LeadFields>

/**
 * The fields an enrichment fills where the lead has them empty (docs/contract.md#3-order-of-checks,
 * "Enrichment"): all but the name, which is the team's once the lead exists, and the phone, which
 * found the lead. `lead_create_or_enrich` leaves out the same two.
 */
export const fillableFieldNames = leadFieldNames.filter(
  (name): name is Exclude<keyof LeadFields, "nombre" | "telefono"> => name !== "nombre" && name !== "telefono"
)

interface StoredField extends Struct.Lambda {
  <S extends Schema.Top>(self: S): Schema.NullOr<S extends Schema.optionalKey<infer Inner> ? Inner : S>
  readonly "~lambda.out": this["~lambda.in"] extends Schema.optionalKey<infer Inner extends Schema.Top>
    ? Schema.NullOr<Inner>
    : this["~lambda.in"] extends Schema.Top
      ? Schema.NullOr<this["~lambda.in"]>
      : never
}
const storedField = Struct.lambda<StoredField>((field) =>
  Schema.NullOr(field.ast.context?.isOptional === true ? Schema.requiredKey(field as never) : field)
)

/** `LeadFields` as a lead's row holds them: every one present, null when not given (or erased). */
export const StoredLeadFields = LeadFields.mapFields(Struct.map(storedField))
export type StoredLeadFields = typeof StoredLeadFields.Type

/** The stored fields of a lead, an input or a row: each of `LeadFields`, null when absent. */
export const storedFieldsOf = (from: { readonly [K in keyof LeadFields]?: LeadFields[K] | null }) => {
  const stored: Partial<Record<keyof LeadFields, unknown>> = {}
  for (const name of leadFieldNames) stored[name] = from[name] ?? null
  return stored as StoredLeadFields
}

/**
 * The lead's input, the one type of it: a request once the contract's schema accepted it and
 * normalisation ran (`normalisedLead` in `Api/LeadBody.ts`, docs/contract.md#2-normalisation), as the
 * write, the dry run and a rescue take it. The write sends it whole, in its document
 * (`LeadWriteDocument` in Intake/LeadRepository.ts), to the SQL that stores it and to the memory fake.
 */
export const LeadInput = Schema.Struct({
  ...LeadFields.fields,
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
