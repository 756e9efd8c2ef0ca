// What `HttpApiBuilder` adds to every request: each endpoint's effect runs under
// `Effect.provideContext(services)`, where `services` is everything its group's layer was built with
// (`HttpApiBuilder.group` captures `Effect.context()`), so every request merges that context into
// its own: a copy of the request's whole service map plus one insert per group service. Measured here
// in isolation: a request-sized context (the server's services and the per-request entries) running
// an effect under `provideContext` of a group context of N services, against an empty one (which
// `Context.merge` skips). `node scripts/context-merge.ts [iterations]`
import { Context, Effect } from "effect"

const iterations = Number(process.argv[2] ?? 200_000)
const keys = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => Context.Service<unknown, number>(`context-merge/${prefix}-${i}`))
const contextOf = (services: ReadonlyArray<Context.Service<unknown, number>>) =>
  services.reduce(
    (context, key, i) => Context.add(context, key, i),
    Context.empty() as Context.Context<unknown>
  )

const server = contextOf(keys("server", 50))
const perRequest = keys("request", 5)
const rows: ReadonlyArray<readonly [string, Context.Context<unknown>]> = [
  ["group context empty (skipped)", Context.empty() as Context.Context<unknown>],
  ["group context of 3 services", contextOf(keys("group", 3))],
  ["group context of 60 services", contextOf(keys("group", 60))]
]

const request = (group: Context.Context<unknown>) => {
  // A request's context: the server's, with a few entries added per request (overlays).
  const context = perRequest.reduce((context, key, i) => Context.add(context, key, i), server)
  return Effect.runSyncWith(context)(
    Effect.provideContext(
      Effect.sync(() => 1),
      group
    )
  )
}

for (const [, group] of rows) for (let i = 0; i < 20_000; i++) request(group)
for (let round = 0; round < 3; round++) {
  for (const [name, group] of rows) {
    const start = performance.now()
    for (let i = 0; i < iterations; i++) request(group)
    process.stdout.write(
      `${name.padEnd(32)} ${(((performance.now() - start) * 1000) / iterations).toFixed(2)} µs per request\n`
    )
  }
}
