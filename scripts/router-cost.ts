// The CPU of one request through the whole HttpApi app in-process (global middleware, admission,
// decoding, handler, encoding, metrics, log line), over the in-memory services: what the one path
// costs a request before any database (`node scripts/router-cost.ts [requests] [index|create]`).
import { Effect, Layer, Logger, References } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { KeyStore } from "../src/Accounts/KeyStore.ts"
import { Organizations } from "../src/Accounts/Organizations.ts"
import { layerApp } from "../src/Intake/Http/App.ts"
import { layerServicesMemory } from "../src/Intake/Services.ts"
import { AppConfig } from "../src/Platform/Config.ts"
import { makeJsonLogger } from "../src/Platform/Observability.ts"

const requests = Number(process.argv[2] ?? 20_000)

const main = Effect.gen(function* () {
  const context = yield* Layer.build(layerServicesMemory)
  const organization = yield* Organizations.use((o) => o.create({ name: "Bench", country: "MX" })).pipe(
    Effect.provide(Layer.succeedContext(context))
  )
  const origin = yield* KeyStore.use((keys) =>
    keys.createOrigin({ organizationId: organization.id, label: "bench", rateLimit: 1_000_000_000 })
  ).pipe(Effect.provide(Layer.succeedContext(context)))
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
  const create = () =>
    handler(
      new Request("http://bench.test/v1/leads", {
        method: "POST",
        headers: { authorization: `Bearer ${origin.key}`, "content-type": "application/json" },
        body: JSON.stringify({ nombre: `Ana ${n++}`, email: "ana@example.com", mensaje: "hola" })
      })
    )
  const measure = async (name: string, send: () => Promise<Response>) => {
    for (let i = 0; i < 2_000; i++) await (await send()).text()
    const cpu = process.cpuUsage()
    const start = performance.now()
    for (let i = 0; i < requests; i++) await (await send()).text()
    const used = process.cpuUsage(cpu)
    const ms = (used.user + used.system) / 1000 / requests
    process.stderr.write(
      `${name.padEnd(32)} ${ms.toFixed(3)} ms CPU per request, ${((performance.now() - start) / requests).toFixed(3)} ms wall\n`
    )
  }
  const only = process.argv[3]
  if (only !== "create") yield* Effect.promise(() => measure("GET /v1", index))
  if (only !== "index") yield* Effect.promise(() => measure("POST /v1/leads (memory)", create))
  yield* Effect.promise(dispose)
  process.stderr.write(`log lines written: ${logged}\n`)
})

Effect.runPromise(Effect.scoped(main))
