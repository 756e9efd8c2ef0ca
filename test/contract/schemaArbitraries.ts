import { Ajv2020 } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import * as fc from "fast-check"

/**
 * fast-check arbitraries derived from the JSON Schemas of an OpenAPI 3.1 document, and a real
 * validator over the same document, so a property can say "what the document calls valid" without a
 * hand-written copy of its rules. The subset is what a request body or header parameter uses: types,
 * `$ref`, `allOf`, `anyOf`/`oneOf`, `enum`/`const`, strings (`minLength`, `maxLength`, `pattern`,
 * `format: uuid`), numbers (`integer`, `minimum`, `maximum`), booleans, null, and objects (`properties`, `required`,
 * `additionalProperties`, `propertyNames`, `minProperties`, `maxProperties`, a property schema `false`).
 * Anything else throws, so a document that grows a keyword makes the generator grow too.
 */

export type Json = Record<string, unknown>

/** A kind of mutation, weighted by how many kinds it stands for, so deep fields are not starved. */
type Option = fc.WeightedArbitrary<Mutant>

const leaf = (arbitrary: fc.Arbitrary<Mutant>): Option => ({ weight: 1, arbitrary })

const choose = (options: ReadonlyArray<Option>): fc.Arbitrary<Mutant> => fc.oneof(...options)

const weightOf = (options: ReadonlyArray<Option>) => options.reduce((sum, option) => sum + option.weight, 0)

/** A value a schema should refuse, the one change that makes it so, and where. */
export interface Mutant {
  readonly value: unknown
  readonly mutation: string
  readonly path: ReadonlyArray<string>
}

const understood = new Set([
  "$ref",
  "type",
  "allOf",
  "anyOf",
  "oneOf",
  "enum",
  "const",
  "minLength",
  "maxLength",
  "minimum",
  "maximum",
  "pattern",
  "format",
  "properties",
  "required",
  "additionalProperties",
  "propertyNames",
  "minProperties",
  "maxProperties",
  "title",
  "description",
  "example",
  "examples",
  "default"
])

const jsonTypes = ["null", "boolean", "number", "string", "object", "array"] as const
type JsonType = (typeof jsonTypes)[number]

const jsonTypeOf = (value: unknown): JsonType =>
  value === null
    ? "null"
    : Array.isArray(value)
      ? "array"
      : (typeof value as "boolean" | "number" | "string" | "object")

const codePoints = (text: string) => [...text].length

const uuidShape = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/iu

/**
 * Characters that tell normalising code from code that counts what was sent: ASCII and Unicode
 * spaces, a BOM, letters whose NFC form or lower case is longer, a combining mark, an astral
 * character (one code point, two UTF-16 units), an unpaired surrogate, NUL and other controls.
 */
const tellingCharacters = [
  " ",
  "\t",
  "\n",
  "\u00a0",
  "\u2003",
  "\u3000",
  "\ufeff",
  "\u0344",
  "\u0130",
  "\u00df",
  "\u00e9",
  "e\u0301",
  "\u{1F600}",
  "\u{10FFFF}",
  "\ud800",
  "\udfff",
  "\u0000",
  "\u007f",
  "@",
  "."
]

/**
 * What PostgreSQL's text cannot hold: NUL and unpaired surrogates, high and low (docs/contract.md#2-normalisation).
 * Each is inserted between whole code points, so it stays unpaired.
 */
const unstorableCharacters = ["\u0000", "\ud800", "\udbff", "\udc00", "\udfff"]

const blankCharacters = [" ", "\t", "\n", "\r", "\u00a0", "\u2003", "\u3000", "\ufeff"]

/** One character of text: any code point, printable ASCII, or a telling one. */
const character = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: fc.constantFrom(...tellingCharacters) }
)

const insertAt = (text: string, at: number, inserted: string) => {
  const units = [...text]
  const index = at % (units.length + 1)
  return [...units.slice(0, index), inserted, ...units.slice(index)].join("")
}

const replaceAt = (text: string, at: number, replacement: string) => {
  const units = [...text]
  if (units.length === 0) return replacement
  const index = at % units.length
  return [...units.slice(0, index), replacement, ...units.slice(index + 1)].join("")
}

