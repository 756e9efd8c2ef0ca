import * as fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { oddCharacters } from "./arbitraries.ts"
import {
  announceSeed,
  type FuzzTarget,
  fuzzParameters,
  fuzzSeed,
  leadPost,
  sendAndCheck,
  startTarget,
  utf8
} from "./support.ts"

const limit = 64_000

const nested = (kind: "array" | "object", depth: number) =>
  kind === "array"
    ? `${"[".repeat(depth)}${"]".repeat(depth)}`
    : `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`

/** Where a deep structure sits: the whole body, or the value of one field. */
const places = [
  "body",
  "nombre",
  "telefono",
  "mensaje",
  "propiedad",
  "propiedad.codigo",
  "extras",
  "extras.k",
  "unknown"
] as const

const placed = (place: (typeof places)[number], value: string) => {
  switch (place) {
    case "body":
      return value
    case "propiedad.codigo":
      return `{"nombre":"Ana","propiedad":{"codigo":${value}}}`
    case "extras.k":
      return `{"nombre":"Ana","extras":{"k":${value}}}`
    case "unknown":
      return `{"nombre":"Ana","zz":${value}}`
    default:
      return `{"nombre":"Ana","${place}":${value}}`
  }
}

describe(`fuzz: huge and deeply nested structures, odd Unicode (seed ${fuzzSeed})`, () => {
  let target: FuzzTarget
  beforeAll(async () => {
    announceSeed("structures")
    target = await startTarget()
  })
  afterAll(() => target.close())

  const send = (text: string, headers: ReadonlyArray<readonly [string, string]> = []) =>
    sendAndCheck(target, leadPost(target.fixture, utf8(text), headers))

  it("nesting up to 40,000 levels anywhere in the body: 400 (or 413 past the size limit), never a crash", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("array" as const, "object" as const),
        fc.oneof(fc.integer({ min: 1, max: 100 }), fc.integer({ min: 100, max: 40_000 })),
        fc.constantFrom(...places),
        fc.boolean(),
        async (kind, depth, place, dryRun) => {
          const text = placed(place, nested(kind, depth))
          const answer = await send(text, dryRun ? [["x-service-dry-run", "true"]] : [])
          // `{"a":1}` is a valid extras object; every other placement is refused.
          const valid = place === "extras" && kind === "object" && depth === 1
          const expected = Buffer.byteLength(text) > limit ? 413 : valid ? (dryRun ? 200 : 201) : 400
          expect(answer.status, answer.text).toBe(expected)
        }
      ),
      fuzzParameters(600)
    )
  })

  it("huge strings, many keys, long keys and absurd numbers in every field", async () => {
    const big = fc.oneof(
      fc.integer({ min: 100, max: 70_000 }).map((n) => JSON.stringify("x".repeat(n))),
      fc.integer({ min: 1, max: 20_000 }).map((n) => JSON.stringify("😀".repeat(n))),
      fc
        .integer({ min: 1, max: 6_000 })
        .map((n) => JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i])))),
      fc.integer({ min: 1, max: 20_000 }).map((n) => `[${Array.from({ length: n }, () => "0").join(",")}]`),
      fc.integer({ min: 1, max: 60_000 }).map((n) => "9".repeat(n)),
      fc.constantFrom(
        "1e999999",
        "-1e999999",
        "-0",
        "0.0000000000000000000000001",
        "123456789012345678901234567890"
      ),
      fc.integer({ min: 61, max: 5_000 }).map((n) => JSON.stringify({ ["k".repeat(n)]: "v" }))
    )
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...places), big, async (place, value) => {
        const text = placed(place, value)
        const answer = await send(text)
        if (Buffer.byteLength(text) > limit) expect(answer.status).toBe(413)
      }),
      fuzzParameters(600)
    )
  })

  it("a body of exactly 64,000 bytes is read, one more byte is a 413", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: -3, max: 3 }),
        fc.constantFrom("x", "ñ", "😀"),
        async (delta, unit) => {
          const head = '{"nombre":"Ana","mensaje":"'
          const tail = '"}'
          const room = limit + delta - Buffer.byteLength(head) - Buffer.byteLength(tail)
          const filler = unit.repeat(Math.floor(room / Buffer.byteLength(unit)))
          const text = `${head}${filler}${" ".repeat(room - Buffer.byteLength(filler))}${tail}`
          const answer = await send(text)
          expect(answer.status, answer.text).toBe(Buffer.byteLength(text) > limit ? 413 : 400)
        }
      ),
      fuzzParameters(100)
    )
  })

  it("odd Unicode (NUL, RTL overrides, BOM, combining marks, lone surrogates) in values and keys", async () => {
    const odd = fc.string({ unit: fc.constantFrom(...oddCharacters), minLength: 1, maxLength: 20 })
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          {
            nombre: fc.oneof(
              odd,
              odd.map((s) => `Ana${s}`)
            )
          },
          { requiredKeys: [] }
        ),
        fc.record(
          {
            telefono: odd,
            email: odd.map((s) => `a${s}@b.mx`),
            mensaje: odd,
            extras: fc.dictionary(odd, odd, { maxKeys: 3 })
          },
          { requiredKeys: [] }
        ),
        fc.option(fc.tuple(odd, odd)),
        fc.boolean(),
        async (name, rest, unknown, dryRun) => {
          const body: Record<string, unknown> = { ...name, ...rest }
          if (unknown !== null) body[unknown[0]] = unknown[1]
          await send(JSON.stringify(body), dryRun ? [["x-service-dry-run", "true"]] : [])
        }
      ),
      fuzzParameters(1_200)
    )
  })
})
