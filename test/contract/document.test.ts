import type { Layer } from "effect"
import * as fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Limits, normalizeNombre } from "../../src/Api/LeadRequest.ts"
import {
  type Answer,
  announceSeed,
  assertWellFormed,
  exchange,
  expressible,
  type FuzzTarget,
  fuzzParameters,
  fuzzSeed,
  leadPost,
  type Outgoing,
  startTarget,
  utf8
} from "../fuzz/support.ts"
import { type layerMemoryServices, layerPostgresServices } from "../support/Client.ts"
import { type Json, type Mutant, pointerPart, SchemaArbitraries } from "./schemaArbitraries.ts"

/**
 * Issue 25 item 4: the OpenAPI document says what `POST /v1/leads` takes, so every request it calls
 * valid gets 201 or 200 (or 422 for a property the catalog lacks) and every request it calls invalid
 * gets 400. The requests are generated from the document the service serves, classified by a JSON
 * Schema validator over that same document, and sent to the service on PostgreSQL.
 */

const asHarnessServices = <A>(services: Layer.Layer<A>) =>
  services as unknown as Layer.Layer<Layer.Success<typeof layerMemoryServices>>

interface HeaderParameter {
  readonly name: string
  readonly required: boolean
  readonly schema: unknown
  readonly admits: (value: string) => boolean
}

interface LeadCase {
  readonly body: unknown
  readonly headers: ReadonlyArray<readonly [string, string]>
}

interface Contract {
  readonly arbitraries: SchemaArbitraries
  readonly bodySchema: unknown
  readonly bodyAdmits: (value: unknown) => boolean
  readonly headers: ReadonlyArray<HeaderParameter>
}

const leadsPointer = `/paths/${pointerPart("/v1/leads")}/post`

/** The body schema and header parameters of `POST /v1/leads`, with the document's own validator for each. */
const contractOf = (document: Json): Contract => {
  const arbitraries = new SchemaArbitraries(document)
  const operation = arbitraries.deref(arbitraries.deref(document.paths as Json)["/v1/leads"] as Json)
    .post as Json
  const content = arbitraries.deref(operation.requestBody as Json).content as Json
  const bodySchema = (content["application/json"] as Json).schema
  const parameters = (operation.parameters ?? []) as ReadonlyArray<Json>
  const headers = parameters.flatMap((parameter, index) => {
    const resolved = arbitraries.deref(parameter)
    if (resolved.in !== "header") return []
    const admits = arbitraries.validator(`${leadsPointer}/parameters/${index}/schema`)
    return [
      {
        name: String(resolved.name).toLowerCase(),
        required: resolved.required === true,
        schema: resolved.schema,
        admits: (value: string) => admits(value)
      }
    ]
  })
  return {
    arbitraries,
    bodySchema,
    bodyAdmits: arbitraries.validator(
      `${leadsPointer}/requestBody/content/${pointerPart("application/json")}/schema`
    ),
    headers
  }
}

/** What fetch sends for a header value: leading and trailing HTTP whitespace is not part of it. */
const asSent = (value: string) => value.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, "")

/** The headers a case sends, checked against the document after fetch's trimming. */
const headersAdmitted = (
  contract: Contract,
  sent: ReadonlyArray<readonly [string, string]>,
  except?: string
) =>
  contract.headers.every((parameter) => {
    if (parameter.name === except) return true
    const value = sent.find(([name]) => name === parameter.name)?.[1]
    return value === undefined ? !parameter.required : parameter.admits(asSent(value))
  })

const codePoints = (text: string) => [...text].length

/**
 * KNOWN GAP (reported, not fixed): docs/contract.md#2-normalisation counts `nombre` after trimming, collapsing inner
 * whitespace and NFC, and an `email` after trimming; the document's `maxLength` counts
 * the text as sent, and JSON Schema cannot state a length after normalising. So a text too long as
 * sent only by its whitespace (or whose NFC form is shorter) is accepted, and a `nombre` whose NFC
 * form is longer than it was sent (U+0344 becomes two code points) is refused. Such cases are the
 * only ones left out, each by the rule it falls under; `null` when a case is not one.
 */
