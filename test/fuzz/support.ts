import { type Context, Effect, Exit, Layer, References, Schema, Scope } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import type * as fc from "fast-check"
import { DryRunResult, errorCatalog, IndexResponse, LeadCreated, LeadEnriched } from "../../src/Api/Api.ts"
import { layerApp } from "../../src/Intake/Http/App.ts"
import { type Fixture, layerMemoryServices, seed } from "../support/Client.ts"
import { layerTestConfig, testConfig } from "../support/Database.ts"

/**
 * The seed of this run: `FUZZ_SEED` replays a run, otherwise a fresh one. It is printed and put
 * in every property's name, and fast-check adds seed and path to any counterexample it reports.
 */
export const fuzzSeed = (() => {
  const fromEnv = process.env.FUZZ_SEED
  const seed =
    fromEnv === undefined || fromEnv === "" ? (Date.now() ^ (Math.random() * 2 ** 31)) | 0 : Number(fromEnv)
  return seed
})()

/** `FUZZ_SCALE=10` runs ten times the cases (a longer local hunt); the default suits CI. */
export const runs = (base: number) => Math.max(1, Math.round(base * Number(process.env.FUZZ_SCALE ?? 1)))

export const fuzzParameters = (numRuns: number): fc.Parameters<unknown> => ({
  seed: fuzzSeed,
  numRuns: runs(numRuns),
  endOnFailure: false,
  verbose: 1
})

export const announceSeed = (suite: string) =>
  process.stdout.write(`[fuzz] ${suite}: seed ${fuzzSeed} (replay with FUZZ_SEED=${fuzzSeed})\n`)

type Services = Layer.Success<typeof layerMemoryServices>

export interface FuzzTarget {
  readonly handler: (request: Request) => Promise<Response>
  readonly fixture: Fixture
  /** The services the router runs on, for seeding and inspection. */
  readonly context: Context.Context<Services>
  readonly close: () => Promise<void>
}

/**
 * The whole router in-process (global middleware included) over the given services, seeded with
 * a limit that fuzzing never reaches. Like `makeHarness`, but per-request info logs are off:
 * thousands of cases would drown the output (warnings and the 500 defect log stay on).
 */
export const startTarget = async (
  services: Layer.Layer<Services> = layerMemoryServices
): Promise<FuzzTarget> => {
  const scope = Effect.runSync(Scope.make())
  const { handler, fixture, dispose, context } = await Effect.runPromise(
    Scope.provide(scope)(
      Effect.gen(function* () {
        const context = yield* Layer.build(services)
        const { handler, dispose } = HttpRouter.toWebHandler(
          layerApp.pipe(
            Layer.provide(Layer.succeedContext(context)),
            Layer.provide(layerTestConfig),
            Layer.provide(HttpServer.layerServices),
            Layer.provideMerge(Layer.succeed(References.MinimumLogLevel, "Warn"))
          ),
          { disableLogger: true }
        )
        const fixture = yield* seed({ rateLimit: 2_000_000_000 }).pipe(
          Effect.provide(Layer.succeedContext(context))
        )
        return { handler, fixture, dispose, context }
      })
    )
  )
  return {
    handler,
    fixture,
    context,
    close: async () => {
      await dispose()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }
}

export interface Outgoing {
  readonly method: string
  readonly path: string
  readonly headers: ReadonlyArray<readonly [string, string]>
  readonly body?: Uint8Array | undefined
}

export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly text: string
}

