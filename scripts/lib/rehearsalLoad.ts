import { randomUUID } from "node:crypto"
import { Schema } from "effect"
import pg from "pg"
import { reservationTimes } from "../../src/Intake/IdempotencyStore.ts"
import {
  documentOf,
  KeyedLeadWriteDocument,
  type LeadWrite,
  LeadWriteDocument
} from "../../src/Intake/LeadRepository.ts"
import { sessionSettings } from "../../src/Platform/Sql/Sql.ts"

/**
 * The request path's statements, as the release the database starts from runs them (today's
 * `KeyStore.authenticate`, `RateLimiter.consume`, `LeadRepository` writes and `RequestLog` insert),
 * paced at `rate` requests a second over `workers` pairs of connections: one for the reads and the
 * count, with the pipelined client's settings, one for the writes, with the pool's
 * (`src/Platform/Sql/Sql.ts`), so a statement gives up on a lock when the service's would. A request is
 * a key lookup, its minute's count, a create (or, one in ten, an enrichment of a filled lead; half
 * of them behind an Idempotency-Key) and its request-log row; its latency is the four together.
 *
 * The statements are the newest the schema has at the start, chosen once: since the release before
 * 0028, the write `lead_write` (`lead_write_keyed` behind a key) with the service's own document of
 * it; since 0022's release, the key found by `api_key_by_public_id` and every statement naming the
 * organization, the write `write_lead_json`; before it, the key read from `api_keys` and `write_lead` (since 0021's release)
 * or `create_or_enrich_lead` (0015); behind an Idempotency-Key, `reserve_and_write_lead_json`, or
 * `reserve_and_write_lead` before it. The previous release does not change its statements while the
 * database is migrated, so a migration that drops what it calls shows here as errors.
 */
export interface LoadOptions {
  readonly url: string
  readonly rate: number
  readonly workers: number
}

export interface Probe {
  /** `performance.now()` when it started, and how long it took. */
  readonly at: number
  readonly ms: number
  /** The statement that took longest, or failed. */
  readonly slowest: string
  readonly slowestMs: number
  readonly error?: string
}

export interface Load {
  readonly probes: ReadonlyArray<Probe>
  readonly writes: string
  readonly stop: () => Promise<void>
}

const applicationName = "lead-intake-rehearse/load"

const optionsOf = (settings: Record<string, string>) =>
  Object.entries(settings)
    .map(([name, value]) => `-c ${name}=${value}`)
    .join(" ")

const connect = async (url: string, settings: Record<string, string>) => {
  const client = new pg.Client({
    connectionString: url,
    application_name: applicationName,
    options: optionsOf(settings)
  })
  await client.connect()
  // An error on an idle connection (the server ended it) is the next query's to report.
  client.on("error", () => {})
  return client
}

interface Caller {
  readonly publicId: string
  readonly originId: string
  readonly organizationId: string
}

interface Filled {
  readonly organizationId: string
  readonly originId: string
  readonly telefono: string
}

/** A lead write: its SQL, its place in the schema (a procedure's signature) and its arguments. */
interface Write {
  readonly name: string
  readonly signature: string
  readonly text: string
  readonly values: (lead: ProbeLead) => ReadonlyArray<unknown>
}

interface ProbeLead {
  readonly caller: Caller
  readonly telefono: string
  readonly email: string | null
  readonly property: string | null
  readonly requestId: string
  readonly now: Date
  readonly key: string | null
}

const firstContactMillis = 15 * 60_000
const note = "Quiero agendar una visita."

const common = (lead: ProbeLead) => [
  lead.caller.organizationId,
  lead.caller.originId,
  `Probe ${lead.telefono}`,
  lead.telefono,
  lead.telefono,
  lead.email
]
const times = (lead: ProbeLead) => [lead.now, new Date(lead.now.getTime() + firstContactMillis)]
const byCodigo = (lead: ProbeLead) => [lead.property === null ? null : "codigo", lead.property]

