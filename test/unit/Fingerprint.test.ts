import { createHash } from "node:crypto"
import canonicalize from "canonicalize"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { canonicalJson, requestFingerprint } from "../../src/Domain/Fingerprint.ts"

const fingerprintOf = (jsonText: string): string => requestFingerprint(JSON.parse(jsonText))

describe("requestFingerprint", () => {
  it("is the SHA-256 hex of the RFC 8785 canonical form", () => {
    const canonical = '{"a":1,"b":[true,null,"x"]}'
    const expected = createHash("sha256").update(canonical).digest("hex")
    expect(fingerprintOf('{ "b": [true, null, "x"], "a": 1 }')).toBe(expected)
  })

  it("ignores key order and whitespace", () => {
    expect(fingerprintOf('{"name":"Ana","phone":"5512345678"}')).toBe(
      fingerprintOf('{\n  "phone" : "5512345678",\n  "name" : "Ana"\n}')
    )
  })

  it("ignores key order in nested objects", () => {
    expect(fingerprintOf('{"lead":{"a":1,"b":{"c":2,"d":3}},"z":0}')).toBe(
      fingerprintOf('{"z":0,"lead":{"b":{"d":3,"c":2},"a":1}}')
    )
  })

  it("distinguishes different values", () => {
    expect(fingerprintOf('{"name":"Ana"}')).not.toBe(fingerprintOf('{"name":"Ada"}'))
    expect(fingerprintOf('{"lead":{"a":1}}')).not.toBe(fingerprintOf('{"lead":{"a":2}}'))
    expect(fingerprintOf('{"a":null}')).not.toBe(fingerprintOf("{}"))
  })

  it("distinguishes a number from the same digits as a string", () => {
    expect(fingerprintOf('{"a":1}')).not.toBe(fingerprintOf('{"a":"1"}'))
  })

  it("treats numbers by value", () => {
    expect(fingerprintOf('{"a":1.0}')).toBe(fingerprintOf('{"a":1}'))
    expect(fingerprintOf('{"a":1e2}')).toBe(fingerprintOf('{"a":100}'))
  })

  it("keeps array order significant", () => {
    expect(fingerprintOf("[1,2,3]")).not.toBe(fingerprintOf("[3,2,1]"))
    expect(fingerprintOf('{"tags":["a","b"]}')).not.toBe(fingerprintOf('{"tags":["b","a"]}'))
  })

  it("refuses values that have no canonical JSON form", () => {
    expect(() => requestFingerprint(undefined)).toThrow()
    expect(() => fingerprintOf('{"a":"\\ud800"}')).toThrow()
  })

  it("writes what the canonicalize package (RFC 8785) writes, for any JSON value", () => {
    const outcome = (canonicalOf: (value: unknown) => string | undefined, value: unknown) => {
      try {
        return { text: canonicalOf(value) }
      } catch {
        return { refused: true }
      }
    }
    // Any UTF-16 code units in strings and keys, lone surrogates included: both must refuse those.
    const json = fc.jsonValue({ stringUnit: "binary", maxDepth: 4 })
    fc.assert(
      fc.property(json, (value) => {
        expect(outcome(canonicalJson, value)).toEqual(outcome(canonicalize, value))
      }),
      { numRuns: 2_000 }
    )
    // And bodies as they arrive: parsed from text, numbers in every notation.
    fc.assert(
      fc.property(json, (value) => {
        const parsed: unknown = JSON.parse(JSON.stringify(value) ?? "null")
        expect(outcome(canonicalJson, parsed)).toEqual(outcome(canonicalize, parsed))
      }),
      { numRuns: 500 }
    )
    for (const text of [
      '{"a":1e21,"b":-0,"c":0.1,"d":1e-7,"e":123456789012345680000}',
      '{"\u00e9":1,"e":2,"\ud83d\ude00":3,"\uffff":4}'
    ]) {
      expect(canonicalJson(JSON.parse(text))).toBe(canonicalize(JSON.parse(text)))
    }
  })
})
