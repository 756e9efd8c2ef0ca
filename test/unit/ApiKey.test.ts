import { crc32 } from "node:zlib"
import { describe, expect, it } from "vitest"
import {
  apiKeyChecksum,
  generateApiKey,
  hashApiKey,
  hashesEqual,
  parseApiKey,
  visiblePrefixOf
} from "../../src/Domain/ApiKey.ts"

const KEY_SHAPE = /^lk_live_[0-9A-Za-z]{8}_[0-9A-Za-z]{38}$/

// Written independently of the implementation: BigInt arithmetic, alphabet built from character ranges.
const independentChecksum = (body: string): string => {
  const alphabet = [
    ...Array.from({ length: 10 }, (_, i) => String.fromCharCode(48 + i)),
    ...Array.from({ length: 26 }, (_, i) => String.fromCharCode(65 + i)),
    ...Array.from({ length: 26 }, (_, i) => String.fromCharCode(97 + i))
  ]
  let value = BigInt(crc32(body))
  const digits: Array<string> = []
  while (value > 0n) {
    digits.unshift(alphabet[Number(value % 62n)]!)
    value /= 62n
  }
  return digits.join("").padStart(6, "0")
}

const replaceAt = (text: string, index: number, character: string): string =>
  text.slice(0, index) + character + text.slice(index + 1)

describe("generateApiKey", () => {
  it("produces a 55-character key in the documented shape that parses back", () => {
    const generated = generateApiKey()
    expect(generated.key).toHaveLength(55)
    expect(generated.key).toMatch(KEY_SHAPE)
    expect(generated.publicId).toMatch(/^[0-9A-Za-z]{8}$/)
    expect(generated.prefix).toBe(`lk_live_${generated.publicId}`)
    expect(generated.prefix).toHaveLength(16)
    expect(generated.key.startsWith(`${generated.prefix}_`)).toBe(true)
    expect(parseApiKey(generated.key)).toEqual({
      publicId: generated.publicId,
      prefix: generated.prefix,
      mode: "live"
    })
  })

  it("makes a test key (docs/contract.md#10-test-mode): lk_test_, the same shape, the checksum covering lk_test_", () => {
    const generated = generateApiKey("test")
    expect(generated.key).toHaveLength(55)
    expect(generated.prefix).toBe(`lk_test_${generated.publicId}`)
    expect(generated.key).toMatch(/^lk_test_[0-9A-Za-z]{8}_[0-9A-Za-z]{32}[0-9A-Za-z]{6}$/)
    expect(generated.key.slice(-6)).toBe(apiKeyChecksum(generated.key.slice(0, -6)))
    expect(parseApiKey(generated.key)).toEqual({
      publicId: generated.publicId,
      prefix: generated.prefix,
      mode: "test"
    })
    // The checksum covers the mode: the same body under the other prefix does not parse.
    expect(parseApiKey(generated.key.replace("lk_test_", "lk_live_"))).toBeUndefined()
  })

  it("ends the key with the checksum of everything before it", () => {
    const { key } = generateApiKey()
    expect(key.slice(-6)).toBe(independentChecksum(key.slice(0, -6)))
  })

  it("stores the SHA-256 hex of the key, never the key", () => {
    const generated = generateApiKey()
    expect(generated.hash).toMatch(/^[0-9a-f]{64}$/)
    expect(generated.hash).not.toContain(generated.key)
    expect(generated.hash).toBe(hashApiKey(generated.key))
  })

  it("never repeats in 1000 keys and uses the whole alphabet", () => {
    const keys = Array.from({ length: 1000 }, () => generateApiKey().key)
    expect(new Set(keys).size).toBe(1000)
    expect(new Set(keys.map((key) => key.slice(8, 16))).size).toBe(1000)
    const secretCharacters = new Set(keys.flatMap((key) => [...key.slice(17, 49)]))
    expect(secretCharacters.size).toBe(62)
  })
})

describe("apiKeyChecksum", () => {
  it("matches an independent base62 encoding of zlib's CRC-32", () => {
    const body = "lk_live_Ab3dE6gH_0123456789ABCDEFGHIJKLMNOPQRSTUV"
    expect(apiKeyChecksum(body)).toBe(independentChecksum(body))
    expect(apiKeyChecksum(body)).toHaveLength(6)
  })

  it("left-pads small CRCs with zeros", () => {
    // CRC-32 of the empty input is 0.
    expect(apiKeyChecksum("")).toBe("000000")
  })

  it("matches the independent encoding across many bodies", () => {
    for (let i = 0; i < 200; i++) {
      const body = `lk_live_${i}_body-${i * 7919}`
      expect(apiKeyChecksum(body)).toBe(independentChecksum(body))
    }
  })
})

