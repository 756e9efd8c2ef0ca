import { type JsonSchema, Schema } from "effect"
import { isAcceptablePhone } from "../Domain/AcceptablePhone.ts"

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

/**
 * A rule with the message a partner reads (after the field's name) and the JSON Schema it stands
 * for, so the OpenAPI document states exactly what is checked.
 */
const rule = <T>(check: (value: T) => boolean, message: string, jsonSchema: Record<string, unknown> = {}) =>
  Schema.makeFilter((value: T) => check(value) || message, {
    message,
    expected: message,
    toJsonSchema: () => jsonSchema
  })

/** PostgreSQL text holds neither U+0000 nor an unpaired surrogate, so no stored text may contain one. */
export const isStorableText = (text: string) => !text.includes("\u0000") && text.isWellFormed()

/**
 * The characters `isStorableText` refuses, for a character class of a JSON Schema pattern. Patterns
 * are read with Unicode semantics ("u"), where a surrogate range matches only unpaired ones.
 */
const unstorable = "\\u0000\\uD800-\\uDFFF"

/** Text of storable characters, at least one of them not white space. */
const storableNonBlank = `^[^${unstorable}]*[^\\s${unstorable}][^${unstorable}]*$`

/**
 * The rule against NUL and unpaired surrogates, stated by `pattern`: the exclusion alone, or folded
 * into the field's own pattern. A JSON Schema with two checks that each state a `pattern` puts the
 * second in an `allOf`, which generators ignore, so a string's one pattern is stated here and its
 * other checks state none (docs/contract.md#2-normalisation).
 */
const storable = (pattern = `^[^${unstorable}]*$`) =>
  rule(isStorableText, "must not contain NUL (U+0000) or unpaired surrogate characters", { pattern })

const maxCodePoints = (max: number) =>
  rule((text: string) => codePoints(text) <= max, `must be at most ${max} characters`, { maxLength: max })

// the document states the bound on what is sent; the rule counts after normalising, so where
// normalising trims (nombre) it also refuses a blank text, which the field's pattern states
const betweenCodePoints = (min: number, max: number, normalize: (text: string) => string, after: string) =>
  rule(
    (text: string) => {
      const length = codePoints(normalize(text))
      return length >= min && length <= max
    },
    `must be ${min} to ${max} characters ${after}`,
    { minLength: min, maxLength: max }
  )

/** `nombre` as stored: trimmed, inner whitespace collapsed to one space, NFC. */
export const normalizeNombre = (raw: string) => raw.normalize("NFC").trim().replace(/\s+/gu, " ")

/** `email` as stored: trimmed and lower-case. */
export const normalizeEmail = (raw: string) => raw.trim().toLowerCase()

export const Nombre = Schema.String.check(
  storable(storableNonBlank),
  betweenCodePoints(1, Limits.nombre, normalizeNombre, "after trimming")
).annotate({
  description:
    "Contact name. Trimmed, inner whitespace collapsed and NFC-normalised, then 1 to 200 characters (Unicode code points)."
})

export const Telefono = Schema.String.check(
  rule(
    isAcceptablePhone,
    "must have at least 10 digits and only digits, spaces, hyphens, dots, parentheses and one leading +",
    { pattern: "^\\+?[0-9 .()-]*([0-9][ .()-]*){10,}$" }
  )
).annotate({
  description:
    "Phone in any format: at least 10 digits; only digits, spaces, hyphens, dots, parentheses and one leading +. The only matching criterion for an existing lead."
})

/** `local@domain.tld`: no spaces, one @, a dot-separated domain with at least two non-empty labels. */
const emailShape = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/

export const Email = Schema.String.check(
  storable(`^\\s*[^\\s@${unstorable}]+@[^\\s@.${unstorable}]+(\\.[^\\s@.${unstorable}]+)+\\s*$`),
  rule(
    (text: string) => {
      const email = normalizeEmail(text)
      return codePoints(text.trim()) <= Limits.email && emailShape.test(email)
    },
    "must look like local@domain.tld (no spaces, at most 254 characters)",
    { maxLength: Limits.email }
  )
).annotate({
  description:
    "E-mail address: local@domain.tld, no spaces, at most 254 characters (surrounding spaces are trimmed). Stored lowercase."
})

export const Mensaje = Schema.String.check(storable(), maxCodePoints(Limits.mensaje)).annotate({
  description:
    "Free text, stored as a note. Longer than 2000 characters (Unicode code points) is rejected, never trimmed."
})

export const Codigo = Schema.String.check(
  rule(
    (text: string) => /^[A-Za-z]{3}-[0-9]{4}$/u.test(text),
    "must be three letters, a hyphen and four digits",
    {
      pattern: "^[A-Za-z]{3}-[0-9]{4}$"
    }
  )
).annotate({
  description:
    "The service's own property code: three letters, a hyphen and four digits (letters case-insensitive)."
})

export const ExternalCode = Schema.String.check(
  storable(),
  betweenCodePoints(1, Limits.externalCode, (text) => text, "")
).annotate({ description: "The organization's own code for the property, as in its catalog." })

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/iu

export const PropertyId = Schema.String.check(
  rule((text: string) => uuid.test(text), "must be a UUID", { format: "uuid" })
).annotate({ description: "Internal UUID of the property record." })