const normalisedLengthGap = (lead: unknown, path: ReadonlyArray<string> = []): string | null => {
  if (typeof lead !== "object" || lead === null || Array.isArray(lead)) return null
  const { nombre, email } = lead as Json
  const [field] = path
  if (typeof nombre === "string" && (field === undefined || field === "nombre")) {
    const sent = codePoints(nombre)
    const normalised = codePoints(normalizeNombre(nombre))
    if (sent <= Limits.nombre && normalised > Limits.nombre) return "nombre longer after NFC than as sent"
    if (field === "nombre" && sent > Limits.nombre && normalised >= 1 && normalised <= Limits.nombre)
      return "nombre too long only before normalising"
  }
  if (field === "email" && typeof email === "string") {
    if (codePoints(email) > Limits.email && codePoints(email.trim()) <= Limits.email)
      return "email too long only by its surrounding whitespace"
  }
  return null
}

let caseNumber = 0

/**
 * An Idempotency-Key reused with another body is a 409 by contract, so each case's key is made its
 * own: a suffix of printable ASCII within the 200 characters (the validator still has the last word).
 */
const ownKey = (value: string) => {
  const suffix = `#${fuzzSeed}.${++caseNumber}`
  return `${value.slice(0, Math.max(0, 200 - suffix.length))}${suffix}`
}

const validHeaders = (contract: Contract) =>
  fc
    .tuple(
      ...contract.headers.map((parameter) => {
        const value = contract.arbitraries.valid(parameter.schema) as fc.Arbitrary<string>
        // mostly absent: a dry-run writes nothing, and the writes are what the database must take
        return parameter.required
          ? value
          : fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: value })
      })
    )
    .map((values) =>
      contract.headers.flatMap((parameter, index) => {
        const value = values[index]
        if (value === undefined) return []
        return [[parameter.name, parameter.name === "idempotency-key" ? ownKey(value) : value] as const]
      })
    )

const dryRunHeader = "x-service-dry-run"

interface Catalog {
  readonly active: ReadonlyArray<Json>
  readonly missing: ReadonlyArray<Json>
}

/** A valid body, sometimes naming a property of the seeded catalog (active or archived) instead. */
const validCase = (contract: Contract, catalog: Catalog): fc.Arbitrary<LeadCase> =>
  fc
    .tuple(
      contract.arbitraries.valid(contract.bodySchema),
      fc.oneof(
        { weight: 4, arbitrary: fc.constant(null) },
        { weight: 1, arbitrary: fc.constantFrom(...catalog.active, ...catalog.missing) }
      ),
      validHeaders(contract)
    )
    .map(([body, reference, headers]) => ({
      body:
        reference === null || typeof body !== "object" || body === null
          ? body
          : { ...body, propiedad: reference },
      headers
    }))

interface InvalidCase extends LeadCase {
  readonly mutant: Mutant
  /** The header parameter the mutation is in, or undefined when it is in the body. */
  readonly header: string | undefined
}

/** One mutation: in the body (headers valid), or in one header (body valid). */
const invalidCase = (contract: Contract): fc.Arbitrary<InvalidCase> => {
  const inBody = fc
    .tuple(contract.arbitraries.invalid(contract.bodySchema), validHeaders(contract))
    .map(([mutant, headers]): InvalidCase => ({ body: mutant.value, headers, mutant, header: undefined }))
  const inHeader = contract.headers.map((parameter) =>
    fc
      .tuple(
        contract.arbitraries.valid(contract.bodySchema),
        contract.arbitraries.invalid(parameter.schema).filter((mutant) => typeof mutant.value === "string"),
        validHeaders(contract)
      )
      .map(([body, mutant, headers]): InvalidCase => {
        const others = headers.filter(
          ([name]) =>
            name !== parameter.name &&
            // the document: the Idempotency-Key is "ignored (not even validated) in dry-run"
            !(parameter.name === "idempotency-key" && name === dryRunHeader)
        )
        return {
          body,
          headers: [...others, [parameter.name, mutant.value as string]],
          mutant: { ...mutant, path: [parameter.name] },
          header: parameter.name
        }
      })
  )
  return fc.oneof(
    { weight: 3 * inHeader.length, arbitrary: inBody },
    ...inHeader.map((arbitrary) => ({ weight: 1, arbitrary }))
  )
}

const parse = (text: string): Json | undefined => {
  try {
    return JSON.parse(text) as Json
  } catch {
    return undefined
  }
}

