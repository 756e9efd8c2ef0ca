import { createServer } from "node:http"
import { connect } from "node:net"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Exit, Layer, References, Scope } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import * as fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { layerApp } from "../../src/Intake/Http/App.ts"
import { layerServicesMemory } from "../../src/Intake/Services.ts"
import { type Fixture, seed } from "../support/Client.ts"
import { layerTestConfig } from "../support/Database.ts"
import { validLead } from "./arbitraries.ts"
import { announceSeed, fuzzParameters, fuzzSeed } from "./support.ts"

interface RawAnswer {
  readonly status: number | null
  readonly head: string
  readonly body: string
}

/** Writes raw bytes to the server and reads until it closes or answers, with a deadline (a hang fails). */
const rawExchange = (port: number, bytes: Buffer, deadlineMillis = 4_000) =>
  new Promise<RawAnswer>((resolve, reject) => {
    const socket = connect(port, "127.0.0.1")
    const chunks: Array<Buffer> = []
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`no answer and no close within ${deadlineMillis} ms (a hang)`))
    }, deadlineMillis)
    const finish = () => {
      clearTimeout(timer)
      const text = Buffer.concat(chunks).toString("latin1")
      const split = text.indexOf("\r\n\r\n")
      const head = split === -1 ? text : text.slice(0, split)
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(head)
      resolve({
        status: match === null ? null : Number(match[1]),
        head,
        body: split === -1 ? "" : text.slice(split + 4)
      })
    }
    socket.on("data", (chunk) => {
      chunks.push(chunk)
      const text = Buffer.concat(chunks).toString("latin1")
      const split = text.indexOf("\r\n\r\n")
      if (split === -1) return
      const length = /\r\ncontent-length: (\d+)/i.exec(text.slice(0, split))
      if (length !== null && Buffer.byteLength(text.slice(split + 4), "latin1") >= Number(length[1])) {
        socket.destroy()
        finish()
      }
    })
    socket.on("close", finish)
    socket.on("error", () => {})
    socket.end(bytes)
  })

const headerBytes = fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes))
const safeHeaderValue = fc
  .array(
    fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff }), fc.constant(9)),
    {
      maxLength: 60
    }
  )
  .map((codes) => Buffer.from(codes).toString("latin1").trim())