/** A probe's write as the service writes it (`LeadRepository.documentOf`): a live one, no Idempotency-Key. */
const leadWriteOf = (lead: ProbeLead): LeadWrite => ({
  requestId: lead.requestId,
  organizationId: lead.caller.organizationId,
  originId: lead.caller.originId,
  livemode: true,
  input: {
    nombre: `Probe ${lead.telefono}`,
    telefono: lead.telefono,
    email: lead.email,
    mensaje: note,
    propiedad: lead.property === null ? null : { by: "codigo", value: lead.property },
    extras: []
  },
  phoneKey: lead.telefono,
  idempotency: null
})
const encodeWrite = Schema.encodeSync(LeadWriteDocument)
const encodeKeyed = Schema.encodeSync(KeyedLeadWriteDocument)

/** The arguments `write_lead` and `write_lead_json` share: a live write, no Idempotency-Key. */
const writeArguments = (lead: ProbeLead) => [
  ...common(lead),
  ...byCodigo(lead),
  note,
  lead.requestId,
  ...times(lead),
  null,
  null,
  true
]

/** Newest first: the request path since 0028 (one document), since 0022 (the organization's keys), since 0021, then since 0015. */
const unkeyedWrites: ReadonlyArray<Write> = [
  {
    name: "lead_write",
    signature: "lead_write(uuid,jsonb)",
    text: `SELECT (w->>'lead_id')::uuid AS lead_id, (w->>'created')::boolean AS created
           FROM lead_write($1, $2::jsonb) AS w`,
    values: (lead) => [
      lead.caller.organizationId,
      JSON.stringify(encodeWrite(documentOf(leadWriteOf(lead), lead.now.getTime())))
    ]
  },
  {
    name: "write_lead_json",
    signature:
      "write_lead_json(uuid,uuid,text,text,text,text,text,text,text,text,timestamptz,timestamptz,text,uuid,boolean)",
    text: `SELECT (w->>'lead_id')::uuid AS lead_id, (w->>'created')::boolean AS created
           FROM write_lead_json($1, $2, $3, $4, $5, $6, $7::text, $8::text, $9::text, $10, $11, $12, $13::text,
             $14::uuid, $15) AS w`,
    values: writeArguments
  },
  {
    name: "write_lead",
    signature:
      "write_lead(uuid,uuid,text,text,text,text,text,text,text,text,timestamptz,timestamptz,text,uuid,boolean)",
    text: `SELECT lead_id, created, assignee_id, filled FROM write_lead($1, $2, $3, $4, $5, $6, $7::text, $8::text,
             $9::text, $10, $11, $12, $13::text, $14::uuid, $15)`,
    values: writeArguments
  },
  {
    name: "create_or_enrich_lead",
    signature:
      "create_or_enrich_lead(uuid,uuid,text,text,text,text,uuid,text,text,timestamptz,timestamptz,text,uuid,boolean)",
    text: `SELECT lead_id, created, assignee_id, filled FROM create_or_enrich_lead($1, $2, $3, $4, $5, $6, $7::uuid,
             $8::text, $9, $10, $11, $12::text, $13::uuid, $14)`,
    values: (lead) => [...common(lead), null, note, lead.requestId, ...times(lead), null, null, true]
  }
]

/** The arguments `reserve_and_write_lead_json` and `reserve_and_write_lead` share: a live write behind its key. */
const keyedArguments = (lead: ProbeLead) => {
  const reservation = reservationTimes(lead.now.getTime())
  return [
    ...common(lead),
    ...byCodigo(lead),
    note,
    lead.requestId,
    ...times(lead),
    lead.key,
    randomUUID(),
    true,
    `fingerprint-${lead.key}`,
    reservation.leaseExpiresAt,
    reservation.forgetBefore
  ]
}