/** A property reference as the contract takes it: exactly one key, so two of them do not type-check. */
export type PropertyReference =
  | { readonly codigo: string; readonly external_code?: never; readonly id?: never }
  | { readonly external_code: string; readonly codigo?: never; readonly id?: never }
  | { readonly id: string; readonly codigo?: never; readonly external_code?: never }

/** The three ways to name a property, each an object of its one key, as the document states them. */
const referenceAlternatives = [
  Schema.Struct({ codigo: Codigo }),
  Schema.Struct({ external_code: ExternalCode }),
  Schema.Struct({ id: PropertyId })
]
const referenceKeys = ["codigo", "external_code", "id"]

/**
 * Each alternative also names the other two keys with the schema `false` (never present): the same
 * rule as its `additionalProperties: false`, said so that openapi-typescript types them `?: never`.
 */
const oneReference = (alternative: JsonSchema.JsonSchema, index: number): JsonSchema.JsonSchema => ({
  ...alternative,
  properties: {
    ...(alternative.properties as object),
    ...Object.fromEntries(referenceKeys.filter((_, other) => other !== index).map((key) => [key, false]))
  }
})

const exactlyOneReference = "must have exactly one of codigo, external_code or id"

/**
 * Decoded as one object with three optional keys and a rule on their count, so a failure keeps naming
 * `propiedad` (or the malformed `propiedad.codigo`/`.id`); the rule narrows the type to one key, and
 * the document states it as a `oneOf` of the three single-key objects, which generators and
 * validators read as "exactly one".
 */
export const Propiedad = Schema.Struct({
  codigo: Schema.optionalKey(Codigo),
  external_code: Schema.optionalKey(ExternalCode),
  id: Schema.optionalKey(PropertyId)
})
  .annotate({
    title: "PropertyReference",
    description: "Property of interest: exactly one of `codigo`, `external_code` or `id`."
  })
  .pipe(
    Schema.refine((reference): reference is PropertyReference => Object.keys(reference).length === 1, {
      message: exactlyOneReference,
      expected: exactlyOneReference,
      representation: {
        id: "lead-intake/ExactlyOnePropertyReference",
        payload: null,
        schemas: referenceAlternatives.map((alternative) => alternative.ast)
      },
      toJsonSchema: ({ schemas }) => ({ oneOf: schemas.map(oneReference) })
    })
  )

/**
 * Its pattern also states the rule of `Extras` that no key is blank. Its length is counted as sent,
 * as the document's `maxLength` counts it (surrounding white space included; the key is stored
 * trimmed), so that what the document admits and what the service accepts are the same keys.
 */
export const ExtrasKey = Schema.String.check(storable(storableNonBlank), maxCodePoints(Limits.extrasKey))

const ExtrasText = Schema.String.check(storable(), maxCodePoints(Limits.extrasValue))

export const ExtrasValue = Schema.Union([ExtrasText, Schema.Finite, Schema.Boolean, Schema.Null]).annotate({
  description: "A string of at most 200 characters, a number, a boolean or null.",
  message: "must be a string of at most 200 characters, a number, a boolean or null"
})

export const Extras = Schema.Record(ExtrasKey, ExtrasValue)
  .check(
    rule(
      (extras: object) => Object.keys(extras).length <= Limits.extrasEntries,
      `must have at most ${Limits.extrasEntries} entries`,
      { maxProperties: Limits.extrasEntries }
    ),
    // stated by `ExtrasKey`'s pattern, the one pattern of `propertyNames`
    rule((extras: object) => Object.keys(extras).every((key) => key.trim() !== ""), "keys must not be blank")
  )
  .annotate({
    description:
      "Up to 20 key-value pairs appended to the lead's notes as `key: value`. Keys 1-60 characters (trimmed, not blank), values a string of at most 200 characters, a number, a boolean or null. Null and blank values are ignored but count toward the 20."
  })

/**
 * The body of `POST /v1/leads` as sent: HttpApi decodes it with these schemas (unknown fields
 * refused, every issue collected) and the first failing field in the contract's order answers.
 */
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
export type LeadRequest = typeof LeadRequest.Type

/**
 * The body's fields in the order docs/contract.md#2-normalisation names the first failing one (the
 * order `LeadRequest` declares them in); unknown fields come last.
 */
export const fieldOrder = Object.keys(LeadRequest.fields) as ReadonlyArray<keyof LeadRequest>

/**
 * The name a failure at `path` is reported under: the body itself, a field, `propiedad.codigo` and
 * `propiedad.id` for a malformed reference (any other trouble with `propiedad` names `propiedad`),
 * `extras.<key>` as sent for an entry.
 */
export const fieldAt = (path: ReadonlyArray<PropertyKey>): string => {
  const [field, key] = path
  if (field === undefined) return "body"
  if (field === "propiedad") {
    return key === "codigo" || key === "id" ? `propiedad.${key}` : "propiedad"
  }
  if (field === "extras" && key !== undefined) return `extras.${String(key)}`
  return String(field)
}

/** Where a field's failure ranks among several: the body first, then the contract's order, unknown fields last. */
export const rankOf = (path: ReadonlyArray<PropertyKey>): number => {
  const [field] = path
  if (field === undefined) return -1
  const index = fieldOrder.indexOf(field as keyof LeadRequest)
  return index === -1 ? fieldOrder.length : index
}
