// The CPU of one request through the whole HttpApi app in-process (global middleware, admission,
// decoding, handler, encoding, metrics, log line), over the in-memory services: what the one path
// costs a request before any database (`node scripts/router-cost.ts [requests] [index|create] [--pg]`).
// With `--pg` the create is the bench's (phone, property, Idempotency-Key): five statements.
import { type Context, Effect, Layer, Logger, References } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { KeyStore } from "../src/Accounts/KeyStore.ts"
import { Organizations } from "../src/Accounts/Organizations.ts"
import { layerApp } from "../src/Intake/Http/App.ts"
import { layerServicesMemory } from "../src/Intake/Services.ts"
import { AppConfig } from "../src/Platform/Config.ts"
import { makeJsonLogger } from "../src/Platform/Observability.ts"
import { provision, startScratchDatabase } from "./lib/database.ts"
import { leadBody, phoneOf } from "./lib/load.ts"

const requests = Number(process.argv[2] ?? 20_000)
/** `--pg`: the services on a scratch embedded PostgreSQL instead of the fakes, 16 requests at a time. */
const onPostgres = process.argv.includes("--pg")
const database = onPostgres ? await startScratchDatabase() : undefined
const inFlight = onPostgres ? 16 : 1

const main = Effect.gen(function* () {
  // The PostgreSQL services have no MemoryStore, which only the fakes read.
  const context = (
    database === undefined
      ? yield* Layer.build(layerServicesMemory)
      : yield* Effect.promise(() => database.runtime.context())
  ) as Context.Context<Layer.Success<typeof layerServicesMemory>>
  const fixture =
    database === undefined
      ? undefined
      : yield* Effect.promise(() => database.runtime.runPromise(provision({ origins: 1, rateLimit: 1e9 })))
  const organization = yield* Organizations.use((o) => o.create({ name: "Bench", country: "MX" })).pipe(
    Effect.provide(Layer.succeedContext(context))
  )
  const origin =
    fixture?.origins[0] ??
    (yield* KeyStore.use((keys) =>
      keys.createOrigin({ organizationId: organization.id, label: "bench", rateLimit: 1_000_000_000 })
    ).pipe(Effect.provide(Layer.succeedContext(context))))
  let logged = 0
  const { handler, dispose } = HttpRouter.toWebHandler(
    layerApp.pipe(
      Layer.provide(Layer.succeedContext(context)),
      Layer.provide(AppConfig.layerWith({ publicBaseUrl: "http://bench.test" })),
      Layer.provide(HttpServer.layerServices),
      Layer.provideMerge(Logger.layer([makeJsonLogger(() => logged++)])),
      Layer.provide(Layer.succeed(References.TracerEnabled, false))
    ),
    { disableLogger: true }
  )
  const index = () => handler(new Request("http://bench.test/v1"))
  let n = 0
  const run = Date.now()
  const create = () =>
    handler(
      new Request("http://bench.test/v1/leads", {
        method: "POST",
        headers: {
          authorization: `Bearer ${origin.key}`,
          "content-type": "application/json",
          ...(fixture === undefined ? {} : { "idempotency-key": `${run}-${n}` })
        },
        body:
          fixture === undefined
            ? JSON.stringify({ nombre: `Ana ${n++}`, email: "ana@example.com", mensaje: "hola" })
            : leadBody(n, phoneOf(5_600_000_000 + n++), fixture.propertyCodigo)
      })
    )
  const round = async (send: () => Promise<Response>) => {
    await Promise.all(Array.from({ length: inFlight }, async () => (await send()).text()))
  }
  const measure = async (name: string, send: () => Promise<Response>) => {
    for (let i = 0; i < 2_000 / inFlight; i++) await round(send)
    const cpu = process.cpuUsage()
    const start = performance.now()
    for (let i = 0; i < requests / inFlight; i++) await round(send)
    const used = process.cpuUsage(cpu)
    const ms = (used.user + used.system) / 1000 / requests
    process.stderr.write(
      `${name.padEnd(32)} ${ms.toFixed(3)} ms CPU per request, ${((performance.now() - start) / requests).toFixed(3)} ms wall\n`
    )
  }
  const only = process.argv.find((arg) => arg === "index" || arg === "create")
  if (only !== "create") yield* Effect.promise(() => measure("GET /v1", index))
  if (only !== "index")
    yield* Effect.promise(() => measure(`POST /v1/leads (${onPostgres ? "PostgreSQL" : "memory"})`, create))
  yield* Effect.promise(dispose)
  process.stderr.write(`log lines written: ${logged}\n`)
})

await Effect.runPromise(Effect.scoped(main))
await database?.close()
