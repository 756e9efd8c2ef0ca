import * as http from "node:http"
import * as https from "node:https"
import type { LookupFunction } from "node:net"
import { Context, Effect, Layer } from "effect"
import type { UrlPolicy } from "./Domain/WebhookUrl.ts"
import { type VettedTarget, vetUrl } from "./WebhookNetwork.ts"

export interface Delivery {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly timeoutMillis: number
  readonly policy: UrlPolicy
}

export type SendResult =
  | { readonly _tag: "Answered"; readonly status: number; readonly retryAfter: string | undefined }
  | {
      readonly _tag: "NoAnswer"
      readonly reason: "timeout" | "connection" | "blocked"
      readonly error: string
    }

/**
 * One POST. The URL is checked and its host resolved before every attempt, and the socket connects
 * to the address that passed the check (a custom `lookup`), with the URL's name as Host and TLS
 * server name: a name that re-resolves to a private address between check and connect cannot
 * redirect the request. Redirects are not followed; the status is the answer.
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
  Effect.callback<SendResult>((resume) => {
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
    const options: https.RequestOptions = {
      method: "POST",
      protocol: url.protocol,
      hostname,
      port: url.port === "" ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      headers: {
        ...delivery.headers,
        host: url.host,
        "content-length": String(Buffer.byteLength(delivery.body))
      },
      lookup,
      agent: false,
      ...(url.protocol === "https:" && hostname !== target.address ? { servername: hostname } : {})
    }
    let settled = false
    const settle = (result: SendResult) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resume(Effect.succeed(result))
    }
    const request = (url.protocol === "https:" ? https : http).request(options, (response) => {
      const retryAfter = response.headers["retry-after"]
      settle({ _tag: "Answered", status: response.statusCode ?? 0, retryAfter })
      response.destroy()
      request.destroy()
    })
    const timer = setTimeout(() => {
      settle({
        _tag: "NoAnswer",
        reason: "timeout",
        error: `no answer within ${delivery.timeoutMillis} ms`
      })
      request.destroy()
    }, delivery.timeoutMillis)
    request.on("error", (error: NodeJS.ErrnoException) =>
      settle({ _tag: "NoAnswer", reason: "connection", error: error.code ?? error.message })
    )
    request.end(delivery.body)
    return Effect.sync(() => {
      clearTimeout(timer)
      request.destroy()
    })
  })
