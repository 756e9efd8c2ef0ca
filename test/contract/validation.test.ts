import { assert, layer } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { KeyStore } from "../../src/Accounts/KeyStore.ts"
import type { ErrorCode } from "../../src/Api/Api.ts"
import { generateApiKey } from "../../src/Domain/ApiKey.ts"
import { type Fixture, layerMemoryServices, layerPostgresServices, seed } from "../support/Client.ts"
import {
  assertAccepted,
  assertError,
  Contract,
  dryRun,
  post,
  type Sent,
  type Services,
  send,
  withServices
} from "./harness.ts"

const limit = 64_000
const emoji = "😀"
const valid = { nombre: "Ana López" }

const extrasOf = (count: number, value: unknown = "v") =>
  Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, value]))

const bytes = (text: string) => new TextEncoder().encode(text)

/** A JSON object of exactly `size` bytes: whitespace inside the object pads it, so it stays valid. */
const paddedBody = (body: object, size: number) => {
  const json = JSON.stringify(body)
  const padding = size - bytes(json).length
  assert.isAtLeast(padding, 0)
  return `${json.slice(0, -1)}${" ".repeat(padding)}}`
}

type HeaderOverrides = Record<string, string | null>

interface Rejection {
  readonly name: string
  /** JSON-encoded unless `raw` is given. */
  readonly body?: unknown
  /** The body, when it depends on the seeded organization. */
  readonly bodyOf?: (fixture: Fixture) => unknown
  readonly raw?: string | Uint8Array
  readonly headers?: HeaderOverrides | ((fixture: Fixture) => HeaderOverrides)
  readonly expect: readonly [status: number, code: ErrorCode, field?: string]
  /** Also run against PostgreSQL. */
  readonly core?: boolean
}

/** `POST /v1/leads` with the suite's key and `application/json`; an override of `null` removes a header. */
const attempt = (rejection: Omit<Rejection, "name" | "expect">) =>
  Effect.flatMap(Contract, ({ fixture }) => {
    const headers: Record<string, string> = {
      authorization: `Bearer ${fixture.key}`,
      "content-type": "application/json"
    }
    const overrides =
      typeof rejection.headers === "function" ? rejection.headers(fixture) : (rejection.headers ?? {})
    for (const [name, value] of Object.entries(overrides)) {
      if (value === null) delete headers[name]
      else headers[name] = value
    }
    const body = rejection.bodyOf === undefined ? rejection.body : rejection.bodyOf(fixture)
    return send({ headers, body: rejection.raw ?? JSON.stringify(body) })
  })

const expectRejection = (rejection: Rejection) =>
  Effect.gen(function* () {
    const [status, code, field] = rejection.expect
    const response = yield* attempt(rejection)
    assertError(response, status, code, field)
  })

const bodyCases: ReadonlyArray<Rejection> = [
  {
    name: "body not UTF-8 (byte 0xff)",
    raw: new Uint8Array([0xff]),
    expect: [400, "validation_error", "body"]
  },
  {
    name: "body with an invalid UTF-8 byte inside a string",
    raw: new Uint8Array([...bytes('{"nombre":"An'), 0xff, ...bytes('a"}')]),
    expect: [400, "validation_error", "body"],
    core: true
  },
  {
    name: "body with a truncated UTF-8 sequence",
    raw: new Uint8Array([...bytes('{"nombre":"An'), 0xc3, ...bytes('"}')]),
    expect: [400, "validation_error", "body"]
  },
  {
    // valid JSON and UTF-8, but text PostgreSQL cannot store: the field that carries it is named
    name: "body with an unpaired surrogate escape",
    raw: '{"nombre":"\\ud800"}',
    expect: [400, "validation_error", "nombre"]
  },
  { name: "body not JSON", raw: "{nombre: 'Ana'}", expect: [400, "validation_error", "body"], core: true },
  { name: "body truncated JSON", raw: '{"nombre":"Ana"', expect: [400, "validation_error", "body"] },
  { name: "empty body", raw: "", expect: [400, "validation_error", "body"] },
  {
    name: "body a JSON array",
    raw: '[{"nombre":"Ana"}]',
    expect: [400, "validation_error", "body"],
    core: true
  },
  { name: "body a JSON string", raw: '"Ana"', expect: [400, "validation_error", "body"] },
  { name: "body a JSON number", raw: "42", expect: [400, "validation_error", "body"] },
  { name: "body JSON null", raw: "null", expect: [400, "validation_error", "body"] },
  { name: "body JSON true", raw: "true", expect: [400, "validation_error", "body"] }
]

const nombreCases: ReadonlyArray<Rejection> = [
  { name: "nombre missing", body: {}, expect: [400, "validation_error", "nombre"], core: true },
  { name: "nombre null", body: { nombre: null }, expect: [400, "validation_error", "nombre"] },
  { name: "nombre a number", body: { nombre: 42 }, expect: [400, "validation_error", "nombre"] },
  {
    name: "nombre an object",
    body: { nombre: { first: "Ana" } },
    expect: [400, "validation_error", "nombre"]
  },
  { name: "nombre empty", body: { nombre: "" }, expect: [400, "validation_error", "nombre"] },
  { name: "nombre blank", body: { nombre: "   " }, expect: [400, "validation_error", "nombre"] },
  {
    name: "nombre only tabs and newlines",
    body: { nombre: "\t\n\r " },
    expect: [400, "validation_error", "nombre"]
  },
  {
    name: "nombre of 201 characters",
    body: { nombre: "a".repeat(201) },
    expect: [400, "validation_error", "nombre"],
    core: true
  },
  {
    name: "nombre of 201 emoji",
    body: { nombre: emoji.repeat(201) },
    expect: [400, "validation_error", "nombre"]
  }
]

