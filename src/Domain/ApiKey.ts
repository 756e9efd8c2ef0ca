import { hash, randomBytes, timingSafeEqual } from "node:crypto"
import { crc32 } from "node:zlib"

const BASE62_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
/** A live key writes the organization's data; a test key writes test data beside it (docs/contract.md#10-test-mode). */
export type KeyMode = "live" | "test"

const keyPrefixes = { live: "lk_live_", test: "lk_test_" } as const
const PUBLIC_ID_LENGTH = 8
const SECRET_LENGTH = 32
const CHECKSUM_LENGTH = 6

const API_KEY_PATTERN = /^(lk_(live|test)_([0-9A-Za-z]{8}))_[0-9A-Za-z]{32}([0-9A-Za-z]{6})$/
const VISIBLE_PREFIX_PATTERN = /^lk_(?:live|test)_[0-9A-Za-z]{8}/

// Largest multiple of 62 that fits in a byte: bytes at or above it are discarded so every character is equally
// likely (a plain `byte % 62` would favour the first 8 characters).
const UNBIASED_BYTE_LIMIT = 62 * Math.floor(256 / 62)

const randomBase62 = (length: number): string => {
  let result = ""
  while (result.length < length) {
    for (const byte of randomBytes(length)) {
      if (byte < UNBIASED_BYTE_LIMIT && result.length < length) result += BASE62_ALPHABET[byte % 62]
    }
  }
  return result
}

const toBase62 = (value: number): string => {
  let remaining = value
  let digits = ""
  do {
    digits = BASE62_ALPHABET[remaining % 62] + digits
    remaining = Math.floor(remaining / 62)
  } while (remaining > 0)
  return digits
}

export const apiKeyChecksum = (body: string): string =>
  toBase62(crc32(Buffer.from(body, "utf8"))).padStart(CHECKSUM_LENGTH, "0")

export const hashApiKey = (key: string): string => hash("sha256", key, "hex")

export const generateApiKey = (
  mode: KeyMode = "live"
): { key: string; publicId: string; prefix: string; hash: string } => {
  const publicId = randomBase62(PUBLIC_ID_LENGTH)
  const prefix = keyPrefixes[mode] + publicId
  const body = `${prefix}_${randomBase62(SECRET_LENGTH)}`
  const key = body + apiKeyChecksum(body)
  return { key, publicId, prefix, hash: hashApiKey(key) }
}

export const parseApiKey = (
  token: string
): { publicId: string; prefix: string; mode: KeyMode } | undefined => {
  const match = API_KEY_PATTERN.exec(token)
  if (match === null) return undefined
  const [, prefix, mode, publicId, checksum] = match
  if (prefix === undefined || publicId === undefined || checksum === undefined) return undefined
  if (apiKeyChecksum(token.slice(0, -CHECKSUM_LENGTH)) !== checksum) return undefined
  return { publicId, prefix, mode: mode === "test" ? "test" : "live" }
}

/** Whether a key's visible prefix (`lk_live_…`, `lk_test_…`) names a live key; no prefix is live. */
export const isLivePrefix = (prefix: string | null): boolean => prefix?.startsWith(keyPrefixes.test) !== true

export const visiblePrefixOf = (token: string): string | undefined => VISIBLE_PREFIX_PATTERN.exec(token)?.[0]

// Compares the strings' bytes rather than decoding hex, so malformed hex can never decode to equal buffers.
export const hashesEqual = (a: string, b: string): boolean => {
  const aBytes = Buffer.from(a, "utf8")
  const bBytes = Buffer.from(b, "utf8")
  return aBytes.length === bBytes.length && timingSafeEqual(aBytes, bBytes)
}