describe("parseApiKey", () => {
  it("rejects a key with any single character changed", () => {
    const { key, publicId, prefix } = generateApiKey()
    let acceptedAlterations = 0
    for (let index = 0; index < key.length; index++) {
      const original = key[index]!
      for (const replacement of ["0", "z", "_", "A", "-"]) {
        if (replacement === original) continue
        const parsed = parseApiKey(replaceAt(key, index, replacement))
        if (parsed !== undefined) {
          acceptedAlterations++
          expect(parsed).not.toEqual({ publicId, prefix })
        }
      }
    }
    expect(acceptedAlterations).toBe(0)
  })

  it("rejects truncated, extended and empty tokens", () => {
    const { key } = generateApiKey()
    expect(parseApiKey(key.slice(0, -1))).toBeUndefined()
    expect(parseApiKey(key.slice(0, 16))).toBeUndefined()
    expect(parseApiKey(`${key}0`)).toBeUndefined()
    expect(parseApiKey("")).toBeUndefined()
  })

  it("rejects a well-formed key with the wrong checksum", () => {
    const body = "lk_live_Ab3dE6gH_0123456789ABCDEFGHIJKLMNOPQRSTUV"
    const checksum = apiKeyChecksum(body)
    const wrongChecksum = checksum === "000000" ? "000001" : "000000"
    expect(parseApiKey(body + checksum)).toEqual({
      publicId: "Ab3dE6gH",
      prefix: "lk_live_Ab3dE6gH",
      mode: "live"
    })
    expect(parseApiKey(body + wrongChecksum)).toBeUndefined()
  })

  it("rejects another environment's prefix and non-base62 characters", () => {
    const body = "lk_prod_Ab3dE6gH_0123456789ABCDEFGHIJKLMNOPQRSTUV"
    expect(parseApiKey(body + apiKeyChecksum(body))).toBeUndefined()
    const withHyphen = "lk_live_Ab3dE6gH_0123456789ABCDEFGHIJKLMNOPQRST-V"
    expect(parseApiKey(withHyphen + apiKeyChecksum(withHyphen))).toBeUndefined()
  })
})

describe("visiblePrefixOf", () => {
  it("returns the 16-character prefix of a valid key", () => {
    const { key, prefix } = generateApiKey()
    expect(visiblePrefixOf(key)).toBe(prefix)
  })

  it("returns the prefix as sent even when the rest is malformed", () => {
    expect(visiblePrefixOf("lk_live_Ab3dE6gH")).toBe("lk_live_Ab3dE6gH")
    expect(visiblePrefixOf("lk_live_Ab3dE6gH_tooShort")).toBe("lk_live_Ab3dE6gH")
    expect(visiblePrefixOf("lk_live_Ab3dE6gHsecret")).toBe("lk_live_Ab3dE6gH")
    expect(visiblePrefixOf("lk_test_Ab3dE6gH_tooShort")).toBe("lk_test_Ab3dE6gH")
  })

  it("returns nothing when the prefix itself is not well formed", () => {
    expect(visiblePrefixOf("")).toBeUndefined()
    expect(visiblePrefixOf("lk_live_Ab3dE6g")).toBeUndefined()
    expect(visiblePrefixOf("lk_live_Ab3d-6gH_rest")).toBeUndefined()
    expect(visiblePrefixOf("lk_prod_Ab3dE6gH_rest")).toBeUndefined()
    expect(visiblePrefixOf("lk_test_Ab3dE6g")).toBeUndefined()
    expect(visiblePrefixOf("Bearer lk_live_Ab3dE6gH")).toBeUndefined()
  })
})

describe("hashApiKey and hashesEqual", () => {
  it("hashes to the SHA-256 hex digest", () => {
    expect(hashApiKey("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
  })

  it("compares hashes exactly", () => {
    const hash = hashApiKey("a")
    expect(hashesEqual(hash, hashApiKey("a"))).toBe(true)
    expect(hashesEqual(hash, hashApiKey("b"))).toBe(false)
    expect(hashesEqual(hash, hash.slice(0, -1))).toBe(false)
    expect(hashesEqual("zz", "yy")).toBe(false)
    expect(hashesEqual("", "")).toBe(true)
  })
})