/** A value of a JSON type, any content. */
const valueOfType = (type: JsonType): fc.Arbitrary<unknown> => {
  switch (type) {
    case "null":
      return fc.constant(null)
    case "boolean":
      return fc.boolean()
    case "number":
      return fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }))
    case "string":
      return fc.string({ unit: character, maxLength: 12 })
    case "object":
      return fc.dictionary(fc.string({ maxLength: 6 }), fc.oneof(fc.integer(), fc.string({ maxLength: 6 })), {
        maxKeys: 3
      })
    case "array":
      return fc.array(fc.oneof(fc.integer(), fc.string({ maxLength: 6 })), { maxLength: 3 })
  }
}

export class SchemaArbitraries {
  readonly #document: Json
  readonly #ajv: Ajv2020

  constructor(document: Json) {
    this.#document = document
    this.#ajv = new Ajv2020({ strict: false, allErrors: false, validateSchema: false })
    addFormatsModule.default(this.#ajv)
    this.#ajv.addSchema(structuredClone(document), "https://openapi.test/document.json")
  }

  /** Follows local `$ref`s (`#/components/...`) to the schema they name. */
  deref(schema: unknown): Json {
    if (typeof schema !== "object" || schema === null)
      throw new Error(`not a schema: ${JSON.stringify(schema)}`)
    const ref = (schema as Json).$ref
    if (typeof ref !== "string") return schema as Json
    if (!ref.startsWith("#/")) throw new Error(`only local $refs are followed: ${ref}`)
    let current: unknown = this.#document
    for (const part of ref.slice(2).split("/")) {
      current = (current as Json)[part.replaceAll("~1", "/").replaceAll("~0", "~")]
    }
    return this.deref(current)
  }

  /** A validator for the schema at a JSON pointer of the document (the real one, not this module's reading). */
  validator(pointer: string): (value: unknown) => boolean {
    const validate = this.#ajv.compile({ $ref: `https://openapi.test/document.json#${pointer}` })
    return (value) => validate(value) === true
  }

  /** The schema and its `allOf` members, each dereferenced, as the list of parts a value must satisfy. */
  #parts(schema: unknown): ReadonlyArray<Json> {
    const resolved = this.deref(schema)
    for (const key of Object.keys(resolved)) {
      if (!understood.has(key)) throw new Error(`the generator does not understand "${key}" yet`)
    }
    const { allOf, ...rest } = resolved
    return [rest, ...((allOf ?? []) as ReadonlyArray<unknown>).flatMap((member) => this.#parts(member))]
  }

  /** The alternatives of a union with the union's own constraints added to each, or undefined. */
  #alternatives(parts: ReadonlyArray<Json>): ReadonlyArray<Json> | undefined {
    const union = parts.find((part) => part.anyOf !== undefined || part.oneOf !== undefined)
    if (union === undefined) return undefined
    const members = (union.anyOf ?? union.oneOf) as ReadonlyArray<unknown>
    const { anyOf: _anyOf, oneOf: _oneOf, ...own } = union
    const others = parts.filter((part) => part !== union)
    return members.map((member) => ({ allOf: [member, own, ...others] }))
  }

  #types(parts: ReadonlyArray<Json>): ReadonlyArray<JsonType> {
    let types: ReadonlyArray<JsonType> = jsonTypes
    for (const part of parts) {
      if (part.type !== undefined) {
        const declared = (Array.isArray(part.type) ? part.type : [part.type]).map((type) =>
          type === "integer" ? "number" : type
        )
        types = types.filter((type) => declared.includes(type))
      }
    }
    if (types.length === jsonTypes.length) {
      const implied = parts.some(
        (part) => part.properties !== undefined || part.additionalProperties !== undefined
      )
        ? ["object"]
        : parts.some((part) => part.pattern !== undefined || part.maxLength !== undefined)
          ? ["string"]
          : []
      if (implied.length > 0) types = implied as ReadonlyArray<JsonType>
    }
    return types
  }

