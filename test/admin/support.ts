import { createServer } from "node:http"
import { NodeHttpServer } from "@effect/platform-node"
import { Clock, Context, Duration, Effect, Exit, Layer, Scope } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { HttpApi } from "effect/http-api"
import { expect } from "vitest"
import { AdminApi } from "../../src/AdminApi/AdminApi.ts"
import { Audit } from "../../src/Console/AuditLog.ts"
import { listRules } from "../../src/Console/Capture/Queries.ts"
import { defaultThrottlePolicy, LoginThrottle, type ThrottlePolicy } from "../../src/Console/LoginThrottle.ts"
import { Operators } from "../../src/Console/Operators.ts"
import { Preferences } from "../../src/Console/Preferences.ts"
import { layerAdminApp } from "../../src/Console/Server/App.ts"
import { defaultSessionPolicy, type SessionPolicy, Sessions } from "../../src/Console/Sessions.ts"
import { layerApp } from "../../src/Intake/Http/App.ts"
import { Rescues } from "../../src/Intake/Rescue.ts"
import { layerServices } from "../../src/Intake/Services.ts"
import { PersonalData } from "../../src/PersonalData/PersonalData.ts"
import { AppConfig, type AppConfigShape, WebhookConfig } from "../../src/Platform/Config.ts"
import { WebhookAttempts } from "../../src/Webhooks/Attempts.ts"
import { WebhookDeliveries } from "../../src/Webhooks/Deliveries.ts"
import { WebhookEndpoints } from "../../src/Webhooks/Endpoints.ts"
import { type Fixture, seed } from "../support/Client.ts"
import { layerFreshDatabase, testConfig } from "../support/Database.ts"

export const adminBase = "http://127.0.0.1:8081"

/** What the console's and the public routers run on: a migrated database's `SqlClient` and `PgClient`. */
export type DatabaseLayer = typeof layerFreshDatabase

const layerAll = (
  policies: { readonly sessions: SessionPolicy; readonly throttle: ThrottlePolicy },
  database: DatabaseLayer
) =>
  Layer.mergeAll(
    layerServices,
    Operators.layer,
    Preferences.layer,
    Sessions.layerWith(policies.sessions),
    Audit.layer,
    LoginThrottle.layerWith(policies.throttle),
    PersonalData.layer,
    WebhookDeliveries.layer,
    WebhookAttempts.layer,
    WebhookEndpoints.layer.pipe(Layer.provideMerge(WebhookConfig.layer)),
    Rescues.layer.pipe(Layer.provide([layerServices, Layer.succeed(AppConfig, testConfig)]))
  ).pipe(Layer.provideMerge(database))

type Services = Layer.Success<ReturnType<typeof layerAll>>

export interface Account {
  readonly id: string
  readonly email: string
  readonly password: string
}

export interface Organization extends Fixture {
  readonly admin: Account
  readonly viewer: Account
  readonly leadId: string
  readonly requestId: string
  readonly ruleId: string
  /** An endpoint added before the lead, so the lead's `lead.created` event is one of its deliveries. */
  readonly webhookId: string
  readonly eventId: string
}

/** The admin router and the public one in-process, over one set of services on one database. */
export interface Routers {
  readonly admin: (request: Request) => Promise<Response>
  readonly publicApi: (request: Request) => Promise<Response>
  readonly run: <A, E>(effect: Effect.Effect<A, E, Services>) => Promise<A>
  /** The admin router on a real socket (127.0.0.1, a free port), so requests have a TCP peer (from other loopback addresses too). */
  readonly listen: (
    config?: Partial<AppConfigShape>
  ) => Promise<{ readonly port: number; readonly url: string; readonly close: () => Promise<void> }>
  readonly close: () => Promise<void>
}

export interface Harness extends Routers {
  readonly a: Organization
  readonly b: Organization
  readonly platform: Account
}

export interface HarnessOptions {
  readonly sessions?: SessionPolicy
  readonly throttle?: ThrottlePolicy
  /** The clock every service and request reads (default: the real one). */
  readonly clock?: Clock.Clock
  /** Settings over `testConfig` (e.g. `trustedProxies`) for the admin router. */
  readonly config?: Partial<AppConfigShape>
  /** The database the services run on (default: a fresh migrated one). */
  readonly database?: DatabaseLayer
}

