import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Logger } from "effect"
import { makeJsonLogger } from "../../src/Platform/Observability/Observability.ts"
import { RequestLine } from "../../src/Platform/Observability/Request.ts"
import { layerMemoryServices } from "../support/Client.ts"
import { layerBrokenWrites, Observed, post, requestLine, send } from "./support.ts"

const lead = { nombre: "Ana", telefono: "+52 55 1234 5678" }
const isoTime = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

layer(Observed.layer(layerMemoryServices), { excludeTestServices: true })("the request log line", (it) => {
  it.effect("one JSON line per request with its id, trace, origin, route, status, outcome and duration", () =>
    Effect.gen(function* () {
      const { fixture, rawLog } = yield* Observed
      const response = yield* post(lead)
      const line = yield* requestLine(response.body.request_id)
      assert.deepStrictEqual(Object.keys(line), [
        "time",
        "level",
        "msg",
        "request_id",
        "method",
        "route",
        "status",
        "outcome",
        "duration_ms",
        "key_prefix",
        "origin_id",
        "lead_id",
        "trace_id",
        "span_id"
      ])
      assert.match(line.time, isoTime)
      assert.strictEqual(line.level, "info")
      assert.strictEqual(line.request_id, response.headers.get("x-request-id"))
      assert.match(String(line.trace_id), /^[0-9a-f]{32}$/)
      assert.match(String(line.span_id), /^[0-9a-f]{16}$/)
      assert.strictEqual(line.method, "POST")
      assert.strictEqual(line.route, "/v1/leads")
      assert.strictEqual(line.status, 201)
      assert.strictEqual(line.outcome, "created")
      assert.isAbove(Number(line.duration_ms), 0)
      assert.strictEqual(line.key_prefix, fixture.prefix)
      assert.strictEqual(line.origin_id, fixture.originId)
      assert.strictEqual(line.lead_id, response.body.lead_id)
      for (const text of rawLog().trimEnd().split("\n")) assert.doesNotThrow(() => JSON.parse(text))
    })
  )

  it.effect("every route has one, errors carry their code as outcome", () =>
    Effect.gen(function* () {
      const index = yield* send({ method: "GET", path: "/v1" })
      const indexLine = yield* requestLine(index.body.request_id)
      assert.strictEqual(indexLine.route, "/v1")
      assert.strictEqual(indexLine.outcome, "ok")
      assert.notProperty(indexLine, "key_prefix")

      const missing = yield* send({ method: "GET", path: "/elsewhere" })
      const missingLine = yield* requestLine(missing.body.request_id)
      assert.strictEqual(missingLine.route, "unmatched")
      assert.strictEqual(missingLine.status, 404)
      assert.strictEqual(missingLine.outcome, "not_found")

      const notAllowed = yield* send({ method: "DELETE", path: "/v1/leads" })
      const notAllowedLine = yield* requestLine(notAllowed.body.request_id)
      assert.strictEqual(notAllowedLine.route, "/v1/leads")
      assert.strictEqual(notAllowedLine.outcome, "method_not_allowed")

      const invalid = yield* post({ nombre: "" })
      const invalidLine = yield* requestLine(invalid.body.request_id)
      assert.strictEqual(invalidLine.status, 400)
      assert.strictEqual(invalidLine.outcome, "validation_error")
      assert.strictEqual(invalidLine.level, "info")
    })
  )
})

layer(Observed.layer(layerBrokenWrites), { excludeTestServices: true })("a defect in the log", (it) => {
  it.effect("the request line at error level, and the defect with its trace, never in the response", () =>
    Effect.gen(function* () {
      const { logLines } = yield* Observed
      const response = yield* post(lead)
      assert.strictEqual(response.status, 500)
      const line = yield* requestLine(response.body.request_id)
      assert.strictEqual(line.level, "error")
      assert.strictEqual(line.outcome, "internal_error")
      const defect = logLines().find((entry) => entry.msg === "request failed with a defect")
      assert.isDefined(defect)
      assert.strictEqual(defect!.level, "error")
      assert.strictEqual(defect!.trace_id, line.trace_id)
      assert.include(String(defect!.error), "the write path is on fire")
    })
  )
})