/** Newest first: one transaction under the key's lock (a document, then positional), then the procedure of the releases before it. */
const keyedWrites: ReadonlyArray<Write> = [
  {
    name: "lead_write_keyed",
    signature: "lead_write_keyed(uuid,jsonb)",
    text: "SELECT lead_write_keyed($1, $2::jsonb) AS w",
    values: (lead) => {
      const reservation = reservationTimes(lead.now.getTime())
      const key = { key: lead.key ?? "", token: randomUUID() }
      const document = {
        ...documentOf({ ...leadWriteOf(lead), idempotency: key }, lead.now.getTime()),
        idempotency: {
          ...key,
          fingerprint: `fingerprint-${lead.key}`,
          lease_expires_at: reservation.leaseExpiresAt,
          forget_before: reservation.forgetBefore
        }
      }
      return [lead.caller.organizationId, JSON.stringify(encodeKeyed(document))]
    }
  },
  {
    name: "reserve_and_write_lead_json",
    signature:
      "reserve_and_write_lead_json(uuid,uuid,text,text,text,text,text,text,text,text,timestamptz,timestamptz,text,uuid,boolean,text,timestamptz,timestamptz)",
    text: `SELECT reserve_and_write_lead_json($1, $2, $3, $4, $5, $6, $7::text, $8::text, $9::text, $10, $11, $12,
             $13::text, $14::uuid, $15, $16::text, $17, $18) AS w`,
    values: keyedArguments
  },
  {
    name: "reserve_and_write_lead",
    signature:
      "reserve_and_write_lead(uuid,uuid,text,text,text,text,text,text,text,text,timestamptz,timestamptz,text,uuid,boolean,text,timestamptz,timestamptz,boolean,text,text,jsonb,uuid,boolean,uuid,text[],text,text)",
    text: `CALL reserve_and_write_lead($1, $2, $3, $4, $5, $6, $7::text, $8::text, $9::text, $10, $11, $12, $13::text,
             $14::uuid, $15, $16::text, $17, $18)`,
    values: keyedArguments
  }
]

/** The statements a release sends for the lookup, the count and the log, by the keys its schema has. */
interface Statements {
  readonly lookup: string
  readonly count: string
  readonly countValues: (caller: Caller, minute: Date) => ReadonlyArray<unknown>
  readonly log: string
}

/** Since 0022: the key found through the global directory, every statement naming its organization. */
const organizationStatements: Statements = {
  lookup: `
    SELECT key_id, key_hash, revoked, livemode, origin_id, label, rate_limit, organization_id, country
    FROM api_key_by_public_id($1)`,
  count: `
    INSERT INTO rate_limit_windows AS w (organization_id, origin_id, window_start, count)
    VALUES ($1, $2, $3, 1)
    ON CONFLICT (organization_id, origin_id, window_start) DO UPDATE SET count = w.count + 1 WHERE w.count < $4
    RETURNING count`,
  countValues: (caller, minute) => [caller.organizationId, caller.originId, minute, 1e9],
  log: `
    INSERT INTO request_log (organization_id, row_key, request_id, at, origin_id, key_prefix, status, outcome,
                             lead_id, idempotency_key, duration_ms, livemode, kept_body)
    SELECT o.organization_id, r.row_key, r.request_id, r.at, o.id, r.key_prefix, r.status, r.outcome, r.lead_id,
           r.idempotency_key, r.duration_ms, r.livemode, r.kept_body
    FROM jsonb_to_recordset($1::jsonb) AS r(
      seq integer, row_key uuid, request_id text, at timestamptz, origin_id uuid, key_prefix text, status integer,
      outcome text, lead_id uuid, idempotency_key text, duration_ms double precision, livemode boolean, kept_body text)
    JOIN origins o ON o.id = r.origin_id
    ORDER BY r.seq
    ON CONFLICT (organization_id, row_key) DO NOTHING`
}

const lookupText = `
  SELECT k.id AS key_id, k.key_hash, k.revoked_at IS NOT NULL AS revoked, k.livemode, o.id AS origin_id, o.label,
         o.rate_limit, g.id AS organization_id, g.country
  FROM api_keys k
  JOIN origins o ON o.id = k.origin_id
  JOIN organizations g ON g.id = o.organization_id
  WHERE k.public_id = $1`

const countText = `
  INSERT INTO rate_limit_windows AS w (origin_id, window_start, count)
  VALUES ($1, $2, 1)
  ON CONFLICT (origin_id, window_start) DO UPDATE SET count = w.count + 1 WHERE w.count < $3
  RETURNING count`

