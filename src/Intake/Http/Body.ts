import { Effect, Stream } from "effect"
import type { HttpServerRequest } from "effect/http"
import { Limits } from "../../Api/LeadRequest.ts"
import { fail } from "./RequestContext.ts"

export const isJsonMediaType = (contentType: string | undefined) =>
  contentType?.split(";")[0]?.trim().toLowerCase() === "application/json"

export const tooLarge = () => fail("payload_too_large", `The body is over ${Limits.bodyBytes} bytes`)

/** The body, read until it ends or passes the limit (then 413 without reading the rest). */
export const readBody = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function* () {
    const chunks: Array<Uint8Array> = []
    let total = 0
    let over = false
    yield* request.stream.pipe(
      Stream.runForEachWhile((chunk) =>
        Effect.sync(() => {
          total += chunk.length
          over = total > Limits.bodyBytes
          if (!over) chunks.push(chunk)
          return !over
        })
      ),
      Effect.orDie
    )
    if (over) return yield* tooLarge()
    return Buffer.concat(chunks, total)
  })

const utf8 = new TextDecoder("utf-8", { fatal: true })

const hasLoneSurrogate = (value: unknown): boolean => {
  const pending: Array<unknown> = [value]
  while (pending.length > 0) {
    const next = pending.pop()
    if (typeof next === "string") {
      if (!next.isWellFormed()) return true
    } else if (typeof next === "object" && next !== null) {
      for (const [key, item] of Object.entries(next)) {
        if (!key.isWellFormed()) return true
        pending.push(item)
      }
    }
  }
  return false
}

export type ParsedBody =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly message: string }

/** The body as JSON: UTF-8, well-formed JSON, no unpaired surrogate escapes (contract order 7). */
export const parseBody = (bytes: Uint8Array): ParsedBody => {
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    return { ok: false, message: "The body is not valid UTF-8" }
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return { ok: false, message: "The body is not valid JSON" }
  }
  return hasLoneSurrogate(value)
    ? { ok: false, message: "The body contains an unpaired UTF-16 surrogate escape" }
    : { ok: true, value }
}

export const readJson = (bytes: Uint8Array) => {
  const parsed = parseBody(bytes)
  return parsed.ok ? Effect.succeed(parsed.value) : fail("validation_error", parsed.message, "body")
}