/**
 * A fresh database with two organizations (each: origin with key, agents, rule, properties, one
 * lead sent through the public API, an admin and a viewer) and a platform administrator; the
 * admin router in-process over the same services as the public one.
 */
export const makeHarness = async (policies: HarnessOptions = {}): Promise<Harness> => {
  const routers = await makeRouters(policies)
  const { run, publicApi } = routers
  const organization = async (): Promise<Organization> => {
    const fixture = await run(seed())
    const webhook = await run(
      Effect.flatMap(Effect.service(WebhookEndpoints), (endpoints) =>
        endpoints.add({
          organizationId: fixture.organizationId,
          url: "https://93.184.215.14/hooks/leads",
          events: ["lead.created", "lead.enriched"]
        })
      ).pipe(Effect.orDie)
    )
    const leadResponse = await publicApi(
      new Request("http://api.test/v1/leads", {
        method: "POST",
        headers: { authorization: `Bearer ${fixture.key}`, "content-type": "application/json" },
        body: JSON.stringify({ nombre: "Ana López", telefono: "+52 55 1234 5678", email: "ana@example.com" })
      })
    )
    const lead = (await leadResponse.json()) as { lead_id: string; request_id: string }
    const [delivery] = await run(
      Effect.flatMap(Effect.service(WebhookDeliveries), (d) => d.list(webhook.endpoint.id, 1)).pipe(
        Effect.orDie
      )
    )
    const rules = await run(listRules(fixture.organizationId))
    const tag = crypto.randomUUID().slice(0, 8)
    const [adminAccount, viewer] = await run(
      Effect.flatMap(Effect.service(Operators), (operators) =>
        Effect.all([
          operators.add({
            organizationId: fixture.organizationId,
            email: `admin-${tag}@example.com`,
            role: "admin"
          }),
          operators.add({
            organizationId: fixture.organizationId,
            email: `viewer-${tag}@example.com`,
            role: "viewer"
          })
        ])
      ).pipe(Effect.orDie)
    )
    return {
      ...fixture,
      admin: adminAccount!,
      viewer: viewer!,
      leadId: lead.lead_id,
      requestId: lead.request_id,
      ruleId: rules[0]!.id,
      webhookId: webhook.endpoint.id,
      eventId: delivery!.event_id
    }
  }
  const a = await organization()
  const b = await organization()
  const platform = await run(
    Effect.flatMap(Effect.service(Operators), (operators) =>
      operators.add({
        organizationId: null,
        email: `root-${crypto.randomUUID().slice(0, 8)}@example.com`,
        role: "admin"
      })
    ).pipe(Effect.orDie)
  )
  return { ...routers, a, b, platform }
}

/** The admin and public routers over one set of services on `database` (a fresh migrated one by default), nothing seeded. */
export const makeRouters = async (policies: HarnessOptions = {}): Promise<Routers> => {
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(
    Layer.buildWithScope(
      layerAll(
        {
          sessions: policies.sessions ?? defaultSessionPolicy,
          throttle: policies.throttle ?? defaultThrottlePolicy
        },
        policies.database ?? layerFreshDatabase
      ).pipe(
        Layer.merge(policies.clock === undefined ? Layer.empty : Layer.succeed(Clock.Clock, policies.clock))
      ),
      scope
    )
  )
  const run = <A, E>(effect: Effect.Effect<A, E, Services>) =>
    Effect.runPromise(Effect.provide(effect, context) as Effect.Effect<A, E>)
  const provided = <A, E, R>(app: Layer.Layer<A, E, R>, config = policies.config) =>
    app.pipe(
      Layer.provide(Layer.succeedContext(context)),
      Layer.provide(Layer.succeed(AppConfig, { ...testConfig, ...config })),
      Layer.provide(HttpServer.layerServices)
    ) as Layer.Layer<A, E, never>
  const admin = HttpRouter.toWebHandler(provided(layerAdminApp), { disableLogger: true })
  const publicApi = HttpRouter.toWebHandler(provided(layerApp), { disableLogger: true })
  const listen = async (config?: Partial<AppConfigShape>) => {
    const listenerScope = Effect.runSync(Scope.make())
    const served = await Effect.runPromise(
      Layer.buildWithScope(
        HttpRouter.serve(provided(layerAdminApp, { ...policies.config, ...config }), {
          disableLogger: true,
          disableListenLog: true
        }).pipe(Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))),
        listenerScope
      )
    )
    const address = Context.get(served, HttpServer.HttpServer).address
    const port = "port" in address ? address.port : 0
    return {
      port,
      url: `http://127.0.0.1:${port}`,
      close: () => Effect.runPromise(Scope.close(listenerScope, Exit.void))
    }
  }
  return {
    admin: (request) => {
      if (request.headers.has("host")) return admin.handler(request)
      // What an HTTP client sends: the URL's host and port.
      const headers = new Headers(request.headers)
      headers.set("host", new URL(request.url).host)
      return admin.handler(new Request(request, { headers }))
    },
    publicApi: publicApi.handler,
    run,
    listen,
    close: async () => {
      await admin.dispose()
      await publicApi.dispose()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }
}

