import { createHash } from "node:crypto"
import canonicalize from "canonicalize"

// Throws for values with no RFC 8785 form: undefined, NaN/Infinity and strings with lone surrogates. Of these only
// lone surrogates can come out of JSON.parse (from "\ud800"-style escapes), which I-JSON forbids anyway.
export const requestFingerprint = (body: unknown): string => {
  const canonical = canonicalize(body)
  if (canonical === undefined) throw new TypeError("The request body has no JSON form to fingerprint")
  return createHash("sha256").update(canonical, "utf8").digest("hex")
}
