import { hash } from "node:crypto"

const noCanonicalForm = (what: string) =>
  new TypeError(`The request body has no JSON form to fingerprint: ${what}`)

/**
 * The RFC 8785 (JCS) form of a JSON value as `JSON.parse` gives it: object keys sorted by UTF-16
 * code units, no whitespace, strings and numbers as ECMAScript's `JSON.stringify` writes them
 * (which is what RFC 8785 specifies). Throws for what has no such form: undefined, functions,
 * symbols, bigints, NaN/Infinity and strings or keys with lone surrogates (which `JSON.parse`
 * can produce from "\ud800"-style escapes; I-JSON forbids them). Written for the request path:
 * the `canonicalize` package (the test's oracle) allocates a cycle-tracking `Set` and arrays per
 * level on every call.
 */
export const canonicalJson = (value: unknown): string => {
  switch (typeof value) {
    case "string":
      if (!value.isWellFormed()) throw noCanonicalForm("a lone surrogate")
      return JSON.stringify(value)
    case "number":
      if (!Number.isFinite(value)) throw noCanonicalForm(String(value))
      return JSON.stringify(value)
    case "boolean":
      return value ? "true" : "false"
    case "object": {
      if (value === null) return "null"
      if (Array.isArray(value)) {
        let text = "["
        for (let index = 0; index < value.length; index++) {
          if (index > 0) text += ","
          text += canonicalJson(value[index])
        }
        return `${text}]`
      }
      const record = value as Record<string, unknown>
      const keys = Object.keys(record).sort()
      let text = "{"
      for (let index = 0; index < keys.length; index++) {
        const key = keys[index] as string
        if (index > 0) text += ","
        text += `${canonicalJson(key)}:${canonicalJson(record[key])}`
      }
      return `${text}}`
    }
    default:
      throw noCanonicalForm(typeof value)
  }
}

/** The SHA-256 (hex) of a parsed request body's RFC 8785 canonical form. */
export const requestFingerprint = (body: unknown): string => hash("sha256", canonicalJson(body), "hex")
