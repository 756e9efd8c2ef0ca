import { mkdir, writeFile } from "node:fs/promises"
import * as path from "node:path"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { generateApiKey } from "../src/Domain/ApiKey.ts"
import { phoneMatchKey } from "../src/Domain/Phone.ts"
import { KeyStore } from "../src/KeyStore.ts"
import { numberOption, parseArgs } from "./lib/args.ts"
import { provision, startScratchDatabase } from "./lib/database.ts"
import { machine, megabytes, table } from "./lib/report.ts"
import { memoryOf, startServer } from "./lib/server.ts"

const usage = `npm run soak -- --minutes N [--workers N] [--out FILE] [--keep-data]
  Mixed traffic against the real server on a scratch embedded PostgreSQL (creates, enrichments in
  other spellings, concurrent duplicates, retries and replays, conflicts, dry-runs, invalid bodies,
  bad keys, unknown properties, a rate-limited origin), then a consistency check of the database.
  Exit status 1 when any check fails.`

const options = parseArgs(process.argv.slice(2))
if (options.has("help")) {
  process.stdout.write(`${usage}\n`)
  process.exit(0)
}
const minutes = numberOption(options, "minutes", 1)
const workers = numberOption(options, "workers", 16)
const stamp = new Date().toISOString().replace(/[:.]/g, "-")
const out = options.get("out") ?? path.join("bench-results", `soak-${stamp}.json`)
const log = (line: string) => process.stderr.write(`${line}\n`)

/** Everything a response told the client; the consistency check compares the database with these. */
interface Answer {
  readonly kind: string
  readonly origin: number
  readonly key: string | null
  readonly phoneKey: string | null
  readonly body: string
  readonly status: number
  readonly code: string | null
  readonly requestId: string
  readonly leadId: string | null
  readonly replay: boolean
  readonly dryRun: boolean
  readonly note: boolean
  readonly millis: number
}

const spellings = (digits: string) => {
  const area = digits.slice(0, 2)
  const first = digits.slice(2, 6)
  const last = digits.slice(6)
  return [
    `+52 ${area} ${first} ${last}`,
    `${area}-${first}-${last}`,
    `(${area}) ${first} ${last}`,
    `+52 1 ${area} ${first} ${last}`,
    `${area}${first}${last}`
  ]
}

const pick = <A>(items: ReadonlyArray<A>) => items[Math.floor(Math.random() * items.length)]!

