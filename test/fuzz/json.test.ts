import * as fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { leadLike, oddJson, validLead } from "./arbitraries.ts"
import {
  announceSeed,
  type FuzzTarget,
  fuzzParameters,
  fuzzSeed,
  leadPost,
  sendAndCheck,
  startTarget,
  utf8
} from "./support.ts"

describe(`fuzz: JSON bodies (seed ${fuzzSeed})`, () => {
  let target: FuzzTarget
  beforeAll(async () => {
    announceSeed("json")
    target = await startTarget()
  })
  afterAll(() => target.close())

  it("any JSON value that is not an object is a 400 on field body", async () => {
    await fc.assert(
      fc.asyncProperty(
        oddJson.filter((value) => typeof value !== "object" || value === null || Array.isArray(value)),
        async (value) => {
          const answer = await sendAndCheck(target, leadPost(target.fixture, utf8(JSON.stringify(value))))
          expect(answer.status).toBe(400)
          expect(JSON.parse(answer.text).error.field).toBe("body")
        }
      ),
      fuzzParameters(1_000)
    )
  })

  it("any JSON object answers 2xx or 4xx with the envelope and a valid field", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.string({ maxLength: 12 }), oddJson, { maxKeys: 8 }),
        fc.constantFrom<ReadonlyArray<readonly [string, string]>>([], [["x-service-dry-run", "true"]]),
        async (value, headers) => {
          await sendAndCheck(target, leadPost(target.fixture, utf8(JSON.stringify(value)), headers))
        }
      ),
      fuzzParameters(1_000)
    )
  })

  it("lead-shaped bodies with odd fields, in dry-run, with and without Idempotency-Key", async () => {
    await fc.assert(
      fc.asyncProperty(
        leadLike,
        fc.oneof(
          fc.constant<ReadonlyArray<readonly [string, string]>>([]),
          fc.constant<ReadonlyArray<readonly [string, string]>>([["x-service-dry-run", "true"]]),
          fc
            .stringMatching(/^[\x20-\x7e]{1,20}$/)
            .map((key): ReadonlyArray<readonly [string, string]> => [["idempotency-key", key]])
        ),
        async (value, headers) => {
          await sendAndCheck(target, leadPost(target.fixture, utf8(JSON.stringify(value)), headers))
        }
      ),
      fuzzParameters(2_000)
    )
  })

  it("every lead the contract allows is accepted, odd Unicode included", async () => {
    await fc.assert(
      fc.asyncProperty(validLead, async (value) => {
        const answer = await sendAndCheck(target, leadPost(target.fixture, utf8(JSON.stringify(value))))
        expect([200, 201]).toContain(answer.status)
      }),
      fuzzParameters(1_000)
    )
  })
})
