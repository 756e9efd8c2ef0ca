export type PropertyReference =
  | { readonly by: "codigo"; readonly value: string }
  | { readonly by: "external_code"; readonly value: string }
  | { readonly by: "id"; readonly value: string }

/** A lead request as the write takes it, once the contract's schema has accepted it (`Http/LeadPayload.ts`) (docs/contract.md#2-normalisation). */
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
