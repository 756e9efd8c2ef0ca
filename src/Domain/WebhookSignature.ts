import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"

/**
 * Standard Webhooks (v1) signing: `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, keyed
 * with the base64-decoded part of a `whsec_` secret, so receivers verify with existing libraries.
 */
export const secretPrefix = "whsec_"

export const generateSecret = (bytes: Uint8Array = randomBytes(32)): string =>
  `${secretPrefix}${Buffer.from(bytes).toString("base64")}`

const secretPattern = /^whsec_[A-Za-z0-9+/]+={0,2}$/

export const isSecret = (secret: string) => secretPattern.test(secret) && secretKey(secret).length >= 24

const secretKey = (secret: string) => Buffer.from(secret.slice(secretPrefix.length), "base64")

export interface Signed {
  readonly id: string
  /** Unix seconds of this attempt. */
  readonly timestamp: number
  readonly body: string
}

export const signature = (secret: string, message: Signed): string =>
  `v1,${createHmac("sha256", secretKey(secret))
    .update(`${message.id}.${message.timestamp}.${message.body}`)
    .digest("base64")}`

/** One signature per secret, space-separated, in the order given (during a rotation: old, then new). */
export const signatureHeader = (secrets: ReadonlyArray<string>, message: Signed): string =>
  secrets.map((secret) => signature(secret, message)).join(" ")

/** What a receiver does: any `v1` signature in the header that matches the secret. */
export const verify = (secret: string, message: Signed, header: string): boolean => {
  const expected = Buffer.from(signature(secret, message))
  return header.split(" ").some((candidate) => {
    const given = Buffer.from(candidate)
    return given.length === expected.length && timingSafeEqual(given, expected)
  })
}