const telefonoCases: ReadonlyArray<Rejection> = [
  ...["551234567", "55 1234 567", "+52 551 234"].map(
    (telefono): Rejection => ({
      name: `telefono with 9 digits (${telefono})`,
      body: { ...valid, telefono },
      expect: [400, "validation_error", "telefono"],
      core: telefono === "551234567"
    })
  ),
  {
    name: "telefono letters",
    body: { ...valid, telefono: "abcdefghijkl" },
    expect: [400, "validation_error", "telefono"]
  },
  {
    name: "telefono with letters among 10 digits",
    body: { ...valid, telefono: "55 1234 5678 ext" },
    expect: [400, "validation_error", "telefono"]
  },
  {
    name: "telefono with two '+'",
    body: { ...valid, telefono: "++52 55 1234 5678" },
    expect: [400, "validation_error", "telefono"]
  },
  {
    name: "telefono with a '+' not leading",
    body: { ...valid, telefono: "52+55 1234 5678" },
    expect: [400, "validation_error", "telefono"]
  },
  {
    name: "telefono empty string",
    body: { ...valid, telefono: "" },
    expect: [400, "validation_error", "telefono"]
  },
  {
    name: "telefono blank",
    body: { ...valid, telefono: "   " },
    expect: [400, "validation_error", "telefono"]
  },
  {
    name: "telefono a number",
    body: { ...valid, telefono: 5512345678 },
    expect: [400, "validation_error", "telefono"]
  }
]

const emailCases: ReadonlyArray<Rejection> = [
  ...[
    ["no @", "ana.example.com"],
    ["two @", "ana@@example.com"],
    ["a space", "ana lopez@example.com"],
    ["no tld", "ana@example"],
    ["empty domain label", "ana@.com"],
    ["empty", ""],
    ["over 254 characters", `${"a".repeat(250)}@example.com`]
  ].map(
    ([what, email]): Rejection => ({
      name: `email with ${what}`,
      body: { ...valid, email },
      expect: [400, "validation_error", "email"],
      core: what === "no @"
    })
  ),
  { name: "email a number", body: { ...valid, email: 42 }, expect: [400, "validation_error", "email"] }
]

const mensajeCases: ReadonlyArray<Rejection> = [
  {
    name: "mensaje of 2001 characters",
    body: { ...valid, mensaje: "m".repeat(2001) },
    expect: [400, "validation_error", "mensaje"],
    core: true
  },
  {
    name: "mensaje of 2001 emoji",
    body: { ...valid, mensaje: emoji.repeat(2001) },
    expect: [400, "validation_error", "mensaje"]
  },
  { name: "mensaje a number", body: { ...valid, mensaje: 42 }, expect: [400, "validation_error", "mensaje"] }
]

const propiedadCases: ReadonlyArray<Rejection> = [
  {
    name: "propiedad with two keys",
    body: { ...valid, propiedad: { codigo: "ABC-1234", external_code: "EXT-1" } },
    expect: [400, "validation_error", "propiedad"],
    core: true
  },
  {
    name: "propiedad with three keys",
    body: { ...valid, propiedad: { codigo: "ABC-1234", external_code: "EXT-1", id: crypto.randomUUID() } },
    expect: [400, "validation_error", "propiedad"]
  },
  {
    name: "propiedad with no key",
    body: { ...valid, propiedad: {} },
    expect: [400, "validation_error", "propiedad"]
  },
  {
    name: "propiedad with an unknown key",
    body: { ...valid, propiedad: { code: "ABC-1234" } },
    expect: [400, "validation_error", "propiedad"]
  },
  {
    name: "propiedad with a known and an unknown key",
    body: { ...valid, propiedad: { codigo: "ABC-1234", nombre: "Casa" } },
    expect: [400, "validation_error", "propiedad"]
  },
  {
    name: "propiedad a string",
    body: { ...valid, propiedad: "ABC-1234" },
    expect: [400, "validation_error", "propiedad"]
  },
  {
    name: "propiedad a number",
    body: { ...valid, propiedad: 1234 },
    expect: [400, "validation_error", "propiedad"]
  },
  {
    name: "propiedad an array",
    body: { ...valid, propiedad: [{ codigo: "ABC-1234" }] },
    expect: [400, "validation_error", "propiedad"]
  },
  ...["AB-1234", "ABCD-1234", "ABC-123", "ABC-12345", "ABC1234", "123-ABCD", "ÁBC-1234", " ABC-1234"].map(
    (codigo): Rejection => ({
      name: `propiedad.codigo ${JSON.stringify(codigo)}`,
      body: { ...valid, propiedad: { codigo } },
      expect: [400, "validation_error", "propiedad.codigo"],
      core: codigo === "AB-1234"
    })
  ),
  ...["not-a-uuid", "12345678-1234-1234-1234-12345678901", "g2345678-1234-1234-1234-123456789012"].map(
    (id): Rejection => ({
      name: `propiedad.id ${JSON.stringify(id)}`,
      body: { ...valid, propiedad: { id } },
      expect: [400, "validation_error", "propiedad.id"],
      core: id === "not-a-uuid"
    })
  )
]

