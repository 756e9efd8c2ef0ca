// The measuring instrument of `npm run bench`: the create done by hand with plain node:http and the
// `pg` driver, as a competent team would write it without a framework. Honest and minimal: nine
// statements per create (key by SHA-256 hash, the window counter in its own statement, then one
// transaction: lead upsert on (organization, phone key), note, first-contact task on creation, outbox
// event, request-log row), two more with an Idempotency-Key (the key inserted at the transaction's
// start, a spent one answered from its row, and its answer stored before the commit), a pool of 10,
// the same JSON for GET /v1 as the service.
//
//   DATABASE_URL=... INDEX_JSON='{...}' PORT=... node scripts/reference-server.ts
//   INDEX_JSON='{...}' PORT=... node scripts/reference-server.ts --raw   (GET /v1 only, no database)
import { createHash, randomUUID } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import pg from "pg"
import { phoneMatchKey } from "../src/Domain/Phone.ts"

const raw = process.argv.includes("--raw")
const port = Number(process.env.PORT ?? 8090)
const dashboardUrl = process.env.DASHBOARD_URL ?? "http://localhost:3000"
/** The service's GET /v1 body without its request_id (added per request, as the service does). */
const index = JSON.parse(process.env.INDEX_JSON ?? "{}") as Record<string, unknown>
const firstContactMillis = 15 * 60_000

const pool = raw ? undefined : new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 })

const send = (response: ServerResponse, status: number, body: unknown, requestId: string) => {
  const text = JSON.stringify(body)
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    "x-request-id": requestId
  })
  response.end(text)
}

const fail = (response: ServerResponse, status: number, code: string, requestId: string) =>
  send(response, status, { error: { code, message: code }, request_id: requestId }, requestId)

const readBody = (request: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    request.on("error", reject)
  })

interface Caller {
  readonly origin_id: string
  readonly organization_id: string
  readonly rate_limit: number
  readonly country: string
}

