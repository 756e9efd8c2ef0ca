import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import type { SqlClient } from "effect/sql"
import { expect } from "vitest"
import { errorCatalog } from "../../src/Api/Errors.ts"
import { Limits } from "../../src/Api/LeadRequest.ts"
import { en } from "../../src/Console/web/messages/en.ts"
import { apiFromPage, type ConsoleServer, postLead } from "./support.ts"

/**
 * What the console can show with the longest words it has, for the layout walk: every outcome of the
 * request log, every endpoint state, delivery state and attempt error of the webhooks, every audited
 * action, and a lead with every field at its longest. What a partner can provoke from outside is
 * sent as a partner would; what needs a fault (a 500, a 503, a key still in progress) or a clock (a
 * rate limit, an endpoint failing for hours) is written into the tables the console reads.
 */

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
  expect((await postLead(app.publicUrl, key, lead)).status).toBe(201)
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

  const outcomes = Object.keys(en.requests.outcomes)
  const logged = await withSql(app, (sql) =>
    Effect.gen(function* () {
      const present = (yield* sql<{ outcome: string }>`SELECT DISTINCT outcome FROM request_log`).map(
        (row) => row.outcome
      )
      for (const outcome of outcomes.filter((outcome) => !present.includes(outcome))) {
        const status = errorCatalog[outcome as keyof typeof errorCatalog]?.status ?? 201
        // A copy of the partner's first request with the outcome a fault or a clock would have given it.
        yield* sql`
          INSERT INTO request_log (request_id, at, organization_id, origin_id, key_prefix, status, outcome,
                                   idempotency_key, duration_ms, livemode)
          SELECT ${`req_${outcome}_${crypto.randomUUID().slice(0, 8)}`}, now(), organization_id, origin_id,
                 key_prefix, ${status}, ${outcome}, idempotency_key, duration_ms, livemode
          FROM request_log WHERE origin_id IS NOT NULL ORDER BY id LIMIT 1`
      }
      return yield* sql<{ outcome: string; kept: boolean; rescued: boolean }>`
        SELECT outcome, bool_or(kept_body IS NOT NULL) AS kept, bool_or(rescued_lead_id IS NOT NULL) AS rescued
        FROM request_log GROUP BY outcome`
    })
  )
  expect(logged.map((row) => row.outcome).sort()).toEqual(expect.arrayContaining(outcomes.sort()))
  expect(logged.some((row) => row.kept)).toBe(true)
  expect(logged.some((row) => row.rescued)).toBe(true)
}

/** Every attempt error the worker writes (Webhooks/Worker.ts `describeFailure`), longest codes first. */
const attemptErrors = [
  "HTTP 503",
  "redirect: HTTP 308 (not followed)",
  "timeout: no answer within 10000 ms",
  "address not allowed: 169.254.169.254 is link-local",
  "TLS: UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "connection refused (ECONNREFUSED)",
  "connection reset (ECONNRESET)",
  "host unreachable (EHOSTUNREACH)",
  "network unreachable (ENETUNREACH)",
  "host not found (ENOTFOUND)",
  "connection error: ERR_HTTP2_STREAM_CANCEL",
  "socket hang up while reading the receiver's answer"
]

/**
 * Beside the paused endpoint (`paused`, whose receiver refuses), one endpoint in every other state:
 * active (`active`, delivered), failing for hours, paused because it answered 410, disabled by an
 * operator. The paused endpoint's deliveries show every state and its first delivery every attempt
 * error.
 */
export const everyWebhookState = async (
  app: ConsoleServer,
  page: Parameters<typeof apiFromPage>[0],
  urls: { readonly failing: string; readonly gone: string; readonly disabled: string },
  paused: string
) => {
  const created: Record<string, string> = {}
  for (const [name, url] of Object.entries(urls)) {
    const answer = await apiFromPage(page, "POST", "/api/webhooks", {
      body: { url, events: ["lead.created", "lead.enriched", "lead.erased"] }
    })
    expect(answer.status).toBe(201)
    created[name] = (answer.body as { endpoint: { id: string } }).endpoint.id
  }
  expect((await apiFromPage(page, "POST", `/api/webhooks/${created.disabled}/disable`)).status).toBe(200)
  await withSql(app, (sql) =>
    Effect.gen(function* () {
      yield* sql`UPDATE webhook_endpoints SET failing_since = now() - interval '5 hours' WHERE id = ${created.failing ?? ""}`
      yield* sql`
        UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = 'gone', failing_since = NULL
        WHERE id = ${created.gone ?? ""}`
      const deliveries = yield* sql<{ event_id: string; organization_id: string }>`
        SELECT d.event_id, e.organization_id FROM webhook_deliveries d
        JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.endpoint_id = ${paused} ORDER BY d.created_at DESC, d.outbox_id DESC`
      expect(deliveries.length).toBeGreaterThanOrEqual(3)
      const [first, second, third] = deliveries
      yield* sql`
        UPDATE webhook_deliveries SET state = 'delivered', next_attempt_at = NULL, delivered_at = now(),
               last_status = 204, last_error = NULL
        WHERE endpoint_id = ${paused} AND event_id = ${second?.event_id ?? ""}`
      yield* sql`
        UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = now() + interval '1 day'
        WHERE endpoint_id = ${paused} AND event_id = ${third?.event_id ?? ""}`
      const [{ attempts = 0 } = {}] = yield* sql<{ attempts: number }>`
        SELECT coalesce(max(attempt), 0)::int AS attempts FROM webhook_attempts
        WHERE endpoint_id = ${paused} AND event_id = ${first?.event_id ?? ""}`
      for (const [index, error] of attemptErrors.entries()) {
        yield* sql`
          INSERT INTO webhook_attempts (organization_id, endpoint_id, event_id, attempt, at, status, error, duration_ms)
          VALUES (${first?.organization_id ?? ""}, ${paused}, ${first?.event_id ?? ""}, ${attempts + index + 1},
                  now(), ${/^(redirect: )?HTTP (\d{3})/.exec(error)?.[2] ?? null}, ${error}, ${10_000 - index})`
      }
    })
  )
}

/** One entry of every audited action the console has words for, with the longest target of its kind. */
export const everyAuditAction = (app: ConsoleServer, org: string, email: string, target: string) =>
  withSql(app, (sql) =>
    Effect.gen(function* () {
      const present = (yield* sql<{ action: string }>`
        SELECT DISTINCT action FROM audit_log WHERE organization_id = ${org}`).map((row) => row.action)
      for (const action of Object.keys(en.audit.actions).filter((action) => !present.includes(action)))
        yield* sql`
          INSERT INTO audit_log (at, organization_id, operator_email, action, target, ip)
          VALUES (now(), ${org}, ${email}, ${action}, ${target}, '2001:db8:85a3:8d3:1319:8a2e:370:7348')`
    })
  )