const notFound: Rejection["expect"] = [422, "property_not_found", "propiedad"]

const propertyNotFoundCases: ReadonlyArray<Rejection> = [
  {
    name: "unknown codigo",
    body: { ...valid, propiedad: { codigo: "ZZZ-9999" } },
    expect: notFound,
    core: true
  },
  {
    name: "unknown external_code",
    body: { ...valid, propiedad: { external_code: "NOPE-1" } },
    expect: notFound
  },
  {
    name: "unknown id",
    body: { ...valid, propiedad: { id: crypto.randomUUID() } },
    expect: notFound,
    core: true
  },
  {
    name: "archived codigo",
    body: { ...valid, propiedad: { codigo: "OLD-0001" } },
    expect: notFound,
    core: true
  },
  {
    name: "archived id",
    bodyOf: (fixture) => ({ ...valid, propiedad: { id: fixture.archivedPropertyId } }),
    expect: notFound,
    core: true
  }
]

const extrasCases: ReadonlyArray<Rejection> = [
  {
    name: "extras with 21 entries",
    body: { ...valid, extras: extrasOf(21) },
    expect: [400, "validation_error", "extras"],
    core: true
  },
  {
    name: "extras with 21 entries, most null or blank",
    body: {
      ...valid,
      extras: {
        ...extrasOf(10, null),
        ...Object.fromEntries([...Array(10)].map((_, i) => [`b${i}`, " "])),
        x: "v"
      }
    },
    expect: [400, "validation_error", "extras"]
  },
  {
    name: "extras with 21 null entries",
    body: { ...valid, extras: extrasOf(21, null) },
    expect: [400, "validation_error", "extras"]
  },
  {
    name: "extras key over 60 characters",
    body: { ...valid, extras: { ["k".repeat(61)]: "v" } },
    expect: [400, "validation_error", `extras.${"k".repeat(61)}`],
    core: true
  },
  {
    name: "extras key of 61 non-ASCII characters, named as sent",
    body: { ...valid, extras: { ["ñ".repeat(61)]: "v" } },
    expect: [400, "validation_error", `extras.${"ñ".repeat(61)}`]
  },
  {
    name: "extras value over 200 characters",
    body: { ...valid, extras: { presupuesto: "9".repeat(201) } },
    expect: [400, "validation_error", "extras.presupuesto"],
    core: true
  },
  {
    name: "extras value of 201 emoji",
    body: { ...valid, extras: { nota: emoji.repeat(201) } },
    expect: [400, "validation_error", "extras.nota"]
  },
  {
    name: "extras value an object",
    body: { ...valid, extras: { ok: "v", zona: { norte: true } } },
    expect: [400, "validation_error", "extras.zona"],
    core: true
  },
  {
    name: "extras value an array",
    body: { ...valid, extras: { zonas: ["norte", "sur"] } },
    expect: [400, "validation_error", "extras.zonas"]
  },
  {
    name: "extras value an empty array",
    body: { ...valid, extras: { zonas: [] } },
    expect: [400, "validation_error", "extras.zonas"]
  },
  {
    name: "extras key with a dot, named as sent",
    body: { ...valid, extras: { "casa.tipo": { a: 1 } } },
    expect: [400, "validation_error", "extras.casa.tipo"]
  },
  {
    name: "extras empty key",
    body: { ...valid, extras: { "": "v" } },
    expect: [400, "validation_error", "extras"],
    core: true
  },
  {
    name: "extras blank key",
    body: { ...valid, extras: { "  ": "v" } },
    expect: [400, "validation_error", "extras"]
  },
  {
    name: "extras a string",
    body: { ...valid, extras: "presupuesto: 1" },
    expect: [400, "validation_error", "extras"]
  },
  {
    name: "extras an array",
    body: { ...valid, extras: [["k", "v"]] },
    expect: [400, "validation_error", "extras"]
  },
  { name: "extras a number", body: { ...valid, extras: 1 }, expect: [400, "validation_error", "extras"] }
]

const unknownFieldCases: ReadonlyArray<Rejection> = [
  {
    name: "unknown top-level field phone",
    body: { ...valid, phone: "+52 55 1234 5678" },
    expect: [400, "validation_error", "phone"],
    core: true
  },
  {
    name: "unknown field with other case",
    body: { ...valid, Email: "a@b.co" },
    expect: [400, "validation_error", "Email"]
  },
  { name: "unknown field null", body: { ...valid, notas: null }, expect: [400, "validation_error", "notas"] }
]