const describeCase = (outgoing: Outgoing, answer: Answer, note = "") =>
  `${note}\n  headers: ${JSON.stringify(outgoing.headers.slice(2))}\n  body: ${
    outgoing.body === undefined ? "none" : new TextDecoder().decode(outgoing.body).slice(0, 600)
  }\n  answer: ${answer.status} ${answer.text.slice(0, 400)}`

describe(`POST /v1/leads held to its OpenAPI document, on PostgreSQL (seed ${fuzzSeed})`, () => {
  let target: FuzzTarget
  let contract: Contract
  let catalog: Catalog

  beforeAll(async () => {
    announceSeed("document")
    target = await startTarget(asHarnessServices(layerPostgresServices))
    const served = await exchange(target, { method: "GET", path: "/v1/openapi.json", headers: [] })
    expect(served.status).toBe(200)
    contract = contractOf(JSON.parse(served.text) as Json)
    expect(contract.headers.map((parameter) => parameter.name).sort()).toEqual([
      "idempotency-key",
      "x-service-dry-run"
    ])
    const { fixture } = target
    catalog = {
      active: [
        { codigo: "ABC-1234" },
        { codigo: "abc-1234" },
        { external_code: "EXT-1" },
        { id: fixture.propertyId }
      ],
      missing: [{ codigo: "OLD-0001" }, { id: fixture.archivedPropertyId }]
    }
  }, 60_000)
  afterAll(() => target.close())

  /** Whether `propiedad` names an active property of the seeded catalog (codigo case-insensitive, id in any case). */
  const namesActiveProperty = (reference: Json) =>
    (typeof reference.codigo === "string" && reference.codigo.toUpperCase() === "ABC-1234") ||
    reference.external_code === "EXT-1" ||
    (typeof reference.id === "string" && reference.id.toLowerCase() === target.fixture.propertyId)

  it("every request the document calls valid is created, enriched or dry-run (422 only for a property the catalog lacks)", async () => {
    await fc.assert(
      fc.asyncProperty(validCase(contract, catalog), async ({ body, headers }) => {
        fc.pre(contract.bodyAdmits(body) && headersAdmitted(contract, headers))
        fc.pre(normalisedLengthGap(body) === null)
        const outgoing = leadPost(target.fixture, utf8(JSON.stringify(body)), headers)
        fc.pre(expressible(outgoing))
        const answer = await exchange(target, outgoing)
        assertWellFormed(outgoing, answer)
        const lead = body as Json
        const reference = lead.propiedad as Json | null | undefined
        const response = parse(answer.text)
        if (reference != null && !namesActiveProperty(reference)) {
          expect(answer.status, describeCase(outgoing, answer, "a property the catalog lacks")).toBe(422)
          expect(response?.error, describeCase(outgoing, answer)).toMatchObject({
            code: "property_not_found",
            field: "propiedad"
          })
          return
        }
        if (headers.some(([name]) => name === dryRunHeader)) {
          expect(answer.status, describeCase(outgoing, answer, "a valid dry-run")).toBe(200)
          expect(response?.status).toBe("dry_run")
          return
        }
        const expected = lead.telefono == null ? [201] : [200, 201]
        expect(expected, describeCase(outgoing, answer, "a valid lead")).toContain(answer.status)
      }),
      fuzzParameters(150)
    )
  }, 120_000)

  it("every request the document calls invalid is a 400 naming the field it breaks", async () => {
    await fc.assert(
      fc.asyncProperty(invalidCase(contract), async ({ body, headers, mutant, header }) => {
        const bodyAdmitted = contract.bodyAdmits(body)
        const thisHeaderAdmitted =
          header === undefined ||
          contract.headers
            .find((parameter) => parameter.name === header)!
            .admits(asSent(headers.find(([name]) => name === header)![1]))
        fc.pre(
          header === undefined
            ? !bodyAdmitted && headersAdmitted(contract, headers)
            : bodyAdmitted && !thisHeaderAdmitted && headersAdmitted(contract, headers, header)
        )
        fc.pre(normalisedLengthGap(body) === null)
        fc.pre(header !== undefined || normalisedLengthGap(body, mutant.path) === null)
        const outgoing = leadPost(target.fixture, utf8(JSON.stringify(body)), headers)
        fc.pre(expressible(outgoing))
        const answer = await exchange(target, outgoing)
        assertWellFormed(outgoing, answer)
        const note = `${mutant.mutation} at ${mutant.path.join(".") || "the body"}`
        expect(answer.status, describeCase(outgoing, answer, note)).toBe(400)
        const error = parse(answer.text)?.error as Json
        expect(error.code).toBe("validation_error")
        const field = String(error.field)
        const where = mutant.path[0] ?? "body"
        if (header === undefined) {
          expect(field === where || field.startsWith(`${where}.`), describeCase(outgoing, answer, note)).toBe(
            true
          )
        } else {
          expect(field.toLowerCase(), describeCase(outgoing, answer, note)).toBe(header)
        }
      }),
      fuzzParameters(150)
    )
  }, 120_000)

  /** Sends a body alone and answers whether the document admits it and what the service said. */
  const judge = async (body: Json) => {
    const outgoing = leadPost(target.fixture, utf8(JSON.stringify(body)))
    const answer = await exchange(target, outgoing)
    assertWellFormed(outgoing, answer)
    return { admitted: contract.bodyAdmits(body), status: answer.status, answer: answer.text }
  }

  it("cases the properties found: an unpaired surrogate is refused by both, an e-mail counted in code points and a blank external_code admitted by both", async () => {
    for (const body of [
      { nombre: "Ana \ud800" },
      { nombre: "Ana", mensaje: "\udfff hola" },
      { nombre: "Ana", extras: { "utm\ud800": "x" } },
      { nombre: "Ana", propiedad: { external_code: "EXT\udc00" } }
    ]) {
      expect(await judge(body), JSON.stringify(body)).toMatchObject({ admitted: false, status: 400 })
    }
    for (const body of [
      { nombre: "Ana", email: `${"\u{1F600}".repeat(240)}@example.com` },
      { nombre: "Ana \u{1F600}", mensaje: "\u{1F600}", extras: { "\u{1F600}": "\u{1F600}" } }
    ]) {
      expect(await judge(body), JSON.stringify(body)).toMatchObject({ admitted: true, status: 201 })
    }
    expect(await judge({ nombre: "Ana", propiedad: { external_code: "   " } })).toMatchObject({
      admitted: true,
      status: 422
    })
  })

  /**
   * Where a schema under `schema` states a second `pattern` for its own value (an `allOf` member with
   * a `pattern` of its own, or one for property names), which a generator reading the schema's own
   * keywords misses.
   */
  const secondPatterns = (schema: unknown, at = ""): ReadonlyArray<string> => {
    if (typeof schema !== "object" || schema === null) return []
    const own = Array.isArray((schema as Json).allOf)
      ? ((schema as Json).allOf as ReadonlyArray<Json>).flatMap((member, index) =>
          "pattern" in member || (member.propertyNames as Json | undefined)?.pattern !== undefined
            ? [`${at}/allOf/${index}`]
            : []
        )
      : []
    return [
      ...own,
      ...Object.entries(schema).flatMap(([key, value]) => secondPatterns(value, `${at}/${key}`))
    ]
  }

  it("every string of the body states one pattern of its own, none in an allOf (which generators miss)", () => {
    const body = contract.arbitraries.deref(contract.bodySchema)
    expect(secondPatterns(body)).toEqual([])
    const properties = body.properties as Json
    const stringOf = (field: string) =>
      contract.arbitraries.deref(
        ((properties[field] as Json).anyOf as ReadonlyArray<Json> | undefined)?.[0] ?? properties[field]
      )
    for (const field of ["nombre", "email", "mensaje"])
      expect(stringOf(field).pattern, field).toEqual(expect.stringContaining("\\u0000\\uD800-\\uDFFF"))
  })

  it("NUL and unpaired surrogates in every text field: refused by the document and answered 400 naming the field", async () => {
    const unstorable = /^\S+ must not contain NUL \(U\+0000\) or unpaired surrogate characters$/
    /** A body with `text` in one field, the field its 400 names and the message's words. */
    const texts: ReadonlyArray<(text: string) => readonly [Json, string, RegExp]> = [
      (text) => [{ nombre: `Ana${text}` }, "nombre", unstorable],
      (text) => [{ nombre: "Ana", email: `ana${text}@example.com` }, "email", unstorable],
      (text) => [{ nombre: "Ana", mensaje: `hola${text}` }, "mensaje", unstorable],
      (text) => [{ nombre: "Ana", propiedad: { external_code: `EXT${text}` } }, "propiedad", unstorable],
      (text) => [{ nombre: "Ana", extras: { utm: `x${text}` } }, "extras.utm", unstorable],
      // a key that is not a text a key may be: refused as a field the object does not take
      (text) => [
        { nombre: "Ana", extras: { [`utm${text}`]: "x" } },
        `extras.utm${text}`,
        /is not a field of this object$/
      ]
    ]
    for (const bodyWith of texts) {
      for (const character of ["\u0000", "\ud800", "\udbff", "\udc00", "\udfff"]) {
        const [body, field, message] = bodyWith(character)
        const verdict = await judge(body)
        expect(verdict, JSON.stringify(body)).toMatchObject({ admitted: false, status: 400 })
        expect(JSON.parse(verdict.answer).error, JSON.stringify(body)).toMatchObject({
          code: "validation_error",
          field,
          message: expect.stringMatching(message)
        })
      }
    }
  })

  /**
   * Schemathesis 4 read the former `propiedad` (three optional keys and `maxProperties: 1`) as
   * admitting `{codigo, id}`: 2 failures of 117. The document now says "exactly one" as a `oneOf`
   * of three single-key objects; its arbitraries and its validator must both read it so.
   */
  it("propiedad: what the document's arbitraries call valid has exactly one key and is admitted; two keys are refused by the document and the service", async () => {
    const pointer = "/components/schemas/LeadRequest/properties/propiedad"
    const propiedad = contract.arbitraries.deref(
      (contract.arbitraries.deref(contract.bodySchema).properties as Json).propiedad
    )
    const admits = contract.arbitraries.validator(pointer)
    for (const value of fc.sample(contract.arbitraries.valid(propiedad), { numRuns: 500, seed: fuzzSeed })) {
      expect(admits(value), JSON.stringify(value)).toBe(true)
      if (value !== null) expect(Object.keys(value as Json), JSON.stringify(value)).toHaveLength(1)
    }
    const invalid = fc.sample(contract.arbitraries.invalid(propiedad), { numRuns: 500, seed: fuzzSeed })
    expect(
      invalid.some(
        ({ value }) => typeof value === "object" && value !== null && Object.keys(value).length > 1
      ),
      "the invalid arbitrary tries two keys"
    ).toBe(true)
    for (const reference of [
      { codigo: "ABC-1234", id: target.fixture.propertyId },
      { codigo: "ABC-1234", external_code: "EXT-1" },
      { external_code: "EXT-1", id: target.fixture.propertyId },
      { codigo: "ABC-1234", external_code: "EXT-1", id: target.fixture.propertyId },
      {}
    ]) {
      expect(admits(reference), JSON.stringify(reference)).toBe(false)
      const verdict = await judge({ nombre: "Ana", propiedad: reference })
      expect(verdict, JSON.stringify(reference)).toMatchObject({ admitted: false, status: 400 })
      expect(JSON.parse(verdict.answer).error).toMatchObject({ code: "validation_error", field: "propiedad" })
    }
    for (const reference of [
      { codigo: "ABC-1234" },
      { external_code: "EXT-1" },
      { id: target.fixture.propertyId }
    ]) {
      expect(await judge({ nombre: "Ana", propiedad: reference }), JSON.stringify(reference)).toMatchObject({
        admitted: true,
        status: 201
      })
    }
  })

  it("the known gaps of normalisedLengthGap are still there (when this fails, the gap is closed: drop its exclusion)", async () => {
    const gaps: ReadonlyArray<{ readonly body: Json; readonly path: ReadonlyArray<string> }> = [
      { body: { nombre: `  ${"n".repeat(Limits.nombre)}  ` }, path: ["nombre"] },
      { body: { nombre: `a${"  ".repeat(150)}b` }, path: ["nombre"] },
      { body: { nombre: "Ana", email: ` ${"e".repeat(Limits.email - 12)}@example.com ` }, path: ["email"] },
      // the other way round: admitted by the document, refused by the service
      { body: { nombre: "\u0344".repeat(Limits.nombre) }, path: [] }
    ]
    for (const { body, path } of gaps) {
      expect(normalisedLengthGap(body, path), JSON.stringify(body)).not.toBeNull()
      const admitted = path.length === 0
      expect(await judge(body), JSON.stringify(body)).toMatchObject({
        admitted,
        status: admitted ? 400 : 201
      })
    }
  })
})
