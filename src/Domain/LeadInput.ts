/** A property named by one of its references, normalised (codes upper case, ids lower case). */
export type PropertyReference =
  | { readonly by: "codigo"; readonly value: string }
  | { readonly by: "external_code"; readonly value: string }
  | { readonly by: "id"; readonly value: string }

/**
 * The lead's input, the one type of it: a request once the contract's schema accepted it and
 * normalisation ran (`normalisedLead` in `Api/LeadBody.ts`, docs/contract.md#2-normalisation), as the
 * write, the dry run and a rescue take it.
 */
export interface LeadInput {
  readonly nombre: string
  readonly telefono: string | null
  readonly email: string | null
  readonly mensaje: string | null
  readonly propiedad: PropertyReference | null
  /** Stored extras in the order sent, values as text; null and blank values already dropped. */
  readonly extras: ReadonlyArray<readonly [key: string, value: string]>
}

/** The note a request adds to its lead: the message, then one `key: value` line per extra. */
export const noteBody = (input: LeadInput): string | null => {
  const lines = [
    ...(input.mensaje === null ? [] : [input.mensaje]),
    ...input.extras.map(([key, value]) => `${key}: ${value}`)
  ]
  return lines.length === 0 ? null : lines.join("\n")
}
