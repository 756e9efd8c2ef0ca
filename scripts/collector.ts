import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { gunzipSync } from "node:zlib"

/**
 * A local OTLP/HTTP receiver for development and tests: accepts JSON traces and metrics on
 * `/v1/traces` and `/v1/metrics` and prints each batch of spans as a tree. Not a collector to
 * run in production; point the service at a real one (Jaeger, Tempo, the OpenTelemetry Collector).
 *
 *   npm run collector [-- --port 4318]
 *   OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 npm start
 */

type AnyValue = {
  readonly stringValue?: string
  readonly intValue?: string | number
  readonly doubleValue?: number
  readonly boolValue?: boolean
  readonly arrayValue?: { readonly values?: ReadonlyArray<AnyValue> }
}

interface KeyValue {
  readonly key: string
  readonly value: AnyValue
}

export interface ReceivedSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly kind?: number
  readonly startTimeUnixNano: string
  readonly endTimeUnixNano: string
  readonly attributes?: ReadonlyArray<KeyValue>
  readonly events?: ReadonlyArray<{ readonly name: string; readonly attributes?: ReadonlyArray<KeyValue> }>
  readonly status?: { readonly code?: number; readonly message?: string }
}

export interface Collector {
  readonly url: string
  /** Every span received so far, with its resource's `service.name`. */
  readonly spans: ReadonlyArray<ReceivedSpan & { readonly service: string }>
  /** Every metric name received so far. */
  readonly metricNames: ReadonlySet<string>
  /** Every request body received, as sent, to search for what must never be exported. */
  readonly bodies: ReadonlyArray<string>
  readonly close: () => Promise<void>
}

export const attributeValue = (value: AnyValue): unknown => {
  if (value.stringValue !== undefined) return value.stringValue
  if (value.intValue !== undefined) return Number(value.intValue)
  if (value.doubleValue !== undefined) return value.doubleValue
  if (value.boolValue !== undefined) return value.boolValue
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(attributeValue)
  return undefined
}

export const attributesOf = (attributes: ReadonlyArray<KeyValue> | undefined): Record<string, unknown> =>
  Object.fromEntries((attributes ?? []).map(({ key, value }) => [key, attributeValue(value)]))

const millis = (span: ReceivedSpan) =>
  (Number(BigInt(span.endTimeUnixNano) - BigInt(span.startTimeUnixNano)) / 1e6).toFixed(1)

const printTree = (spans: ReadonlyArray<ReceivedSpan>, print: (line: string) => void) => {
  const ids = new Set(spans.map((span) => span.spanId))
  const children = new Map<string, Array<ReceivedSpan>>()
  for (const span of spans) {
    const parent = span.parentSpanId !== undefined && ids.has(span.parentSpanId) ? span.parentSpanId : ""
    children.set(parent, [...(children.get(parent) ?? []), span])
  }
  const walk = (span: ReceivedSpan, depth: number) => {
    const attributes = Object.entries(attributesOf(span.attributes))
      .map(([key, value]) => `${key}=${JSON.stringify(value)}`)
      .join(" ")
    const failed = span.status?.code === 2 ? " ERROR" : ""
    print(`${"  ".repeat(depth)}${span.name} ${millis(span)}ms${failed} ${attributes}`.trimEnd())
    for (const event of span.events ?? []) {
      const detail = attributesOf(event.attributes)["exception.message"]
      print(`${"  ".repeat(depth + 1)}! ${event.name}${detail === undefined ? "" : `: ${String(detail)}`}`)
    }
    const sorted = [...(children.get(span.spanId) ?? [])].sort((a, b) =>
      a.startTimeUnixNano.localeCompare(b.startTimeUnixNano)
    )
    for (const child of sorted) walk(child, depth + 1)
  }
  const byTrace = new Map<string, Array<ReceivedSpan>>()
  for (const root of children.get("") ?? [])
    byTrace.set(root.traceId, [...(byTrace.get(root.traceId) ?? []), root])
  for (const [traceId, roots] of byTrace) {
    print(`trace ${traceId}`)
    for (const root of roots) walk(root, 1)
  }
}