describe(`fuzz: raw HTTP on a real socket (seed ${fuzzSeed})`, () => {
  let port = 0
  let fixture: Fixture
  let scope: Scope.Closeable
  beforeAll(async () => {
    announceSeed("socket")
    scope = Effect.runSync(Scope.make())
    const built = await Effect.runPromise(
      Scope.provide(scope)(
        Effect.gen(function* () {
          const services = yield* Layer.build(layerServicesMemory)
          const context = yield* Layer.build(
            HttpRouter.serve(layerApp, { disableLogger: true }).pipe(
              Layer.provideMerge(
                NodeHttpServer.layer(() => createServer({ requestTimeout: 3_000 }), { port: 0 })
              ),
              Layer.provide(Layer.succeedContext(services)),
              Layer.provide(layerTestConfig),
              Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn"))
            )
          )
          const server = yield* HttpServer.HttpServer.pipe(Effect.provide(Layer.succeedContext(context)))
          const fixture = yield* seed({ rateLimit: 2_000_000_000 }).pipe(
            Effect.provide(Layer.succeedContext(services))
          )
          return { port: "port" in server.address ? server.address.port : 0, fixture }
        })
      )
    )
    port = built.port
    fixture = built.fixture
  })
  afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

  const healthy = async () => {
    const answer = await rawExchange(
      port,
      Buffer.from("GET /v1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    )
    expect(answer.status).toBe(200)
  }

  it("well-formed HTTP with arbitrary header values and framing: never 5xx, always the envelope", async () => {
    const request = fc.record({
      method: fc.constantFrom("POST", "GET", "PUT", "DELETE", "OPTIONS", "PATCH"),
      path: fc.constantFrom("/v1/leads", "/v1", "/v1/openapi.json", "/nope", "/v1/leads?x=%00"),
      authorization: fc.oneof(fc.constant("key"), safeHeaderValue),
      contentType: fc.oneof(fc.constant("application/json"), safeHeaderValue),
      extra: fc.array(fc.tuple(fc.stringMatching(/^[a-z-]{1,12}$/), safeHeaderValue), { maxLength: 4 }),
      body: fc.oneof(
        validLead.map((lead) => Buffer.from(JSON.stringify(lead))),
        fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b))
      ),
      chunked: fc.boolean()
    })
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const lines = [`${r.method} ${r.path} HTTP/1.1`, "Host: api.test", "Connection: close"]
        lines.push(`Authorization: ${r.authorization === "key" ? `Bearer ${fixture.key}` : r.authorization}`)
        lines.push(`Content-Type: ${r.contentType}`)
        for (const [name, value] of r.extra) {
          if (!["content-length", "transfer-encoding", "host", "connection"].includes(name))
            lines.push(`${name}: ${value}`)
        }
        const framed = !r.chunked
          ? r.body
          : r.body.length === 0
            ? Buffer.from("0\r\n\r\n")
            : Buffer.concat([
                Buffer.from(`${r.body.length.toString(16)}\r\n`),
                r.body,
                Buffer.from("\r\n0\r\n\r\n")
              ])
        lines.push(r.chunked ? "Transfer-Encoding: chunked" : `Content-Length: ${r.body.length}`)
        const answer = await rawExchange(
          port,
          Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1"), framed])
        )
        expect(answer.status, answer.head).not.toBeNull()
        const status = answer.status!
        expect(status >= 500, `${answer.head}\n${answer.body}`).toBe(false)
        expect(answer.head.toLowerCase()).toContain("x-request-id:")
        if (status >= 400) {
          const body = JSON.parse(answer.body)
          expect(Object.keys(body).sort()).toEqual(["error", "request_id"])
        }
      }),
      fuzzParameters(400)
    )
    await healthy()
  }, 60_000)

  it("malformed HTTP (bad bytes in names and values, broken framing, lies about length) never gets a 5xx or a hang", async () => {
    const request = fc.record({
      head: fc.oneof(
        fc.constant("POST /v1/leads HTTP/1.1"),
        fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b).toString("latin1"))
      ),
      headers: fc.array(fc.tuple(headerBytes, headerBytes), { maxLength: 5 }),
      contentLength: fc.option(
        fc.oneof(fc.nat({ max: 500 }), fc.constantFrom("-1", "abc", "1, 2", "99999999999999999999")),
        {
          freq: 3
        }
      ),
      doubleLength: fc.boolean(),
      chunked: fc.option(
        fc.constantFrom(
          "5\r\nhello\r\n0\r\n\r\n",
          "zz\r\n",
          "5\r\nhi\r\n",
          "0\r\n\r\n",
          "ffffffffffffffff\r\n"
        ),
        {
          freq: 3
        }
      ),
      body: fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b))
    })
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const parts: Array<Buffer> = [
          Buffer.from(`${r.head}\r\nHost: api.test\r\nConnection: close\r\n`, "latin1")
        ]
        parts.push(Buffer.from(`Authorization: Bearer ${fixture.key}\r\nContent-Type: application/json\r\n`))
        for (const [name, value] of r.headers)
          parts.push(Buffer.concat([name, Buffer.from(": "), value, Buffer.from("\r\n")]))
        if (r.contentLength !== null) {
          parts.push(Buffer.from(`Content-Length: ${r.contentLength}\r\n`))
          if (r.doubleLength) parts.push(Buffer.from(`Content-Length: ${r.body.length}\r\n`))
        }
        if (r.chunked !== null) parts.push(Buffer.from("Transfer-Encoding: chunked\r\n"))
        parts.push(Buffer.from("\r\n"), r.chunked === null ? r.body : Buffer.from(r.chunked))
        const answer = await rawExchange(port, Buffer.concat(parts))
        if (answer.status !== null) expect(answer.status < 500, `${answer.head}\n${answer.body}`).toBe(true)
      }),
      fuzzParameters(400)
    )
    await healthy()
  }, 60_000)
})
