import { assert } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { type ErrorCode, errorHeaders } from "../../src/Api/Api.ts"
import type { layerMemoryServices } from "../support/Client.ts"
import { type Fixture, makeHarness, seed } from "../support/Client.ts"
import { testConfig } from "../support/Database.ts"

export type Services = Layer.Success<typeof layerMemoryServices>

export interface ContractShape {
  readonly handler: (request: Request) => Promise<Response>
  readonly context: Context.Context<Services>
  readonly fixture: Fixture
}

/** One router over one set of services, seeded with an organization, shared by the tests of a suite. */
export class Contract extends Context.Service<Contract, ContractShape>()("test/contract/Contract") {
  static readonly layer = (services: Layer.Layer<Services>) =>
    Layer.effect(
      Contract,
      Effect.gen(function* () {
        const { handler, context } = yield* makeHarness(services)
        const fixture = yield* seed().pipe(Effect.provide(Layer.succeedContext(context)))
        return { handler, context, fixture }
      })
    )
}

/** Runs an effect that needs the domain services against the suite's own services (seeding, revoking). */
export const withServices = <A, E>(effect: Effect.Effect<A, E, Services>) =>
  Effect.flatMap(Contract, ({ context }) => Effect.provide(effect, Layer.succeedContext(context)))

export interface Sent {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  // biome-ignore lint/suspicious/noExplicitAny: tests inspect response bodies field by field
  readonly body: any
}

export interface Outgoing {
  readonly method?: string
  readonly path?: string
  readonly headers?: Record<string, string>
  readonly body?: string | Uint8Array
}

const parseJson = (text: string) => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/**
 * Sends a request through the whole router. A string body is sent as bytes, so the request carries
 * exactly the headers given (fetch would otherwise add `text/plain` for a string).
 */
export const send = (outgoing: Outgoing) =>
  Effect.flatMap(Contract, ({ handler }) =>
    Effect.promise(async (): Promise<Sent> => {
      const body =
        outgoing.body === undefined
          ? undefined
          : typeof outgoing.body === "string"
            ? new TextEncoder().encode(outgoing.body)
            : outgoing.body
      const response = await handler(
        new Request(`${testConfig.publicBaseUrl}${outgoing.path ?? "/v1/leads"}`, {
          method: outgoing.method ?? "POST",
          headers: outgoing.headers ?? {},
          ...(body === undefined ? {} : { body })
        })
      )
      const text = await response.text()
      return { status: response.status, headers: response.headers, text, body: parseJson(text) }
    })
  )

/** `POST /v1/leads` with the suite's key and JSON content type, plus any header given (which wins). */
export const post = (
  body: unknown,
  options?: { readonly headers?: Record<string, string>; readonly raw?: string | Uint8Array }
) =>
  Effect.flatMap(Contract, ({ fixture }) =>
    send({
      headers: {
        authorization: `Bearer ${fixture.key}`,
        "content-type": "application/json",
        ...options?.headers
      },
      body: options?.raw ?? JSON.stringify(body)
    })
  )

/** The same, in dry-run: validates and reports without writing. */
export const dryRun = (body: unknown, headers?: Record<string, string>) =>
  post(body, { headers: { "x-service-dry-run": "true", ...headers } })

export const assertRequestId = (response: Sent) => {
  const header = response.headers.get("x-request-id")
  assert.isString(header)
  assert.isNotEmpty(header)
  assert.strictEqual(response.body?.request_id, header, "X-Request-Id equals body request_id")
}

/** Status, code and field exactly (`field` absent when undefined), in the contract's envelope. */
export const assertError = (response: Sent, status: number, code: ErrorCode, field?: string) => {
  assert.strictEqual(response.status, status, `status (body: ${response.text})`)
  assert.strictEqual(response.headers.get("content-type")?.split(";")[0], "application/json")
  assert.deepStrictEqual(Object.keys(response.body).sort(), ["error", "request_id"])
  const error = response.body.error
  assert.strictEqual(error.code, code)
  if (field === undefined) assert.notProperty(error, "field", `no field expected (body: ${response.text})`)
  else assert.strictEqual(error.field, field, `field (body: ${response.text})`)
  assert.isString(error.message)
  assert.isNotEmpty(error.message)
  assert.strictEqual(error.docs_url, `${testConfig.publicBaseUrl}/v1/docs#${code}`)
  for (const [name, value] of Object.entries(errorHeaders(code))) {
    assert.strictEqual(response.headers.get(name), value, `${code} is sent with ${name}`)
  }
  assertRequestId(response)
}

export const assertValidation = (response: Sent, field: string) =>
  assertError(response, 400, "validation_error", field)

/** A dry-run that passed validation. */
export const assertAccepted = (response: Sent) => {
  assert.strictEqual(response.status, 200, `accepted (body: ${response.text})`)
  assert.strictEqual(response.body.status, "dry_run")
  assertRequestId(response)
}