layer(Observed.layer(layerBrokenWrites, { logLevel: "Warn" }), { excludeTestServices: true })(
  "LOG_LEVEL",
  (it) => {
    it.effect("Warn keeps errors and drops the info lines", () =>
      Effect.gen(function* () {
        const { logLines } = yield* Observed
        const fine = yield* send({ method: "GET", path: "/v1" })
        const broken = yield* post(lead)
        const requests = logLines().filter((entry) => entry.msg === "request")
        assert.deepStrictEqual(
          requests.map((entry) => entry.request_id),
          [broken.body.request_id]
        )
        assert.notStrictEqual(fine.body.request_id, broken.body.request_id)
      })
    )
  }
)

layer(Observed.layer(layerMemoryServices, { traced: false }), { excludeTestServices: true })(
  "with tracing off",
  (it) => {
    it.effect("the line carries the caller's trace id from traceparent", () =>
      Effect.gen(function* () {
        const traceId = "0af7651916cd43dd8448eb211c80319c"
        const response = yield* post(lead, {
          headers: { traceparent: `00-${traceId}-b7ad6b7169203331-01` }
        })
        const line = yield* requestLine(response.body.request_id)
        assert.strictEqual(line.trace_id, traceId)
        assert.notProperty(line, "span_id")
        const { spans } = yield* Observed
        assert.lengthOf(spans(), 0)
      })
    )
  }
)

describe("service events", () => {
  it.effect("are JSON lines in the same format, annotations as fields", () =>
    Effect.gen(function* () {
      const lines: Array<string> = []
      yield* Effect.logInfo("migrations applied").pipe(
        Effect.annotateLogs({ applied: ["0001_create_domain"] }),
        Effect.provide(Logger.layer([makeJsonLogger((line) => lines.push(line))]))
      )
      assert.lengthOf(lines, 1)
      assert.isTrue(lines[0]!.endsWith("}\n"))
      const { time, ...rest } = JSON.parse(lines[0]!)
      assert.isString(time)
      assert.deepStrictEqual(rest, {
        level: "info",
        msg: "migrations applied",
        applied: ["0001_create_domain"]
      })
    })
  )

  it.effect(
    "a request's line is the same written alone or beside annotations, which follow its fields",
    () => {
      const lines: Array<string> = []
      return Effect.gen(function* () {
        const fields = {
          request_id: "r-1",
          method: "GET",
          route: "/v1",
          status: 200,
          outcome: "ok",
          duration_ms: 0.4
        }
        const logged = Effect.logInfo(new RequestLine(fields))
        // Alone (every request's line) it is written without building the generic record.
        yield* logged
        yield* logged.pipe(Effect.annotateLogs({ job: "import" }))
        yield* Effect.logError(
          new RequestLine({ ...fields, status: 503, outcome: "temporarily_unavailable" })
        )
        const [alone, annotated, failed] = lines.map((line) => JSON.parse(line))
        assert.deepStrictEqual(Object.keys(alone), ["time", "level", "msg", ...Object.keys(fields)])
        assert.deepStrictEqual(
          { ...alone, time: null },
          { time: null, level: "info", msg: "request", ...fields }
        )
        assert.deepStrictEqual({ ...annotated, time: null }, { ...alone, time: null, job: "import" })
        assert.deepStrictEqual(Object.keys(annotated), [...Object.keys(alone), "job"])
        assert.strictEqual(failed.level, "error")
        assert.strictEqual(failed.status, 503)
        assert.match(alone.time, isoTime)
        assert.isTrue(lines.every((line) => line.endsWith("}\n")))
      }).pipe(Effect.provide(Logger.layer([makeJsonLogger((line) => lines.push(line))])))
    }
  )
})