export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  // biome-ignore lint/suspicious/noExplicitAny: tests inspect response bodies field by field
  readonly body: any
}

const parse = (text: string) => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

export const send = async (
  handler: (request: Request) => Promise<Response>,
  method: string,
  path: string,
  options: { readonly body?: unknown; readonly headers?: Record<string, string> } = {}
): Promise<Answer> => {
  const response = await handler(
    new Request(`${adminBase}${path}`, {
      method,
      headers: {
        ...(options.body === undefined ? {} : { "content-type": "application/json" }),
        ...options.headers
      },
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) })
    })
  )
  const text = await response.text()
  return { status: response.status, headers: response.headers, text, body: parse(text) }
}

/** A signed-in browser: the session cookie and the CSRF token it was given. */
export interface Signed {
  readonly cookie: string
  readonly token: string
  readonly csrf: string
  readonly call: (
    method: string,
    path: string,
    options?: {
      readonly body?: unknown
      readonly csrf?: string | null
      readonly headers?: Record<string, string>
    }
  ) => Promise<Answer>
}

export const cookieOf = (answer: Answer) => {
  const header = answer.headers.get("set-cookie") ?? ""
  const match = /lead_intake_session=([^;]*)/.exec(header)
  return match?.[1]
}

export const signIn = async (harness: Pick<Routers, "admin">, account: Account): Promise<Signed> => {
  const answer = await send(harness.admin, "POST", "/api/session", {
    body: { email: account.email, password: account.password }
  })
  if (answer.status !== 200) throw new Error(`sign-in failed: ${answer.status} ${answer.text}`)
  const token = cookieOf(answer)!
  const csrf = answer.body.csrf_token as string
  return {
    cookie: `lead_intake_session=${token}`,
    token,
    csrf,
    call: (method, path, options = {}) =>
      send(harness.admin, method, path, {
        ...(options.body === undefined ? {} : { body: options.body }),
        headers: {
          cookie: `lead_intake_session=${token}`,
          ...(options.csrf === null ? {} : { "x-csrf-token": options.csrf ?? csrf }),
          ...options.headers
        }
      })
  }
}

/** The operators the suites act as, signed in: organization A's admin and viewer, B's admin, the platform's. */
export const signInEveryone = async (harness: Harness) => ({
  adminA: await signIn(harness, harness.a.admin),
  viewerA: await signIn(harness, harness.a.viewer),
  adminB: await signIn(harness, harness.b.admin),
  root: await signIn(harness, harness.platform)
})

/** An answer in the admin API's error envelope, with this status, code and (when given) field. */
export const expectError = (answer: Answer, status: number, code: string, field?: string) => {
  expect(answer.status, answer.text).toBe(status)
  expect(answer.headers.get("content-type")).toMatch(/^application\/json/)
  expect(Object.keys(answer.body).sort()).toEqual(["error", "request_id"])
  expect(answer.body.error.code).toBe(code)
  expect(answer.body.error.message).toEqual(expect.any(String))
  if (field !== undefined) expect(answer.body.error.field).toBe(field)
  expect(answer.body.request_id).toBe(answer.headers.get("x-request-id"))
}

