import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type Env,
  freePort,
  freshDatabaseEnv,
  processTimeout,
  type RunningServer,
  startServer
} from "./Processes.ts"

/**
 * `GET /v1` is answered ahead of the Effect router when tracing is off (src/FastPath.ts); these
 * requests must look exactly like the routed ones: body, headers, log line and metrics.
 */
describe("GET /v1 answered ahead of the router", { timeout: processTimeout }, () => {
  let env: Env
  let server: RunningServer
  let metricsPort: number

  beforeAll(async () => {
    env = await freshDatabaseEnv()
    metricsPort = await freePort()
    server = await startServer(await freePort(), { env: { ...env, METRICS_PORT: String(metricsPort) } })
  })
  afterAll(async () => {
    await server?.stop()
  })

  const logLine = async (requestId: string) => {
    const deadline = Date.now() + 5_000
    while (Date.now() < deadline) {
      const line = server.output.stdout.split("\n").find((candidate) => candidate.includes(requestId))
      if (line !== undefined) return JSON.parse(line) as Record<string, unknown>
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    throw new Error(`no log line for ${requestId}`)
  }

  it("answers the same document, headers, log line and metrics as the routed requests", async () => {
    const direct = await fetch(`${server.baseUrl}/v1`)
    const routed = await fetch(`${server.baseUrl}/v1`, {
      headers: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" }
    })
    const directBody = (await direct.json()) as Record<string, unknown>
    const routedBody = (await routed.json()) as Record<string, unknown>
    expect(direct.status).toBe(200)
    expect(routed.status).toBe(200)
    expect(direct.headers.get("content-type")).toBe(routed.headers.get("content-type"))
    expect(directBody.request_id).toBe(direct.headers.get("x-request-id"))
    expect(routedBody.request_id).toBe(routed.headers.get("x-request-id"))
    expect(directBody.request_id).not.toBe(routedBody.request_id)
    const { request_id: _a, ...directRest } = directBody
    const { request_id: _b, ...routedRest } = routedBody
    expect(directRest).toEqual(routedRest)

    const directLine = await logLine(String(directBody.request_id))
    const routedLine = await logLine(String(routedBody.request_id))
    const shape = (line: Record<string, unknown>) => {
      const { time: _t, request_id: _r, duration_ms, trace_id: _trace, ...rest } = line
      expect(typeof duration_ms).toBe("number")
      return rest
    }
    expect(shape(directLine)).toEqual(shape(routedLine))
    expect(routedLine.trace_id).toBe("0af7651916cd43dd8448eb211c80319c")
    expect(directLine.trace_id).toBeUndefined()

    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
    const count =
      /lead_intake_http_requests_total\{method="GET",route="\/v1",status="200",outcome="ok"\} (\d+)/.exec(
        metrics
      )
    // The readiness probe of startServer, plus the two requests above.
    expect(Number(count?.[1])).toBeGreaterThanOrEqual(3)
    expect(metrics).toMatch(
      /lead_intake_http_request_duration_seconds_count\{method="GET",route="\/v1",status="200"\} \d+/
    )
  })

  it("leaves every other request to the router", async () => {
    for (const path of ["/v1?x=1", "/v1/", "//v1"]) {
      const response = await fetch(`${server.baseUrl}${path}`)
      expect(response.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
      expect([200, 404]).toContain(response.status)
    }
    const head = await fetch(`${server.baseUrl}/v1`, { method: "HEAD" })
    expect(head.status).toBe(200)
    const post = await fetch(`${server.baseUrl}/v1`, { method: "POST" })
    expect(post.status).toBe(405)
  })
})
