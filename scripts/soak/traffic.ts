import { generateApiKey } from "../../src/Domain/ApiKey.ts"
import { phoneMatchKey } from "../../src/Domain/Phone.ts"
import { sleep } from "../lib/main.ts"

/** Everything a response told the client; the consistency check compares the database with these. */
export interface Answer {
  readonly kind: string
  readonly origin: number
  readonly key: string | null
  readonly phoneKey: string | null
  readonly body: string
  readonly status: number
  readonly code: string | null
  readonly requestId: string
  readonly leadId: string | null
  readonly replay: boolean
  readonly dryRun: boolean
  readonly note: boolean
  readonly millis: number
}

export interface Target {
  readonly url: string
  /** The keys of the ordinary origins, then the rate-limited one's. */
  readonly keys: ReadonlyArray<string>
  readonly propertyCodigo: string
}

const spellings = (digits: string) => {
  const area = digits.slice(0, 2)
  const first = digits.slice(2, 6)
  const last = digits.slice(6)
  return [
    `+52 ${area} ${first} ${last}`,
    `${area}-${first}-${last}`,
    `(${area}) ${first} ${last}`,
    `+52 1 ${area} ${first} ${last}`,
    `${area}${first}${last}`
  ]
}

const pick = <A>(items: ReadonlyArray<A>): A => {
  const item = items[Math.floor(Math.random() * items.length)]
  if (item === undefined) throw new Error("pick from an empty list")
  return item
}

const objectOf = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null ? { ...value } : {}

const errorCodeOf = (json: Record<string, unknown>) => {
  const error = json.error
  return typeof error === "object" && error !== null && "code" in error ? String(error.code) : null
}

/** Sends one lead request and records what the answer said. */
const makeClient = (target: Target, answers: Array<Answer>) => {
  const send = async (
    kind: string,
    origin: number,
    body: Record<string, unknown> | string,
    headers: Record<string, string> = {},
    key = target.keys[origin] ?? ""
  ): Promise<Answer> => {
    const text = typeof body === "string" ? body : JSON.stringify(body)
    const started = performance.now()
    const response = await fetch(`${target.url}/v1/leads`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...headers },
      body: text
    })
    const json = objectOf(await response.json())
    const telefono = typeof body === "object" && typeof body.telefono === "string" ? body.telefono : null
    const answer: Answer = {
      kind,
      origin,
      key: headers["idempotency-key"] ?? null,
      phoneKey: telefono === null ? null : phoneMatchKey(telefono, "MX"),
      body: text,
      status: response.status,
      code: errorCodeOf(json),
      requestId: response.headers.get("x-request-id") ?? "",
      leadId: typeof json.lead_id === "string" ? json.lead_id : null,
      replay: json.replay === true,
      dryRun: headers["x-service-dry-run"] === "true",
      note: typeof body === "object" && (typeof body.mensaje === "string" || body.extras !== undefined),
      millis: performance.now() - started
    }
    answers.push(answer)
    return answer
  }

  /** A client that follows the contract: 503 and 409 idempotency_in_progress are retried with the same key and body. */
  const sendUntilAnswered = async (
    kind: string,
    origin: number,
    body: Record<string, unknown>,
    headers: Record<string, string>
  ) => {
    for (let attempt = 0; ; attempt++) {
      const answer = await send(attempt === 0 ? kind : `${kind}:retry`, origin, body, headers)
      const retry = answer.status >= 500 || answer.code === "idempotency_in_progress"
      if (!retry) return answer
      await sleep(answer.status === 409 ? 1_000 : 200)
    }
  }
  return { send, sendUntilAnswered }
}

/** What the traffic remembers to build on: phones already sent, answers worth replaying. */
const makeMemory = () => {
  let phoneCounter = 0
  return {
    known: [] as Array<{ digits: string; origin: number }>,
    retryable: [] as Array<Answer>,
    newDigits: () => `55${String(10_000_000 + phoneCounter++).slice(-8)}`,
    serial: () => phoneCounter
  }
}

const keyed = () => ({ "idempotency-key": crypto.randomUUID() })

const parsedBody = (answer: Answer): Record<string, unknown> => JSON.parse(answer.body)

type Action = readonly [weight: number, run: () => Promise<unknown>]

/** What every action draws on. */
interface Traffic {
  readonly client: ReturnType<typeof makeClient>
  readonly memory: ReturnType<typeof makeMemory>
  readonly lead: (telefono: string | null, extra?: Record<string, unknown>) => Record<string, unknown>
  /** How many ordinary origins; the rate-limited one comes after them. */
  readonly origins: number
  readonly anyOrigin: () => number
}

