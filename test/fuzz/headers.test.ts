import * as fc from "fast-check"
import { afterAll, beforeAll, describe, it } from "vitest"
import { generateApiKey } from "../../src/Domain/ApiKey.ts"
import { leadLike, validLead } from "./arbitraries.ts"
import {
  announceSeed,
  expressible,
  type FuzzTarget,
  fuzzParameters,
  fuzzSeed,
  type Outgoing,
  sendAndCheck,
  startTarget,
  utf8
} from "./support.ts"

/** What a header can carry on the wire: tab, visible ASCII, space and the obs-text bytes 0x80-0xFF. */
const headerValue = fc.string({
  unit: fc
    .oneof(
      { weight: 6, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
      { weight: 1, arbitrary: fc.integer({ min: 0x80, max: 0xff }) },
      { weight: 1, arbitrary: fc.constant(0x09) }
    )
    .map((code) => String.fromCharCode(code)),
  maxLength: 80
})

const token = fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,20}$/)

const mutateKey = (key: string, at: number, replacement: string) =>
  `${key.slice(0, at % key.length)}${replacement}${key.slice((at % key.length) + 1)}`

describe(`fuzz: methods, paths and header values (seed ${fuzzSeed})`, () => {
  let target: FuzzTarget
  beforeAll(async () => {
    announceSeed("headers")
    target = await startTarget()
  })
  afterAll(() => target.close())

  const authorization = () =>
    fc.oneof(
      fc.constant(`Bearer ${target.fixture.key}`),
      fc.constant(`bearer ${target.fixture.key}`),
      fc.constant(`Bearer  ${target.fixture.key}`),
      fc.constant(`Bearer ${generateApiKey().key}`),
      fc
        .tuple(fc.nat(), fc.constantFrom("A", "z", "0", "_", " ", "é"))
        .map(([at, c]) => `Bearer ${mutateKey(target.fixture.key, at, c)}`),
      fc.constant(`Bearer ${target.fixture.key.slice(0, 20)}`),
      fc.constant(`Bearer ${target.fixture.key}x`),
      fc.constant(`Basic ${Buffer.from("a:b").toString("base64")}`),
      headerValue.map((value) => `Bearer ${value}`),
      headerValue
    )

  const contentType = fc.oneof(
    fc.constantFrom(
      "application/json",
      "application/json; charset=utf-8",
      "APPLICATION/JSON",
      "application/json;charset=latin1",
      "application/json;;",
      "application/jsonx",
      "application/problem+json",
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      ""
    ),
    headerValue
  )

  const path = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom("/v1/leads", "/v1", "/v1/openapi.json", "/v1/docs") },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        "/v1/",
        "/V1/LEADS",
        "//v1/leads",
        "/v1/leads/",
        "/v1/leads/x",
        "/v1%2Fleads",
        "/v1/./leads",
        "/v1/leads/../leads",
        "/",
        "/v2/leads",
        "/v1/leads%00",
        "/v1/leads;x",
        "/v1/openapi.json/"
      )
    },
    { weight: 1, arbitrary: fc.webPath() },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom("/v1/leads", "/v1"), fc.webQueryParameters())
        .map(([p, query]) => `${p}?${query}`)
    }
  )

  const method = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom("POST", "GET", "HEAD", "PUT", "PATCH", "DELETE", "OPTIONS") },
    { weight: 1, arbitrary: token.map((t) => t.toUpperCase()) }
  )

  const optional = <A>(arbitrary: fc.Arbitrary<A>) => fc.option(arbitrary, { freq: 4 })

  it("any method, path and header values answer 2xx or 4xx with the envelope and a valid field", async () => {
    const request = fc
      .record({
        method,
        path,
        authorization: optional(authorization()),
        contentType: optional(contentType),
        idempotencyKey: optional(fc.oneof(headerValue, fc.stringMatching(/^[\x20-\x7e]{1,200}$/))),
        dryRun: optional(fc.oneof(fc.constantFrom("true", "TRUE", "false", "1", " true"), headerValue)),
        extra: fc.array(
          fc.tuple(
            fc.oneof(
              fc.constantFrom(
                "x-request-id",
                "traceparent",
                "tracestate",
                "origin",
                "accept",
                "accept-encoding",
                "content-encoding",
                "transfer-encoding",
                "expect",
                "x-forwarded-for",
                "cookie",
                "x-http-method-override"
              ),
              token
            ),
            headerValue
          ),
          { maxLength: 5 }
        ),
        body: fc.oneof(
          validLead.map((lead) => utf8(JSON.stringify(lead))),
          leadLike.map((lead) => utf8(JSON.stringify(lead))),
          fc.uint8Array({ maxLength: 200 }),
          fc.constant(undefined)
        )
      })
      .map((r): Outgoing => {
        const headers: Array<readonly [string, string]> = []
        if (r.authorization !== null) headers.push(["authorization", r.authorization])
        if (r.contentType !== null) headers.push(["content-type", r.contentType])
        if (r.idempotencyKey !== null) headers.push(["idempotency-key", r.idempotencyKey])
        if (r.dryRun !== null) headers.push(["x-service-dry-run", r.dryRun])
        headers.push(...r.extra)
        // Over HTTP a request without a body reads as an empty one (a Web Request's null body is
        // another matter: see the socket suite for bodiless requests on the wire).
        const canHaveBody = r.method !== "GET" && r.method !== "HEAD"
        return {
          method: r.method,
          path: r.path,
          headers,
          body: canHaveBody ? (r.body ?? new Uint8Array(0)) : undefined
        }
      })
      .filter(expressible)
    await fc.assert(
      fc.asyncProperty(request, async (outgoing) => {
        await sendAndCheck(target, outgoing)
      }),
      fuzzParameters(2_500)
    )
  })
})
