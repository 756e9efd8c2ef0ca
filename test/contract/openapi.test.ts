import { readFileSync } from "node:fs"
import { assert, layer } from "@effect/vitest"
import { Validator } from "@seriousme/openapi-schema-validator"
import { Effect } from "effect"
import { type ErrorCode, errorCatalog } from "../../src/Api/Api.ts"
import { layerMemoryServices } from "../support/Client.ts"
import { testConfig } from "../support/Database.ts"
import { assertError, Contract, dryRun, post, send } from "./harness.ts"

/** The body's fields as docs/contract.md's table of them names them (the first column), in its order. */
const contractFields = () => {
  const lines = readFileSync(new URL("../../docs/contract.md", import.meta.url), "utf8").split("\n")
  const header = lines.findIndex((line) => line.startsWith("| field | type | required |"))
  const rows = lines.slice(header + 2)
  return rows
    .slice(
      0,
      rows.findIndex((line) => !line.startsWith("|"))
    )
    .map((line) => /^\| `([^`]+)`/.exec(line)?.[1])
}

type Json = Record<string, unknown>

const fetchDocument = Effect.map(send({ method: "GET", path: "/v1/openapi.json" }), (response) => {
  assert.strictEqual(response.status, 200)
  return response.body as Json
})

const at = (value: unknown, ...path: ReadonlyArray<string>): Json => {
  let current = value
  for (const key of path) {
    assert.isObject(current, `${path.join(".")}: no object before ${key}`)
    current = (current as Json)[key]
  }
  assert.isObject(current, `${path.join(".")} is an object`)
  return current as Json
}

/** Follows a local `$ref` (`#/components/...`). */
const deref = (document: Json, schema: Json): Json => {
  const ref = schema.$ref
  if (typeof ref !== "string") return schema
  assert.match(ref, /^#\//)
  return deref(document, at(document, ...ref.slice(2).split("/")))
}

/** The alternatives of a schema: its `anyOf`/`oneOf` members (dereferenced), or itself. */
const alternatives = (document: Json, schema: Json): ReadonlyArray<Json> => {
  const resolved = deref(document, schema)
  const members = (resolved.anyOf ?? resolved.oneOf) as ReadonlyArray<Json> | undefined
  return members === undefined ? [resolved] : members.flatMap((member) => alternatives(document, member))
}

/** A schema with the constraints of its `allOf` members merged in (the generator puts a second rule there). */
const flat = (document: Json, schema: Json): Json => {
  const resolved = deref(document, schema)
  const members = (resolved.allOf ?? []) as ReadonlyArray<Json>
  return Object.assign({}, ...members.map((member) => flat(document, member)), {
    ...resolved,
    allOf: undefined
  })
}

const lower = (names: Iterable<string>) => [...names].map((name) => name.toLowerCase())

const leadsOperation = (document: Json) => at(document, "paths", "/v1/leads", "post")

const headerParameter = (document: Json, name: string) => {
  const parameters = (leadsOperation(document).parameters ?? []) as ReadonlyArray<Json>
  const found = parameters
    .map((parameter) => deref(document, parameter))
    .find(
      (parameter) => parameter.in === "header" && String(parameter.name).toLowerCase() === name.toLowerCase()
    )
  assert.isDefined(found, `header parameter ${name}`)
  return found!
}

const leadRequestSchema = (document: Json) => {
  const content = at(leadsOperation(document), "requestBody", "content", "application/json")
  return deref(document, at(content, "schema"))
}

/** The non-null alternative of an optional, nullable field. */
const nonNull = (document: Json, schema: Json) => {
  const resolved = deref(document, schema)
  const members = ((resolved.anyOf ?? resolved.oneOf ?? [resolved]) as ReadonlyArray<Json>)
    .map((member) => deref(document, member))
    .filter((member) => member.type !== "null")
  assert.lengthOf(members, 1)
  return members[0]!
}

const errorCodesByStatus = (
  Object.entries(errorCatalog) as ReadonlyArray<[ErrorCode, { status: number }]>
).reduce(
  (byStatus, [code, { status }]) => byStatus.set(status, [...(byStatus.get(status) ?? []), code]),
  new Map<number, Array<ErrorCode>>()
)

layer(Contract.layer(layerMemoryServices))("GET /v1/openapi.json (memory)", (it) => {
  it.effect("is a valid OpenAPI 3.1 document", () =>
    Effect.gen(function* () {
      const document = yield* fetchDocument
      assert.match(String(document.openapi), /^3\.1\.\d+$/)
      const validator = new Validator()
      const result = yield* Effect.promise(() => validator.validate(structuredClone(document)))
      assert.deepStrictEqual(result.errors, undefined)
      assert.isTrue(result.valid)
      assert.strictEqual(validator.version, "3.1")
    })
  )

  it.effect("names the API and the public base URL", () =>
    Effect.gen(function* () {
      const document = yield* fetchDocument
      const info = at(document, "info")
      assert.isString(info.title)
      assert.isNotEmpty(info.title)
      assert.match(String(info.version), /^1(\.|$)/)
      const servers = document.servers as ReadonlyArray<Json>
      assert.deepInclude(
        servers.map((server) => server.url),
        testConfig.publicBaseUrl
      )
    })
  )

  it.effect("has every endpoint of the contract, and the same operations as the index", () =>
    Effect.gen(function* () {
      const document = yield* fetchDocument
      const paths = at(document, "paths")
      const operations = Object.entries(paths).flatMap(([path, item]) =>
        Object.keys(item as Json)
          .filter((key) =>
            ["get", "put", "post", "delete", "options", "head", "patch", "trace"].includes(key)
          )
          .map((method) => `${method.toUpperCase()} ${path}`)
      )
      for (const endpoint of ["GET /v1", "GET /v1/openapi.json", "POST /v1/leads"]) {
        assert.include(operations, endpoint)
      }
      for (const path of Object.keys(paths)) assert.match(path, /^\/v1(\/|$)/)
      const index = yield* send({ method: "GET", path: "/v1" })
      assert.sameMembers(operations, index.body.endpoints)
    })
  )

  it.effect("declares a bearer scheme, required on POST /v1/leads and on nothing else", () =>
    Effect.gen(function* () {
      const document = yield* fetchDocument
      const schemes = at(document, "components", "securitySchemes")
      const bearer = Object.entries(schemes).filter(
        ([, scheme]) =>
          (scheme as Json).type === "http" && String((scheme as Json).scheme).toLowerCase() === "bearer"
      )
      assert.lengthOf(bearer, 1)
      const [name] = bearer[0]!
      const security = (leadsOperation(document).security ?? document.security) as ReadonlyArray<Json>
      assert.isArray(security)
      assert.isTrue(security.length > 0 && security.every((requirement) => name in requirement))
      for (const path of ["/v1", "/v1/openapi.json"]) {
        const operation = at(document, "paths", path, "get")
        const required = (operation.security ?? document.security ?? []) as ReadonlyArray<Json>
        assert.isTrue(
          required.length === 0 || required.some((requirement) => Object.keys(requirement).length === 0),
          `${path} needs no key`
        )
      }
    })
  )

  it.effect("documents the Idempotency-Key and X-Service-Dry-Run headers with their rules", () =>
    Effect.gen(function* () {
      const document = yield* fetchDocument
      const idempotencyKey = headerParameter(document, "Idempotency-Key")
      assert.notStrictEqual(idempotencyKey.required, true)
      const keySchema = deref(document, at(idempotencyKey, "schema"))
      assert.strictEqual(keySchema.type, "string")
      assert.strictEqual(keySchema.minLength, 1)
      assert.strictEqual(keySchema.maxLength, 200)
      const keyPattern = new RegExp(String(keySchema.pattern), "u")
      for (const good of ["k", "form-4711", " ~"]) assert.isTrue(keyPattern.test(good), good)
      for (const bad of ["clé", "a\tb", "a\u007fb"]) assert.isFalse(keyPattern.test(bad), bad)

      const dryRunHeader = headerParameter(document, "X-Service-Dry-Run")
      assert.notStrictEqual(dryRunHeader.required, true)
      const dryRunSchema = deref(document, at(dryRunHeader, "schema"))
      assert.deepStrictEqual(dryRunSchema.enum ?? [dryRunSchema.const], ["true"])
    })
  )

  it.effect("lists every response code of POST /v1/leads, every error in the one shared Error envelope", () =>
    Effect.gen(function* () {
      const document = yield* fetchDocument
      const responses = at(leadsOperation(document), "responses")
      assert.sameMembers(Object.keys(responses), [
        "200",
        "201",
        "400",
        "401",
        "404",
        "405",
        "409",
        "413",
        "415",
        "422",
        "429",
        "500",
        "503"
      ])
      const schemas = at(document, "components", "schemas")
      assert.deepStrictEqual(
        Object.keys(schemas).filter((name) => name.endsWith("Encoded")),
        [],
        "no copied envelope per error"
      )
      const envelope = at(schemas, "Error")
      assert.strictEqual(envelope.type, "object")
      assert.sameMembers(envelope.required as Array<string>, ["error", "request_id"])
      assert.strictEqual(at(envelope, "properties", "request_id").type, "string")
      const error = at(envelope, "properties", "error")
      assert.sameMembers(error.required as Array<string>, ["code", "message", "docs_url"])
      assert.sameMembers(Object.keys(at(error, "properties")), ["code", "message", "field", "docs_url"])
      assert.strictEqual(at(error, "properties", "docs_url").format, "uri")
      assert.sameMembers(at(error, "properties", "code").enum as Array<string>, Object.keys(errorCatalog))

      for (const status of ["400", "401", "404", "405", "409", "413", "415", "422", "429", "500", "503"]) {
        const response = deref(document, at(responses, status))
        assert.isString(response.description)
        assert.deepStrictEqual(
          at(response, "content", "application/json", "schema"),
          { $ref: "#/components/schemas/Error" },
          status
        )
        assert.sameMembers(
          response["x-error-codes"] as Array<string>,
          errorCodesByStatus.get(Number(status)) ?? [],
          status
        )
      }
    })
  )

  it.effect("documents 404 and 405 on every route, and the Bearer challenge on 401", () =>
    Effect.gen(function* () {
      const document = yield* fetchDocument
      for (const [path, item] of Object.entries(at(document, "paths"))) {
        for (const [method, operation] of Object.entries(item as Json)) {
          const responses = at(operation as Json, "responses")
          assert.includeMembers(Object.keys(responses), ["404", "405"], `${method} ${path}`)
          const allow = at(responses, "405", "headers", "Allow")
          assert.strictEqual(allow.required, true)
        }
      }
      const challenge = at(leadsOperation(document), "responses", "401", "headers", "WWW-Authenticate")
      assert.strictEqual(challenge.required, true)
      assert.deepStrictEqual(at(challenge, "schema").enum, ['Bearer realm="lead-intake"'])
    })
  )

  it.effect("describes the success bodies: LeadCreated (201), LeadEnriched and DryRunResult (200)", () =>
    Effect.gen(function* () {
      const document = yield* fetchDocument
      const responses = at(leadsOperation(document), "responses")
      const statusesOf = (status: string) =>
        alternatives(document, at(responses, status, "content", "application/json", "schema")).map(
          (schema) => {
            const statusSchema = deref(document, at(schema, "properties", "status"))
            return statusSchema.const ?? (statusSchema.enum as ReadonlyArray<string>)[0]
          }
        )
      assert.sameMembers(statusesOf("201"), ["created"])
      assert.sameMembers(statusesOf("200"), ["enriched", "dry_run"])
      const created = alternatives(
        document,
        at(responses, "201", "content", "application/json", "schema")
      )[0]!
      assert.includeMembers(created.required as Array<string>, [
        "lead_id",
        "status",
        "lead_url",
        "request_id"
      ])
      assert.notInclude(created.required as Array<string>, "replay")
    })
  )

  it.effect(
    "documents X-Request-Id everywhere, X-RateLimit-* on successes and 429, Retry-After where it applies",
    () =>
      Effect.gen(function* () {
        const document = yield* fetchDocument
        const responses = at(leadsOperation(document), "responses")
        const headersOf = (status: string) =>
          lower(Object.keys(deref(document, at(responses, status)).headers ?? {}))
        for (const status of Object.keys(responses)) assert.include(headersOf(status), "x-request-id", status)
        for (const status of ["200", "201", "429"]) {
          assert.includeMembers(
            headersOf(status),
            ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"],
            status
          )
          const limit = deref(document, at(responses, status, "headers"))
          for (const [name, header] of Object.entries(limit)) {
            if (name.toLowerCase().startsWith("x-ratelimit-")) {
              assert.strictEqual(deref(document, at(header, "schema")).type, "integer", `${status} ${name}`)
            }
          }
        }
        for (const status of ["409", "429", "503"]) assert.include(headersOf(status), "retry-after", status)
        const requiredOf = (status: string, name: string) =>
          at(deref(document, at(responses, status)), "headers", name).required === true
        for (const status of Object.keys(responses)) assert.isTrue(requiredOf(status, "X-Request-Id"), status)
        for (const status of ["200", "201", "400", "413", "415", "422", "429"]) {
          assert.isTrue(requiredOf(status, "X-RateLimit-Remaining"), status)
        }
        assert.isTrue(requiredOf("429", "Retry-After") && requiredOf("503", "Retry-After"))
        assert.isFalse(requiredOf("409", "Retry-After"), "only idempotency_in_progress sends it")
        assert.isFalse(requiredOf("200", "Idempotent-Replayed"), "only replays send it")
        for (const path of ["/v1", "/v1/openapi.json"]) {
          const publicResponse = deref(document, at(document, "paths", path, "get", "responses", "200"))
          assert.include(lower(Object.keys(publicResponse.headers ?? {})), "x-request-id", path)
        }
      })
  )

  it.effect("states the decisions' limits on the lead body", () =>
    Effect.gen(function* () {
      const document = yield* fetchDocument
      const lead = leadRequestSchema(document)
      assert.strictEqual(lead.type, "object")
      assert.strictEqual(lead.additionalProperties, false)
      assert.deepStrictEqual(lead.required, ["nombre"])
      const properties = at(lead, "properties")
      // the fields the contract's table names, in its order, which is the order of checks
      assert.deepStrictEqual(Object.keys(properties), contractFields())

      const nombre = flat(document, at(properties, "nombre"))
      assert.strictEqual(nombre.type, "string")
      assert.strictEqual(nombre.minLength, 1)
      assert.strictEqual(nombre.maxLength, 200)

      const mensaje = nonNull(document, at(properties, "mensaje"))
      assert.strictEqual(mensaje.type, "string")
      assert.strictEqual(mensaje.maxLength, 2000)

      const email = flat(document, nonNull(document, at(properties, "email")))
      assert.strictEqual(email.maxLength, 254)

      const extras = nonNull(document, at(properties, "extras"))
      assert.strictEqual(extras.type, "object")
      assert.strictEqual(extras.maxProperties, 20)
      assert.strictEqual(deref(document, at(extras, "propertyNames")).maxLength, 60)
      const values = alternatives(document, at(extras, "additionalProperties"))
      assert.sameMembers(
        values.map((value) => value.type),
        ["string", "number", "boolean", "null"]
      )
      assert.strictEqual(values.find((value) => value.type === "string")!.maxLength, 200)

      // exactly one of the three references, as generators read it: a oneOf of three objects, each
      // requiring its key and refusing the other two (by name and by additionalProperties)
      const reference = nonNull(document, at(properties, "propiedad"))
      assert.strictEqual(reference.additionalProperties, false)
      assert.sameMembers(Object.keys(at(reference, "properties")), ["codigo", "external_code", "id"])
      const oneOf = (reference.allOf as ReadonlyArray<Json>).flatMap(
        (member) => (member.oneOf ?? []) as ReadonlyArray<Json>
      )
      assert.lengthOf(oneOf, 3)
      for (const [index, key] of ["codigo", "external_code", "id"].entries()) {
        const member = deref(document, oneOf[index]!)
        assert.strictEqual(member.type, "object")
        assert.deepStrictEqual(member.required, [key])
        assert.strictEqual(member.additionalProperties, false)
        assert.deepStrictEqual(
          Object.entries(at(member, "properties")).map(([name, schema]) => [name, schema === false]),
          ["codigo", "external_code", "id"]
            .map((name): [string, boolean] => [name, name !== key])
            .sort(([, a], [, b]) => Number(a) - Number(b))
        )
      }
      assert.isString(
        deref(document, at(reference, "properties", "codigo")).pattern,
        "codigo states its format"
      )
      assert.strictEqual(deref(document, at(reference, "properties", "id")).format, "uuid")
    })
  )

  it.effect("its telefono and codigo patterns agree with what the service accepts", () =>
    Effect.gen(function* () {
      const document = yield* fetchDocument
      const properties = at(leadRequestSchema(document), "properties")
      const telefono = new RegExp(String(nonNull(document, at(properties, "telefono")).pattern), "u")
      for (const value of [
        "+52 (55) 1234-5678",
        "55.1234.5678",
        "5512345678",
        "551234567",
        "++52 55 1234 5678",
        "55 1234 567a8",
        ""
      ]) {
        const response = yield* dryRun({ nombre: "Ana", telefono: value })
        assert.strictEqual(telefono.test(value), response.status === 200, `telefono ${JSON.stringify(value)}`)
      }
      const reference = nonNull(document, at(properties, "propiedad"))
      const codigo = new RegExp(String(deref(document, at(reference, "properties", "codigo")).pattern), "u")
      for (const value of ["ABC-1234", "abc-1234", "AB-1234", "ABC-12345", "ABC1234"]) {
        const response = yield* dryRun({ nombre: "Ana", propiedad: { codigo: value } })
        assert.strictEqual(codigo.test(value), response.status !== 400, `codigo ${JSON.stringify(value)}`)
      }
    })
  )

  it.effect("what it says the body rejects, the service rejects", () =>
    Effect.gen(function* () {
      assertError(yield* post({ nombre: "Ana", phone: "5512345678" }), 400, "validation_error", "phone")
      assertError(
        yield* post({
          nombre: "Ana",
          extras: Object.fromEntries([...Array(21)].map((_, i) => [`k${i}`, i]))
        }),
        400,
        "validation_error",
        "extras"
      )
      assertError(
        yield* post({ nombre: "Ana", mensaje: "m".repeat(2001) }),
        400,
        "validation_error",
        "mensaje"
      )
      assertError(yield* post({ nombre: "n".repeat(201) }), 400, "validation_error", "nombre")
    })
  )
})