/** Creations, enrichments in other spellings, concurrent duplicates and one key sent twice at once. */
const writeActions = ({ client, memory, lead, anyOrigin }: Traffic): ReadonlyArray<Action> => {
  const create = async () => {
    const digits = memory.newDigits()
    const origin = anyOrigin()
    const answer = await client.sendUntilAnswered("create", origin, lead(pick(spellings(digits))), keyed())
    if (answer.status !== 201) return
    memory.known.push({ digits, origin })
    memory.retryable.push(answer)
  }
  const enrich = async () => {
    if (memory.known.length === 0) return
    const { digits, origin } = pick(memory.known)
    const body = lead(pick(spellings(digits)), { mensaje: `seguimiento ${Math.random()}` })
    const answer = await client.sendUntilAnswered("enrich", origin, body, keyed())
    if (answer.status === 200) memory.retryable.push(answer)
  }
  const duplicate = async () => {
    const digits = memory.newDigits()
    const origin = anyOrigin()
    const racers = await Promise.all(
      spellings(digits)
        .slice(0, 3)
        .map((telefono) => client.sendUntilAnswered("duplicate", origin, lead(telefono), keyed()))
    )
    memory.known.push({ digits, origin })
    for (const answer of racers)
      if (answer.status === 200 || answer.status === 201) memory.retryable.push(answer)
  }
  const sameKey = async () => {
    const digits = memory.newDigits()
    const origin = anyOrigin()
    const headers = keyed()
    const body = lead(pick(spellings(digits)))
    const both = await Promise.all([
      client.sendUntilAnswered("same-key", origin, body, headers),
      client.sendUntilAnswered("same-key", origin, body, headers)
    ])
    memory.known.push({ digits, origin })
    for (const answer of both) if (answer.status === 201 && !answer.replay) memory.retryable.push(answer)
  }
  return [
    [30, create],
    [15, enrich],
    [6, duplicate],
    [5, sameKey]
  ]
}

/** Replays, conflicts, dry-runs and every kind of refusal. */
const otherActions = ({ client, memory, lead, anyOrigin, origins }: Traffic): ReadonlyArray<Action> => {
  const replay = async () => {
    if (memory.retryable.length === 0) return
    const original = pick(memory.retryable)
    await client.send("replay", original.origin, parsedBody(original), {
      "idempotency-key": original.key ?? ""
    })
  }
  const conflict = async () => {
    if (memory.retryable.length === 0) return
    const original = pick(memory.retryable)
    const changed = { ...parsedBody(original), mensaje: "otro cuerpo" }
    await client.send("conflict", original.origin, changed, { "idempotency-key": original.key ?? "" })
  }
  const dryRun = async () => {
    const telefono =
      memory.known.length > 0 && Math.random() < 0.5 ? pick(spellings(pick(memory.known).digits)) : null
    await client.send("dry-run", anyOrigin(), lead(telefono), { "x-service-dry-run": "true", ...keyed() })
  }
  const invalid = ['{"nombre":', "[]", '{"telefono":"123"}', '{"nombre":"A","phone":"1"}']
  return [
    [10, replay],
    [4, conflict],
    [10, dryRun],
    [5, () => client.send("no-key", anyOrigin(), lead(pick(spellings(memory.newDigits()))))],
    [4, () => client.send("invalid", 0, pick(invalid))],
    [3, () => client.send("bad-key", 0, lead(null), {}, generateApiKey().key)],
    [2, () => client.send("unknown-property", 0, lead(null, { propiedad: { codigo: "ZZZ-0000" } }))],
    [6, () => client.send("rate-limited", origins, lead(null, { mensaje: undefined }))]
  ]
}

const weighted = (actions: ReadonlyArray<Action>) => {
  const totalWeight = actions.reduce((sum, [weight]) => sum + weight, 0)
  return () => {
    let roll = Math.random() * totalWeight
    for (const [weight, run] of actions) {
      roll -= weight
      if (roll < 0) return run()
    }
    return actions[0]?.[1]() ?? Promise.resolve()
  }
}

/**
 * Mixed traffic from `workers` concurrent clients until `minutes` have passed; `progress` is called
 * every 30 s. The answers, in the order they came.
 */
export const runTraffic = async (options: {
  readonly target: Target
  readonly workers: number
  readonly minutes: number
  readonly progress: (seconds: number, requests: number) => void
}) => {
  const answers: Array<Answer> = []
  const client = makeClient(options.target, answers)
  const memory = makeMemory()
  const lead = (telefono: string | null, extra: Record<string, unknown> = {}) => ({
    nombre: `Soak ${memory.serial()}`,
    ...(telefono === null ? {} : { telefono }),
    email: `soak${memory.serial()}@example.com`,
    mensaje: "quiero información",
    propiedad: { codigo: options.target.propertyCodigo },
    ...extra
  })
  const origins = options.target.keys.length - 1
  const traffic: Traffic = {
    client,
    memory,
    lead,
    origins,
    anyOrigin: () => Math.floor(Math.random() * origins)
  }
  const act = weighted([...writeActions(traffic), ...otherActions(traffic)])
  const started = performance.now()
  const deadline = started + options.minutes * 60_000
  let progressAt = started
  await Promise.all(
    Array.from({ length: options.workers }, async () => {
      while (performance.now() < deadline) {
        await act()
        if (performance.now() - progressAt <= 30_000) continue
        progressAt = performance.now()
        options.progress(Math.round((progressAt - started) / 1000), answers.length)
      }
    })
  )
  return { answers, elapsed: (performance.now() - started) / 1000 }
}
