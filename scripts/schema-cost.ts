// The CPU of decoding a create's body and encoding its answer with the contract's schemas, in
// isolation: what `POST /v1/leads` spends on Schema per request (`node scripts/schema-cost.ts`).
import { Effect, Schema } from "effect"
import { DryRunResult, LeadCreated, LeadEnriched } from "../src/Api/Api.ts"
import { LeadRequest } from "../src/Api/LeadRequest.ts"

const body = {
  nombre: "Ana López",
  telefono: "+52 55 1234 5678",
  email: "ana@example.com",
  mensaje: "Quiero ver el departamento",
  propiedad: { codigo: "ABC-1234" },
  extras: { presupuesto: 2500000, fuente: "web" }
}
const answer = {
  lead_id: "5e705172-122a-466d-8883-249159a8b07e",
  status: "created" as const,
  lead_url: "http://localhost:3000/leads/5e705172-122a-466d-8883-249159a8b07e",
  request_id: "7661606e-22af-4923-b17d-839a83038bc0"
}
const runs = 50_000
const time = (name: string, f: () => unknown) => {
  for (let i = 0; i < 5_000; i++) f()
  const start = performance.now()
  for (let i = 0; i < runs; i++) f()
  process.stdout.write(`${name.padEnd(48)} ${(((performance.now() - start) / runs) * 1000).toFixed(2)} µs\n`)
}
const decodeAll = Schema.decodeUnknownExit(LeadRequest, { errors: "all", onExcessProperty: "error" })
const decodeFast = Schema.decodeUnknownExit(LeadRequest)
const decodeEffect = Schema.decodeUnknownEffect(LeadRequest, { errors: "all", onExcessProperty: "error" })
const encodeUnion = Schema.encodeUnknownExit(Schema.Union([LeadCreated, LeadEnriched, DryRunResult]))
time("decode, every issue, unknown fields refused", () => decodeAll(body))
time("decode, default options", () => decodeFast(body))
time("decode as an Effect (as HttpApi runs it)", () => Effect.runSync(Effect.exit(decodeEffect(body))))
time("encode the answer through the success union", () => encodeUnion(answer))
time("JSON.parse + JSON.stringify of the same", () => JSON.stringify(JSON.parse(JSON.stringify(body))))
