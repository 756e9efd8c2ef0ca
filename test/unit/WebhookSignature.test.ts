import { createHmac } from "node:crypto"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import {
  generateSecret,
  isSecret,
  signature,
  signatureHeader,
  verify
} from "../../src/Domain/WebhookSignature.ts"

// The example from the Standard Webhooks specification (standardwebhooks.com, v1).
const specSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
const specMessage = {
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: 1614265330,
  body: '{"test": 2432232314}'
}

describe("webhook signatures", () => {
  it("matches the Standard Webhooks reference signature", () => {
    expect(signature(specSecret, specMessage)).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
  })

  it("is an HMAC-SHA256 over id.timestamp.body keyed with the decoded secret", () => {
    const secret = generateSecret()
    const key = Buffer.from(secret.slice("whsec_".length), "base64")
    const expected = createHmac("sha256", key).update("evt-1.1700000000.{}").digest("base64")
    expect(signature(secret, { id: "evt-1", timestamp: 1700000000, body: "{}" })).toBe(`v1,${expected}`)
  })

  it("generates whsec_ secrets of 32 random bytes, never the same twice", () => {
    const secrets = Array.from({ length: 50 }, () => generateSecret())
    expect(new Set(secrets).size).toBe(50)
    for (const secret of secrets) {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
      expect(Buffer.from(secret.slice(6), "base64")).toHaveLength(32)
      expect(isSecret(secret)).toBe(true)
    }
    expect(isSecret("whsec_")).toBe(false)
    expect(isSecret("sk_abc")).toBe(false)
  })

  it("signs with both secrets during a rotation, old then new, and either verifies", () => {
    const old = generateSecret()
    const current = generateSecret()
    const header = signatureHeader([old, current], specMessage)
    const [first, second] = header.split(" ")
    expect(first).toBe(signature(old, specMessage))
    expect(second).toBe(signature(current, specMessage))
    expect(verify(old, specMessage, header)).toBe(true)
    expect(verify(current, specMessage, header)).toBe(true)
    expect(verify(generateSecret(), specMessage, header)).toBe(false)
  })

  it("fails verification when the body, id or timestamp changes", () => {
    const secret = generateSecret()
    const header = signatureHeader([secret], specMessage)
    expect(verify(secret, { ...specMessage, body: '{"test": 2432232315}' }, header)).toBe(false)
    expect(verify(secret, { ...specMessage, id: "msg_other" }, header)).toBe(false)
    expect(verify(secret, { ...specMessage, timestamp: specMessage.timestamp + 1 }, header)).toBe(false)
  })
})

describe("the verification snippet in docs/webhooks.md", () => {
  it("accepts our signatures (both during a rotation) and refuses tampering and stale timestamps", async () => {
    const docs = await readFile(path.join(import.meta.dirname, "../../docs/webhooks.md"), "utf8")
    const snippet = /```js\n([\s\S]*?)```/.exec(docs)![1]!
    const directory = await mkdtemp(path.join(tmpdir(), "webhook-snippet-"))
    const file = path.join(directory, "verify.mjs")
    await writeFile(file, snippet)
    const { verifyWebhook } = (await import(file)) as {
      verifyWebhook: (secret: string, headers: Record<string, string>, body: string) => boolean
    }
    const old = generateSecret()
    const current = generateSecret()
    const message = { id: "evt", timestamp: Math.floor(Date.now() / 1000), body: '{"type":"lead.created"}' }
    const headers = (signature: string, timestamp = message.timestamp) => ({
      "webhook-id": message.id,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": signature
    })
    const both = signatureHeader([old, current], message)
    expect(verifyWebhook(old, headers(both), message.body)).toBe(true)
    expect(verifyWebhook(current, headers(both), message.body)).toBe(true)
    expect(verifyWebhook(generateSecret(), headers(both), message.body)).toBe(false)
    expect(verifyWebhook(current, headers(both), `${message.body} `)).toBe(false)
    const stale = message.timestamp - 600
    expect(
      verifyWebhook(
        current,
        headers(signatureHeader([current], { ...message, timestamp: stale }), stale),
        message.body
      )
    ).toBe(false)
    await rm(directory, { recursive: true, force: true })
  })
})
