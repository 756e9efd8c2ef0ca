import { once } from "node:events"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { WebhookSender } from "../../src/Webhooks/Sender.ts"

let port: number
const seen: Array<{ path: string; host: string | undefined; body: string }> = []
const server = createServer((request: IncomingMessage, response: ServerResponse) => {
  let body = ""
  request.on("data", (chunk) => (body += chunk))
  request.on("end", () => {
    seen.push({ path: request.url ?? "", host: request.headers.host, body })
    if (request.url === "/ok") response.writeHead(204).end()
    else if (request.url === "/busy") response.writeHead(503, { "retry-after": "120" }).end()
    else if (request.url === "/moved")
      response.writeHead(301, { location: `http://127.0.0.1:${port}/ok` }).end()
    else if (request.url === "/close") request.socket.destroy()
    else if (request.url === "/hang") return
    else response.writeHead(404).end()
  })
})

let connections = 0
server.on("connection", () => {
  connections += 1
})

beforeAll(async () => {
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  port = (server.address() as AddressInfo).port
})
afterAll(() => {
  server.closeAllConnections()
  server.close()
})

const send = (url: string, options: { allowPrivate?: boolean; timeoutMillis?: number } = {}) =>
  Effect.runPromise(
    WebhookSender.use((sender) =>
      sender.send({
        url,
        compose: (write) => write({ headers: { "content-type": "application/json" }, body: '{"a":1}' }),
        timeoutMillis: options.timeoutMillis ?? 2_000,
        policy: { allowPrivate: options.allowPrivate ?? true }
      })
    ).pipe(Effect.provide(WebhookSender.layer))
  )

describe("the webhook sender", () => {
  it("returns the status of a 2xx and posts the body", async () => {
    expect(await send(`http://127.0.0.1:${port}/ok`)).toEqual({
      _tag: "Answered",
      status: 204,
      retryAfter: undefined
    })
    expect(seen.at(-1)).toEqual({ path: "/ok", host: `127.0.0.1:${port}`, body: '{"a":1}' })
  })

  it("reports Retry-After, and does not follow redirects", async () => {
    expect(await send(`http://127.0.0.1:${port}/busy`)).toEqual({
      _tag: "Answered",
      status: 503,
      retryAfter: "120"
    })
    const before = seen.length
    expect(await send(`http://127.0.0.1:${port}/moved`)).toEqual({
      _tag: "Answered",
      status: 301,
      retryAfter: undefined
    })
    expect(seen.length).toBe(before + 1)
  })

  it("gives up at the timeout and reports a closed connection", async () => {
    const started = Date.now()
    expect(await send(`http://127.0.0.1:${port}/hang`, { timeoutMillis: 300 })).toEqual({
      _tag: "NoAnswer",
      reason: "timeout",
      error: "no answer within 300 ms"
    })
    expect(Date.now() - started).toBeLessThan(2_000)
    expect(await send(`http://127.0.0.1:${port}/close`)).toMatchObject({
      _tag: "NoAnswer",
      reason: "connection"
    })
    expect(await send(`http://127.0.0.1:1/nothing`)).toEqual({
      _tag: "NoAnswer",
      reason: "connection",
      error: "ECONNREFUSED"
    })
  })

  it("composes the message once connected, and sends nothing when the attempt is abandoned", async () => {
    const before = seen.length
    const connectionsBefore = connections
    let connectedFirst = false
    const abandoned = await Effect.runPromise(
      WebhookSender.use((sender) =>
        sender.send({
          url: `http://127.0.0.1:${port}/ok`,
          timeoutMillis: 2_000,
          policy: { allowPrivate: true },
          compose: () =>
            Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50))).pipe(
              Effect.andThen(
                Effect.sync(() => {
                  connectedFirst = connections > connectionsBefore
                })
              )
            )
        })
      ).pipe(Effect.provide(WebhookSender.layer))
    )
    expect(abandoned).toEqual({ _tag: "Abandoned" })
    expect(connectedFirst).toBe(true)
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(seen.length).toBe(before)
  })

  it("connects to the address it checked, keeping the URL's name as Host", async () => {
    expect(await send(`http://localhost:${port}/ok`)).toMatchObject({ _tag: "Answered", status: 204 })
    expect(seen.at(-1)!.host).toBe(`localhost:${port}`)
  })

  it("refuses private targets before connecting unless WEBHOOK_ALLOW_PRIVATE", async () => {
    const before = seen.length
    for (const url of [
      `https://127.0.0.1:${port}/ok`,
      `https://localhost:${port}/ok`,
      `http://127.0.0.1:${port}/ok`
    ]) {
      expect(await send(url, { allowPrivate: false }), url).toMatchObject({
        _tag: "NoAnswer",
        reason: "blocked"
      })
    }
    expect(seen.length).toBe(before)
  })
})