const create = async (request: IncomingMessage, response: ServerResponse, requestId: string) => {
  const started = performance.now()
  const token = (request.headers.authorization ?? "").replace(/^Bearer /, "")
  const text = await readBody(request)
  const body = JSON.parse(text) as {
    nombre: string
    telefono: string
    email?: string
    mensaje?: string
  }
  if (typeof body.nombre !== "string" || typeof body.telefono !== "string") {
    return fail(response, 422, "validation_error", requestId)
  }
  const db = pool!
  const keys = await db.query<Caller>(
    `SELECT o.id AS origin_id, o.organization_id, o.rate_limit, g.country
     FROM api_keys k JOIN origins o ON o.id = k.origin_id JOIN organizations g ON g.id = o.organization_id
     WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
    [createHash("sha256").update(token, "utf8").digest("hex")]
  )
  const caller = keys.rows[0]
  if (caller === undefined) return fail(response, 401, "invalid_key", requestId)
  const now = new Date()
  const windowStart = new Date(Math.floor(now.getTime() / 60_000) * 60_000)
  const counted = await db.query<{ count: number }>(
    `INSERT INTO rate_windows AS w (origin_id, livemode, window_start, count) VALUES ($1, true, $2, 1)
     ON CONFLICT (origin_id, livemode, window_start) DO UPDATE SET count = w.count + 1 RETURNING count`,
    [caller.origin_id, windowStart]
  )
  if (counted.rows[0]!.count > caller.rate_limit) return fail(response, 429, "rate_limited", requestId)
  const phoneKey = phoneMatchKey(body.telefono, caller.country)
  const idempotencyKey = request.headers["idempotency-key"]
  const fingerprint = createHash("sha256").update(text, "utf8").digest("hex")
  const client = await db.connect()
  let lead: { id: string; created: boolean }
  try {
    await client.query("BEGIN")
    if (typeof idempotencyKey === "string") {
      // A concurrent request with the same key waits here for this one's end, then finds it spent.
      const reserved = await client.query(
        `INSERT INTO idempotency_keys (organization_id, origin_id, key, fingerprint, state, lease_token, lease_expires_at)
         VALUES ($1, $2, $3, $4, 'in_progress', $5, $6)
         ON CONFLICT (organization_id, origin_id, key) DO NOTHING RETURNING 1`,
        [
          caller.organization_id,
          caller.origin_id,
          idempotencyKey,
          fingerprint,
          randomUUID(),
          new Date(now.getTime() + 30_000)
        ]
      )
      if (reserved.rowCount === 0) {
        const spent = await client.query<{
          fingerprint: string
          http_status: number
          response: { lead_id: string; status: string }
        }>(
          "SELECT fingerprint, http_status, response FROM idempotency_keys WHERE organization_id = $1 AND origin_id = $2 AND key = $3",
          [caller.organization_id, caller.origin_id, idempotencyKey]
        )
        await client.query("ROLLBACK")
        const row = spent.rows[0]
        if (row?.response == null) return fail(response, 409, "idempotency_in_progress", requestId)
        if (row.fingerprint !== fingerprint) return fail(response, 409, "idempotency_conflict", requestId)
        const replayed = {
          ...row.response,
          lead_url: `${dashboardUrl}/leads/${row.response.lead_id}`,
          replay: true
        }
        return send(response, row.http_status, { ...replayed, request_id: requestId }, requestId)
      }
    }
    lead = (
      await client.query<{ id: string; created: boolean }>(
        `INSERT INTO leads AS l (organization_id, origin_id, nombre, telefono, phone_key, email, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
         ON CONFLICT (organization_id, phone_key) DO UPDATE SET updated_at = EXCLUDED.updated_at,
           email = coalesce(l.email, EXCLUDED.email)
         RETURNING id, (xmax = 0) AS created`,
        [
          caller.organization_id,
          caller.origin_id,
          body.nombre,
          body.telefono,
          phoneKey,
          body.email ?? null,
          now
        ]
      )
    ).rows[0]!
    await client.query(
      "INSERT INTO lead_notes (organization_id, lead_id, body, request_id, created_at) VALUES ($1, $2, $3, $4, $5)",
      [caller.organization_id, lead.id, body.mensaje ?? `Lead from ${body.nombre}`, requestId, now]
    )
    if (lead.created) {
      await client.query(
        "INSERT INTO lead_tasks (organization_id, lead_id, kind, due_at, created_at) VALUES ($1, $2, 'first_contact', $3, $4)",
        [caller.organization_id, lead.id, new Date(now.getTime() + firstContactMillis), now]
      )
    }
    await client.query(
      "INSERT INTO outbox_events (organization_id, lead_id, type, payload, created_at) VALUES ($1, $2, $3, $4, $5)",
      [
        caller.organization_id,
        lead.id,
        lead.created ? "lead.created" : "lead.enriched",
        JSON.stringify({ lead_id: lead.id, request_id: requestId }),
        now
      ]
    )
    await client.query(
      `INSERT INTO logged_requests (organization_id, request_id, at, origin_id, status, outcome, lead_id, duration_ms)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        caller.organization_id,
        requestId,
        now,
        caller.origin_id,
        lead.created ? 201 : 200,
        lead.created ? "created" : "enriched",
        lead.id,
        performance.now() - started
      ]
    )
    if (typeof idempotencyKey === "string") {
      await client.query(
        `UPDATE idempotency_keys SET state = 'completed', http_status = $4, response = $5, completed_at = $6,
           lease_expires_at = NULL
         WHERE organization_id = $1 AND origin_id = $2 AND key = $3`,
        [
          caller.organization_id,
          caller.origin_id,
          idempotencyKey,
          lead.created ? 201 : 200,
          JSON.stringify({ lead_id: lead.id, status: lead.created ? "created" : "enriched" }),
          now
        ]
      )
    }
    await client.query("COMMIT")
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {})
    throw error
  } finally {
    client.release()
  }
  send(
    response,
    lead.created ? 201 : 200,
    {
      lead_id: lead.id,
      status: lead.created ? "created" : "enriched",
      lead_url: `${dashboardUrl}/leads/${lead.id}`,
      request_id: requestId
    },
    requestId
  )
}

const server = createServer({ keepAliveTimeout: 5_000 }, (request, response) => {
  const requestId = randomUUID()
  if (request.method === "GET" && request.url === "/v1") {
    return send(response, 200, { ...index, request_id: requestId }, requestId)
  }
  if (!raw && request.method === "POST" && request.url === "/v1/leads") {
    return void create(request, response, requestId).catch((error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
      if (!response.headersSent) fail(response, 500, "internal_error", requestId)
    })
  }
  fail(response, 404, "not_found", requestId)
})

server.listen(port, "127.0.0.1", () => process.stderr.write(`reference listening on ${port}\n`))
const stop = () => server.close(() => void (pool?.end() ?? Promise.resolve()).then(() => process.exit(0)))
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
