/**
 * The typed Effect client (`lead-intake/client`) against a running server.
 *
 *   npx lead-intake demo                     # prints a key; creates property DEM-0001
 *   LEAD_INTAKE_KEY=lk_live_… node examples/client.ts
 */
import { Effect } from "effect"
import { layerFetch, makeClient } from "lead-intake/client"

const baseUrl = process.env.LEAD_INTAKE_URL ?? "http://127.0.0.1:8080"
const apiKey = process.env.LEAD_INTAKE_KEY

const program = Effect.gen(function* () {
  const client = yield* makeClient({ baseUrl, apiKey })
  const lead = {
    nombre: "Ana López",
    telefono: "+52 55 1234 5678",
    email: "ana@example.com",
    propiedad: { codigo: "DEM-0001" },
    extras: { presupuesto: 2500000 }
  }

  // Dry-run: what would happen, nothing written.
  const preview = yield* client.leads.createOrEnrich({
    payload: lead,
    headers: { "x-service-dry-run": "true" }
  })

  // The real thing, safe to retry with the same Idempotency-Key.
  const idempotencyKey = `example-${Date.now()}`
  const created = yield* client.leads.createOrEnrich({
    payload: lead,
    headers: { "idempotency-key": idempotencyKey }
  })
  const replayed = yield* client.leads.createOrEnrich({
    payload: lead,
    headers: { "idempotency-key": idempotencyKey }
  })

  // Errors are typed: branch on their tag (or on `error.code`).
  const unknownProperty = yield* client.leads
    .createOrEnrich({ payload: { ...lead, propiedad: { codigo: "ZZZ-9999" } }, headers: {} })
    .pipe(
      Effect.map((answer) => answer.status),
      Effect.catchTag("PropertyNotFound", (failure) => Effect.succeed(failure.error.code))
    )

  return {
    preview: preview.status === "dry_run" ? preview.would : preview.status,
    created: { status: created.status, lead_id: "lead_id" in created ? created.lead_id : null },
    replayed: { status: replayed.status, replay: "replay" in replayed ? replayed.replay : false },
    unknownProperty
  }
})

const result = await Effect.runPromise(program.pipe(Effect.provide(layerFetch)))
console.log(JSON.stringify(result))