/** When several fields fail, the first in the contract's order is named, whatever the order in the JSON. */
const orderingCases: ReadonlyArray<Rejection> = [
  {
    name: "nombre before telefono, email and unknown",
    body: { phone: "1", email: "x", telefono: "1", nombre: "" },
    expect: [400, "validation_error", "nombre"],
    core: true
  },
  {
    name: "missing nombre before everything else",
    body: {
      extras: extrasOf(21),
      propiedad: {},
      mensaje: "m".repeat(2001),
      email: "x",
      telefono: "1",
      phone: "x"
    },
    expect: [400, "validation_error", "nombre"]
  },
  {
    name: "telefono before email",
    body: { email: "not-an-email", telefono: "123", ...valid },
    expect: [400, "validation_error", "telefono"]
  },
  {
    name: "email before mensaje and propiedad",
    body: { propiedad: { codigo: "X" }, mensaje: "m".repeat(2001), email: "x@", ...valid },
    expect: [400, "validation_error", "email"]
  },
  {
    name: "mensaje before propiedad",
    body: { propiedad: { a: 1, b: 2 }, mensaje: "m".repeat(2001), ...valid },
    expect: [400, "validation_error", "mensaje"]
  },
  {
    name: "propiedad before extras",
    body: { extras: { "": 1 }, propiedad: { codigo: "bad" }, ...valid },
    expect: [400, "validation_error", "propiedad.codigo"]
  },
  {
    name: "extras before an unknown field",
    body: { phone: "55", extras: extrasOf(21), ...valid },
    expect: [400, "validation_error", "extras"]
  },
  {
    name: "body before everything: an array of bad leads",
    raw: JSON.stringify([{ nombre: "", phone: 1 }]),
    expect: [400, "validation_error", "body"]
  },
  {
    name: "a field error before property resolution (422)",
    body: { nombre: "Ana", email: "x", propiedad: { codigo: "ZZZ-9999" } },
    expect: [400, "validation_error", "email"],
    core: true
  }
]

const headerCases: ReadonlyArray<Rejection> = [
  {
    name: "Content-Type missing",
    body: valid,
    headers: { "content-type": null },
    expect: [415, "unsupported_media_type"],
    core: true
  },
  {
    name: "Content-Type text/plain",
    body: valid,
    headers: { "content-type": "text/plain" },
    expect: [415, "unsupported_media_type"],
    core: true
  },
  {
    name: "Content-Type application/x-www-form-urlencoded",
    raw: "nombre=Ana",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    expect: [415, "unsupported_media_type"]
  },
  {
    name: "Content-Type multipart/form-data",
    body: valid,
    headers: { "content-type": "multipart/form-data; boundary=x" },
    expect: [415, "unsupported_media_type"]
  },
  {
    name: "Content-Type application/jsonx",
    body: valid,
    headers: { "content-type": "application/jsonx" },
    expect: [415, "unsupported_media_type"]
  },
  {
    name: "Content-Type application/merge-patch+json",
    body: valid,
    headers: { "content-type": "application/merge-patch+json" },
    expect: [415, "unsupported_media_type"]
  },
  {
    name: "body of 64001 bytes, streamed",
    raw: paddedBody(valid, limit + 1),
    expect: [413, "payload_too_large"],
    core: true
  },
  {
    name: "body of 64001 bytes with its Content-Length",
    raw: paddedBody(valid, limit + 1),
    headers: { "content-length": String(limit + 1) },
    expect: [413, "payload_too_large"]
  },
  {
    name: "a Content-Length over the limit",
    raw: JSON.stringify(valid),
    headers: { "content-length": "1000000" },
    expect: [413, "payload_too_large"]
  },
  ...["false", "yes", "1", "TRUE", ""].map(
    (value): Rejection => ({
      name: `X-Service-Dry-Run ${JSON.stringify(value)}`,
      body: valid,
      headers: { "x-service-dry-run": value },
      expect: [400, "validation_error", "X-Service-Dry-Run"],
      core: value === "false"
    })
  ),
  ...[
    ["empty", ""],
    ["of 201 characters", "k".repeat(201)],
    ["with a non-ASCII character", "clé-1"],
    ["with a tab", "form\t4711"],
    ["with DEL", "form\u007f4711"]
  ].map(
    ([what, key]): Rejection => ({
      name: `Idempotency-Key ${what}`,
      body: valid,
      headers: { "idempotency-key": key! },
      expect: [400, "validation_error", "Idempotency-Key"],
      core: what === "empty"
    })
  )
]

/** docs/contract.md#3-order-of-checks: the first check that fails answers. */
const orderOfChecksCases: ReadonlyArray<Rejection> = [
  {
    name: "no key and a bad Content-Type: 401",
    raw: "nombre=Ana",
    headers: { authorization: null, "content-type": "application/x-www-form-urlencoded" },
    expect: [401, "invalid_key"],
    core: true
  },
  {
    name: "a bad key and a too large body: 401",
    raw: paddedBody(valid, limit + 1),
    headers: { authorization: "Bearer nope" },
    expect: [401, "invalid_key"]
  },
  {
    name: "a bad Content-Type and a bad body: 415",
    raw: "not json",
    headers: { "content-type": "text/plain" },
    expect: [415, "unsupported_media_type"],
    core: true
  },
  {
    name: "a bad Content-Type and a too large body: 415",
    raw: paddedBody(valid, limit + 1),
    headers: { "content-type": "text/plain" },
    expect: [415, "unsupported_media_type"]
  },
  {
    name: "a too large body and bad headers: 413",
    raw: paddedBody({ nombre: "" }, limit + 1),
    headers: { "x-service-dry-run": "yes", "idempotency-key": "" },
    expect: [413, "payload_too_large"],
    core: true
  },
  {
    name: "a bad Idempotency-Key and a bad body: 400 Idempotency-Key",
    raw: "not json",
    headers: { "idempotency-key": "" },
    expect: [400, "validation_error", "Idempotency-Key"],
    core: true
  },
  {
    name: "a bad X-Service-Dry-Run and a bad field: 400 X-Service-Dry-Run",
    body: { nombre: "" },
    headers: { "x-service-dry-run": "false" },
    expect: [400, "validation_error", "X-Service-Dry-Run"]
  },
  {
    name: "a bad X-Service-Dry-Run and a bad Idempotency-Key: 400 X-Service-Dry-Run",
    body: valid,
    headers: { "x-service-dry-run": "yes", "idempotency-key": "" },
    expect: [400, "validation_error", "X-Service-Dry-Run"]
  },
  {
    name: "dry-run with a bad field: 400 for the field, not a dry-run",
    body: { nombre: "Ana", telefono: "12" },
    headers: { "x-service-dry-run": "true" },
    expect: [400, "validation_error", "telefono"]
  },
  {
    name: "dry-run with an unknown property: 422",
    body: { nombre: "Ana", propiedad: { codigo: "ZZZ-9999" } },
    headers: { "x-service-dry-run": "true" },
    expect: notFound,
    core: true
  }
]