const main = async () => {
  await mkdir("bench-results", { recursive: true })
  log("starting a scratch embedded PostgreSQL")
  const database = await startScratchDatabase()
  cleanups.push(() => database.close())
  const fixture = await database.runtime.runPromise(provision({ origins: 8, rateLimit: 1_000_000 }))
  const limited = await database.runtime.runPromise(
    Effect.flatMap(KeyStore, (keys) =>
      keys.createOrigin({ organizationId: fixture.organizationId, label: "limited", rateLimit: 30 })
    ).pipe(Effect.orDie)
  )
  const keys = [...fixture.origins.map((origin) => origin.key), limited.key]
  const limitedIndex = keys.length - 1
  const server = await startServer({
    env: { DATABASE_URL: database.url() },
    logFile: path.join("bench-results", `soak-server-${stamp}.log`)
  })
  cleanups.push(() => server.stop())
  const rssAtStart = memoryOf(server.pid, "VmRSS")
  log(`server pid ${server.pid} at ${server.url}; ${workers} workers for ${minutes} min`)

  const answers: Array<Answer> = []
  const known: Array<{ digits: string; origin: number }> = []
  const retryable: Array<Answer> = []
  let phoneCounter = 0
  const newDigits = () => `55${String(10_000_000 + phoneCounter++).slice(-8)}`

  const send = async (
    kind: string,
    origin: number,
    body: Record<string, unknown> | string,
    headers: Record<string, string> = {},
    key = keys[origin]!
  ): Promise<Answer> => {
    const text = typeof body === "string" ? body : JSON.stringify(body)
    const started = performance.now()
    const response = await fetch(`${server.url}/v1/leads`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...headers },
      body: text
    })
    const json = (await response.json()) as Record<string, unknown>
    const telefono = typeof body === "object" && typeof body.telefono === "string" ? body.telefono : null
    const answer: Answer = {
      kind,
      origin,
      key: headers["idempotency-key"] ?? null,
      phoneKey: telefono === null ? null : phoneMatchKey(telefono, "MX"),
      body: text,
      status: response.status,
      code:
        typeof json.error === "object" && json.error !== null
          ? String((json.error as { code?: unknown }).code)
          : null,
      requestId: response.headers.get("x-request-id") ?? "",
      leadId: typeof json.lead_id === "string" ? json.lead_id : null,
      replay: json.replay === true,
      dryRun: headers["x-service-dry-run"] === "true",
      note: typeof body === "object" && (typeof body.mensaje === "string" || body.extras !== undefined),
      millis: performance.now() - started
    }
    answers.push(answer)
    return answer
  }

  /** A client that follows the contract: 503 and 409 idempotency_in_progress are retried with the same key and body. */
  const sendUntilAnswered = async (
    kind: string,
    origin: number,
    body: Record<string, unknown>,
    headers: Record<string, string>
  ) => {
    for (let attempt = 0; ; attempt++) {
      const answer = await send(attempt === 0 ? kind : `${kind}:retry`, origin, body, headers)
      const retry = answer.status >= 500 || answer.code === "idempotency_in_progress"
      if (!retry) return answer
      await new Promise((resolve) => setTimeout(resolve, answer.status === 409 ? 1_000 : 200))
    }
  }

  const lead = (telefono: string | null, extra: Record<string, unknown> = {}) => ({
    nombre: `Soak ${phoneCounter}`,
    ...(telefono === null ? {} : { telefono }),
    email: `soak${phoneCounter}@example.com`,
    mensaje: "quiero información",
    propiedad: { codigo: fixture.propertyCodigo },
    ...extra
  })

  const actions: Array<[number, () => Promise<unknown>]> = [
    [
      30,
      async () => {
        const digits = newDigits()
        const origin = Math.floor(Math.random() * fixture.origins.length)
        const answer = await sendUntilAnswered("create", origin, lead(pick(spellings(digits))), {
          "idempotency-key": crypto.randomUUID()
        })
        if (answer.status === 201) {
          known.push({ digits, origin })
          retryable.push(answer)
        }
      }
    ],
    [
      15,
      async () => {
        if (known.length === 0) return
        const { digits, origin } = pick(known)
        const answer = await sendUntilAnswered(
          "enrich",
          origin,
          lead(pick(spellings(digits)), { mensaje: `seguimiento ${Math.random()}` }),
          { "idempotency-key": crypto.randomUUID() }
        )
        if (answer.status === 200) retryable.push(answer)
      }
    ],
    [
      10,
      async () => {
        if (retryable.length === 0) return
        const original = pick(retryable)
        await send("replay", original.origin, JSON.parse(original.body) as Record<string, unknown>, {
          "idempotency-key": original.key!
        })
      }
    ],
    [
      4,
      async () => {
        if (retryable.length === 0) return
        const original = pick(retryable)
        const changed = { ...(JSON.parse(original.body) as Record<string, unknown>), mensaje: "otro cuerpo" }
        await send("conflict", original.origin, changed, { "idempotency-key": original.key! })
      }
    ],
    [
      6,
      async () => {
        const digits = newDigits()
        const origin = Math.floor(Math.random() * fixture.origins.length)
        const racers = await Promise.all(
          spellings(digits)
            .slice(0, 3)
            .map((telefono) =>
              sendUntilAnswered("duplicate", origin, lead(telefono), {
                "idempotency-key": crypto.randomUUID()
              })
            )
        )
        known.push({ digits, origin })
        for (const answer of racers)
          if (answer.status === 200 || answer.status === 201) retryable.push(answer)
      }
    ],
    [
      5,
      async () => {
        const digits = newDigits()
        const origin = Math.floor(Math.random() * fixture.origins.length)
        const key = crypto.randomUUID()
        const body = lead(pick(spellings(digits)))
        const both = await Promise.all([
          sendUntilAnswered("same-key", origin, body, { "idempotency-key": key }),
          sendUntilAnswered("same-key", origin, body, { "idempotency-key": key })
        ])
        known.push({ digits, origin })
        for (const answer of both) if (answer.status === 201 && !answer.replay) retryable.push(answer)
      }
    ],
    [
      10,
      async () => {
        const telefono = known.length > 0 && Math.random() < 0.5 ? pick(spellings(pick(known).digits)) : null
        await send("dry-run", Math.floor(Math.random() * fixture.origins.length), lead(telefono), {
          "x-service-dry-run": "true",
          "idempotency-key": crypto.randomUUID()
        })
      }
    ],
    [
      5,
      async () => {
        const origin = Math.floor(Math.random() * fixture.origins.length)
        await send("no-key", origin, lead(pick(spellings(newDigits()))))
      }
    ],
    [
      4,
      () => send("invalid", 0, pick(['{"nombre":', "[]", '{"telefono":"123"}', '{"nombre":"A","phone":"1"}']))
    ],
    [3, () => send("bad-key", 0, lead(null), {}, generateApiKey().key)],
    [2, () => send("unknown-property", 0, lead(null, { propiedad: { codigo: "ZZZ-0000" } }))],
    [6, () => send("rate-limited", limitedIndex, lead(null, { mensaje: undefined }))]
  ]
  const totalWeight = actions.reduce((sum, [weight]) => sum + weight, 0)
  const act = () => {
    let roll = Math.random() * totalWeight
    for (const [weight, action] of actions) {
      roll -= weight
      if (roll < 0) return action()
    }
    return actions[0]![1]()
  }

  const deadline = performance.now() + minutes * 60_000
  const started = performance.now()
  let progressAt = performance.now()
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (performance.now() < deadline) {
        await act()
        if (performance.now() - progressAt > 30_000) {
          progressAt = performance.now()
          log(
            `  ${Math.round((performance.now() - started) / 1000)} s: ${answers.length} requests, server RSS ${megabytes(memoryOf(server.pid, "VmRSS"))} MB`
          )
        }
      }
    })
  )
  const elapsed = (performance.now() - started) / 1000
  const rssAtEnd = memoryOf(server.pid, "VmRSS")
  const peakRss = memoryOf(server.pid, "VmHWM")
  const exitCode = await server.stop()
  log(`traffic done: ${answers.length} requests in ${Math.round(elapsed)} s; server exited ${exitCode}`)

  const checks = await database.runtime.runPromise(consistency(answers).pipe(Effect.orDie))
  await database.close({ keep: options.has("keep-data") })

  const byKind = new Map<string, Map<number, number>>()
  for (const answer of answers) {
    const statuses = byKind.get(answer.kind) ?? new Map<number, number>()
    statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
    byKind.set(answer.kind, statuses)
  }
  const latencies = answers.map((a) => a.millis).sort((a, b) => a - b)
  const percentile = (p: number) => Math.round(latencies[Math.floor((latencies.length - 1) * p)] ?? 0)
  const report = {
    at: new Date().toISOString(),
    machine: machine("18"),
    minutes,
    workers,
    requests: answers.length,
    requestsPerSecond: Math.round(answers.length / elapsed),
    latencyMs: { p50: percentile(0.5), p99: percentile(0.99), max: Math.round(latencies.at(-1) ?? 0) },
    serverRss: { startMB: megabytes(rssAtStart), endMB: megabytes(rssAtEnd), peakMB: megabytes(peakRss) },
    serverExitCode: exitCode,
    statuses: Object.fromEntries([...byKind].map(([kind, statuses]) => [kind, Object.fromEntries(statuses)])),
    checks
  }
  await writeFile(out, `${JSON.stringify(report, null, 2)}\n`)

  process.stdout.write(
    `\nsoak: ${minutes} min, ${workers} workers, ${answers.length} requests (${report.requestsPerSecond}/s), ` +
      `p50 ${report.latencyMs.p50} ms, p99 ${report.latencyMs.p99} ms; server RSS ${report.serverRss.startMB} -> ` +
      `${report.serverRss.endMB} MB (peak ${report.serverRss.peakMB} MB), exit ${exitCode}\n\n`
  )
  process.stdout.write(
    `${table([
      ["kind", "statuses"],
      ...[...byKind].map(([kind, statuses]) => [
        kind,
        [...statuses]
          .sort((a, b) => a[0] - b[0])
          .map(([status, count]) => `${status}x${count}`)
          .join(" ")
      ])
    ])}\n\n`
  )
  process.stdout.write(
    `${table([["check", "result", "detail"], ...checks.map((c) => [c.name, c.ok ? "ok" : "FAILED", c.detail])])}\n\nresults: ${out}\n`
  )
  if (!checks.every((c) => c.ok) || exitCode !== 0) process.exitCode = 1
}