/** Sends through the router; a response slower than 5 s (by default) is a hang and fails the property. */
export const exchange = async (
  target: Pick<FuzzTarget, "handler">,
  outgoing: Outgoing,
  hangMillis = 5_000
): Promise<Answer> => {
  const headers = new Headers()
  for (const [name, value] of outgoing.headers) headers.append(name, value)
  const request = new Request(`${testConfig.publicBaseUrl}${outgoing.path}`, {
    method: outgoing.method,
    headers,
    ...(outgoing.body === undefined ? {} : { body: outgoing.body })
  })
  let timer: ReturnType<typeof setTimeout> | undefined
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${hangMillis} ms (a hang)`)), hangMillis)
  })
  try {
    return await Promise.race([
      (async () => {
        const response = await target.handler(request)
        return { status: response.status, headers: response.headers, text: await response.text() }
      })(),
      hang
    ])
  } finally {
    clearTimeout(timer)
  }
}

/** Whether a request can be expressed at all (fetch refuses some names, values and methods). */
export const expressible = (outgoing: Outgoing) => {
  try {
    const headers = new Headers()
    for (const [name, value] of outgoing.headers) headers.append(name, value)
    new Request(`${testConfig.publicBaseUrl}${outgoing.path}`, {
      method: outgoing.method,
      headers,
      ...(outgoing.body === undefined ? {} : { body: outgoing.body })
    })
    return true
  } catch {
    return false
  }
}

const headerFields = new Set(["Idempotency-Key", "X-Service-Dry-Run"])
const bodyFields = new Set([
  "body",
  "nombre",
  "telefono",
  "email",
  "mensaje",
  "propiedad",
  "propiedad.codigo",
  "propiedad.id",
  "extras"
])

const isSuccess = {
  created: Schema.is(LeadCreated),
  enriched: Schema.is(LeadEnriched),
  dryRun: Schema.is(DryRunResult),
  index: Schema.is(IndexResponse)
}

const fail = (message: string, outgoing: Outgoing, answer: Answer): never => {
  throw new Error(
    `${message}\n  request: ${outgoing.method} ${outgoing.path} headers=${JSON.stringify(outgoing.headers)} body=${
      outgoing.body === undefined
        ? "none"
        : JSON.stringify(Buffer.from(outgoing.body).toString("latin1").slice(0, 300))
    }\n  answer: ${answer.status} ${answer.text.slice(0, 500)}`
  )
}

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** The field an error names must be one of the contract's, or a key the request really sent. */
const fieldIsValid = (field: string, sent: unknown) => {
  if (headerFields.has(field) || bodyFields.has(field)) return true
  if (typeof sent !== "object" || sent === null || Array.isArray(sent)) return false
  const object = sent as Record<string, unknown>
  if (Object.hasOwn(object, field)) return true
  const extras = object.extras
  if (field.startsWith("extras.") && typeof extras === "object" && extras !== null) {
    return Object.hasOwn(extras, field.slice("extras.".length))
  }
  return false
}

/**
 * What every answer must be, whatever was sent: a 2xx or 4xx (never 5xx), an `X-Request-Id`,
 * and either a body of the contract or the error envelope naming a valid code and field.
 */
export const assertWellFormed = (outgoing: Outgoing, answer: Answer) => {
  const { status } = answer
  if (!((status >= 200 && status < 300) || (status >= 400 && status < 500)))
    fail(`status ${status}`, outgoing, answer)
  const requestId = answer.headers.get("x-request-id")
  if (requestId === null || requestId === "") fail("no X-Request-Id", outgoing, answer)
  for (const name of answer.headers.keys()) {
    if (name.startsWith("access-control-")) fail(`CORS header ${name}`, outgoing, answer)
  }
  if (outgoing.method === "HEAD") return
  const body = parse(answer.text) as Record<string, unknown> | undefined
  if (status >= 400) {
    if (body === undefined) fail("error body is not JSON", outgoing, answer)
    const keys = Object.keys(body!).sort()
    if (keys.join(",") !== "error,request_id") fail("error body is not the envelope", outgoing, answer)
    const error = body!.error as Record<string, unknown>
    const code = error.code as keyof typeof errorCatalog
    if (typeof code !== "string" || !(code in errorCatalog))
      fail(`unknown code ${String(code)}`, outgoing, answer)
    if (errorCatalog[code].status !== status) fail(`code ${code} with status ${status}`, outgoing, answer)
    if (typeof error.message !== "string" || error.message === "") fail("no message", outgoing, answer)
    if (error.docs_url !== `${testConfig.publicBaseUrl}/v1/docs#${code}`)
      fail("bad docs_url", outgoing, answer)
    if (body!.request_id !== requestId) fail("request_id differs from X-Request-Id", outgoing, answer)
    const extra = Object.keys(error).filter((key) => !["code", "message", "field", "docs_url"].includes(key))
    if (extra.length > 0) fail(`unexpected error keys ${extra.join(",")}`, outgoing, answer)
    if ("field" in error) {
      if (typeof error.field !== "string") fail("field is not a string", outgoing, answer)
      const sent = outgoing.body === undefined ? undefined : parse(new TextDecoder().decode(outgoing.body))
      if (!fieldIsValid(error.field as string, sent))
        fail(`invalid field ${String(error.field)}`, outgoing, answer)
    }
    if (status === 405 && answer.headers.get("allow") === null) fail("405 without Allow", outgoing, answer)
    return
  }
  if (outgoing.path.split("?")[0] === "/v1/leads") {
    if (body === undefined) fail("success body is not JSON", outgoing, answer)
    const ok =
      status === 201
        ? isSuccess.created(body)
        : isSuccess.enriched(body) || isSuccess.dryRun(body) || isSuccess.created(body)
    if (!ok) fail("success body does not match the contract", outgoing, answer)
    if (body!.request_id !== requestId) fail("request_id differs from X-Request-Id", outgoing, answer)
  } else if (outgoing.path.split("?")[0] === "/v1" && outgoing.method === "GET") {
    if (!isSuccess.index(body)) fail("index body does not match the contract", outgoing, answer)
  }
}

/** Sends and checks; the property of every fuzz suite. */
export const sendAndCheck = async (target: FuzzTarget, outgoing: Outgoing) => {
  const answer = await exchange(target, outgoing)
  assertWellFormed(outgoing, answer)
  return answer
}

export const utf8 = (text: string) => new TextEncoder().encode(text)

/** A `POST /v1/leads` as a partner sends it, with the fixture's key, for a given body. */
export const leadPost = (
  fixture: Fixture,
  body: Uint8Array | undefined,
  headers: ReadonlyArray<readonly [string, string]> = []
): Outgoing => ({
  method: "POST",
  path: "/v1/leads",
  headers: [["authorization", `Bearer ${fixture.key}`], ["content-type", "application/json"], ...headers],
  body
})