const flipped = (key: string, index: number) => {
  const character = key[index]!
  return `${key.slice(0, index)}${character === "a" ? "b" : "a"}${key.slice(index + 1)}`
}

const unauthorized: Rejection["expect"] = [401, "invalid_key"]

const authenticationCases: ReadonlyArray<Rejection> = [
  {
    name: "no Authorization header",
    body: valid,
    headers: { authorization: null },
    expect: unauthorized,
    core: true
  },
  { name: "empty Authorization header", body: valid, headers: { authorization: "" }, expect: unauthorized },
  {
    name: "Basic scheme",
    body: valid,
    headers: { authorization: "Basic xxx" },
    expect: unauthorized,
    core: true
  },
  {
    name: "Basic scheme carrying the real key",
    body: valid,
    headers: (fixture) => ({ authorization: `Basic ${Buffer.from(`${fixture.key}:`).toString("base64")}` }),
    expect: unauthorized
  },
  {
    name: "Token scheme with the real key",
    body: valid,
    headers: (f) => ({ authorization: `Token ${f.key}` }),
    expect: unauthorized
  },
  {
    name: "the bare key without a scheme",
    body: valid,
    headers: (f) => ({ authorization: f.key }),
    expect: unauthorized
  },
  { name: "Bearer without a key", body: valid, headers: { authorization: "Bearer" }, expect: unauthorized },
  {
    name: "Bearer with blanks only",
    body: valid,
    headers: { authorization: "Bearer    " },
    expect: unauthorized
  },
  {
    name: "malformed key",
    body: valid,
    headers: { authorization: "Bearer not-a-key" },
    expect: unauthorized,
    core: true
  },
  {
    name: "only the visible prefix",
    body: valid,
    headers: (f) => ({ authorization: `Bearer ${f.prefix}` }),
    expect: unauthorized
  },
  {
    name: "truncated key",
    body: valid,
    headers: (f) => ({ authorization: `Bearer ${f.key.slice(0, -1)}` }),
    expect: unauthorized
  },
  {
    name: "key with a character added",
    body: valid,
    headers: (f) => ({ authorization: `Bearer ${f.key}A` }),
    expect: unauthorized
  },
  {
    name: "key with a flipped secret character (bad checksum)",
    body: valid,
    headers: (f) => ({ authorization: `Bearer ${flipped(f.key, 30)}` }),
    expect: unauthorized,
    core: true
  },
  {
    name: "key with a flipped checksum character",
    body: valid,
    headers: (f) => ({ authorization: `Bearer ${flipped(f.key, f.key.length - 1)}` }),
    expect: unauthorized
  },
  {
    name: "unknown well-formed key",
    body: valid,
    headers: { authorization: `Bearer ${generateApiKey().key}` },
    expect: unauthorized,
    core: true
  }
]

/** Nothing after the visible prefix (the secret) may appear in a response. */
const assertNotLeaked = (response: Sent, fixture: Fixture) => {
  assert.notInclude(response.text, fixture.key.slice(fixture.prefix.length))
}

const revokedKey = Effect.gen(function* () {
  const { fixture } = yield* Contract
  const origin = yield* withServices(
    Effect.flatMap(KeyStore, (keys) =>
      keys.createOrigin({
        organizationId: fixture.organizationId,
        label: `revoked-${crypto.randomUUID()}`,
        rateLimit: 100
      })
    )
  ).pipe(Effect.orDie)
  const before = yield* attempt({
    body: valid,
    headers: { authorization: `Bearer ${origin.key}`, "x-service-dry-run": "true" }
  })
  assertAccepted(before)
  yield* withServices(Effect.flatMap(KeyStore, (keys) => keys.revoke(origin.id))).pipe(Effect.orDie)
  const after = yield* attempt({ body: valid, headers: { authorization: `Bearer ${origin.key}` } })
  assertError(after, 401, "invalid_key")
  assert.notInclude(after.text, origin.key)
  const revokedDryRun = yield* attempt({
    body: valid,
    headers: { authorization: `Bearer ${origin.key}`, "x-service-dry-run": "true" }
  })
  assertError(revokedDryRun, 401, "invalid_key")
})

const rotatedKey = Effect.gen(function* () {
  const { fixture } = yield* Contract
  const origin = yield* withServices(
    Effect.flatMap(KeyStore, (keys) =>
      keys.createOrigin({
        organizationId: fixture.organizationId,
        label: `rotated-${crypto.randomUUID()}`,
        rateLimit: 100
      })
    )
  ).pipe(Effect.orDie)
  const fresh = yield* withServices(Effect.flatMap(KeyStore, (keys) => keys.rotate(origin.id))).pipe(
    Effect.orDie
  )
  assertError(
    yield* attempt({ body: valid, headers: { authorization: `Bearer ${origin.key}` } }),
    401,
    "invalid_key"
  )
  assertAccepted(
    yield* attempt({
      body: valid,
      headers: { authorization: `Bearer ${fresh.key}`, "x-service-dry-run": "true" }
    })
  )
})

