import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { errorCodes } from "../../src/Api/Api.ts"
import { LeadRepository } from "../../src/Intake/LeadRepository.ts"
import { layerMemoryServices } from "../support/Client.ts"
import { assertError, assertRequestId, Contract, post, type Sent, send } from "./harness.ts"

const get = (path: string, headers?: Record<string, string>) =>
  send({ method: "GET", path, ...(headers === undefined ? {} : { headers }) })

const corsHeaders = (response: Sent) =>
  [...response.headers.keys()].filter((name) => name.toLowerCase().startsWith("access-control-"))

layer(Contract.layer(layerMemoryServices))("routing (memory)", (it) => {
  it.effect("GET /v1 answers the index with absolute URLs from the public base URL", () =>
    Effect.gen(function* () {
      const response = yield* get("/v1")
      assert.strictEqual(response.status, 200)
      assert.strictEqual(response.headers.get("content-type")?.split(";")[0], "application/json")
      assertRequestId(response)
      assert.deepStrictEqual(Object.keys(response.body).sort(), [
        "docs",
        "endpoints",
        "name",
        "openapi",
        "request_id",
        "version"
      ])
      assert.isString(response.body.name)
      assert.isNotEmpty(response.body.name)
      assert.strictEqual(response.body.version, "1")
      assert.strictEqual(response.body.openapi, "http://api.test/v1/openapi.json")
      assert.strictEqual(response.body.docs, "http://api.test/v1/docs")
      const endpoints: ReadonlyArray<string> = response.body.endpoints
      for (const endpoint of ["GET /v1", "GET /v1/openapi.json", "POST /v1/leads"]) {
        assert.include(endpoints, endpoint)
      }
      for (const endpoint of endpoints) assert.match(endpoint, /^(GET|POST|PUT|PATCH|DELETE) \/v1(\/\S*)?$/)
      assert.strictEqual(new Set(endpoints).size, endpoints.length)
    })
  )

  it.effect("every GET endpoint the index lists is served", () =>
    Effect.gen(function* () {
      const index = yield* get("/v1")
      const paths = (index.body.endpoints as ReadonlyArray<string>)
        .filter((endpoint) => endpoint.startsWith("GET "))
        .map((endpoint) => endpoint.slice(4))
      assert.isAtLeast(paths.length, 2)
      for (const path of paths) {
        const response = yield* get(path)
        assert.strictEqual(response.status, 200, path)
        assert.isString(response.headers.get("x-request-id"))
      }
    })
  )

  it.effect("GET /v1/openapi.json is a JSON object cacheable for 5 minutes", () =>
    Effect.gen(function* () {
      const response = yield* get("/v1/openapi.json")
      assert.strictEqual(response.status, 200)
      assert.strictEqual(response.headers.get("content-type")?.split(";")[0], "application/json")
      const cacheControl = (response.headers.get("cache-control") ?? "")
        .split(",")
        .map((directive) => directive.trim().toLowerCase())
      assert.include(cacheControl, "public")
      assert.include(cacheControl, "max-age=300")
      assert.isObject(response.body)
      assert.match(response.body.openapi, /^3\.1\.\d+$/)
      assert.isString(response.headers.get("x-request-id"))
    })
  )

  it.effect("GET /v1/docs is the renderer's shell: its scripts from this server only, under a CSP", () =>
    Effect.gen(function* () {
      const response = yield* get("/v1/docs")
      assert.strictEqual(response.status, 200)
      assert.strictEqual(response.headers.get("content-type")?.split(";")[0], "text/html")
      assert.isString(response.headers.get("x-request-id"))
      const policy = response.headers.get("content-security-policy") ?? ""
      assert.include(policy, "default-src 'none'")
      assert.include(policy, "script-src 'self';")
      assert.notMatch(policy, /https?:|unsafe-eval/)
      const html = response.text
      const scripts = [...html.matchAll(/<script[^>]*\ssrc="([^"]+)"/g)].map((match) => match[1]!)
      assert.deepStrictEqual(scripts, ["/v1/docs?asset=anchors.js", "/v1/docs?asset=scalar.js"])
      for (const tag of html.match(/<script[^>]*>/g) ?? []) {
        assert.match(tag, /\ssrc="|\stype="application\/json"/, "no inline script")
      }
      assert.notMatch(html, /(https?:)?\/\/[a-z0-9.-]+\//i)
      for (const script of scripts) {
        const asset = yield* get(script)
        assert.strictEqual(asset.status, 200, script)
        assert.strictEqual(asset.headers.get("content-type")?.split(";")[0], "text/javascript", script)
      }
    })
  )

  it.effect("an error's docs_url names a code whose explanation the rendered guide has", () =>
    Effect.gen(function* () {
      const response = yield* get("/nowhere")
      const url = new URL(response.body.error.docs_url)
      assert.strictEqual(`${url.origin}${url.pathname}`, "http://api.test/v1/docs")
      const document = yield* get("/v1/openapi.json")
      const description: string = document.body.info.description
      assert.isAbove(errorCodes.length, 10)
      for (const code of errorCodes) assert.include(description, `\n### ${code}\n`, code)
      assert.include(description, `\n### ${url.hash.slice(1)}\n`)
    })
  )

  for (const path of [
    "/",
    "/v2/leads",
    "/v1/",
    "/v1/x",
    "/v1/leads/extra",
    "/v1/leads/",
    "/V1",
    "/v1//",
    "//v1",
    "/v1/openapi",
    "/v1/openapi.json/"
  ]) {
    it.effect(`GET ${path} is 404 not_found`, () =>
      Effect.gen(function* () {
        const response = yield* get(path)
        assertError(response, 404, "not_found")
        assert.isNull(response.headers.get("allow"))
      })
    )
  }

  it.effect("POST to an unknown path is 404, not 405", () =>
    Effect.gen(function* () {
      assertError(yield* send({ method: "POST", path: "/v1/lead" }), 404, "not_found")
      assertError(yield* send({ method: "POST", path: "/v2/leads" }), 404, "not_found")
    })
  )

  it.effect("query strings do not change routing", () =>
    Effect.gen(function* () {
      const index = yield* get("/v1?x=1")
      assert.strictEqual(index.status, 200)
      assert.strictEqual(index.body.version, "1")
      assertRequestId(index)
      assert.strictEqual((yield* get("/v1/openapi.json?download=1")).status, 200)
      assertError(yield* get("/v1/?x=1"), 404, "not_found")
      assertError(yield* get("/v1/x?y=2"), 404, "not_found")
      const wrongMethod = yield* get("/v1/leads?x=1")
      assertError(wrongMethod, 405, "method_not_allowed")
      assert.strictEqual(wrongMethod.headers.get("allow"), "POST")
    })
  )

  const allowOf = (response: Sent) =>
    (response.headers.get("allow") ?? "")
      .split(",")
      .map((method) => method.trim())
      .filter((method) => method !== "")
      .sort()

  for (const [method, path, allowed] of [
    ["GET", "/v1/leads", ["POST"]],
    ["OPTIONS", "/v1/leads", ["POST"]],
    ["PUT", "/v1/leads", ["POST"]],
    ["DELETE", "/v1", ["GET"]],
    ["OPTIONS", "/v1", ["GET"]],
    ["POST", "/v1", ["GET"]],
    ["POST", "/v1/openapi.json", ["GET"]]
  ] as const) {
    it.effect(`${method} ${path} is 405 method_not_allowed with Allow`, () =>
      Effect.gen(function* () {
        const response = yield* send({ method, path })
        assertError(response, 405, "method_not_allowed")
        const allow = allowOf(response)
        for (const expected of allowed) assert.include(allow, expected)
        assert.notInclude(allow, method)
        assert.notInclude(allow, "OPTIONS")
        for (const listed of allow) assert.include(["GET", "HEAD", "POST"], listed)
      })
    )
  }

  it.effect("every method an Allow header lists is served", () =>
    Effect.gen(function* () {
      for (const path of ["/v1", "/v1/openapi.json", "/v1/leads"]) {
        const refused = yield* send({ method: "PATCH", path })
        assertError(refused, 405, "method_not_allowed")
        for (const method of allowOf(refused)) {
          const response = yield* send({ method, path })
          assert.notStrictEqual(response.status, 405, `${method} ${path}`)
          assert.notStrictEqual(response.status, 404, `${method} ${path}`)
        }
      }
    })
  )

  it.effect("405 comes before authentication on POST /v1/leads' path", () =>
    Effect.gen(function* () {
      const response = yield* send({
        method: "PUT",
        path: "/v1/leads",
        headers: { "content-type": "application/json" },
        body: "{}"
      })
      assertError(response, 405, "method_not_allowed")
    })
  )

  it.effect("X-Request-Id is unique per request and equals request_id on successes and every error", () =>
    Effect.gen(function* () {
      const responses: Array<Sent> = [
        yield* get("/v1"),
        yield* get("/v1"),
        yield* get("/nowhere"),
        yield* send({ method: "DELETE", path: "/v1" }),
        yield* send({ method: "POST", path: "/v1/leads" }),
        yield* post({ nombre: "" }),
        yield* post({ nombre: "Ana" }, { headers: { "content-type": "text/plain" } }),
        yield* post({ nombre: "Ana", telefono: "+52 55 1000 0001" })
      ]
      const ids = responses.map((response) => {
        assertRequestId(response)
        return response.headers.get("x-request-id")
      })
      assert.strictEqual(new Set(ids).size, ids.length)
      assert.deepStrictEqual(
        responses.map((response) => response.status),
        [200, 200, 404, 405, 401, 400, 415, 201]
      )
      const docs = yield* get("/v1/docs")
      const openapi = yield* get("/v1/openapi.json")
      for (const response of [docs, openapi]) {
        const id = response.headers.get("x-request-id")
        assert.isString(id)
        assert.notInclude(ids, id)
      }
    })
  )

  it.effect("a client-sent X-Request-Id is not echoed", () =>
    Effect.gen(function* () {
      const sent = "client-chosen-id-123"
      for (const response of [
        yield* get("/v1", { "x-request-id": sent }),
        yield* get("/nowhere", { "x-request-id": sent }),
        yield* post({ nombre: "Ana" }, { headers: { "x-request-id": sent, "x-service-dry-run": "true" } }),
        yield* post({}, { headers: { "x-request-id": sent } })
      ]) {
        assertRequestId(response)
        assert.notStrictEqual(response.headers.get("x-request-id"), sent)
        assert.notInclude(response.headers.get("x-request-id") ?? "", sent)
      }
    })
  )

  it.effect("no Access-Control-* header on any response, whatever the Origin", () =>
    Effect.gen(function* () {
      const origin = { origin: "https://evil.example" }
      const preflight = {
        ...origin,
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, content-type"
      }
      const responses = [
        yield* get("/v1", origin),
        yield* get("/v1/openapi.json", origin),
        yield* get("/v1/docs", origin),
        yield* get("/nowhere", origin),
        yield* send({ method: "OPTIONS", path: "/v1/leads", headers: preflight }),
        yield* send({ method: "OPTIONS", path: "/v1", headers: preflight }),
        yield* send({ method: "OPTIONS", path: "/nowhere", headers: preflight }),
        yield* send({ method: "POST", path: "/v1/leads", headers: origin }),
        yield* post({ nombre: "Ana" }, { headers: { ...origin, "x-service-dry-run": "true" } }),
        yield* post({ nombre: "Ana", telefono: "+52 55 1000 0002" }, { headers: origin })
      ]
      assert.deepStrictEqual(
        responses.map((response) => response.status),
        [200, 200, 200, 404, 405, 405, 404, 401, 200, 201]
      )
      for (const response of responses) assert.deepStrictEqual(corsHeaders(response), [])
    })
  )
})

const secret = "simulated defect from a contract test: password=hunter2 at /srv/app/src/LeadRepository.ts"

const layerDyingRepository = Layer.succeed(
  LeadRepository,
  LeadRepository.of({
    findMatch: () => Effect.succeed(Option.none()),
    createOrEnrich: () => Effect.die(new Error(secret)),
    createOrEnrichKeyed: () => Effect.die(new Error(secret)),
    rescue: () => Effect.die(new Error(secret)),
    show: () => Effect.die(new Error(secret)),
    list: () => Effect.die(new Error(secret)),
    purgeTest: () => Effect.die(new Error(secret))
  })
)

/** The write path dies as a bug would make it: the repository's write. */
const layerDyingWrites = Layer.merge(layerMemoryServices, layerDyingRepository)

layer(Contract.layer(layerDyingWrites))("a defect in a handler (memory)", (it) => {
  it.effect("answers 500 internal_error with the bare envelope and nothing of the defect", () =>
    Effect.gen(function* () {
      const response = yield* post({ nombre: "Ana", telefono: "+52 55 1234 5678" })
      assertError(response, 500, "internal_error")
      assert.deepStrictEqual(Object.keys(response.body.error).sort(), ["code", "docs_url", "message"])
      for (const leaked of ["Error", "at ", "simulated", "hunter2", "/srv/", ".ts", "stack", "cause"]) {
        assert.notInclude(response.text, leaked)
      }
      assert.deepStrictEqual(corsHeaders(response), [])
    })
  )

  it.effect("the service keeps answering after a defect", () =>
    Effect.gen(function* () {
      assertError(yield* post({ nombre: "Ana" }), 500, "internal_error")
      const index = yield* send({ method: "GET", path: "/v1" })
      assert.strictEqual(index.status, 200)
      const dry = yield* post({ nombre: "Ana" }, { headers: { "x-service-dry-run": "true" } })
      assert.strictEqual(dry.status, 200)
      assert.strictEqual(dry.body.status, "dry_run")
    })
  )
})