interface Check {
  readonly name: string
  readonly ok: boolean
  readonly detail: string
}

/** Compares what the clients were told with what the database holds. */
const consistency = (answers: ReadonlyArray<Answer>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const checks: Array<Check> = []
    const check = (name: string, ok: boolean, detail: string) => checks.push({ name, ok, detail })

    const acknowledged = answers.filter((a) => (a.status === 200 || a.status === 201) && !a.dryRun)
    const writes = acknowledged.filter((a) => !a.replay)
    const leadIds = [...new Set(acknowledged.map((a) => a.leadId!))]
    const leads = yield* sql<{ id: string; phone_key: string | null; assignee_id: string | null }>`
      SELECT id, phone_key, assignee_id FROM leads`
    const leadById = new Map(leads.map((row) => [row.id, row]))

    const missing = leadIds.filter((id) => !leadById.has(id))
    check(
      "every acknowledged request's lead exists",
      missing.length === 0,
      `${leadIds.length} leads acknowledged, ${missing.length} missing`
    )
    const wrongPhone = acknowledged.filter(
      (a) => a.phoneKey !== null && leadById.get(a.leadId!)?.phone_key !== a.phoneKey
    )
    check(
      "each acknowledged lead has the request's phone",
      wrongPhone.length === 0,
      `${wrongPhone.length} mismatches`
    )
    const unacknowledged = leads.filter((row) => !leadIds.includes(row.id))
    check(
      "no lead exists that no client was told about",
      unacknowledged.length === 0,
      `${leads.length} leads in the database, ${unacknowledged.length} never acknowledged`
    )

    const byPhone = new Map<string, Set<string>>()
    const createdPerPhone = new Map<string, number>()
    for (const a of acknowledged) {
      if (a.phoneKey === null) continue
      byPhone.set(a.phoneKey, (byPhone.get(a.phoneKey) ?? new Set()).add(a.leadId!))
      if (a.status === 201 && !a.replay)
        createdPerPhone.set(a.phoneKey, (createdPerPhone.get(a.phoneKey) ?? 0) + 1)
    }
    const splitPhones = [...byPhone.values()].filter((ids) => ids.size !== 1).length
    const twiceCreated = [...createdPerPhone.values()].filter((n) => n !== 1).length
    check(
      "each phone is one lead, created exactly once",
      splitPhones === 0 && twiceCreated === 0,
      `${byPhone.size} phones; ${splitPhones} with several leads, ${twiceCreated} created more than once`
    )

    const keyed = writes.filter((a) => a.key !== null)
    const stored = yield* sql<{
      key: string
      state: string
      http_status: number | null
      lead_id: string | null
    }>`
      SELECT key, state, http_status, response->>'lead_id' AS lead_id FROM idempotency_keys`
    const storedByKey = new Map(stored.map((row) => [row.key, row]))
    const badKeys = keyed.filter((a) => {
      const row = storedByKey.get(a.key!)
      return (
        row === undefined ||
        row.state !== "completed" ||
        row.http_status !== a.status ||
        row.lead_id !== a.leadId
      )
    })
    check(
      "every acknowledged Idempotency-Key stores its answer",
      badKeys.length === 0,
      `${keyed.length} keys, ${badKeys.length} wrong`
    )
    const replays = acknowledged.filter((a) => a.replay)
    const badReplays = replays.filter((a) => storedByKey.get(a.key!)?.lead_id !== a.leadId)
    check(
      "every replay repeats the stored answer",
      badReplays.length === 0,
      `${replays.length} replays, ${badReplays.length} differ`
    )
    const dangling = stored.filter((row) => row.state !== "completed").length
    check("no key is left in progress", dangling === 0, `${dangling} in progress`)

    const notes = yield* sql<{ request_id: string; orphan: boolean }>`
      SELECT n.request_id, l.id IS NULL AS orphan FROM lead_notes n LEFT JOIN leads l ON l.id = n.lead_id`
    const orphans = notes.filter((n) => n.orphan).length
    const noted = new Set(writes.filter((a) => a.note).map((a) => a.requestId))
    const noteIds = notes.map((n) => n.request_id)
    const unexpectedNotes = noteIds.filter((id) => !noted.has(id)).length
    const missingNotes = [...noted].filter((id) => !noteIds.includes(id)).length
    check(
      "every note has its lead and its acknowledged request, once",
      orphans === 0 && unexpectedNotes === 0 && missingNotes === 0 && noteIds.length === noted.size,
      `${noteIds.length} notes; ${orphans} orphans, ${unexpectedNotes} from unacknowledged requests, ${missingNotes} missing`
    )

    const [effects] = yield* sql<{ bad_tasks: number; bad_created: number; enriched: number }>`
      SELECT
        (SELECT count(*)::int FROM leads l WHERE (SELECT count(*) FROM lead_tasks t WHERE t.lead_id = l.id) <> 1) AS bad_tasks,
        (SELECT count(*)::int FROM leads l
           WHERE (SELECT count(*) FROM outbox_events e WHERE e.lead_id = l.id AND e.type = 'lead.created') <> 1) AS bad_created,
        (SELECT count(*)::int FROM outbox_events WHERE type = 'lead.enriched') AS enriched`
    const enrichments = writes.filter((a) => a.status === 200).length
    check(
      "each lead has one task and one lead.created event; one lead.enriched per enrichment",
      effects!.bad_tasks === 0 && effects!.bad_created === 0 && effects!.enriched === enrichments,
      `${effects!.bad_tasks} leads with a wrong task count, ${effects!.bad_created} with a wrong created count; ${effects!.enriched} enriched events for ${enrichments} enrichments`
    )

    const assignees = new Map<string, number>()
    for (const row of leads)
      assignees.set(row.assignee_id ?? "none", (assignees.get(row.assignee_id ?? "none") ?? 0) + 1)
    const counts = [...assignees.values()]
    check(
      "round-robin shares creations evenly",
      counts.length === 2 && Math.abs(counts[0]! - counts[1]!) <= 1,
      [...assignees.values()].join(" / ")
    )

    const logged = yield* sql<{ request_id: string }>`SELECT request_id FROM request_log`
    const loggedIds = new Set(logged.map((row) => row.request_id))
    const unlogged = answers.filter((a) => !loggedIds.has(a.requestId)).length
    check(
      "every request is in the request log once",
      unlogged === 0 && logged.length === answers.length,
      `${answers.length} requests, ${logged.length} log rows, ${unlogged} missing`
    )

    const windows = yield* sql<{ origin_id: string; over: boolean; counted: number; logged: number }>`
      SELECT w.origin_id, bool_or(w.count > o.rate_limit) AS over, sum(w.count)::int AS counted,
             (SELECT count(*)::int FROM request_log r WHERE r.origin_id = w.origin_id AND r.status NOT IN (401, 429)) AS logged
      FROM rate_limit_windows w JOIN origins o ON o.id = w.origin_id
      GROUP BY w.origin_id`
    const insane = windows.filter((w) => w.over || w.counted !== w.logged)
    check(
      "every key's windows are sane: never over its limit, and counting exactly the requests it let through",
      insane.length === 0,
      `${windows.length} origins; ${insane.length} off (${insane.map((w) => `${w.counted} counted vs ${w.logged} logged`).join(", ")})`
    )
    const [limitedWindows] = yield* sql<{ max: number; limit: number }>`
      SELECT max(w.count)::int AS max, o.rate_limit AS limit FROM rate_limit_windows w JOIN origins o ON o.id = w.origin_id
      WHERE o.label = 'limited' GROUP BY o.rate_limit`
    check(
      "the rate-limited origin reached its limit and no further",
      limitedWindows === undefined || limitedWindows.max === limitedWindows.limit,
      limitedWindows === undefined
        ? "not exercised"
        : `max ${limitedWindows.max} of ${limitedWindows.limit} per window`
    )

    const serverErrors = answers.filter((a) => a.status >= 500).length
    check("no 5xx answer", serverErrors === 0, `${serverErrors} answers 5xx`)
    return checks
  })

/** Undone in reverse order when the run fails half-way, so no server or cluster outlives it. */
const cleanups: Array<() => Promise<unknown>> = []

await main().catch(async (error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {})
  process.exit(1)
})
