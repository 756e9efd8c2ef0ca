import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "fast-check"
import { Limits } from "../../src/Api/LeadRequest.ts"
import { layerMemoryServices } from "../support/Client.ts"
import { Contract, dryRun, send } from "./harness.ts"
import { SchemaArbitraries } from "./schemaArbitraries.ts"

const whitespace = fc.constantFrom("", " ", "  ", "\t", "\u00a0", "\u3000", "\n ")
const unpaired = fc.constantFrom("\ud800", "\udfff", "\u0000")

/**
 * Keys of every kind the two sides could read differently: any text, blanks, NUL and unpaired
 * surrogates, and keys around the 60-character limit with white space around them (the service
 * once counted a key after trimming it, the document as sent).
 */
const keys = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 70 }),
  fc.string({ unit: "binary", maxLength: 70 }),
  whitespace,
  fc
    .tuple(whitespace, fc.string({ unit: "grapheme-ascii", minLength: 56, maxLength: 62 }), whitespace)
    .map(([before, key, after]) => before + key + after),
  fc
    .tuple(fc.string({ unit: "grapheme-ascii", maxLength: 5 }), unpaired, fc.string({ maxLength: 5 }))
    .map(([before, odd, after]) => before + odd + after),
  fc.integer({ min: Limits.extrasKey - 1, max: Limits.extrasKey + 1 }).map((n) => "\u{1F600}".repeat(n))
)

/**
 * docs/contract.md#1-limits-reject-they-never-trim: the OpenAPI document the service serves and the
 * service itself agree on every `extras` key, both ways: each key the document's `propertyNames`
 * admits is accepted, each it refuses is refused with 400 on `extras` or `extras.<key>`.
 */
layer(Contract.layer(layerMemoryServices))("extras keys: the document and the service agree", (it) => {
  it.effect("on generated keys, what the document admits the service accepts, and nothing else", () =>
    Effect.gen(function* () {
      const served = yield* send({ method: "GET", path: "/v1/openapi.json" })
      assert.strictEqual(served.status, 200)
      const admits = new SchemaArbitraries(served.body).validator(
        "/components/schemas/LeadRequest/properties/extras"
      )
      const sample = [
        "",
        " ",
        "utm",
        ` ${"k".repeat(Limits.extrasKey)} `,
        "k".repeat(Limits.extrasKey + 1),
        ...fc.sample(keys, 400)
      ]
      const disagreements: Array<string> = []
      let admitted = 0
      for (const key of sample) {
        const byDocument = admits({ [key]: "v" })
        const answer = yield* dryRun({ nombre: "Ana", extras: { [key]: "v" } })
        const accepted = answer.status === 200
        if (accepted) admitted++
        if (!accepted) {
          assert.strictEqual(answer.status, 400, `key ${JSON.stringify(key)}: ${answer.text}`)
          assert.oneOf(answer.body.error.field, ["extras", `extras.${key}`], JSON.stringify(key))
        }
        if (byDocument !== accepted)
          disagreements.push(
            `${JSON.stringify(key)}: the document ${byDocument ? "admits" : "refuses"} it, the service ${accepted ? "accepts" : "refuses"} it`
          )
      }
      assert.deepStrictEqual(disagreements, [])
      assert.isAbove(admitted, 50, "the sample holds keys the service accepts")
      assert.isAbove(sample.length - admitted, 50, "and keys it refuses")
    })
  )
})
