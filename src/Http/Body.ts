import { Effect, Stream } from "effect"
import type { HttpServerRequest } from "effect/http"
import { Limits } from "../Api/LeadRequest.ts"
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

const decodeUtf8 = (bytes: Uint8Array) =>
  Effect.try({
    try: () => utf8.decode(bytes),
    catch: () => undefined
  }).pipe(Effect.catch(() => fail("validation_error", "The body is not valid UTF-8", "body")))

const parseJson = (text: string) =>
  Effect.try({
    try: (): unknown => JSON.parse(text),
    catch: () => undefined
  }).pipe(Effect.catch(() => fail("validation_error", "The body is not valid JSON", "body")))

/** The body as JSON: UTF-8, well-formed JSON, no unpaired surrogate escapes (contract order 7). */
export const readJson = Effect.fnUntraced(function* (bytes: Uint8Array) {
  const parsed = yield* parseJson(yield* decodeUtf8(bytes))
  if (hasLoneSurrogate(parsed)) {
    return yield* fail("validation_error", "The body contains an unpaired UTF-16 surrogate escape", "body")
  }
  return parsed
})
