import { Schema } from "effect"

export const Limits = {
  bodyBytes: 64_000,
  nombre: 200,
  mensaje: 2_000,
  extrasEntries: 20,
  extrasKey: 60,
  extrasValue: 200,
  email: 254,
  externalCode: 100,
  idempotencyKey: 200
} as const

const codePoints = (text: string) => {
  let count = 0
  for (const _ of text) count++
  return count
}

/** A string rule with the JSON Schema it stands for, so the OpenAPI document states exactly what is checked. */
const rule = (check: (text: string) => boolean, expected: string, jsonSchema: Record<string, unknown>) =>
  Schema.makeFilter((text: string) => check(text) || `Expected ${expected}`, {
    expected,
    toJsonSchema: () => jsonSchema
  })

/** PostgreSQL text cannot hold U+0000, so no stored text may contain it. */
const withoutNul = rule((text) => !text.includes("\u0000"), "text without NUL (U+0000) characters", {})

const maxCodePoints = (max: number) =>
  rule((text) => codePoints(text) <= max, `at most ${max} characters`, { maxLength: max })

const betweenCodePoints = (min: number, max: number, prepare: (text: string) => string = (text) => text) =>
  rule(
    (text) => {
      const length = codePoints(prepare(text))
      return length >= min && length <= max
    },
    `${min} to ${max} characters`,
    { minLength: min, maxLength: max }
  )

const MINIMUM_PHONE_DIGITS = 10
const ACCEPTABLE_PHONE_CHARACTERS = /^\+?[0-9 ().-]*$/

/** The phone the contract accepts: its characters and at least 10 digits (the match key is the domain's). */
export const isAcceptablePhone = (raw: string): boolean =>
  ACCEPTABLE_PHONE_CHARACTERS.test(raw) && raw.replace(/\D/g, "").length >= MINIMUM_PHONE_DIGITS

export const Nombre = Schema.String.check(betweenCodePoints(1, Limits.nombre), withoutNul).annotate({
  description:
    "Contact name. Trimmed, inner whitespace collapsed and NFC-normalised, then 1 to 200 characters."
})

export const Telefono = Schema.String.check(
  rule(isAcceptablePhone, "a phone with at least 10 digits", {
    pattern: "^\\+?[0-9 .()-]*([0-9][ .()-]*){10,}$"
  })
).annotate({
  description:
    "Phone in any format: at least 10 digits; only digits, spaces, hyphens, dots, parentheses and one leading +. The only matching criterion for an existing lead."
})

const emailShape = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/

export const Email = Schema.String.check(
  withoutNul,
  rule((text) => text.length <= Limits.email && emailShape.test(text), "an e-mail address", {
    format: "email",
    maxLength: Limits.email
  })
).annotate({
  description: "E-mail address (local@domain.tld, no spaces, at most 254 characters). Stored lowercase."
})

export const Mensaje = Schema.String.check(maxCodePoints(Limits.mensaje), withoutNul).annotate({
  description: "Free text, stored as a note. Longer than 2000 characters is rejected, never trimmed."
})

export const Codigo = Schema.String.check(Schema.isPattern(/^[A-Za-z]{3}-[0-9]{4}$/u)).annotate({
  description:
    "The service's own property code: three letters, a hyphen and four digits (letters case-insensitive)."
})

export const ExternalCode = Schema.String.check(
  betweenCodePoints(1, Limits.externalCode),
  withoutNul
).annotate({
  description: "The organization's own code for the property, as in its catalog."
})

export const PropertyId = Schema.String.check(Schema.isUUID()).annotate({
  description: "Internal UUID of the property record."
})

export const Propiedad = Schema.Union([
  Schema.Struct({ codigo: Codigo }),
  Schema.Struct({ external_code: ExternalCode }),
  Schema.Struct({ id: PropertyId })
]).annotate({
  title: "PropertyReference",
  description: "Property of interest: exactly one of `codigo`, `external_code` or `id`."
})

export const ExtrasKey = Schema.String.check(
  betweenCodePoints(1, Limits.extrasKey, (key) => key.trim()),
  withoutNul
)

const ExtrasText = Schema.String.check(maxCodePoints(Limits.extrasValue), withoutNul)

export const ExtrasValue = Schema.Union([ExtrasText, Schema.Finite, Schema.Boolean, Schema.Null])

export const Extras = Schema.Record(ExtrasKey, ExtrasValue)
  .check(Schema.isMaxProperties(Limits.extrasEntries))
  .annotate({
    description:
      "Up to 20 key-value pairs appended to the lead's notes as `key: value`. Keys 1-60 characters (trimmed), values a string of at most 200 characters, a number, a boolean or null. Null and blank values are ignored but count toward the 20."
  })

export const LeadRequest = Schema.Struct({
  nombre: Nombre,
  telefono: Schema.optionalKey(Schema.NullOr(Telefono)),
  email: Schema.optionalKey(Schema.NullOr(Email)),
  mensaje: Schema.optionalKey(Schema.NullOr(Mensaje)),
  propiedad: Schema.optionalKey(Schema.NullOr(Propiedad)),
  extras: Schema.optionalKey(Schema.NullOr(Extras))
}).annotate({
  identifier: "LeadRequest",
  description:
    "A lead to create, or to enrich the existing lead with the same phone. Unknown fields are rejected."
})

/** A lead request once it has passed every check: what the create handler works with. */
export type PropertyReference =
  | { readonly by: "codigo"; readonly value: string }
  | { readonly by: "external_code"; readonly value: string }
  | { readonly by: "id"; readonly value: string }

export interface LeadInput {
  readonly nombre: string
  readonly telefono: string | null
  readonly email: string | null
  readonly mensaje: string | null
  readonly propiedad: PropertyReference | null
  /** Stored extras in the order sent, values as text; null and blank values already dropped. */
  readonly extras: ReadonlyArray<readonly [key: string, value: string]>
}