const readBody = async (request: IncomingMessage) => {
  const chunks: Array<Buffer> = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  const raw = Buffer.concat(chunks)
  return (request.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw).toString("utf8")
}

type Stored = Array<ReceivedSpan & { service: string }>

/** The spans of one OTLP/JSON traces body, each with its service's name. */
const spansOf = (body: {
  readonly resourceSpans?: ReadonlyArray<{
    readonly resource?: { readonly attributes?: ReadonlyArray<KeyValue> }
    readonly scopeSpans?: ReadonlyArray<{ readonly spans?: ReadonlyArray<ReceivedSpan> }>
  }>
}) =>
  (body.resourceSpans ?? []).flatMap((resourceSpans) => {
    const service = String(attributesOf(resourceSpans.resource?.attributes)["service.name"] ?? "")
    return (resourceSpans.scopeSpans ?? []).flatMap((scopeSpans) =>
      (scopeSpans.spans ?? []).map((span) => ({ ...span, service }))
    )
  })

/** The metric names of one OTLP/JSON metrics body. */
const metricNamesOf = (body: {
  readonly resourceMetrics?: ReadonlyArray<{
    readonly scopeMetrics?: ReadonlyArray<{ readonly metrics?: ReadonlyArray<{ readonly name: string }> }>
  }>
}) =>
  (body.resourceMetrics ?? []).flatMap((resourceMetrics) =>
    (resourceMetrics.scopeMetrics ?? []).flatMap((scopeMetrics) =>
      (scopeMetrics.metrics ?? []).map((metric) => metric.name)
    )
  )

const receive =
  (
    stored: { readonly spans: Stored; readonly metricNames: Set<string>; readonly bodies: Array<string> },
    print: (line: string) => void
  ) =>
  async (request: IncomingMessage, response: ServerResponse) => {
    const path = request.url ?? ""
    if (request.method !== "POST" || !["/v1/traces", "/v1/metrics", "/v1/logs"].includes(path)) {
      response.writeHead(404).end()
      return
    }
    if (!(request.headers["content-type"] ?? "").startsWith("application/json")) {
      response
        .writeHead(415, { "content-type": "text/plain" })
        .end("This receiver reads OTLP/JSON only (OTEL_EXPORTER_OTLP_PROTOCOL=http/json)\n")
      return
    }
    try {
      const text = await readBody(request)
      stored.bodies.push(text)
      const body = JSON.parse(text)
      if (path === "/v1/traces") {
        const batch = spansOf(body)
        stored.spans.push(...batch)
        printTree(batch, print)
      } else if (path === "/v1/metrics") {
        const names = metricNamesOf(body)
        for (const name of names) stored.metricNames.add(name)
        print(`metrics: ${names.length} received (${names.join(", ")})`)
      }
      response.writeHead(200, { "content-type": "application/json" }).end("{}")
    } catch (error) {
      response.writeHead(400, { "content-type": "text/plain" }).end(`${String(error)}\n`)
    }
  }

/** Starts the receiver; `print` gets one line per span (and per metrics batch) when given. */
export const startCollector = (options: {
  readonly port: number
  readonly host?: string
  readonly print?: (line: string) => void
}): Promise<Collector> => {
  const spans: Stored = []
  const metricNames = new Set<string>()
  const bodies: Array<string> = []
  const server = createServer(receive({ spans, metricNames, bodies }, options.print ?? (() => {})))

  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port, options.host ?? "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({
        url: `http://${options.host ?? "127.0.0.1"}:${port}`,
        spans,
        metricNames,
        bodies,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })
}

if (import.meta.main) {
  const flag = process.argv.indexOf("--port")
  const port = Number(flag === -1 ? (process.env.COLLECTOR_PORT ?? 4318) : process.argv[flag + 1])
  const collector = await startCollector({ port, print: (line) => process.stdout.write(`${line}\n`) })
  process.stdout.write(
    `OTLP/HTTP receiver on ${collector.url}; run the service with OTEL_EXPORTER_OTLP_ENDPOINT=${collector.url}\n`
  )
  const stop = () => {
    void collector.close().then(() => process.exit(0))
  }
  process.once("SIGINT", stop)
  process.once("SIGTERM", stop)
}
