import { assert, describe, layer } from "@effect/vitest"
import { SpanStatusCode } from "@opentelemetry/api"
import { Effect } from "effect"
import { layerPostgresServices, seed } from "../support/Client.ts"
import {
  find,
  layerBrokenWrites,
  Observed,
  post,
  render,
  requestLine,
  requestTree,
  send,
  statementsUnder,
  withServices
} from "./support.ts"

const lead = { nombre: "Ana", telefono: "+52 55 1234 5678", propiedad: { codigo: "ABC-1234" } }

const attributes = (span: { readonly attributes: Record<string, unknown> } | undefined) => {
  assert.isDefined(span)
  return span!.attributes
}

/** Where steps 9-11 are recorded: their own span on a key's first write, the admission's after it. */
const intakeStep = (tree: Parameters<typeof find>[0]) =>
  find(tree, "LeadIntake.accept") ?? find(tree, "LeadIntake.admitAndAccept")

layer(Observed.layer(layerPostgresServices), { excludeTestServices: true })(
  "span tree (PostgreSQL)",
  (it) => {
    it.effect(
      "created: a key's first write checks the key, then writes; its next ones take one statement",
      () =>
        Effect.gen(function* () {
          const fresh = yield* withServices(seed())
          const first = yield* post(lead, { key: fresh.key, headers: { "idempotency-key": "tree-first" } })
          assert.strictEqual(first.status, 201)
          const firstTree = yield* requestTree(first.body.request_id)
          assert.deepStrictEqual(render(firstTree), [
            "POST /v1/leads",
            "  LeadRequest.validate",
            "  LeadIntake.admitAndAccept",
            "    KeyCheck.admit",
            "    LeadIntake.accept",
            "  RequestLog.record"
          ])
          for (const service of ["KeyCheck.admit", "LeadIntake.accept"]) {
            assert.isNotEmpty(statementsUnder(firstTree, service), `${service} runs its SQL in child spans`)
          }
          const admit = attributes(find(firstTree, "KeyCheck.admit"))
          assert.strictEqual(admit["key.prefix"], fresh.prefix)
          assert.strictEqual(admit["origin.id"], fresh.originId)
          assert.strictEqual(admit["organization.id"], fresh.organizationId)
          assert.strictEqual(admit["ratelimit.remaining"], 999)
          const accepted = attributes(find(firstTree, "LeadIntake.accept"))
          assert.strictEqual(accepted["idempotency.result"], "new")
          assert.strictEqual(accepted["lead.id"], first.body.lead_id)
          const [lookup] = statementsUnder(firstTree, "KeyCheck.admit")
          assert.strictEqual(lookup!.attributes["db.system.name"], "postgresql")
          assert.match(String(lookup!.attributes["db.query.text"]), /WHERE k\.public_id = \$1/)
          const [write] = statementsUnder(firstTree, "LeadIntake.accept")
          assert.match(String(write!.attributes["db.query.text"]), /FROM intake_lead\(/)

          const response = yield* post(
            { ...lead, telefono: "+52 55 1234 9999" },
            { key: fresh.key, headers: { "idempotency-key": "tree-created" } }
          )
          assert.strictEqual(response.status, 201)
          const tree = yield* requestTree(response.body.request_id)
          assert.deepStrictEqual(render(tree), [
            "POST /v1/leads",
            "  LeadRequest.validate",
            "  LeadIntake.admitAndAccept",
            "  RequestLog.record"
          ])
          const [statement, ...more] = statementsUnder(tree, "LeadIntake.admitAndAccept")
          assert.deepStrictEqual(more, [], "one statement admits and writes")
          assert.match(String(statement!.attributes["db.query.text"]), /FROM admit_and_intake\(/)
          const server = attributes(tree.span)
          assert.strictEqual(server["http.route"], "/v1/leads")
          assert.strictEqual(server["http.request.method"], "POST")
          assert.strictEqual(server["http.response.status_code"], 201)
          assert.strictEqual(server["request.id"], response.body.request_id)
          assert.strictEqual(server["request.outcome"], "created")
          assert.strictEqual(server["key.prefix"], fresh.prefix)
          assert.strictEqual(server["origin.id"], fresh.originId)
          assert.strictEqual(server["lead.id"], response.body.lead_id)
          assert.notProperty(server, "error.code")
          assert.notStrictEqual(tree.span.status.code, SpanStatusCode.ERROR)

          const created = attributes(find(tree, "LeadIntake.admitAndAccept"))
          assert.strictEqual(created["key.prefix"], fresh.prefix)
          assert.strictEqual(created["origin.id"], fresh.originId)
          assert.strictEqual(created["organization.id"], fresh.organizationId)
          assert.strictEqual(created["ratelimit.remaining"], 998)
          assert.strictEqual(created["idempotency.result"], "new")
          assert.strictEqual(created["property.by"], "codigo")
          assert.strictEqual(created["lead.outcome"], "created")
          assert.strictEqual(created["lead.id"], response.body.lead_id)
          assert.include(fresh.agentIds, created["capture.assignee_id"])
        })
    )

    it.effect("enriched and replayed", () =>
      Effect.gen(function* () {
        const first = yield* post({ nombre: "Luis", telefono: "+52 55 2222 3333" })
        const again = { nombre: "Luis B", telefono: "55 2222 3333" }
        const enriched = yield* post(again, { headers: { "idempotency-key": "tree-enrich" } })
        assert.strictEqual(enriched.status, 200)
        const enrichTree = yield* requestTree(enriched.body.request_id)
        assert.strictEqual(attributes(enrichTree.span)["request.outcome"], "enriched")
        const write = attributes(intakeStep(enrichTree))
        assert.strictEqual(write["lead.outcome"], "enriched")
        assert.strictEqual(write["lead.id"], first.body.lead_id)

        const replay = yield* post(again, { headers: { "idempotency-key": "tree-enrich" } })
        assert.strictEqual(replay.body.replay, true)
        const replayTree = yield* requestTree(replay.body.request_id)
        assert.strictEqual(attributes(replayTree.span)["request.outcome"], "replay")
        const replayed = attributes(intakeStep(replayTree))
        assert.strictEqual(replayed["idempotency.result"], "replay")
        assert.strictEqual(replayed["lead.id"], first.body.lead_id)
        assert.notProperty(replayed, "capture.assignee_id")

        const conflict = yield* post(
          { nombre: "Otro", telefono: "+52 55 2222 3333" },
          {
            headers: { "idempotency-key": "tree-enrich" }
          }
        )
        assert.strictEqual(conflict.status, 409)
        const conflictTree = yield* requestTree(conflict.body.request_id)
        assert.strictEqual(attributes(conflictTree.span)["error.code"], "idempotency_conflict")
        assert.strictEqual(attributes(intakeStep(conflictTree))["idempotency.result"], "conflict")
      })
    )

    it.effect("400: the failing field on the validation span, the code on the server span", () =>
      Effect.gen(function* () {
        const response = yield* post({ nombre: "Ana", telefono: "12" })
        assert.strictEqual(response.status, 400)
        const tree = yield* requestTree(response.body.request_id)
        const server = attributes(tree.span)
        assert.strictEqual(server["error.code"], "validation_error")
        assert.strictEqual(server["request.outcome"], "validation_error")
        assert.strictEqual(server["http.response.status_code"], 400)
        const validate = find(tree, "LeadRequest.validate")
        assert.strictEqual(attributes(validate)["validation.field"], "telefono")
        assert.strictEqual(validate!.status.code, SpanStatusCode.ERROR)
        assert.isUndefined(intakeStep(tree))
      })
    )

    it.effect("401: the prefix that was sent, no origin", () =>
      Effect.gen(function* () {
        const { fixture } = yield* Observed
        const wrong = `${fixture.prefix}_${"x".repeat(38)}`
        yield* post(lead) // the key has written before: its writes take one statement
        const response = yield* post(lead, { key: wrong })
        assert.strictEqual(response.status, 401)
        const tree = yield* requestTree(response.body.request_id)
        assert.deepStrictEqual(render(tree), [
          "POST /v1/leads",
          "  LeadRequest.validate",
          "  LeadIntake.admitAndAccept",
          "  RequestLog.record"
        ])
        const server = attributes(tree.span)
        assert.strictEqual(server["error.code"], "invalid_key")
        assert.notProperty(server, "origin.id")
        assert.strictEqual(find(tree, "LeadIntake.admitAndAccept")!.status.code, SpanStatusCode.ERROR)

        const unchecked = yield* post(lead, { key: wrong, headers: { "x-service-dry-run": "true" } })
        assert.strictEqual(unchecked.status, 401)
        const dryTree = yield* requestTree(unchecked.body.request_id)
        assert.deepStrictEqual(render(dryTree), [
          "POST /v1/leads",
          "  LeadRequest.validate",
          "  KeyCheck.admit",
          "  RequestLog.record"
        ])
        assert.strictEqual(find(dryTree, "KeyCheck.admit")!.status.code, SpanStatusCode.ERROR)
      })
    )

    it.effect("422: property resolution fails", () =>
      Effect.gen(function* () {
        const response = yield* post({ ...lead, propiedad: { codigo: "ZZZ-9999" } })
        assert.strictEqual(response.status, 422)
        const tree = yield* requestTree(response.body.request_id)
        assert.strictEqual(attributes(tree.span)["error.code"], "property_not_found")
        const accept = intakeStep(tree)
        assert.strictEqual(attributes(accept)["property.by"], "codigo")
        assert.notProperty(attributes(accept), "lead.id")
      })
    )

    it.effect("429: the rate limit step with nothing remaining", () =>
      Effect.gen(function* () {
        const limited = yield* withServices(seed({ rateLimit: 1 }))
        yield* post(lead, { key: limited.key })
        const response = yield* post(lead, { key: limited.key })
        assert.strictEqual(response.status, 429)
        const tree = yield* requestTree(response.body.request_id)
        assert.strictEqual(attributes(tree.span)["error.code"], "rate_limited")
        const consume = attributes(find(tree, "LeadIntake.admitAndAccept"))
        assert.strictEqual(consume["ratelimit.remaining"], 0)
        assert.strictEqual(consume["ratelimit.allowed"], false)
        assert.isUndefined(find(tree, "LeadIntake.accept"), "nothing past the rate limit runs")
        assert.notProperty(consume, "lead.id")
      })
    )

    it.effect("a caller's traceparent continues its trace", () =>
      Effect.gen(function* () {
        const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
        const response = yield* post(lead, {
          headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` }
        })
        const tree = yield* requestTree(response.body.request_id)
        assert.strictEqual(tree.span.spanContext().traceId, traceId)
        assert.strictEqual(tree.span.parentSpanContext?.spanId, "00f067aa0ba902b7")
        for (const child of tree.children) assert.strictEqual(child.span.spanContext().traceId, traceId)
      })
    )

    it.effect("paths outside the contract are logged but not traced; the others are, by route", () =>
      Effect.gen(function* () {
        const { spans } = yield* Observed
        const missing = yield* send({
          method: "GET",
          path: "/v1/leads/ana@example.com?email=ana@example.com"
        })
        assert.strictEqual(missing.status, 404)
        const index = yield* send({ method: "GET", path: "/v1?utm_source=ana@example.com" })
        const indexTree = yield* requestTree(index.body.request_id)
        assert.strictEqual(indexTree.span.name, "GET /v1")
        assert.strictEqual(attributes(indexTree.span)["http.route"], "/v1")
        assert.strictEqual(attributes(indexTree.span)["request.outcome"], "ok")
        assert.strictEqual(attributes(indexTree.span)["url.query"], "utm_source=REDACTED")
        assert.isFalse(spans().some((span) => span.attributes["request.id"] === missing.body.request_id))
        assert.notInclude(JSON.stringify(spans().map((span) => span.attributes)), "ana@example.com")
        yield* requestLine(missing.body.request_id)
      })
    )
  }
)

describe("defects", () => {
  layer(Observed.layer(layerBrokenWrites), { excludeTestServices: true })("a defect", (it) => {
    it.effect("is recorded on the server span, never in the response", () =>
      Effect.gen(function* () {
        const response = yield* post(lead)
        assert.strictEqual(response.status, 500)
        assert.strictEqual(response.body.error.code, "internal_error")
        assert.notInclude(response.text, "fire")
        const tree = yield* requestTree(response.body.request_id)
        assert.strictEqual(tree.span.status.code, SpanStatusCode.ERROR)
        assert.strictEqual(attributes(tree.span)["error.code"], "internal_error")
        const exception = tree.span.events.find((event) => event.name === "exception")
        assert.isDefined(exception)
        assert.strictEqual(exception!.attributes?.["exception.message"], "the write path is on fire")
        assert.include(
          String(exception!.attributes?.["exception.stacktrace"]),
          "Error: the write path is on fire"
        )
        const write = find(tree, "LeadIntake.accept")
        assert.strictEqual(write!.status.code, SpanStatusCode.ERROR)
      })
    )
  })
})
