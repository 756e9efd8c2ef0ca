import autocannon, { type RawRequest, type Result } from "autocannon"

/** Everything the load process needs to drive one scenario; plain data, passed as JSON. */
export interface LoadPlan {
  readonly url: string
  readonly scenario: ScenarioName
  readonly connections: number
  /** Seconds; ignored when `amount` is set. */
  readonly duration: number
  readonly amount?: number
  /** Requests per second offered over all connections; unset: as many as are answered. */
  readonly rate?: number
  /** Keys of the provisioned origins, spread over the connections. */
  readonly keys: ReadonlyArray<string>
  readonly propertyCodigo: string
  /** Unique per run and scenario, so created phones and idempotency keys never repeat. */
  readonly tag: string
  /** First phone number (10 digits) of this run's create range. */
  readonly phoneBase: number
  /** Existing leads' phones, for enrich and dry-run. */
  readonly existingPhones: ReadonlyArray<string>
  /** One request per connection, already answered once, repeated as it is. */
  readonly replays: ReadonlyArray<{
    readonly key: string
    readonly idempotencyKey: string
    readonly body: string
  }>
  readonly unknownKey: string
  /** `create` sends an Idempotency-Key with every request unless this is false. */
  readonly idempotencyKeys?: boolean
}

export const scenarioNames = ["create", "enrich", "replay", "dry-run", "index", "unauthorized"] as const
export type ScenarioName = (typeof scenarioNames)[number]

/** The status every response of a scenario should have; anything else is counted as unexpected. */
export const expectedStatus: Record<ScenarioName, number> = {
  create: 201,
  enrich: 200,
  replay: 201,
  "dry-run": 200,
  index: 200,
  unauthorized: 401
}

export const phoneOf = (n: number) => {
  const digits = String(n).padStart(10, "0")
  return `+52 ${digits.slice(0, 2)} ${digits.slice(2, 6)} ${digits.slice(6)}`
}

export const leadBody = (n: number, telefono: string, propertyCodigo: string) =>
  JSON.stringify({
    nombre: `Bench Lead ${n}`,
    telefono,
    email: `lead${n}@example.com`,
    mensaje: "Me interesa el departamento, ¿sigue disponible?",
    propiedad: { codigo: propertyCodigo },
    extras: { utm_source: "bench", presupuesto: 3_500_000 }
  })

const json = { "content-type": "application/json" }

const leadPost = (key: string, headers: Record<string, string>, body: string): RawRequest => ({
  method: "POST",
  path: "/v1/leads",
  headers: { ...json, authorization: `Bearer ${key}`, ...headers },
  body
})

/** Each connection keeps one of `items`, given in turn, under `field` of its context. */
const onePerConnection = <A>(items: ReadonlyArray<A>, field: string) => {
  let connection = 0
  return (context: Record<string, unknown>): A => {
    if (!(field in context)) context[field] = connection++ % items.length
    const item = items[Number(context[field])]
    if (item === undefined) throw new Error(`nothing to give a connection: no ${field}`)
    return item
  }
}

const requestFor = (plan: LoadPlan): ((context: Record<string, unknown>) => RawRequest) => {
  let next = 0
  const keyOf = onePerConnection(plan.keys, "key")
  const existingPhone = (n: number) => plan.existingPhones[n % plan.existingPhones.length] ?? ""
  switch (plan.scenario) {
    case "create":
      return (context) => {
        const n = next++
        const body = leadBody(n, phoneOf(plan.phoneBase + n), plan.propertyCodigo)
        const headers = plan.idempotencyKeys === false ? {} : { "idempotency-key": `${plan.tag}-${n}` }
        return leadPost(keyOf(context), headers, body)
      }
    case "enrich":
      return (context) => {
        const n = next++
        const body = leadBody(n, existingPhone(n), plan.propertyCodigo)
        return leadPost(keyOf(context), { "idempotency-key": `${plan.tag}-${n}` }, body)
      }
    case "replay": {
      const replayOf = onePerConnection(plan.replays, "replay")
      return (context) => {
        const replay = replayOf(context)
        return leadPost(replay.key, { "idempotency-key": replay.idempotencyKey }, replay.body)
      }
    }
    case "dry-run":
      return (context) => {
        const n = next++
        const telefono = n % 2 === 0 ? existingPhone(n) : phoneOf(plan.phoneBase + n)
        const body = leadBody(n, telefono, plan.propertyCodigo)
        return leadPost(keyOf(context), { "x-service-dry-run": "true" }, body)
      }
    case "index":
      return () => ({ method: "GET", path: "/v1" })
    case "unauthorized":
      return () => leadPost(plan.unknownKey, {}, leadBody(0, phoneOf(plan.phoneBase), plan.propertyCodigo))
  }
}

export interface LoadResult {
  readonly scenario: ScenarioName
  readonly requests: number
  readonly durationSeconds: number
  readonly requestsPerSecond: number
  readonly latencyMs: {
    readonly p50: number
    readonly p90: number
    readonly p99: number
    readonly max: number
  }
  readonly errors: number
  readonly timeouts: number
  readonly non2xx: number
  readonly unexpected: number
  readonly statusCodes: Record<string, number>
}

export const summarise = (scenario: ScenarioName, result: Result): LoadResult => {
  const statusCodes = Object.fromEntries(
    Object.entries(result.statusCodeStats).map(([status, stats]) => [status, stats.count])
  )
  const requests = Object.values(statusCodes).reduce((sum, count) => sum + count, 0)
  return {
    scenario,
    requests,
    durationSeconds: result.duration,
    requestsPerSecond: Math.round(requests / result.duration),
    latencyMs: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max
    },
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    unexpected: requests - (statusCodes[String(expectedStatus[scenario])] ?? 0) + result.errors,
    statusCodes
  }
}

/** Drives one scenario with autocannon (keep-alive connections, one request in flight on each). */
export const runLoad = async (plan: LoadPlan): Promise<LoadResult> => {
  const build = requestFor(plan)
  const result = await autocannon({
    url: plan.url,
    connections: plan.connections,
    duration: plan.duration,
    ...(plan.amount === undefined ? {} : { amount: plan.amount }),
    ...(plan.rate === undefined ? {} : { overallRate: plan.rate }),
    timeout: 10,
    requests: [{ setupRequest: (request, context) => ({ ...request, ...build(context) }) }]
  })
  return summarise(plan.scenario, result)
}

if (import.meta.main) {
  const chunks: Array<Buffer> = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  const plan = JSON.parse(Buffer.concat(chunks).toString("utf8")) as LoadPlan
  process.stdout.write(`${JSON.stringify(await runLoad(plan))}\n`)
}
