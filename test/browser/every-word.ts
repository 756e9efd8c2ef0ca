import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import type { HttpApiMiddleware } from "effect/http-api"
import type { SqlClient } from "effect/sql"
import { expect } from "vitest"
import { auditActions } from "../../src/AdminApi/Audit.ts"
import { requestOutcomes } from "../../src/AdminApi/Requests.ts"
import { WebhookDelivery, WebhookEndpointItem } from "../../src/AdminApi/Webhooks.ts"
import { Api } from "../../src/Api/Api.ts"
import { errorCatalog, isErrorCode } from "../../src/Api/Errors.ts"
import { Limits } from "../../src/Api/LeadRequest.ts"
import { connectionErrors, describeFailure } from "../../src/Webhooks/Worker.ts"
import { apiFromPage, type ConsoleServer, postLead } from "./support.ts"

/**
 * What the console can show with the longest words it has, for the layout walk: every outcome of the
 * request log, every endpoint state, delivery state and attempt error of the webhooks, every audited
 * action, and a lead with every field at its longest. Each list comes from the code that makes the
 * words (the contracts' declarations, the worker's `describeFailure`), so a new outcome, state or
 * action is in the walk as soon as it exists. What a partner can provoke from outside is sent as a
 * partner would; what needs a fault (a 500, a 503, a key still in progress) or a clock (a rate limit,
 * an endpoint failing for hours) is written into the tables the console reads.
 */

/**
 * What `POST /v1/leads` can answer, read from the public contract: the status of each success,
 * `replay` where a success can repeat an earlier one, and the code of every error the operation and
 * its middlewares declare.
 */
export const declaredLeadOutcomes = (): ReadonlyArray<string> => {
  const outcomes = new Set<string>()
  // The endpoint holds its schemas wrapped with their status; a middleware holds its classes.
  // biome-ignore lint/suspicious/noExplicitAny: the contract's schemas are read field by field
  const unwrap = (schema: any) => schema.schema ?? schema
  const endpoint = Api.groups.leads.endpoints.createOrEnrich
  for (const success of endpoint.success) {
    const fields = unwrap(success).fields
    outcomes.add(fields.status.literal)
    if ("replay" in fields) outcomes.add("replay")
  }
  const middlewareErrors = [...endpoint.middlewares].flatMap((middleware) => [
    ...(middleware as unknown as HttpApiMiddleware.AnyService).error
  ])
  for (const error of [...endpoint.error, ...middlewareErrors]) outcomes.add(unwrap(error).code)
  return [...outcomes]
}

