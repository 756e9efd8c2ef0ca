import * as http from "node:http"
import * as https from "node:https"
import type { LookupFunction } from "node:net"
import { Context, Duration, Effect, Layer } from "effect"
import type { UrlPolicy } from "../Domain/WebhookUrl.ts"
import { type VettedTarget, vetUrl } from "./Network.ts"

export interface Message {
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

export interface Delivery {
  readonly url: string
  readonly timeoutMillis: number
  readonly policy: UrlPolicy
  /**
   * Runs once the connection is open, so what is sent is decided at the last moment: it hands the
   * message to `write`, which completes once the bytes have left, or returns without calling it to
   * abandon the attempt (nothing is sent).
   */
  readonly compose: (write: (message: Message) => Effect.Effect<void>) => Effect.Effect<void>
}

export type SendResult =
  | { readonly _tag: "Answered"; readonly status: number; readonly retryAfter: string | undefined }
  | {
      readonly _tag: "NoAnswer"
      readonly reason: "timeout" | "connection" | "blocked"
      readonly error: string
    }
  | { readonly _tag: "Abandoned" }

/**
 * One POST. The URL is checked and its host resolved before every attempt, and the socket connects
 * to the address that passed the check (a custom `lookup`), with the URL's name as Host and TLS
 * server name: a name that re-resolves to a private address between check and connect cannot
 * redirect the request. The message is composed only once the connection is open (see `Delivery`).
 * Redirects are not followed; the status is the answer.
 */
export class WebhookSender extends Context.Service<
  WebhookSender,
  { send(delivery: Delivery): Effect.Effect<SendResult> }
>()("lead-intake/WebhookSender") {
  static readonly layer = Layer.succeed(WebhookSender, {
    send: (delivery) =>
      vetUrl(delivery.url, delivery.policy).pipe(
        Effect.matchEffect({
          onFailure: (refused) =>
            Effect.succeed<SendResult>({ _tag: "NoAnswer", reason: "blocked", error: refused.reason }),
          onSuccess: (target) => post(target, delivery)
        })
      )
  })
}

const post = (target: VettedTarget, delivery: Delivery) =>
  Effect.suspend(() => {
    const { url } = target
    const lookup: LookupFunction = (_hostname, options, callback) => {
      if (options.all) callback(null, [{ address: target.address, family: target.family }])
      else
        (callback as (error: null, address: string, family: number) => void)(
          null,
          target.address,
          target.family
        )
    }
    const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1")
    const secure = url.protocol === "https:"
    const options: https.RequestOptions = {
      method: "POST",
      protocol: url.protocol,
      hostname,
      port: url.port === "" ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      headers: { host: url.host },
      lookup,
      agent: false,
      ...(secure && hostname !== target.address ? { servername: hostname } : {})
    }
    // Nothing leaves before `end`: the headers wait for the body, so the message can still change.
    const request = (secure ? https : http).request(options)
    const answer = new Promise<SendResult>((resolve) => {
      request.on("response", (response) => {
        resolve({
          _tag: "Answered",
          status: response.statusCode ?? 0,
          retryAfter: response.headers["retry-after"]
        })
        response.destroy()
        request.destroy()
      })
      request.on("error", (error: NodeJS.ErrnoException) =>
        resolve({ _tag: "NoAnswer", reason: "connection", error: error.code ?? error.message })
      )
    })
    const connected = new Promise<undefined>((resolve) =>
      request.on("socket", (socket) => {
        if (secure) socket.once("secureConnect", () => resolve(undefined))
        else if (socket.connecting) socket.once("connect", () => resolve(undefined))
        else resolve(undefined)
      })
    )
    let written = false
    const write = (message: Message) =>
      Effect.promise(() => {
        for (const [name, value] of Object.entries(message.headers)) request.setHeader(name, value)
        request.setHeader("content-length", String(Buffer.byteLength(message.body)))
        written = true
        return Promise.race([new Promise<void>((resolve) => request.end(message.body, resolve)), answer])
      }).pipe(Effect.asVoid)
    return Effect.gen(function* () {
      const early = yield* Effect.promise(() => Promise.race([connected, answer]))
      if (early !== undefined) return early
      yield* delivery.compose(write)
      if (!written) return { _tag: "Abandoned" } satisfies SendResult
      return yield* Effect.promise(() => answer)
    }).pipe(
      Effect.timeoutOrElse({
        duration: Duration.millis(delivery.timeoutMillis),
        orElse: () =>
          Effect.succeed<SendResult>({
            _tag: "NoAnswer",
            reason: "timeout",
            error: `no answer within ${delivery.timeoutMillis} ms`
          })
      }),
      Effect.ensuring(Effect.sync(() => request.destroy()))
    )
  })