const otherOrganizationsProperty = Effect.gen(function* () {
  const other = yield* withServices(seed())
  const response = yield* post({ ...valid, propiedad: { id: other.propertyId } })
  assertError(response, 422, "property_not_found", "propiedad")
  const dry = yield* dryRun({ ...valid, propiedad: { id: other.propertyId } })
  assertError(dry, 422, "property_not_found", "propiedad")
})

const rejectedWritesNothing = Effect.gen(function* () {
  const telefono = `+52 81 ${String(Math.floor(Math.random() * 1e8)).padStart(8, "0")}`
  assertError(yield* post({ nombre: "Ana", telefono, email: "bad" }), 400, "validation_error", "email")
  assertError(
    yield* post({ nombre: "Ana", telefono, propiedad: { codigo: "ZZZ-9999" } }),
    422,
    "property_not_found",
    "propiedad"
  )
  const probe = yield* dryRun({ nombre: "Ana", telefono })
  assertAccepted(probe)
  assert.strictEqual(probe.body.would, "create")
  assert.isNull(probe.body.would_match)
})

const groups: ReadonlyArray<readonly [string, ReadonlyArray<Rejection>]> = [
  ["body", bodyCases],
  ["nombre", nombreCases],
  ["telefono", telefonoCases],
  ["email", emailCases],
  ["mensaje", mensajeCases],
  ["propiedad", propiedadCases],
  ["property resolution", propertyNotFoundCases],
  ["extras", extrasCases],
  ["unknown fields", unknownFieldCases],
  ["several failing fields", orderingCases],
  ["headers", headerCases],
  ["order of checks", orderOfChecksCases],
  ["authentication", authenticationCases]
]

layer(Contract.layer(layerMemoryServices))("POST /v1/leads rejections (memory)", (it) => {
  for (const [group, cases] of groups) {
    for (const rejection of cases) it.effect(`${group}: ${rejection.name}`, () => expectRejection(rejection))
  }

  it.effect("property resolution: another organization's property", () => otherOrganizationsProperty)
  it.effect("authentication: revoked key", () => revokedKey)
  it.effect("authentication: the key a rotation replaced", () => rotatedKey)
  it.effect("a rejected request writes nothing", () => rejectedWritesNothing)

  it.effect("authentication: a 401 never echoes the key", () =>
    Effect.gen(function* () {
      const { fixture } = yield* Contract
      const response = yield* attempt({
        body: valid,
        headers: { authorization: `Bearer ${flipped(fixture.key, 30)}` }
      })
      assertError(response, 401, "invalid_key")
      assertNotLeaked(response, fixture)
    })
  )

  it.effect(
    "every field goes wrong at once: fixing each in turn reveals the next, in the contract's order",
    () =>
      Effect.gen(function* () {
        const broken: Record<string, unknown> = {
          phone: "55",
          extras: extrasOf(21),
          propiedad: {},
          mensaje: "m".repeat(2001),
          email: "ana",
          telefono: "12",
          nombre: " "
        }
        const fixes: ReadonlyArray<readonly [string, unknown]> = [
          ["nombre", "Ana"],
          ["telefono", "+52 55 9999 0000"],
          ["email", "ana@example.com"],
          ["mensaje", "hola"],
          ["propiedad", { codigo: "ABC-1234" }],
          ["extras", { fuente: "web" }]
        ]
        for (const [field, fix] of fixes) {
          assertError(yield* dryRun(broken), 400, "validation_error", field)
          broken[field] = fix
        }
        assertError(yield* dryRun(broken), 400, "validation_error", "phone")
        delete broken.phone
        assertAccepted(yield* dryRun(broken))
      })
  )
})

const resolved = (response: Sent) => {
  assertAccepted(response)
  return response.body.resolved
}

