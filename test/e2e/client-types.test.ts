import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import type { components } from "../../examples/openapi-types.ts"
import { LeadRequest, makeClient } from "../../src/Client.ts"

/**
 * Both clients' types refuse a `propiedad` with two keys: the Effect client's, from the contract's
 * schema, and openapi-typescript's, from openapi.json (the fetch client of clients/typescript uses
 * the same generation). `npm run check` compiles this file, so each `@ts-expect-error` is a test:
 * if the types ever admit two keys again, the directive is unused and the check fails.
 */

type FetchLeadRequest = components["schemas"]["LeadRequest"]

const fetchOneKey: ReadonlyArray<FetchLeadRequest> = [
  { nombre: "Ana", propiedad: { codigo: "ABC-1234" } },
  { nombre: "Ana", propiedad: { external_code: "EXT-1" } },
  { nombre: "Ana", propiedad: { id: "0b7d9c1e-3f5a-4e2b-8c6d-9a1b2c3d4e5f" } },
  { nombre: "Ana", propiedad: null }
]
const fetchTwoKeys: FetchLeadRequest = {
  nombre: "Ana",
  // @ts-expect-error exactly one of codigo, external_code or id
  propiedad: { codigo: "ABC-1234", id: "0b7d9c1e-3f5a-4e2b-8c6d-9a1b2c3d4e5f" }
}
const fetchNoKey: FetchLeadRequest = {
  nombre: "Ana",
  // @ts-expect-error exactly one of codigo, external_code or id
  propiedad: {}
}

type EffectLeadRequest = typeof LeadRequest.Type

const effectOneKey: ReadonlyArray<EffectLeadRequest> = [
  { nombre: "Ana", propiedad: { codigo: "ABC-1234" } },
  { nombre: "Ana", propiedad: { external_code: "EXT-1" } },
  { nombre: "Ana", propiedad: { id: "0b7d9c1e-3f5a-4e2b-8c6d-9a1b2c3d4e5f" } }
]
const effectTwoKeys: EffectLeadRequest = {
  nombre: "Ana",
  // @ts-expect-error exactly one of codigo, external_code or id
  propiedad: { codigo: "ABC-1234", external_code: "EXT-1" }
}
const effectNoKey: EffectLeadRequest = {
  nombre: "Ana",
  // @ts-expect-error exactly one of codigo, external_code or id
  propiedad: {}
}

/** The Effect client's payload is the contract's type: two keys do not compile there either. */
const sendTwoKeys = Effect.gen(function* () {
  const client = yield* makeClient({ baseUrl: "http://127.0.0.1:1" })
  return yield* client.leads.createOrEnrich({
    // @ts-expect-error exactly one of codigo, external_code or id
    payload: { nombre: "Ana", propiedad: { codigo: "ABC-1234", id: "0b7d9c1e-3f5a-4e2b-8c6d-9a1b2c3d4e5f" } },
    headers: {}
  })
})

describe("the clients' types and the contract agree on propiedad", () => {
  it("what the types admit the schema admits, and what they refuse it refuses", () => {
    const is = Schema.is(LeadRequest)
    for (const lead of [...effectOneKey, ...fetchOneKey]) expect(is(lead), JSON.stringify(lead)).toBe(true)
    for (const lead of [effectTwoKeys, effectNoKey, fetchTwoKeys, fetchNoKey])
      expect(is(lead), JSON.stringify(lead)).toBe(false)
    expect(Effect.isEffect(sendTwoKeys)).toBe(true)
  })
})