/** `RequestLog`'s batched insert, of one row, with the columns the schema has of those added since 0018. */
const logTextFor = (columns: ReadonlySet<string>) => {
  const optional = ["row_key", "kept_body"].filter((column) => columns.has(column))
  return `
    INSERT INTO request_log (${[...optional, "request_id", "at", "origin_id", "key_prefix", "status", "outcome", "lead_id", "idempotency_key", "duration_ms", "livemode"].join(", ")})
    SELECT ${[...optional.map((column) => `r.${column}`), "r.request_id", "r.at"].join(", ")},
           COALESCE(r.origin_id, (SELECT origin_id FROM api_keys WHERE public_id = substr(r.key_prefix, 9))),
           r.key_prefix, r.status, r.outcome, r.lead_id, r.idempotency_key, r.duration_ms, r.livemode
    FROM jsonb_to_recordset($1::jsonb) AS r(
      seq integer, row_key uuid, request_id text, at timestamptz, origin_id uuid, key_prefix text, status integer,
      outcome text, lead_id uuid, idempotency_key text, duration_ms double precision, livemode boolean, kept_body text)
    ORDER BY r.seq${columns.has("row_key") ? " ON CONFLICT (row_key) DO NOTHING" : ""}`
}

export const startLoad = async (options: LoadOptions): Promise<Load> => {
  const setup = await connect(options.url, sessionSettings)
  const exists = async (writes: ReadonlyArray<Write>) => {
    for (const write of writes) {
      const { rows } = await setup.query<{ present: boolean }>(
        "SELECT to_regprocedure($1) IS NOT NULL AS present",
        [write.signature]
      )
      if (rows[0]?.present === true) return write
    }
    return undefined
  }
  const organizationFirst =
    (
      await setup.query<{ present: boolean }>(
        "SELECT to_regprocedure('api_key_by_public_id(text)') IS NOT NULL AS present"
      )
    ).rows[0]?.present === true
  const unkeyed = await exists(unkeyedWrites)
  const keyed = await exists(keyedWrites)
  if (unkeyed === undefined)
    throw new Error(
      "the database has neither write_lead nor create_or_enrich_lead(…, livemode): no load to run"
    )
  const previousLogText = logTextFor(
    new Set(
      (
        await setup.query<{ column_name: string }>(
          `SELECT column_name FROM information_schema.columns
           WHERE table_schema = current_schema() AND table_name = 'request_log'`
        )
      ).rows.map((row) => row.column_name)
    )
  )
  const statements: Statements = organizationFirst
    ? organizationStatements
    : {
        lookup: lookupText,
        count: countText,
        countValues: (caller, minute) => [caller.originId, minute, 1e9],
        log: previousLogText
      }
  const callers = (
    await setup.query<Caller>(`
      SELECT k.public_id AS "publicId", o.id AS "originId", o.organization_id AS "organizationId"
      FROM api_keys k JOIN origins o ON o.id = k.origin_id
      WHERE k.livemode AND k.revoked_at IS NULL`)
  ).rows
  const filled = (
    await setup.query<Filled>(`
      SELECT organization_id AS "organizationId", origin_id AS "originId", telefono
      FROM leads TABLESAMPLE SYSTEM (1) WHERE erased_at IS NULL AND livemode LIMIT 5000`)
  ).rows
  await setup.end()
  if (callers.length === 0) throw new Error("no live API key to send requests with: fill the database first")

  // Half the requests for the organization with the most origins (the fill's large one).
  const organizations = [...Map.groupBy(callers, (caller) => caller.organizationId).values()].sort(
    (a, b) => b.length - a.length
  )
  const callerOf = new Map(callers.map((caller) => [caller.originId, caller]))
  const pick = <A>(items: ReadonlyArray<A>) => items[Math.floor(Math.random() * items.length)]!
  const anyCaller = () =>
    Math.random() < 0.5 || organizations.length === 1
      ? pick(organizations[0]!)
      : pick(pick(organizations.slice(1)))

  const connections = await Promise.all(
    Array.from({ length: options.workers }, async () => ({
      read: await connect(options.url, { ...sessionSettings, lock_timeout: "1s", synchronous_commit: "off" }),
      write: await connect(options.url, sessionSettings)
    }))
  )
  const probes: Array<Probe> = []
  let stopped = false
  let phones = 0
  const started = performance.now()
  const interval = (1000 * options.workers) / options.rate

  const worker = async (index: number, read: pg.Client, write: pg.Client) => {
    const request = async (slowest: { name: string; ms: number }) => {
      const timed = async (name: string, client: pg.Client, query: pg.QueryConfig) => {
        const began = performance.now()
        try {
          return await client.query(query)
        } catch (error) {
          throw new Error(`${name}: ${error instanceof Error ? error.message : String(error)}`)
        } finally {
          const ms = performance.now() - began
          if (ms >= slowest.ms) Object.assign(slowest, { name, ms })
        }
      }
      const now = new Date()
      // One in ten enriches a lead of the fill (its row locked by the write), the rest create.
      const existing = filled.length > 0 && Math.random() < 0.1 ? pick(filled) : undefined
      const caller = (existing && callerOf.get(existing.originId)) ?? anyCaller()
      await timed("key lookup", read, { name: "lookup", text: statements.lookup, values: [caller.publicId] })
      const minute = new Date(Math.floor(now.getTime() / 60_000) * 60_000)
      await timed("rate count", read, {
        name: "count",
        text: statements.count,
        values: [...statements.countValues(caller, minute)]
      })
      const telefono = existing?.telefono ?? `+52${7_000_000_000 + phones++}`
      const lead: ProbeLead = {
        caller,
        telefono,
        email: Math.random() < 0.5 ? `${telefono.slice(1)}@example.com` : null,
        property: Math.random() < 0.3 ? "REH-0001" : null,
        requestId: `req_probe_${randomUUID()}`,
        now,
        key: keyed !== undefined && Math.random() < 0.5 ? `rehearsal-${randomUUID()}` : null
      }
      const chosen = lead.key === null ? unkeyed : keyed!
      const result = await timed(chosen.name, write, {
        name: chosen.name,
        text: chosen.text,
        values: [...chosen.values(lead)]
      })
      const row = result.rows[0] as
        | { lead_id: string | null; created: boolean | null; failed_message?: string | null }
        | undefined
      if (row?.failed_message != null) throw new Error(`${chosen.name}: ${row.failed_message}`)
      const logged = {
        seq: 0,
        row_key: randomUUID(),
        request_id: lead.requestId,
        at: now.toISOString(),
        origin_id: caller.originId,
        key_prefix: `lk_live_${caller.publicId}`,
        status: row?.created === false ? 200 : 201,
        outcome: row?.created === false ? "enriched" : "created",
        lead_id: row?.lead_id ?? null,
        idempotency_key: lead.key,
        duration_ms: 20,
        livemode: true,
        kept_body: null
      }
      await timed("request log", write, {
        name: "log",
        text: statements.log,
        values: [JSON.stringify([logged])]
      })
    }
    try {
      for (let turn = 0; !stopped; turn++) {
        const due = started + (turn + index / options.workers) * interval
        const wait = due - performance.now()
        // A turn missed while a request was held up is skipped, not sent late in a burst.
        if (wait < -interval) continue
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
        if (stopped) break
        const at = performance.now()
        const slowest = { name: "", ms: -1 }
        const error = await request(slowest).then(
          () => undefined,
          (cause: unknown) => (cause instanceof Error ? cause.message : String(cause))
        )
        probes.push({
          at,
          ms: performance.now() - at,
          slowest: slowest.name,
          slowestMs: slowest.ms,
          ...(error === undefined ? {} : { error })
        })
      }
    } finally {
      await Promise.allSettled([read.end(), write.end()])
    }
  }

  const running = connections.map(({ read, write }, index) => worker(index, read, write))
  return {
    probes,
    writes: [unkeyed.name, keyed?.name, organizationFirst ? "api_key_by_public_id" : "api_keys by public_id"]
      .filter((name) => name !== undefined)
      .join(", "),
    stop: async () => {
      stopped = true
      await Promise.all(running)
    }
  }
}
