import { SpanKind } from "@opentelemetry/api"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Context, Effect, Layer, Logger, References } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { layerApp, layerTracedRoutes } from "../../src/Intake/Http/App.ts"
import { LeadRepository } from "../../src/Intake/LeadRepository.ts"
import { layerTracer, makeJsonLogger } from "../../src/Platform/Observability/Observability.ts"
import { type Fixture, type IntakeServices, layerMemoryServices, seed } from "../support/Client.ts"
import { layerTestConfig } from "../support/Database.ts"

export type Services = IntakeServices

export interface LogLine {
  readonly time: string
  readonly level: string
  readonly msg: string
  readonly [key: string]: unknown
}

export interface Sent {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  // biome-ignore lint/suspicious/noExplicitAny: tests inspect response bodies field by field
  readonly body: any
}

export interface ObservedShape {
  readonly handler: (request: Request) => Promise<Response>
  readonly context: Context.Context<Services>
  readonly fixture: Fixture
  readonly spans: () => ReadonlyArray<ReadableSpan>
  readonly logLines: () => ReadonlyArray<LogLine>
  /** Everything written to the log, exactly as written. */
  readonly rawLog: () => string
}

/**
 * The whole router in-process with the service's own tracer (spans kept by an in-memory exporter)
 * and JSON logger (lines kept in an array), over the given services, seeded with an organization.
 */
export class Observed extends Context.Service<Observed, ObservedShape>()("test/observability/Observed") {
  static readonly layer = (
    services: Layer.Layer<Services>,
    options?: { readonly logLevel?: "Info" | "Warn"; readonly traced?: boolean }
  ) =>
    Layer.effect(
      Observed,
      Effect.gen(function* () {
        const exporter = new InMemorySpanExporter()
        const lines: Array<string> = []
        const context = yield* Layer.build(services)
        const { handler, dispose } = HttpRouter.toWebHandler(
          layerApp.pipe(
            Layer.provide(Layer.succeedContext(context)),
            Layer.provide(layerTestConfig),
            Layer.provide(HttpServer.layerServices),
            Layer.provideMerge(
              options?.traced === false
                ? Layer.succeed(References.TracerEnabled, false)
                : Layer.merge(layerTracer(new SimpleSpanProcessor(exporter)), layerTracedRoutes)
            ),
            Layer.provideMerge(Logger.layer([makeJsonLogger((line) => lines.push(line))])),
            Layer.provideMerge(Layer.succeed(References.MinimumLogLevel, options?.logLevel ?? "Info"))
          ),
          { disableLogger: true }
        )
        yield* Effect.addFinalizer(() => Effect.promise(dispose))
        const fixture = yield* seed().pipe(Effect.provide(Layer.succeedContext(context)))
        return {
          handler,
          context,
          fixture,
          spans: () => exporter.getFinishedSpans(),
          logLines: () => lines.map((line) => JSON.parse(line) as LogLine),
          rawLog: () => lines.join("")
        }
      })
    )
}

export const withServices = <A, E>(effect: Effect.Effect<A, E, Services>) =>
  Effect.flatMap(Observed, ({ context }) => Effect.provide(effect, Layer.succeedContext(context)))

const parseJson = (text: string) => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

export const send = (outgoing: {
  readonly method?: string
  readonly path?: string
  readonly headers?: Record<string, string>
  readonly body?: string
}) =>
  Effect.flatMap(Observed, ({ handler }) =>
    Effect.promise(async (): Promise<Sent> => {
      const response = await handler(
        new Request(`http://api.test${outgoing.path ?? "/v1/leads"}`, {
          method: outgoing.method ?? "POST",
          headers: outgoing.headers ?? {},
          ...(outgoing.body === undefined ? {} : { body: new TextEncoder().encode(outgoing.body) })
        })
      )
      const text = await response.text()
      // The observer writes a request's metrics and log line in the turn of the event loop that
      // answered it (Platform/Observability/Request.ts): the next turn sees them.
      await new Promise((resolve) => setImmediate(resolve))
      return { status: response.status, headers: response.headers, text, body: parseJson(text) }
    })
  )

/** `POST /v1/leads` as JSON with the given key (the suite's by default) and headers. */
export const post = (
  body: unknown,
  options?: { readonly key?: string; readonly headers?: Record<string, string> }
) =>
  Effect.flatMap(Observed, ({ fixture }) =>
    send({
      headers: {
        authorization: `Bearer ${options?.key ?? fixture.key}`,
        "content-type": "application/json",
        ...options?.headers
      },
      body: JSON.stringify(body)
    })
  )

export interface SpanNode {
  readonly span: ReadableSpan
  readonly children: ReadonlyArray<SpanNode>
}

const treeFrom = (spans: ReadonlyArray<ReadableSpan>, root: ReadableSpan): SpanNode => ({
  span: root,
  children: spans
    .filter((span) => span.parentSpanContext?.spanId === root.spanContext().spanId)
    .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1])
    .map((child) => treeFrom(spans, child))
})

const isSql = (span: ReadableSpan) => span.attributes["db.system.name"] !== undefined

/** The tree by name, without SQL spans (their number and shape are the services' business). */
export const render = (node: SpanNode, depth = 0): ReadonlyArray<string> => [
  `${"  ".repeat(depth)}${node.span.name}`,
  ...node.children.filter((child) => !isSql(child.span)).flatMap((child) => render(child, depth + 1))
]

const descendants = (node: SpanNode): ReadonlyArray<ReadableSpan> =>
  node.children.flatMap((child) => [child.span, ...descendants(child)])

const findNode = (node: SpanNode, name: string): SpanNode | undefined =>
  node.span.name === name
    ? node
    : node.children.map((child) => findNode(child, name)).find((found) => found !== undefined)

/** The SQL statements run under the named span, in any depth (transactions nest them). */
export const statementsUnder = (node: SpanNode, name: string): ReadonlyArray<ReadableSpan> => {
  const found = findNode(node, name)
  return found === undefined
    ? []
    : descendants(found).filter((span) => span.attributes["db.query.text"] !== undefined)
}

export const find = (node: SpanNode, name: string): ReadableSpan | undefined => findNode(node, name)?.span

/**
 * The span tree of the request with this id. The server span ends just after the response is
 * handed over, so this waits for it briefly.
 */
export const requestTree = (requestId: string) =>
  Effect.flatMap(Observed, ({ spans }) =>
    Effect.promise(async () => {
      for (let attempt = 0; attempt < 100; attempt++) {
        const all = spans()
        const server = all.find(
          (span) => span.kind === SpanKind.SERVER && span.attributes["request.id"] === requestId
        )
        if (server !== undefined) return treeFrom(all, server)
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      throw new Error(`no server span for request ${requestId}`)
    })
  )

/** The log line of the request with this id. */
export const requestLine = (requestId: string) =>
  Effect.map(Observed, ({ logLines }) => {
    const line = logLines().find((entry) => entry.msg === "request" && entry.request_id === requestId)
    if (line === undefined) throw new Error(`no log line for request ${requestId}`)
    return line
  })

/** The in-memory services with a lead write that dies: a defect, as a bug or a broken schema would be. */
export const layerBrokenWrites = Layer.effectContext(
  Effect.gen(function* () {
    const context = yield* Layer.build(layerMemoryServices)
    const leads = Context.get(context, LeadRepository)
    const createOrEnrich = Effect.fn("LeadRepository.createOrEnrich")(function* () {
      return yield* Effect.die(new Error("the write path is on fire"))
    })
    return Context.add(context, LeadRepository, LeadRepository.of({ ...leads, createOrEnrich }))
  })
)