export interface EndpointInfo {
  readonly group: string
  readonly name: string
  readonly method: string
  readonly path: string
}

/** Every endpoint of the admin contract, read from the HttpApi itself so a new one cannot be missed. */
export const endpoints: ReadonlyArray<EndpointInfo> = (() => {
  const list: Array<EndpointInfo> = []
  HttpApi.reflect(AdminApi, {
    onGroup: () => {},
    onEndpoint: ({ group, endpoint }) =>
      list.push({
        group: group.identifier,
        name: endpoint.identifier,
        method: endpoint.method,
        path: endpoint.path
      })
  })
  return list
})()

/** Signing in and out, and the document, act on no organization; every other group acts on one (`?org=`). */
const organizationFreeGroups: ReadonlySet<string> = new Set(["session", "adminDocs"])

export const actsOnOrganization = (endpoint: EndpointInfo) => !organizationFreeGroups.has(endpoint.group)

export const changes = (endpoint: EndpointInfo) => endpoint.method !== "GET" && endpoint.method !== "HEAD"

/** The endpoint's path with its id filled from the organization given. */
export const pathFor = (endpoint: EndpointInfo, org: Organization) =>
  endpoint.path
    .replace(":request_id", org.requestId)
    .replace(":event_id", org.eventId)
    .replace(
      ":id",
      endpoint.path.startsWith("/api/origins")
        ? org.originId
        : endpoint.path.startsWith("/api/properties")
          ? org.propertyId
          : endpoint.path.startsWith("/api/rules")
            ? org.ruleId
            : endpoint.path.startsWith("/api/webhooks")
              ? org.webhookId
              : org.leadId
    )

/** A body each state-changing endpoint would accept, so a refusal is about the rule under test only. */
export const validBody = (endpoint: EndpointInfo, org: Organization): unknown => {
  switch (endpoint.name) {
    case "login":
      return { email: org.admin.email, password: org.admin.password }
    case "createOrigin":
      return { label: `web-${crypto.randomUUID().slice(0, 8)}` }
    case "setRateLimit":
      return { rate_limit: 77 }
    case "createProperty":
      return {
        codigo: `Z${crypto
          .randomUUID()
          .replace(/[^a-f]/g, "")
          .slice(0, 2)
          .toUpperCase()
          .padEnd(2, "Q")}-${String(Math.floor(Math.random() * 10_000)).padStart(4, "0")}`
      }
    case "createAgent":
      return { name: "Marta" }
    case "createRule":
      return { agent_ids: [org.agentIds[0]], round_robin: false }
    case "resendFailedWebhookDeliveries":
      return { since: "2026-01-01T00:00:00Z" }
    case "createWebhook":
      return { url: "https://93.184.215.14/hooks/other", events: ["lead.created"] }
    case "eraseLead":
      return { reason: "Data subject request by e-mail" }
    case "rescue":
      return { body: '{"nombre":"Ana","telefono":"5512345600"}' }
    case "setLanguage":
      return { language: "es" }
    case "setTimeZone":
      return { time_zone: "America/Monterrey" }
    default:
      return undefined
  }
}

/** The real clock moved forward on demand: `advance` jumps wall time, sleeping stays real. */
export const offsetClock = () => {
  const live = Clock.Clock.defaultValue()
  let offset = 0
  const millis = () => live.currentTimeMillisUnsafe() + offset
  const nanos = () => live.currentTimeNanosUnsafe() + BigInt(offset) * 1_000_000n
  const clock: Clock.Clock = {
    currentTimeMillisUnsafe: millis,
    currentTimeMillis: Effect.sync(millis),
    currentTimeNanosUnsafe: nanos,
    currentTimeNanos: Effect.sync(nanos),
    monotonicTimeNanosUnsafe: () => live.monotonicTimeNanosUnsafe(),
    monotonicTimeNanos: live.monotonicTimeNanos,
    sleep: (duration) => live.sleep(duration)
  }
  return {
    clock,
    advance: (duration: Duration.Duration) => {
      offset += Duration.toMillis(duration)
    }
  }
}
