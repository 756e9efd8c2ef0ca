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

layer(Observed.layer(layerPostgresServices), { excludeTestServices: true })(
  "span tree (PostgreSQL)",
  (it) => {
    it.effect("created: one span per step of the contract, each service's SQL under it", () =>
      Effect.gen(function* () {
        const fresh = yield* withServices(seed())
        const response = yield* post(lead, { key: fresh.key, headers: { "idempotency-key": "tree-created" } })
        assert.strictEqual(response.status, 201)
        const tree = yield* requestTree(response.body.request_id)
        assert.deepStrictEqual(render(tree), [
          "POST /v1/leads",
          "  KeyStore.authenticate",
          "  RateLimiter.consume",
          "  LeadRepository.createOrEnrichKeyed",
          "  RequestLog.record"
        ])
        for (const service of [
          "KeyStore.authenticate",
          "RateLimiter.consume",
          "LeadRepository.createOrEnrichKeyed"
        ]) {
          assert.lengthOf(statementsUnder(tree, service), 1, `${service} runs one statement, in a child span`)
        }
        const [lookup] = statementsUnder(tree, "KeyStore.authenticate")
        assert.strictEqual(lookup!.attributes["db.system.name"], "postgresql")
        assert.match(String(lookup!.attributes["db.query.text"]), /FROM api_key_by_public_id\(\$1\)/)
        const [write] = statementsUnder(tree, "LeadRepository.createOrEnrichKeyed")
        assert.match(String(write!.attributes["db.query.text"]), /SELECT lead_write_keyed\(\$1, \$2::jsonb\)/)

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

        const key = attributes(find(tree, "KeyStore.authenticate"))
        assert.strictEqual(key["key.prefix"], fresh.prefix)
        assert.strictEqual(key["origin.id"], fresh.originId)
        assert.strictEqual(key["organization.id"], fresh.organizationId)
        assert.strictEqual(attributes(find(tree, "RateLimiter.consume"))["ratelimit.remaining"], 999)
        const created = attributes(find(tree, "LeadRepository.createOrEnrichKeyed"))
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
        const write = attributes(find(enrichTree, "LeadRepository.createOrEnrichKeyed"))
        assert.strictEqual(write["lead.outcome"], "enriched")
        assert.strictEqual(write["lead.id"], first.body.lead_id)

        const replay = yield* post(again, { headers: { "idempotency-key": "tree-enrich" } })
        assert.strictEqual(replay.body.replay, true)
        const replayTree = yield* requestTree(replay.body.request_id)
        assert.strictEqual(attributes(replayTree.span)["request.outcome"], "replay")
        assert.strictEqual(attributes(replayTree.span)["lead.id"], first.body.lead_id)
        const replayed = attributes(find(replayTree, "LeadRepository.createOrEnrichKeyed"))
        assert.strictEqual(replayed["idempotency.result"], "replay")
        assert.notProperty(replayed, "lead.outcome", "a replay writes nothing")

        const conflict = yield* post(
          { nombre: "Otro", telefono: "+52 55 2222 3333" },
          { headers: { "idempotency-key": "tree-enrich" } }
        )
        assert.strictEqual(conflict.status, 409)
        const conflictTree = yield* requestTree(conflict.body.request_id)
        assert.strictEqual(attributes(conflictTree.span)["error.code"], "idempotency_conflict")
        assert.strictEqual(
          attributes(find(conflictTree, "LeadRepository.createOrEnrichKeyed"))["idempotency.result"],
          "conflict"
        )
      })
    )

    it.effect("400: the failing field and the code on the server span, nothing past the decoding", () =>
      Effect.gen(function* () {
        const response = yield* post({ nombre: "Ana", telefono: "12" })
        assert.strictEqual(response.status, 400)
        const tree = yield* requestTree(response.body.request_id)
        const server = attributes(tree.span)
        assert.strictEqual(server["error.code"], "validation_error")
        assert.strictEqual(server["request.outcome"], "validation_error")
        assert.strictEqual(server["http.response.status_code"], 400)
        assert.strictEqual(server["validation.field"], "telefono")
        assert.deepStrictEqual(render(tree), [
          "POST /v1/leads",
          "  KeyStore.authenticate",
          "  RateLimiter.consume",
          "  RequestLog.record"
        ])
      })
    )

    it.effect("401: the prefix that was sent, no origin, nothing past the key", () =>
      Effect.gen(function* () {
        const { fixture } = yield* Observed
        const wrong = `${fixture.prefix}_${"x".repeat(38)}`
        for (const headers of [{}, { "x-service-dry-run": "true" }]) {
          const response = yield* post(lead, { key: wrong, headers })
          assert.strictEqual(response.status, 401)
          const tree = yield* requestTree(response.body.request_id)
          assert.deepStrictEqual(render(tree), [
            "POST /v1/leads",
            "  KeyStore.authenticate",
            "  RequestLog.record"
          ])
          const server = attributes(tree.span)
          assert.strictEqual(server["error.code"], "invalid_key")
          assert.strictEqual(server["key.prefix"], fixture.prefix)
          assert.notProperty(server, "origin.id")
          assert.strictEqual(find(tree, "KeyStore.authenticate")!.status.code, SpanStatusCode.ERROR)
        }
      })
    )

    it.effect("422: property resolution fails in the write's statement, nothing is written", () =>
      Effect.gen(function* () {
        const response = yield* post({ ...lead, propiedad: { codigo: "ZZZ-9999" } })
        assert.strictEqual(response.status, 422)
        const tree = yield* requestTree(response.body.request_id)
        assert.strictEqual(attributes(tree.span)["error.code"], "property_not_found")
        const write = find(tree, "LeadRepository.createOrEnrich")
        assert.strictEqual(attributes(write)["property.by"], "codigo")
        assert.strictEqual(write!.status.code, SpanStatusCode.ERROR)
        assert.notProperty(attributes(write), "lead.id")
        assert.notProperty(attributes(tree.span), "lead.id")
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
        const consume = attributes(find(tree, "RateLimiter.consume"))
        assert.strictEqual(consume["ratelimit.remaining"], 0)
        assert.strictEqual(consume["ratelimit.allowed"], false)
        assert.deepStrictEqual(render(tree), [
          "POST /v1/leads",
          "  KeyStore.authenticate",
          "  RateLimiter.consume",
          "  RequestLog.record"
        ])
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
        const write = find(tree, "LeadRepository.createOrEnrich")
        assert.strictEqual(write!.status.code, SpanStatusCode.ERROR)
      })
    )
  })
})