const withSql = <A>(app: ConsoleServer, use: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(
    PgClient.PgClient.use(use).pipe(
      Effect.provide(PgClient.layer({ url: Redacted.make(app.env.DATABASE_URL ?? ""), maxConnections: 1 })),
      Effect.scoped
    )
  )

/** `length` characters of `words` repeated, ending on a letter. */
const longText = (words: string, length: number) =>
  words.repeat(Math.ceil(length / words.length)).slice(0, length)

/** A name, an email, a message and twenty extras, each as long as the contract takes. */
export const longestLead = (externalCode: string) => ({
  nombre: longText("María Guadalupe de los Ángeles Fernández-Villaseñor ", Limits.nombre).trim(),
  telefono: "+52 (55) 1234-5678 90",
  email:
    `${"direccion.comercial.de.prospectos".repeat(2)}@${"inmobiliaria-las-lomas-de-chapultepec.".repeat(5)}com.mx`
      .slice(-Limits.email)
      .replace(/^[^a-z]+/, ""),
  mensaje: longText(
    "Me interesa el departamento de tres recámaras en la colonia Roma Norte, ¿sigue disponible para visitarlo el sábado? ",
    Limits.mensaje
  ),
  propiedad: { external_code: externalCode },
  extras: Object.fromEntries(
    Array.from({ length: Limits.extrasEntries }, (_, index) => [
      `utm_campaign_${"preventa_departamentos_roma_norte_".repeat(2)}`.slice(0, Limits.extrasKey - 2) +
        String(index).padStart(2, "0"),
      index % 2 === 0
        ? `https://www.portal-inmobiliario.example/anuncios/${"departamento-roma-norte-".repeat(8)}`.slice(
            0,
            Limits.extrasValue
          )
        : longText("Campaña de preventa en redes sociales, segmento familias jóvenes. ", Limits.extrasValue)
    ])
  )
})

/** The longest key the contract takes: printable ASCII, 200 characters, one word. */
export const longestIdempotencyKey = `pedido-${"7f3c9a1e-4b2d-4e8f-9a6b-".repeat(9)}`.slice(
  0,
  Limits.idempotencyKey
)

/**
 * Sends one request of every outcome a partner can cause, rescues a kept one, and writes the rest
 * (those of a fault, of a clock) as copies of a logged request with the other outcome; then checks
 * that the log holds every outcome the console has words for, a kept body and a rescued one.
 * Answers the id of the lead with every field at its longest.
 */
export const everyOutcome = async (
  app: ConsoleServer,
  options: {
    readonly key: string
    readonly longestLead: ReturnType<typeof longestLead>
    readonly rescue: (requestId: string, body: string) => Promise<void>
  }
) => {
  const { key } = options
  const lead = options.longestLead
  const longest = await postLead(app.publicUrl, key, lead)
  expect(longest.status).toBe(201)
  expect((await postLead(app.publicUrl, key, { ...lead, email: null })).status).toBe(200)
  const keyed = { "idempotency-key": longestIdempotencyKey }
  const body = { nombre: "Lucía Treviño", telefono: "+52 81 5555 0101" }
  expect((await postLead(app.publicUrl, key, body, keyed)).status).toBe(201)
  expect((await postLead(app.publicUrl, key, body, keyed)).status).toBe(201)
  expect((await postLead(app.publicUrl, key, { ...body, nombre: "Lucía T." }, keyed)).status).toBe(409)
  expect((await postLead(app.publicUrl, key, body, { "x-service-dry-run": "true" })).status).toBe(200)
  expect((await postLead(app.publicUrl, `${key.slice(0, -4)}0000`, body)).status).toBe(401)
  const unknownProperty = { ...body, propiedad: { codigo: "ZZZ-9999" } }
  expect((await postLead(app.publicUrl, key, unknownProperty)).status).toBe(422)
  const text = await fetch(`${app.publicUrl}/v1/leads`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "text/plain" },
    body: "nombre=Lucía"
  })
  expect(text.status).toBe(415)
  const large = await fetch(`${app.publicUrl}/v1/leads`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ ...body, mensaje: "x".repeat(Limits.bodyBytes) })
  })
  expect(large.status).toBe(413)
  const wrongPhone = await postLead(app.publicUrl, key, { ...body, telefono: "81 5555 010" })
  expect(wrongPhone.status).toBe(400)
  await options.rescue(wrongPhone.body.request_id, JSON.stringify(body))
  const kept = await postLead(app.publicUrl, key, {
    ...body,
    nombre: "Lucía Treviño Garza",
    telefono: "5555"
  })
  expect(kept.status).toBe(400)

  expect([...declaredLeadOutcomes()].sort(), "the console's request outcomes are the contract's").toEqual(
    [...requestOutcomes].sort()
  )
  const logged = await withSql(app, (sql) =>
    Effect.gen(function* () {
      const present = (yield* sql<{ outcome: string }>`SELECT DISTINCT outcome FROM logged_requests`).map(
        (row) => row.outcome
      )
      for (const outcome of requestOutcomes.filter((outcome) => !present.includes(outcome))) {
        const status = isErrorCode(outcome) ? errorCatalog[outcome].status : 201
        // A copy of the partner's first request with the outcome a fault or a clock would have given it,
        // and a request id as the server makes them.
        yield* sql`
          INSERT INTO logged_requests (request_id, at, organization_id, origin_id, key_prefix, status, outcome,
                                   idempotency_key, duration_ms, livemode)
          SELECT ${crypto.randomUUID()}, now(), organization_id, origin_id,
                 key_prefix, ${status}, ${outcome}, idempotency_key, duration_ms, livemode
          FROM logged_requests WHERE origin_id IS NOT NULL ORDER BY id LIMIT 1`
      }
      return yield* sql<{ outcome: string; kept: boolean; rescued: boolean }>`
        SELECT outcome, bool_or(kept_body IS NOT NULL) AS kept, bool_or(rescued_lead_id IS NOT NULL) AS rescued
        FROM logged_requests GROUP BY outcome`
    })
  )
  expect(logged.map((row) => row.outcome)).toEqual(expect.arrayContaining([...requestOutcomes]))
  expect(logged.some((row) => row.kept)).toBe(true)
  expect(logged.some((row) => row.rescued)).toBe(true)
  return longest.body.lead_id as string
}

/**
 * Every kind of attempt error the worker writes, as `describeFailure` words it: an answer that is not
 * a success, a redirect, a timeout, an address refused, TLS, each known connection error and an
 * unknown one.
 */
const attemptErrors = [
  describeFailure({ _tag: "Answered", status: 503, retryAfter: undefined }),
  describeFailure({ _tag: "Answered", status: 410, retryAfter: undefined }),
  describeFailure({ _tag: "Answered", status: 308, retryAfter: undefined }),
  describeFailure({ _tag: "NoAnswer", reason: "timeout", error: "no answer within 10000 ms" }),
  describeFailure({
    _tag: "NoAnswer",
    reason: "blocked",
    error:
      "the host crm-interno.inmobiliaria-las-lomas.example resolves to 169.254.169.254, a link-local address"
  }),
  describeFailure({ _tag: "NoAnswer", reason: "connection", error: "UNABLE_TO_VERIFY_LEAF_SIGNATURE" }),
  ...Object.keys(connectionErrors).map((code) =>
    describeFailure({ _tag: "NoAnswer", reason: "connection", error: code })
  ),
  describeFailure({ _tag: "NoAnswer", reason: "connection", error: "ERR_HTTP2_STREAM_CANCEL" })
]

