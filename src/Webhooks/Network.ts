import { lookup } from "node:dns/promises"
import { Effect, Schema } from "effect"
import { addressesRefusal, checkUrl, type UrlPolicy } from "../Domain/WebhookUrl.ts"

/** The URL or what its host resolves to is not allowed; `reason` is a sentence for an operator. */
export class UrlRefused extends Schema.TaggedError<UrlRefused>()("UrlRefused", {
  reason: Schema.String
}) {
  override get message() {
    return this.reason
  }
}

export interface VettedTarget {
  readonly url: URL
  /** The address that was checked: the connection goes there, never to a fresh resolution. */
  readonly address: string
  readonly family: 4 | 6
}

const resolveTimeoutMillis = 5_000

/**
 * Checks the URL's rules, resolves its host once and checks every address, returning the one to
 * connect to. Called when an endpoint is added and again before every attempt.
 */
export const vetUrl = (raw: string, policy: UrlPolicy): Effect.Effect<VettedTarget, UrlRefused> =>
  Effect.gen(function* () {
    const check = checkUrl(raw, policy)
    if (check._tag === "Refused") return yield* new UrlRefused({ reason: check.reason })
    if (check.literal !== undefined) {
      return { url: check.url, address: check.literal, family: check.literal.includes(":") ? 6 : 4 } as const
    }
    const host = check.url.hostname
    const addresses = yield* Effect.tryPromise({
      try: (signal) =>
        Promise.race([
          lookup(host, { all: true, verbatim: true }),
          new Promise<never>((_, reject) => {
            const timer = setTimeout(() => reject(new Error("timed out")), resolveTimeoutMillis)
            signal.addEventListener("abort", () => clearTimeout(timer))
          })
        ]),
      catch: (error) =>
        new UrlRefused({
          reason: `the host ${host} does not resolve (${(error as { code?: string }).code ?? (error as Error).message})`
        })
    })
    const refusal = addressesRefusal(
      addresses.map((a) => a.address),
      policy
    )
    if (refusal !== undefined) return yield* new UrlRefused({ reason: refusal })
    const first = addresses[0]!
    return { url: check.url, address: first.address, family: first.family === 6 ? 6 : 4 } as const
  })