  /** The JSON types a schema admits at all (a union's members' together). */
  admittedTypes(schema: unknown): ReadonlyArray<JsonType> {
    const parts = this.#parts(schema)
    const alternatives = this.#alternatives(parts)
    if (alternatives === undefined) {
      const enumerated = parts.find((part) => part.enum !== undefined || part.const !== undefined)
      if (enumerated !== undefined) {
        return [
          ...new Set(
            ((enumerated.enum as ReadonlyArray<unknown> | undefined) ?? [enumerated.const]).map(jsonTypeOf)
          )
        ]
      }
      return this.#types(parts)
    }
    return [...new Set(alternatives.flatMap((alternative) => this.admittedTypes(alternative)))]
  }

  // -- strings ----------------------------------------------------------------------------------

  #stringRules(parts: ReadonlyArray<Json>) {
    // the same schema met twice (a union's member and its object both declare a property) is one rule
    const patterns = [
      ...new Set(parts.flatMap((part) => (typeof part.pattern === "string" ? [part.pattern] : [])))
    ]
    // a generator reads a string's own pattern and misses a second one in an `allOf`
    if (patterns.length > 1)
      throw new Error(`a string states one pattern, generators ignore the rest: ${JSON.stringify(patterns)}`)
    const minimums = parts.flatMap((part) => (typeof part.minLength === "number" ? [part.minLength] : []))
    const maximums = parts.flatMap((part) => (typeof part.maxLength === "number" ? [part.maxLength] : []))
    const formats = parts.flatMap((part) => (typeof part.format === "string" ? [part.format] : []))
    for (const format of formats) {
      if (format !== "uuid") throw new Error(`the generator does not know format "${format}" yet`)
    }
    const minLength = Math.max(0, ...minimums)
    const maxLength = maximums.length === 0 ? undefined : Math.min(...maximums)
    const regexes = patterns.map((pattern) => new RegExp(pattern, "u"))
    const satisfies = (text: string) =>
      codePoints(text) >= minLength &&
      (maxLength === undefined || codePoints(text) <= maxLength) &&
      regexes.every((regex) => regex.test(text)) &&
      (!formats.includes("uuid") || uuidShape.test(text))
    return { regexes, minLength, maxLength, uuid: formats.includes("uuid"), satisfies }
  }

  /** Strings the rules admit: from each pattern, from any characters, and stretched to the maximum length. */
  #validString(parts: ReadonlyArray<Json>): fc.Arbitrary<string> {
    const rules = this.#stringRules(parts)
    if (rules.uuid) return fc.uuid().filter(rules.satisfies)
    const { minLength, maxLength } = rules
    const generic = fc.string({
      unit: character,
      minLength,
      maxLength: Math.min(maxLength ?? 30, minLength + 30)
    })
    const seeds: ReadonlyArray<fc.Arbitrary<string>> = [
      ...rules.regexes.map((regex) =>
        fc.stringMatching(regex, maxLength === undefined ? {} : { maxLength: Math.min(maxLength, 60) })
      ),
      generic
    ]
    const seed = fc.oneof(...seeds).filter(rules.satisfies)
    const decorated = fc
      .tuple(seed, character, fc.nat())
      .map(([text, inserted, at]) => insertAt(text, at, inserted))
    const stretched =
      maxLength === undefined
        ? decorated
        : fc.tuple(seed, character, fc.nat(), fc.nat({ max: 2 })).map(([text, filler, at, short]) => {
            const missing = maxLength - short - codePoints(text)
            return missing <= 0 ? text : insertAt(text, at, filler.repeat(missing))
          })
    return fc
      .oneof(
        { weight: 4, arbitrary: seed },
        { weight: 3, arbitrary: decorated },
        { weight: 2, arbitrary: stretched }
      )
      .filter(rules.satisfies)
  }

  #invalidString(parts: ReadonlyArray<Json>): ReadonlyArray<Option> {
    const rules = this.#stringRules(parts)
    const valid = this.#validString(parts)
    const options: Array<Option> = []
    if (rules.maxLength !== undefined) {
      const maxLength = rules.maxLength
      options.push(
        leaf(
          fc
            .tuple(valid, character, fc.nat(), fc.integer({ min: 1, max: 3 }))
            .map(([text, filler, at, over]) => ({
              value: insertAt(text, at, filler.repeat(Math.max(1, maxLength + over - codePoints(text)))),
              mutation: `longer than maxLength ${maxLength}`,
              path: []
            }))
        )
      )
    }
    if (rules.minLength > 0) {
      options.push(
        leaf(
          valid.map((text) => ({
            value: [...text].slice(0, rules.minLength - 1).join(""),
            mutation: `shorter than minLength ${rules.minLength}`,
            path: []
          }))
        )
      )
    }
    if (rules.regexes.length > 0 || rules.uuid) {
      const breaks = (text: string) =>
        !rules.regexes.every((regex) => regex.test(text)) || (rules.uuid && !uuidShape.test(text))
      options.push(
        leaf(
          fc
            .oneof(
              fc
                .tuple(valid, character, fc.nat())
                .map(([text, inserted, at]) => insertAt(text, at, inserted)),
              fc
                .tuple(valid, character, fc.nat())
                .map(([text, replacement, at]) => replaceAt(text, at, replacement)),
              fc.string({ unit: character, maxLength: rules.maxLength ?? 30 })
            )
            .filter(breaks)
            .map((value) => ({ value, mutation: "breaks pattern or format", path: [] }))
        )
      )
      // NUL or an unpaired surrogate in an admitted text: what a pattern refusing them must refuse
      if (unstorableCharacters.every((inserted) => breaks(`a${inserted}a`))) {
        options.push(
          leaf(
            fc
              .tuple(valid, fc.constantFrom(...unstorableCharacters), fc.nat())
              .map(([text, inserted, at]) => insertAt(text, at, inserted))
              .filter(breaks)
              .map((value) => ({ value, mutation: "holds NUL or an unpaired surrogate", path: [] }))
          )
        )
      }
      const blankLength = Math.max(1, rules.minLength)
      if (breaks(" ".repeat(blankLength)) && blankLength <= (rules.maxLength ?? blankLength)) {
        // blank text of an admitted length: what a pattern asking for content must refuse
        options.push(
          leaf(
            fc
              .string({
                unit: fc.constantFrom(...blankCharacters),
                minLength: blankLength,
                maxLength: Math.max(blankLength, Math.min(rules.maxLength ?? 8, 8))
              })
              .filter(breaks)
              .map((value) => ({ value, mutation: "blank", path: [] }))
          )
        )
      }
    }
    return options
  }

  // -- objects ----------------------------------------------------------------------------------

  #objectRules(parts: ReadonlyArray<Json>) {
    const declared = new Map<string, Array<unknown>>()
    const forbidden = new Set<string>()
    for (const part of parts) {
      for (const [name, schema] of Object.entries((part.properties ?? {}) as Json)) {
        // the schema `false`: the property must be absent
        if (schema === false) forbidden.add(name)
        else declared.set(name, [...(declared.get(name) ?? []), schema])
      }
    }
    // a part with `additionalProperties: false` admits only the names it declares itself, so where
    // parts meet (an `allOf`, a `oneOf` member with its union's object) only names every closed part
    // declares may be present: `{codigo, id}` is one key too many for the `{codigo}` member
    const closedParts = parts.filter((part) => part.additionalProperties === false)
    const admissible = (name: string) =>
      !forbidden.has(name) &&
      closedParts.every((part) => {
        const schema = ((part.properties ?? {}) as Json)[name]
        return schema !== undefined && schema !== false
      })
    const properties = new Map([...declared].filter(([name]) => admissible(name)))
    /** Declared somewhere, yet refused here: what a neighbouring alternative names. */
    const refused = new Map([...declared].filter(([name]) => !admissible(name)))
    for (const name of forbidden) if (!refused.has(name)) refused.set(name, [])
    const required = [...new Set(parts.flatMap((part) => (part.required ?? []) as ReadonlyArray<string>))]
    const additional = parts.flatMap((part) =>
      part.additionalProperties === undefined ? [] : [part.additionalProperties]
    )
    const closed = additional.includes(false)
    const propertyNames = parts.flatMap((part) =>
      part.propertyNames === undefined ? [] : [part.propertyNames]
    )
    const minimums = parts.flatMap((part) =>
      typeof part.minProperties === "number" ? [part.minProperties] : []
    )
    const maximums = parts.flatMap((part) =>
      typeof part.maxProperties === "number" ? [part.maxProperties] : []
    )
    return {
      properties,
      refused,
      required,
      closed,
      additionalValues: { allOf: additional.filter((schema) => schema !== true) },
      names: { type: "string", allOf: propertyNames },
      minProperties: Math.max(0, ...minimums),
      maxProperties: maximums.length === 0 ? undefined : Math.min(...maximums)
    }
  }

  #validObject(parts: ReadonlyArray<Json>): fc.Arbitrary<Json> {
    const rules = this.#objectRules(parts)
    const declaredValue = (name: string) => this.valid({ allOf: rules.properties.get(name) })
    const optional = [...rules.properties.keys()].filter((name) => !rules.required.includes(name))
    const room = (rules.maxProperties ?? Number.POSITIVE_INFINITY) - rules.required.length
    const chosen = fc.subarray(optional, {
      minLength: Math.min(optional.length, Math.max(0, rules.minProperties - rules.required.length)),
      maxLength: Math.min(optional.length, Math.max(0, room))
    })
    const extraName = this.#validString(this.#parts(rules.names)).filter(
      (name) => !rules.properties.has(name)
    )
    const extras = rules.closed
      ? fc.constant({})
      : fc
          .nat({ max: Math.min(rules.maxProperties ?? 30, 30) })
          .chain((count) => fc.uniqueArray(extraName, { minLength: count, maxLength: count }))
          .chain((keys) =>
            fc
              .tuple(...keys.map(() => this.valid(rules.additionalValues)))
              .map((values) => Object.fromEntries(keys.map((key, i) => [key, values[i]])))
          )
    return fc
      .tuple(
        chosen.chain((names) =>
          fc.record(
            Object.fromEntries([...rules.required, ...names].map((name) => [name, declaredValue(name)]))
          )
        ),
        extras
      )
      .map(([declared, extra]) => ({ ...declared, ...extra }) as Json)
      .filter((object) => {
        const count = Object.keys(object).length
        return count >= rules.minProperties && count <= (rules.maxProperties ?? Number.POSITIVE_INFINITY)
      })
  }

  #invalidObject(parts: ReadonlyArray<Json>): ReadonlyArray<Option> {
    const rules = this.#objectRules(parts)
    const valid = this.#validObject(parts)
    const maxProperties = rules.maxProperties ?? Number.POSITIVE_INFINITY
    /** The object with `name` set, other optional properties dropped if it would have too many. */
    const withProperty = (object: Json, name: string, value: unknown) => {
      const result: Json = { ...object, [name]: value }
      for (const other of Object.keys(object)) {
        if (Object.keys(result).length <= maxProperties) break
        if (other !== name && !rules.required.includes(other)) delete result[other]
      }
      return result
    }
    const options: Array<Option> = []
    for (const name of rules.required) {
      options.push(
        leaf(
          valid.map((object) => {
            const { [name]: _removed, ...rest } = object
            return { value: rest, mutation: `without required ${name}`, path: [name] }
          })
        )
      )
    }
    for (const [name, schemas] of rules.properties) {
      const inner = this.#invalidOptions({ allOf: schemas })
      options.push({
        weight: weightOf(inner),
        arbitrary: fc.tuple(valid, choose(inner)).map(([object, mutant]) => ({
          value: withProperty(object, name, mutant.value),
          mutation: mutant.mutation,
          path: [name, ...mutant.path]
        }))
      })
    }
    for (const [name, schemas] of rules.refused) {
      // a name another alternative (or the enclosing object) declares: with its own valid value
      options.push(
        leaf(
          fc
            .tuple(valid, schemas.length === 0 ? valueOfType("string") : this.valid({ allOf: schemas }))
            .map(([object, value]) => ({
              value: { ...object, [name]: value },
              mutation: `property ${name} is not admitted here`,
              path: [name]
            }))
        )
      )
    }
    if (rules.closed) {
      options.push(
        leaf(
          fc
            .tuple(
              valid,
              fc.string({ unit: character, maxLength: 12 }).filter((name) => !rules.properties.has(name)),
              valueOfType("string")
            )
            .map(([object, name, value]) => ({
              value: { ...object, [name]: value },
              mutation: `undeclared property ${JSON.stringify(name)}`,
              path: [name]
            }))
        )
      )
    } else {
      const names = this.#parts(rules.names)
      const badNames = this.#invalidString(names)
      options.push({
        weight: weightOf(badNames),
        arbitrary: fc
          .tuple(valid, choose(badNames), this.valid(rules.additionalValues))
          .filter(([object, name]) => !Object.hasOwn(object, name.value as string))
          .map(([object, name, value]) => ({
            value: withProperty(object, name.value as string, value),
            mutation: `property name ${name.mutation}`,
            path: [name.value as string]
          }))
      })
      const badValues = this.#invalidOptions(rules.additionalValues)
      options.push({
        weight: weightOf(badValues),
        arbitrary: fc
          .tuple(valid, this.#validString(names), choose(badValues))
          .filter(([object, name]) => !rules.properties.has(name) && !Object.hasOwn(object, name))
          .map(([object, name, mutant]) => ({
            value: withProperty(object, name, mutant.value),
            mutation: mutant.mutation,
            path: [name, ...mutant.path]
          }))
      })
    }
    if (rules.maxProperties !== undefined) {
      const addable = rules.closed
        ? fc.constant([...rules.properties.keys()])
        : fc.uniqueArray(this.#validString(this.#parts(rules.names)), {
            minLength: maxProperties + 1,
            maxLength: maxProperties + 3
          })
      options.push(
        leaf(
          fc
            .tuple(valid, addable)
            .chain(([object, names]) => {
              const missing = names.filter((name) => !Object.hasOwn(object, name))
              return fc
                .tuple(
                  ...missing.map((name) =>
                    this.valid(
                      rules.properties.has(name)
                        ? { allOf: rules.properties.get(name) }
                        : rules.additionalValues
                    )
                  )
                )
                .map((values) => ({
                  ...object,
                  ...Object.fromEntries(missing.map((name, i) => [name, values[i]]))
                }))
            })
            .filter((object) => Object.keys(object).length > maxProperties)
            .map((value) => ({ value, mutation: `more than maxProperties ${maxProperties}`, path: [] }))
        )
      )
    }
    if (rules.minProperties > 0 && rules.required.length < rules.minProperties) {
      options.push(
        leaf(
          fc.constant({ value: {}, mutation: `fewer than minProperties ${rules.minProperties}`, path: [] })
        )
      )
    }
    return options
  }

  // -- any schema -------------------------------------------------------------------------------

  // -- numbers ----------------------------------------------------------------------------------

  #numberRules(parts: ReadonlyArray<Json>) {
    const minimums = parts.flatMap((part) => (typeof part.minimum === "number" ? [part.minimum] : []))
    const maximums = parts.flatMap((part) => (typeof part.maximum === "number" ? [part.maximum] : []))
    return {
      integer: parts.some((part) => part.type === "integer"),
      minimum: minimums.length === 0 ? undefined : Math.max(...minimums),
      maximum: maximums.length === 0 ? undefined : Math.min(...maximums)
    }
  }

  #validNumber(parts: ReadonlyArray<Json>): fc.Arbitrary<number> {
    const { integer, minimum, maximum } = this.#numberRules(parts)
    if (integer) {
      const min = Math.ceil(minimum ?? Number.MIN_SAFE_INTEGER)
      const max = Math.floor(maximum ?? Number.MAX_SAFE_INTEGER)
      // the bounds themselves and small values, beside any in between
      return fc.oneof(
        fc.constantFrom(min, max),
        fc.integer({ min, max: Math.min(max, min + 1000) }),
        fc.integer({ min, max })
      )
    }
    if (minimum === undefined && maximum === undefined) return valueOfType("number") as fc.Arbitrary<number>
    return fc.double({
      ...(minimum === undefined ? {} : { min: minimum }),
      ...(maximum === undefined ? {} : { max: maximum }),
      noNaN: true,
      noDefaultInfinity: true
    })
  }

  #invalidNumber(parts: ReadonlyArray<Json>): ReadonlyArray<Option> {
    const { integer, minimum, maximum } = this.#numberRules(parts)
    const options: Array<Option> = []
    if (minimum !== undefined)
      options.push(
        leaf(
          fc
            .oneof(
              fc.constant(minimum - 1),
              fc.double({ max: minimum, maxExcluded: true, noNaN: true, noDefaultInfinity: true })
            )
            .map((value) => ({ value, mutation: `below minimum ${minimum}`, path: [] }))
        )
      )
    if (maximum !== undefined)
      options.push(
        leaf(
          fc
            .oneof(
              fc.constant(maximum + 1),
              fc.double({ min: maximum, minExcluded: true, noNaN: true, noDefaultInfinity: true })
            )
            .map((value) => ({ value, mutation: `above maximum ${maximum}`, path: [] }))
        )
      )
    if (integer) {
      // a fraction beside an admitted integer small enough to keep it (past 2^52 a double has none)
      const min = Math.max(Math.ceil(minimum ?? -1e6), -1e6)
      const max = Math.max(min, Math.min(Math.floor(maximum ?? 1e6), 1e6))
      options.push(
        leaf(
          fc
            .integer({ min, max })
            .map((value) => ({ value: value + 0.5, mutation: "not an integer", path: [] }))
        )
      )
    }
    return options
  }

  /** Values the schema admits (by this module's reading; the document's validator has the last word). */
  valid(schema: unknown): fc.Arbitrary<unknown> {
    const parts = this.#parts(schema)
    const alternatives = this.#alternatives(parts)
    if (alternatives !== undefined)
      return fc.oneof(...alternatives.map((alternative) => this.valid(alternative)))
    const enumerated = parts.find((part) => part.enum !== undefined || part.const !== undefined)
    if (enumerated !== undefined) {
      return fc.constantFrom(
        ...((enumerated.enum as ReadonlyArray<unknown> | undefined) ?? [enumerated.const])
      )
    }
    const types = this.#types(parts)
    if (types.length === 0) throw new Error(`no type admits ${JSON.stringify(parts)}`)
    return fc.oneof(
      ...types.map((type): fc.Arbitrary<unknown> => {
        switch (type) {
          case "string":
            return this.#validString(parts)
          case "object":
            return this.#validObject(parts)
          case "number":
            return this.#validNumber(parts)
          case "array":
            throw new Error("the generator does not know arrays yet")
          default:
            return valueOfType(type)
        }
      })
    )
  }

  /** Values the schema refuses, each one change away from an admitted value (or of a wrong type). */
  invalid(schema: unknown): fc.Arbitrary<Mutant> {
    return choose(this.#invalidOptions(schema))
  }

  #invalidOptions(schema: unknown): ReadonlyArray<Option> {
    const parts = this.#parts(schema)
    const wrongTypes = jsonTypes.filter((type) => !this.admittedTypes(schema).includes(type))
    const alternatives = this.#alternatives(parts)
    const options: Array<Option> =
      alternatives === undefined
        ? [...this.#invalidOfOne(parts)]
        : // refused by one member; the validator discards those another member admits
          alternatives.flatMap((alternative) => this.#invalidOptions(alternative))
    if (wrongTypes.length > 0) {
      options.push(
        leaf(
          fc
            .constantFrom(...wrongTypes)
            .chain(valueOfType)
            .map((value) => ({ value, mutation: `of type ${jsonTypeOf(value)}`, path: [] }))
        )
      )
    }
    if (options.length === 0) throw new Error(`nothing is refused by ${JSON.stringify(schema)}`)
    return options
  }

  #invalidOfOne(parts: ReadonlyArray<Json>): ReadonlyArray<Option> {
    const enumerated = parts.find((part) => part.enum !== undefined || part.const !== undefined)
    if (enumerated !== undefined) {
      const allowed = (enumerated.enum as ReadonlyArray<unknown> | undefined) ?? [enumerated.const]
      const texts = allowed.filter((value) => typeof value === "string")
      const near =
        texts.length === 0
          ? []
          : [
              fc.constantFrom(...texts).map((value) => value.toUpperCase()),
              fc.constantFrom(...texts).map((value) => `${value}x`)
            ]
      return [
        leaf(
          fc
            .oneof(valueOfType("string"), ...near)
            .filter((value) => !allowed.includes(value))
            .map((value) => ({ value, mutation: "not in enum", path: [] }))
        )
      ]
    }
    return this.#types(parts).flatMap((type) =>
      type === "string"
        ? this.#invalidString(parts)
        : type === "object"
          ? this.#invalidObject(parts)
          : type === "number"
            ? this.#invalidNumber(parts)
            : []
    )
  }
}

/** Escapes a name for a JSON pointer. */
export const pointerPart = (name: string) => name.replaceAll("~", "~0").replaceAll("/", "~1")