layer(Contract.layer(layerMemoryServices))("POST /v1/leads acceptances (memory)", (it) => {
  it.effect("nombre of 200 characters, and of 200 emoji (characters are code points)", () =>
    Effect.gen(function* () {
      assert.strictEqual(resolved(yield* dryRun({ nombre: "a".repeat(200) })).nombre, "a".repeat(200))
      assert.strictEqual(resolved(yield* dryRun({ nombre: emoji.repeat(200) })).nombre, emoji.repeat(200))
      assert.strictEqual(resolved(yield* dryRun({ nombre: "ñ".repeat(200) })).nombre, "ñ".repeat(200))
    })
  )

  it.effect("nombre is trimmed, its inner whitespace collapsed and NFC-normalised before the 200 limit", () =>
    Effect.gen(function* () {
      assert.strictEqual(
        resolved(yield* dryRun({ nombre: "  Ana \t  María\n López " })).nombre,
        "Ana María López"
      )
      const padded = `${" ".repeat(30)}${"a".repeat(200)}${" ".repeat(30)}`
      assert.strictEqual(resolved(yield* dryRun({ nombre: padded })).nombre, "a".repeat(200))
      const decomposed = "e\u0301".repeat(200)
      assert.strictEqual(resolved(yield* dryRun({ nombre: decomposed })).nombre, "\u00e9".repeat(200))
      assert.strictEqual(resolved(yield* dryRun({ nombre: "Jose\u0301" })).nombre, "Jos\u00e9")
    })
  )

  it.effect("telefono null, absent and in the accepted formats, reported as received", () =>
    Effect.gen(function* () {
      assert.isNull(resolved(yield* dryRun({ ...valid, telefono: null })).telefono)
      assert.isNull(resolved(yield* dryRun(valid)).telefono)
      for (const telefono of [
        "+52 (55) 1234-5678",
        "55.1234.5678",
        "5512345678",
        "+52 1 55 1234 5678",
        "044 55 1234 5678",
        "(55) 1234 5678"
      ]) {
        assert.strictEqual(resolved(yield* dryRun({ ...valid, telefono })).telefono, telefono)
      }
    })
  )

  it.effect("email is trimmed and stored lowercase; null means none", () =>
    Effect.gen(function* () {
      assert.strictEqual(
        resolved(yield* dryRun({ ...valid, email: "Ana.Lopez@Example.COM" })).email,
        "ana.lopez@example.com"
      )
      assert.strictEqual(
        resolved(yield* dryRun({ ...valid, email: "  ana@example.mx " })).email,
        "ana@example.mx"
      )
      assert.strictEqual(
        resolved(yield* dryRun({ ...valid, email: "a+tag@sub.example.co.uk" })).email,
        "a+tag@sub.example.co.uk"
      )
      assert.isNull(resolved(yield* dryRun({ ...valid, email: null })).email)
    })
  )

  it.effect("email of 254 characters is accepted", () =>
    Effect.gen(function* () {
      const email = `${"a".repeat(242)}@example.com`
      assert.strictEqual(email.length, 254)
      assert.strictEqual(resolved(yield* dryRun({ ...valid, email })).email, email)
    })
  )

  it.effect("mensaje of 2000 characters, of 2000 emoji, and null are accepted", () =>
    Effect.gen(function* () {
      resolved(yield* dryRun({ ...valid, mensaje: "m".repeat(2000) }))
      resolved(yield* dryRun({ ...valid, mensaje: emoji.repeat(2000) }))
      resolved(yield* dryRun({ ...valid, mensaje: null }))
      const created = yield* post({ ...valid, mensaje: emoji.repeat(2000) })
      assert.strictEqual(created.status, 201)
    })
  )

  it.effect("propiedad by codigo (any case), external_code or id resolves to the property", () =>
    Effect.gen(function* () {
      const { fixture } = yield* Contract
      for (const propiedad of [
        { codigo: "ABC-1234" },
        { codigo: "abc-1234" },
        { external_code: "EXT-1" },
        { id: fixture.propertyId },
        { id: fixture.propertyId.toUpperCase() }
      ]) {
        assert.strictEqual(
          resolved(yield* dryRun({ ...valid, propiedad })).development_id,
          fixture.propertyId
        )
      }
      assert.isNull(resolved(yield* dryRun({ ...valid, propiedad: null })).development_id)
      assert.isNull(resolved(yield* dryRun(valid)).development_id)
    })
  )

  it.effect("propiedad with no key, two keys or an unknown key: the exact error of each", () =>
    Effect.gen(function* () {
      const { fixture } = yield* Contract
      const exactlyOne = "propiedad must have exactly one of codigo, external_code or id"
      const cases: ReadonlyArray<readonly [unknown, string, string]> = [
        [{}, "propiedad", exactlyOne],
        [{ codigo: "ABC-1234", id: fixture.propertyId }, "propiedad", exactlyOne],
        [{ codigo: "ABC-1234", external_code: "EXT-1" }, "propiedad", exactlyOne],
        [{ codigo: "ABC-1234", nombre: "Casa" }, "propiedad", "propiedad is not a field of this object"],
        [
          { codigo: "X", id: "y" },
          "propiedad.codigo",
          "propiedad.codigo must be three letters, a hyphen and four digits"
        ],
        [
          { codigo: "ABC-1234", external_code: "EXT-1", id: "x" },
          "propiedad.id",
          "propiedad.id must be a UUID"
        ],
        [[], "propiedad", "propiedad must be an object or null"]
      ]
      for (const [propiedad, field, message] of cases) {
        const response = yield* post({ ...valid, propiedad })
        assertError(response, 400, "validation_error", field)
        assert.strictEqual(response.body.error.message, message, JSON.stringify(propiedad))
      }
    })
  )

  it.effect(
    "extras: null and blank values are ignored, numbers and booleans kept as JSON text, keys trimmed",
    () =>
      Effect.gen(function* () {
        const extras = resolved(
          yield* dryRun({
            ...valid,
            extras: {
              vacio: null,
              blanco: "",
              espacios: "   ",
              precio: 12.5,
              credito: true,
              cero: 0,
              "  zona  ": " norte "
            }
          })
        ).extras
        assert.deepStrictEqual(extras, { precio: "12.5", credito: "true", cero: "0", zona: "norte" })
      })
  )

  it.effect("extras at the limits: 20 entries, 60-character keys, 200-character values", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(
        Object.keys(resolved(yield* dryRun({ ...valid, extras: extrasOf(20) })).extras).length,
        20
      )
      assert.deepStrictEqual(resolved(yield* dryRun({ ...valid, extras: extrasOf(20, null) })).extras, {})
      const key = "k".repeat(60)
      assert.deepStrictEqual(resolved(yield* dryRun({ ...valid, extras: { [key]: "v" } })).extras, {
        [key]: "v"
      })
      const emojiKey = emoji.repeat(60)
      assert.deepStrictEqual(resolved(yield* dryRun({ ...valid, extras: { [emojiKey]: "v" } })).extras, {
        [emojiKey]: "v"
      })
      // Counted as sent, as the document's maxLength counts it; stored trimmed.
      const paddedKey = ` ${"k".repeat(58)} `
      assert.deepStrictEqual(resolved(yield* dryRun({ ...valid, extras: { [paddedKey]: "v" } })).extras, {
        ["k".repeat(58)]: "v"
      })
      const overPadded = ` ${key} `
      assertError(
        yield* dryRun({ ...valid, extras: { [overPadded]: "v" } }),
        400,
        "validation_error",
        `extras.${overPadded}`
      )
      for (const value of ["v".repeat(200), emoji.repeat(200)]) {
        assert.deepStrictEqual(resolved(yield* dryRun({ ...valid, extras: { nota: value } })).extras, {
          nota: value
        })
      }
      assert.deepStrictEqual(resolved(yield* dryRun({ ...valid, extras: null })).extras, {})
      assert.deepStrictEqual(resolved(yield* dryRun({ ...valid, extras: {} })).extras, {})
    })
  )

  it.effect("Content-Type with parameters or in another case is JSON", () =>
    Effect.gen(function* () {
      for (const contentType of [
        "application/json; charset=utf-8",
        "Application/JSON",
        "APPLICATION/JSON ; charset=UTF-8"
      ]) {
        assertAccepted(yield* dryRun(valid, { "content-type": contentType }))
      }
      const created = yield* post(valid, { headers: { "content-type": "Application/JSON; charset=utf-8" } })
      assert.strictEqual(created.status, 201)
    })
  )

  it.effect("a body of exactly 64000 bytes is accepted, streamed or with its Content-Length", () =>
    Effect.gen(function* () {
      const raw = paddedBody({ ...valid, mensaje: "ñ".repeat(2000) }, limit)
      assert.strictEqual(bytes(raw).length, limit)
      assertAccepted(yield* post(undefined, { raw, headers: { "x-service-dry-run": "true" } }))
      assertAccepted(
        yield* post(undefined, {
          raw,
          headers: { "x-service-dry-run": "true", "content-length": String(limit) }
        })
      )
      const created = yield* post(undefined, { raw })
      assert.strictEqual(created.status, 201)
    })
  )

  it.effect("a 413 closes the connection", () =>
    Effect.gen(function* () {
      const response = yield* post(undefined, { raw: paddedBody(valid, limit + 1) })
      assertError(response, 413, "payload_too_large")
      assert.strictEqual(response.headers.get("connection"), "close")
    })
  )

  it.effect("X-Service-Dry-Run: true answers dry_run and writes nothing", () =>
    Effect.gen(function* () {
      const telefono = "+52 33 4444 5555"
      const dry = yield* dryRun({ ...valid, telefono })
      assertAccepted(dry)
      assert.strictEqual(dry.body.would, "create")
      const created = yield* post({ ...valid, telefono })
      assert.strictEqual(created.status, 201)
    })
  )

  it.effect("Idempotency-Key of 1 and of 200 printable ASCII characters is accepted", () =>
    Effect.gen(function* () {
      for (const key of ["k", `${" ~!".repeat(66)}ab`, "form-4711:attempt/1"]) {
        const response = yield* post(valid, { headers: { "idempotency-key": key } })
        assert.strictEqual(response.status, 201, `${JSON.stringify(key)}: ${response.text}`)
      }
    })
  )

  it.effect("in dry-run a bad Idempotency-Key is ignored", () =>
    Effect.gen(function* () {
      for (const key of ["", "k".repeat(201), "clé-1", "form\t4711", "form\u007f4711"]) {
        assertAccepted(yield* dryRun(valid, { "idempotency-key": key }))
      }
    })
  )
})

