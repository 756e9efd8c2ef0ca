import type { Layer } from "effect"
import * as fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type layerMemoryServices, layerPostgresServices } from "../support/Client.ts"
import { leadLike, validLead } from "./arbitraries.ts"
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

/** Widens the PostgreSQL services to what the harness takes; the router never uses the memory-only store. */
const asHarnessServices = <A>(services: Layer.Layer<A>) =>
  services as unknown as Layer.Layer<Layer.Success<typeof layerMemoryServices>>

/**
 * The same router on the PostgreSQL services: what the in-memory fake accepts must also survive
 * the database's encoding rules (text without NUL, jsonb, Unicode normalisation).
 */
describe(`fuzz: odd Unicode into PostgreSQL (seed ${fuzzSeed})`, () => {
  let target: FuzzTarget
  beforeAll(async () => {
    announceSeed("postgres")
    target = await startTarget(asHarnessServices(layerPostgresServices))
  }, 60_000)
  afterAll(() => target.close())

  it("every lead the contract allows is stored, odd Unicode included", async () => {
    await fc.assert(
      fc.asyncProperty(validLead, fc.boolean(), async (lead, keyed) => {
        const answer = await sendAndCheck(
          target,
          leadPost(
            target.fixture,
            utf8(JSON.stringify(lead)),
            keyed ? [["idempotency-key", crypto.randomUUID()]] : []
          )
        )
        expect([200, 201], answer.text).toContain(answer.status)
      }),
      fuzzParameters(400)
    )
  }, 120_000)

  it("a NUL character in any text field is refused, never a 500 (PostgreSQL text cannot hold it)", async () => {
    const withNul = (text: string, at: number) =>
      `${text.slice(0, at % (text.length + 1))}\u0000${text.slice(at % (text.length + 1))}`
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(
          "nombre",
          "email",
          "mensaje",
          "extras.key",
          "extras.value",
          "propiedad.external_code"
        ),
        fc.nat(),
        fc.boolean(),
        async (place, at, dryRun) => {
          const body: Record<string, unknown> = { nombre: "Ana", telefono: "+52 55 1234 5678" }
          if (place === "nombre") body.nombre = withNul("Ana López", at)
          if (place === "email") body.email = withNul("ana@example.com", at)
          if (place === "mensaje") body.mensaje = withNul("Hola, me interesa", at)
          if (place === "extras.key") body.extras = { [withNul("utm", at)]: "x" }
          if (place === "extras.value") body.extras = { utm: withNul("campaña", at) }
          if (place === "propiedad.external_code") body.propiedad = { external_code: withNul("EXT-1", at) }
          await sendAndCheck(
            target,
            leadPost(
              target.fixture,
              utf8(JSON.stringify(body)),
              dryRun ? [["x-service-dry-run", "true"]] : []
            )
          )
        }
      ),
      fuzzParameters(100)
    )
  }, 60_000)

  it("lead-shaped odd bodies never make the database fail", async () => {
    await fc.assert(
      fc.asyncProperty(leadLike, fc.boolean(), async (lead, dryRun) => {
        await sendAndCheck(
          target,
          leadPost(target.fixture, utf8(JSON.stringify(lead)), dryRun ? [["x-service-dry-run", "true"]] : [])
        )
      }),
      fuzzParameters(400)
    )
  }, 120_000)
})
