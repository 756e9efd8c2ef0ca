import * as fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { validLead } from "./arbitraries.ts"
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

const decoder = new TextDecoder("utf-8", { fatal: true })

/** Whether the service can read these bytes as a JSON object at all; if not, the answer must be 400 `body`. */
const isJsonObject = (bytes: Uint8Array) => {
  try {
    const value: unknown = JSON.parse(decoder.decode(bytes))
    return typeof value === "object" && value !== null && !Array.isArray(value)
  } catch {
    return false
  }
}

/** Byte sequences that are not UTF-8: overlong NUL, an encoded surrogate, past U+10FFFF, stray bytes. */
const invalidUtf8 = fc.constantFrom(
  [0xc0, 0x80],
  [0xed, 0xa0, 0x80],
  [0xed, 0xbf, 0xbf],
  [0xf4, 0x90, 0x80, 0x80],
  [0x80],
  [0xbf],
  [0xfe],
  [0xff],
  [0xe2, 0x82],
  [0xf0, 0x9f, 0x98]
)

type Mutation =
  | { readonly kind: "flip"; readonly at: number; readonly byte: number }
  | { readonly kind: "insert"; readonly at: number; readonly bytes: ReadonlyArray<number> }
  | { readonly kind: "delete"; readonly at: number; readonly length: number }
  | { readonly kind: "truncate"; readonly at: number }
  | { readonly kind: "bom" }

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("flip" as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
  fc.record({
    kind: fc.constant("insert" as const),
    at: fc.nat(),
    bytes: fc.oneof(invalidUtf8, fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 4 }))
  }),
  fc.record({ kind: fc.constant("delete" as const), at: fc.nat(), length: fc.integer({ min: 1, max: 8 }) }),
  fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }),
  fc.constant({ kind: "bom" as const })
)

const mutate = (source: Uint8Array, mutations: ReadonlyArray<Mutation>) => {
  let bytes = [...source]
  for (const m of mutations) {
    const at = bytes.length === 0 ? 0 : ("at" in m ? m.at : 0) % (bytes.length + 1)
    switch (m.kind) {
      case "flip":
        if (at < bytes.length) bytes[at] = m.byte
        break
      case "insert":
        bytes.splice(at, 0, ...m.bytes)
        break
      case "delete":
        bytes.splice(at, m.length)
        break
      case "truncate":
        bytes = bytes.slice(0, at)
        break
      case "bom":
        bytes = [0xef, 0xbb, 0xbf, ...bytes]
        break
    }
  }
  return Uint8Array.from(bytes)
}

describe(`fuzz: raw bytes (seed ${fuzzSeed})`, () => {
  let target: FuzzTarget
  beforeAll(async () => {
    announceSeed("bytes")
    target = await startTarget()
  })
  afterAll(() => target.close())

  const expectBodyError = async (
    bytes: Uint8Array,
    headers: ReadonlyArray<readonly [string, string]> = []
  ) => {
    const answer = await sendAndCheck(target, leadPost(target.fixture, bytes, headers))
    if (!isJsonObject(bytes)) {
      expect(answer.status, answer.text).toBe(400)
      expect(JSON.parse(answer.text).error.field).toBe("body")
    }
  }

  it("arbitrary bytes are a 400 on body unless they happen to be a JSON object", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 3_000 }), (bytes) => expectBodyError(bytes)),
      fuzzParameters(1_000)
    )
  })

  it("valid bodies with flipped, inserted, deleted or truncated bytes", async () => {
    await fc.assert(
      fc.asyncProperty(
        validLead,
        fc.array(mutation, { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        (lead, mutations, dryRun) =>
          expectBodyError(
            mutate(utf8(JSON.stringify(lead)), mutations),
            dryRun ? [["x-service-dry-run", "true"]] : []
          )
      ),
      fuzzParameters(1_000)
    )
  })

  it("text that is JSON but not UTF-8 (Latin-1, UTF-16, lone surrogates written as bytes) is a 400 on body", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("latin1", "utf16le", "wtf8"),
        fc.string({
          unit: fc.constantFrom("ñ", "é", "ü", "\ud800", "\udfff", "a"),
          minLength: 1,
          maxLength: 10
        }),
        async (encoding, text) => {
          const json = `{"nombre":"${text}"}`
          const bytes =
            encoding === "wtf8"
              ? Uint8Array.from(
                  [...json].flatMap((c) => {
                    const unit = c.charCodeAt(0)
                    return unit >= 0xd800 && unit <= 0xdfff
                      ? [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]
                      : [...utf8(c)]
                  })
                )
              : Uint8Array.from(Buffer.from(json, encoding as BufferEncoding))
          await expectBodyError(bytes)
        }
      ),
      fuzzParameters(500)
    )
  })
})
