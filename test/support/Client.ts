import { Effect, Layer } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { KeyStore } from "../../src/Accounts/KeyStore.ts"
import { Organizations } from "../../src/Accounts/Organizations.ts"
import { CaptureRules } from "../../src/Intake/CaptureRules.ts"
import { layerApp } from "../../src/Intake/Http/App.ts"
import type { IdempotencyStore } from "../../src/Intake/IdempotencyStore.ts"
import type { LeadRepository } from "../../src/Intake/LeadRepository.ts"
import { PropertyCatalog } from "../../src/Intake/PropertyCatalog.ts"
import type { RateLimiter } from "../../src/Intake/RateLimiter.ts"
import type { RequestLog } from "../../src/Intake/RequestLog.ts"
import { layerServices, layerServicesMemory } from "../../src/Intake/Services.ts"
import { layerFreshDatabase, layerTestConfig } from "./Database.ts"

type Services = Layer.Success<typeof layerServicesMemory>

/** The request path's services, which the memory and the PostgreSQL layers below both provide. */
export type IntakeServices =
  | KeyStore
  | RateLimiter
  | IdempotencyStore
  | LeadRepository
  | PropertyCatalog
  | RequestLog
  | Organizations
  | CaptureRules

/**
 * The whole router in-process (global middleware included) over the given services, plus the
 * services themselves for seeding and for checking what a request left behind.
 */
export const makeHarness = (services: Layer.Layer<Services>) =>
  Effect.gen(function* () {
    const context = yield* Layer.build(services)
    const { handler, dispose } = HttpRouter.toWebHandler(
      layerApp.pipe(
        Layer.provide(Layer.succeedContext(context)),
        Layer.provide(layerTestConfig),
        Layer.provide(HttpServer.layerServices)
      ),
      { disableLogger: true }
    )
    yield* Effect.addFinalizer(() => Effect.promise(dispose))
    return { handler, context }
  })

export const layerMemoryServices = layerServicesMemory

export const layerPostgresServices = layerServices.pipe(Layer.provideMerge(layerFreshDatabase))

export interface Fixture {
  readonly organizationId: string
  readonly originId: string
  readonly key: string
  readonly prefix: string
  readonly agentIds: ReadonlyArray<string>
  readonly propertyId: string
  readonly archivedPropertyId: string
}

/** An organization with an origin and key, two agents, a round-robin rule and two properties. */
export const seed = (options?: {
  readonly country?: string
  readonly rateLimit?: number
  readonly roundRobin?: boolean
}) =>
  Effect.gen(function* () {
    const organizations = yield* Organizations
    const keys = yield* KeyStore
    const rules = yield* CaptureRules
    const catalog = yield* PropertyCatalog
    const organization = yield* organizations.create({
      name: "Inmobiliaria Test",
      country: options?.country ?? "MX"
    })
    const origin = yield* keys.createOrigin({
      organizationId: organization.id,
      label: `web-${crypto.randomUUID().slice(0, 8)}`,
      rateLimit: options?.rateLimit ?? 1000
    })
    const ana = yield* rules.addAgent({ organizationId: organization.id, name: "Ana" })
    const luis = yield* rules.addAgent({ organizationId: organization.id, name: "Luis" })
    if (options?.roundRobin !== false) {
      yield* rules.addRule({
        organizationId: organization.id,
        originId: null,
        propertyId: null,
        agentIds: [ana.id, luis.id],
        roundRobin: true,
        priority: 100
      })
    }
    const property = yield* catalog.add({
      organizationId: organization.id,
      codigo: "ABC-1234",
      externalCode: "EXT-1",
      archived: false
    })
    const archived = yield* catalog.add({
      organizationId: organization.id,
      codigo: "OLD-0001",
      externalCode: null,
      archived: true
    })
    return {
      organizationId: organization.id,
      originId: origin.id,
      key: origin.key,
      prefix: origin.prefix,
      agentIds: [ana.id, luis.id],
      propertyId: property.id,
      archivedPropertyId: archived.id
    } satisfies Fixture
  }).pipe(Effect.orDie)

export const postLead = (
  handler: (request: Request) => Promise<Response>,
  body: unknown,
  options?: { readonly key?: string; readonly headers?: Record<string, string>; readonly raw?: string }
) =>
  Effect.promise(async () => {
    const response = await handler(
      new Request("http://api.test/v1/leads", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(options?.key === undefined ? {} : { authorization: `Bearer ${options.key}` }),
          ...options?.headers
        },
        body: options?.raw ?? JSON.stringify(body)
      })
    )
    const text = await response.text()
    // biome-ignore lint/suspicious/noExplicitAny: tests inspect response bodies field by field
    const json: any = text === "" ? undefined : JSON.parse(text)
    return { status: response.status, headers: response.headers, body: json }
  })
