import * as fc from "fast-check"

/** Characters that break naive code: NUL and controls, bidi overrides, BOM, combining marks, surrogates. */
export const oddCharacters = [
  "\u0000",
  "\u0001",
  "\u001f",
  "\u007f",
  "\u0085",
  "\u00a0",
  "\u00ad",
  "\u0301",
  "\u200b",
  "\u200d",
  "\u200e",
  "\u200f",
  "\u2028",
  "\u2029",
  "\u202a",
  "\u202e",
  "\u2066",
  "\u2069",
  "\u3000",
  "\ufeff",
  "\ufffd",
  "\uffff",
  "\ud800",
  "\udbff",
  "\udc00",
  "\udfff",
  "\ud83d\ude00",
  "\u{10ffff}",
  "e\u0301",
  "ﷺ",
  "א",
  "ع",
  "\t",
  "\n",
  "\r",
  '"',
  "\\",
  "'",
  "%",
  "{",
  "}",
  ".",
  "@",
  "+"
]

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit))

/** One UTF-16 "character" from anywhere: odd ones, ASCII, any code point, or half a surrogate pair. */
export const anyCharacter = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...oddCharacters) },
  { weight: 3, arbitrary: fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: loneSurrogate }
)

export const oddString = (maxLength = 40) =>
  fc.oneof(
    fc.string({ unit: anyCharacter, maxLength }),
    fc.string({ maxLength }),
    fc.string({ unit: "binary", maxLength })
  )

const weirdNumber = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.constantFrom(0, -0, 1e308, -1e308, 5e-324, 2 ** 53, 2 ** 53 + 1, 12.5, 3_500_000)
)

/** Any JSON value whose strings and keys may be odd; depth and width bounded. */
export const oddJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    weirdNumber,
    oddString(),
    fc.array(tie("value"), { maxLength: 5 }),
    fc.dictionary(oddString(12), tie("value"), { maxKeys: 5 })
  )
})).value

const validNombre = fc
  .tuple(
    fc.string({
      unit: fc.constantFrom("a", "Á", "ñ", "李", "ع", "😀", "e\u0301", " ", "-", "'"),
      maxLength: 30
    }),
    fc.constantFrom("Ana", "José", "María-Luz", "O'Brien", "李小龙", "محمد")
  )
  .map(([prefix, name]) => `${prefix}${name}`)

const phone = fc.oneof(
  fc.constantFrom(
    "+52 55 1234 5678",
    "55-1234-5678",
    "(55) 1234 5678",
    "+52 1 55 1234 5678",
    "044 55 1234 5678"
  ),
  fc.stringMatching(/^\+?[0-9]{10,15}$/),
  fc.stringMatching(/^[0-9 .()-]{0,25}$/)
)

const email = fc.oneof(
  fc.emailAddress(),
  fc.constantFrom("ANA@Example.COM", " ana@example.com ", "a@b", "@x.mx")
)

const propiedad = fc.oneof(
  fc.constant(null),
  fc.record({
    codigo: fc.oneof(fc.constantFrom("ABC-1234", "abc-1234", "OLD-0001", "ZZZ-9999"), oddString(10))
  }),
  fc.record({ external_code: fc.oneof(fc.constantFrom("EXT-1", "nope"), oddString(20)) }),
  fc.record({ id: fc.oneof(fc.uuid(), oddString(36)) }),
  fc.record({ codigo: fc.constant("ABC-1234"), id: fc.uuid() }),
  fc.dictionary(oddString(10), oddJson, { maxKeys: 3 }),
  oddJson
)

const extrasValue = fc.oneof(
  { weight: 4, arbitrary: oddString(60) },
  { weight: 1, arbitrary: fc.string({ minLength: 195, maxLength: 210 }) },
  { weight: 2, arbitrary: weirdNumber },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: oddJson }
)

const extras = fc.oneof(
  fc.dictionary(fc.oneof(oddString(20), fc.string({ minLength: 58, maxLength: 64 })), extrasValue, {
    maxKeys: 24
  }),
  fc.constant(null),
  oddJson
)

const leadFields = fc.record(
  {
    nombre: fc.oneof(validNombre, oddString(), fc.string({ minLength: 195, maxLength: 205 }), oddJson),
    telefono: fc.oneof(phone, oddString(20), oddJson),
    email: fc.oneof(email, oddString(30), oddJson),
    mensaje: fc.oneof(oddString(200), fc.string({ minLength: 1995, maxLength: 2005 }), oddJson),
    propiedad,
    extras
  },
  { requiredKeys: [] }
)

/** Bodies shaped like a lead, each field sometimes right, sometimes odd, sometimes of the wrong type. */
export const leadLike = fc
  .tuple(
    leadFields,
    fc.option(
      fc.tuple(
        fc.oneof(fc.constantFrom("phone", "__proto__", "constructor", "toString"), oddString(10)),
        oddJson
      )
    )
  )
  .map(([fields, unknown]) => (unknown === null ? fields : { ...fields, [unknown[0]]: unknown[1] }))

/** Text that validation must accept in every free-text field, odd Unicode included (no lone surrogates, no NUL). */
export const acceptableText = (maxLength: number) =>
  fc
    .string({
      unit: fc.oneof(
        fc.constantFrom(...oddCharacters.filter((c) => c.isWellFormed())),
        fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
        fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 1 })
      ),
      minLength: 1,
      maxLength
    })
    .filter((text) => [...text].length <= maxLength && !text.includes("\u0000"))

/** Leads that satisfy the contract, with odd Unicode wherever free text is allowed. */
export const validLead = fc.record(
  {
    nombre: fc
      .tuple(acceptableText(40), fc.constantFrom("Ana", "李", "ع"))
      .map(([text, name]) => `${text}${name}`),
    telefono: fc.oneof(
      fc.constant(null),
      fc.integer({ min: 0, max: 99_999_999 }).map((n) => `+52 55 ${String(n).padStart(8, "0")}`)
    ),
    email: fc.oneof(fc.constant(null), fc.constantFrom("ana@example.com", "LUIS@Example.MX")),
    mensaje: fc.oneof(fc.constant(null), acceptableText(300)),
    propiedad: fc.oneof(
      fc.constant(null),
      fc.constant({ codigo: "ABC-1234" }),
      fc.constant({ external_code: "EXT-1" })
    ),
    extras: fc.oneof(
      fc.constant(null),
      fc.dictionary(
        acceptableText(20).filter((key) => key.trim() !== "" && [...key.trim()].length <= 60),
        fc.oneof(acceptableText(100), fc.integer(), fc.boolean(), fc.constant(null)),
        { maxKeys: 20 }
      )
    )
  },
  { requiredKeys: ["nombre"] }
)