layer(Contract.layer(layerPostgresServices as Layer.Layer<Services>), { timeout: "60 seconds" })(
  "POST /v1/leads validation, property and key checks (postgres)",
  (it) => {
    for (const [group, cases] of groups) {
      for (const rejection of cases.filter((c) => c.core === true)) {
        it.effect(`${group}: ${rejection.name}`, () => expectRejection(rejection))
      }
    }
    it.effect("property resolution: another organization's property", () => otherOrganizationsProperty)
    it.effect("authentication: revoked key", () => revokedKey)
    it.effect("authentication: the key a rotation replaced", () => rotatedKey)
    it.effect("a rejected request writes nothing", () => rejectedWritesNothing)
    it.effect("accepted: limits, normalisation and property resolution", () =>
      Effect.gen(function* () {
        const { fixture } = yield* Contract
        const result = resolved(
          yield* dryRun({
            nombre: `  ${emoji.repeat(200)} `,
            telefono: "+52 (55) 1234-5678",
            email: "ANA@Example.COM",
            mensaje: "m".repeat(2000),
            propiedad: { codigo: "abc-1234" },
            extras: { ...extrasOf(19, null), precio: 12.5 }
          })
        )
        assert.strictEqual(result.nombre, emoji.repeat(200))
        assert.strictEqual(result.email, "ana@example.com")
        assert.strictEqual(result.development_id, fixture.propertyId)
        assert.deepStrictEqual(result.extras, { precio: "12.5" })
        const raw = paddedBody(valid, limit)
        assert.strictEqual((yield* post(undefined, { raw })).status, 201)
      })
    )
  }
)