type DeliveryState = (typeof WebhookDelivery.Type)["state"]
type DisabledReason = NonNullable<(typeof WebhookEndpointItem.Type)["disabled_reason"]>

const deliveryStates: ReadonlyArray<DeliveryState> = WebhookDelivery.fields.state.literals
const disabledReasons: ReadonlyArray<DisabledReason> =
  WebhookEndpointItem.fields.disabled_reason.members[0].literals

/** One delivery put in each state, as the worker leaves it there (a check ties `pending` to its next attempt). */
const putInState: Record<
  DeliveryState,
  (sql: SqlClient.SqlClient, endpointId: string, eventId: string) => Effect.Effect<unknown, unknown>
> = {
  pending: (sql, endpointId, eventId) => sql`
    UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = now() + interval '1 day'
    WHERE endpoint_id = ${endpointId} AND event_id = ${eventId}`,
  delivered: (sql, endpointId, eventId) => sql`
    UPDATE webhook_deliveries SET state = 'delivered', next_attempt_at = NULL, delivered_at = now(),
           last_status = 204, last_error = NULL
    WHERE endpoint_id = ${endpointId} AND event_id = ${eventId}`,
  failed: (sql, endpointId, eventId) => sql`
    UPDATE webhook_deliveries SET state = 'failed', next_attempt_at = NULL, delivered_at = NULL,
           last_status = NULL, last_error = ${attemptErrors.at(-1) ?? null}
    WHERE endpoint_id = ${endpointId} AND event_id = ${eventId}`
}

/**
 * Beside the endpoint `paused` (paused by the worker: its receiver refuses) and the ones that
 * deliver, one endpoint for every other reason an endpoint is disabled, and one failing for hours.
 * The paused endpoint's deliveries hold every delivery state, and its first delivery every kind of
 * attempt error.
 */
export const everyWebhookState = async (
  app: ConsoleServer,
  page: Parameters<typeof apiFromPage>[0],
  urlFor: (name: string) => string,
  paused: string
) => {
  const create = async (name: string) => {
    const answer = await apiFromPage(page, "POST", "/api/webhooks", {
      body: { url: urlFor(name), events: ["lead.created", "lead.enriched", "lead.erased"] }
    })
    expect(answer.status).toBe(201)
    return (answer.body as { endpoint: { id: string } }).endpoint.id
  }
  const failing = await create("failing-for-hours")
  const disabled: Array<readonly [DisabledReason, string]> = []
  for (const reason of disabledReasons.filter((reason) => reason !== "failing"))
    disabled.push([reason, await create(`disabled-${reason}`)])
  await withSql(app, (sql) =>
    Effect.gen(function* () {
      const [pausedRow] = yield* sql<{ disabled_reason: string | null }>`
        SELECT disabled_reason FROM webhook_endpoints WHERE id = ${paused}`
      expect(pausedRow?.disabled_reason).toBe("failing")
      yield* sql`UPDATE webhook_endpoints SET failing_since = now() - interval '5 hours' WHERE id = ${failing}`
      for (const [reason, id] of disabled)
        yield* sql`
          UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = ${reason}, failing_since = NULL
          WHERE id = ${id}`
      const deliveries = yield* sql<{ event_id: string; organization_id: string }>`
        SELECT d.event_id, e.organization_id FROM webhook_deliveries d
        JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.endpoint_id = ${paused} ORDER BY d.created_at, d.outbox_id`
      expect(deliveries.length, "deliveries to the paused endpoint").toBeGreaterThanOrEqual(
        deliveryStates.length
      )
      for (const [index, state] of deliveryStates.entries())
        yield* putInState[state](sql, paused, deliveries[index]?.event_id ?? "")
      const failed = deliveries[deliveryStates.indexOf("failed")]
      const [{ attempts = 0 } = {}] = yield* sql<{ attempts: number }>`
        SELECT coalesce(max(attempt), 0)::int AS attempts FROM webhook_attempts
        WHERE endpoint_id = ${paused} AND event_id = ${failed?.event_id ?? ""}`
      for (const [index, error] of attemptErrors.entries()) {
        yield* sql`
          INSERT INTO webhook_attempts (organization_id, endpoint_id, event_id, attempt, at, status, error, duration_ms)
          VALUES (${failed?.organization_id ?? ""}, ${paused}, ${failed?.event_id ?? ""}, ${attempts + index + 1},
                  now(), ${/^(redirect: )?HTTP (\d{3})/.exec(error)?.[2] ?? null}, ${error}, ${10_000 - index})`
      }
    })
  )
}

/**
 * One entry of every action the audit log records, each with a long target (an endpoint's URL), the
 * newest entries of the log: the audit page's first page shows them all.
 */
export const everyAuditAction = (app: ConsoleServer, org: string, email: string, target: string) =>
  withSql(app, (sql) =>
    Effect.gen(function* () {
      for (const action of auditActions)
        yield* sql`
          INSERT INTO audit_log (at, organization_id, operator_email, action, target, ip)
          VALUES (now(), ${org}, ${email}, ${action}, ${target}, '2001:db8:85a3:8d3:1319:8a2e:370:7348')`
    })
  )
