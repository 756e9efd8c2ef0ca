import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Env, freePort, json, type RunningServer, run, startServer } from "../e2e/Processes.ts"
import { type Forwarder, type Pair, startForwarder, startPair, unavailable } from "./standby.ts"
import { inspector, newLead, sleep } from "./support.ts"

const clients = 12
/** A lead's retries give up this long after its first attempt. */
const giveUpAfter = 15_000
/** What the contract promises a retrying client: every lead settled this long after its first attempt. */
const settledWithin = 10_000
const backoff = [100, 200, 300, 500] as const

interface Attempt {
  readonly instance: number
  /** The origin whose key it carried. */
  readonly origin: Origin
  readonly startedAt: number
  readonly endedAt: number
  /** 0: no answer (connection refused or reset, or no answer within 8 s). */
  readonly status: number
  readonly code: string | undefined
  readonly requestId: string | undefined
  readonly leadId: string | undefined
}

/** An origin the clients send with: its id, its key and the key's visible prefix. */
interface Origin {
  readonly id: string
  readonly key: string
  readonly prefix: string
}

interface Lead {
  readonly phone: string
  readonly key: string
  /** The origin whose API key sends it. */
  readonly origin: Origin
  readonly body: Uint8Array
  readonly attempts: Array<Attempt>
}

const acknowledged = (attempt: Attempt | undefined) => attempt?.status === 201 || attempt?.status === 200
const retried = (attempt: Attempt) =>
  attempt.status === 0 ||
  attempt.status >= 500 ||
  (attempt.status === 409 && attempt.code === "idempotency_in_progress")
const digits = (phone: string) => phone.replace(/\D/g, "")
const answerName = (attempt: Attempt) =>
  attempt.status === 0
    ? "no answer"
    : `${attempt.status}${attempt.code === undefined ? "" : ` ${attempt.code}`}`
/** A lead's answers in order, repeats counted: `500 internal_error, 409 idempotency_in_progress ×20, 201`. */
const trace = (lead: Lead) =>
  lead.attempts
    .map(answerName)
    .reduce<Array<[string, number]>>((runs, name) => {
      const last = runs.at(-1)
      if (last?.[0] === name) last[1]++
      else runs.push([name, 1])
      return runs
    }, [])
    .map(([name, count]) => (count === 1 ? name : `${name} ×${count}`))
    .join(", ")
const seconds = (millis: number) => `${(millis / 1000).toFixed(2)} s`

const skipped = unavailable()

/**
 * The service through a failover as an SRE would run one: PostgreSQL with a synchronous streaming
 * standby (made with `pg_basebackup -R`), both instances' DATABASE_URL on an address that moves (a
 * TCP forwarder in this process), twelve clients retrying each lead with its Idempotency-Key; the
 * primary is stopped with `-m immediate` under that load, the standby promoted 3 s later and the
 * address moved to it. Debian's PostgreSQL binaries, so it runs on CI's server in both phases.
 * The clients take turns with two origins' keys, so the request log must file every row under the
 * origin whose key it carried, the 503s of keys that could not be checked included.
 */
describe.skipIf(skipped !== undefined)(
  `fault: failover to a synchronous standby under retrying load${skipped === undefined ? "" : ` (skipped: ${skipped})`}`,
  () => {
    let pair: Pair
    let forwarder: Forwarder
    const servers: Array<RunningServer> = []
    let origins: ReadonlyArray<Origin>
    let replication: string
    const killEverything = () => {
      pair?.releaseNow()
      for (const server of servers) void server.stop("SIGKILL")
    }

    beforeAll(async () => {
      process.once("exit", killEverything)
      pair = await startPair()
      await pair.requireSynchronousStandby()
      replication = (
        await pair.psql(pair.primary, "SELECT application_name, sync_state FROM pg_stat_replication")
      ).trim()
      forwarder = await startForwarder(pair.primary.port)
      // Info: the lines saying which keys were kept or settled, printed when a lead settles late.
      const env: Env = { DATABASE_URL: pair.url(forwarder.port), LOG_LEVEL: "Info" }
      json(await run(["migrate", "--json"], { env }))
      const organization = json(await run(["org", "create", "--name", "Failover", "--json"], { env })).id
      const createOrigin = async (label: string): Promise<Origin> => {
        const created = json(
          await run(
            [
              "origin",
              "create",
              "--org",
              organization,
              "--label",
              label,
              "--rate-limit",
              "1000000",
              "--json"
            ],
            { env }
          )
        )
        return { id: created.id, key: created.key, prefix: created.prefix }
      }
      origins = [await createOrigin("failover"), await createOrigin("failover-b")]
      const [first, second] = [await freePort(), await freePort()]
      // Both kept for afterAll even when the other one fails to start.
      const started = await Promise.allSettled([startServer(first, { env }), startServer(second, { env })])
      for (const result of started) if (result.status === "fulfilled") servers.push(result.value)
      for (const result of started) if (result.status === "rejected") throw result.reason
    }, 120_000)

    afterAll(async () => {
      await Promise.all(
        servers.map((server) =>
          Promise.race([server.stop("SIGTERM"), sleep(15_000).then(() => server.stop("SIGKILL"))])
        )
      )
      await forwarder?.close()
      await pair?.release()
      process.removeListener("exit", killEverything)
    }, 60_000)

    const post = async (instance: number, lead: Pick<Lead, "key" | "body" | "origin">): Promise<Attempt> => {
      const startedAt = performance.now()
      const answer = await fetch(`${servers[instance]!.baseUrl}/v1/leads`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${lead.origin.key}`,
          "content-type": "application/json",
          "idempotency-key": lead.key
        },
        body: lead.body,
        signal: AbortSignal.timeout(8_000)
      }).then(
        async (response) => ({
          status: response.status,
          requestId: response.headers.get("x-request-id") ?? undefined,
          body: (await response.json().catch(() => ({}))) as { lead_id?: string; error?: { code: string } }
        }),
        () => undefined
      )
      return {
        instance,
        origin: lead.origin,
        startedAt,
        endedAt: performance.now(),
        status: answer?.status ?? 0,
        code: answer?.body.error?.code,
        requestId: answer?.requestId,
        leadId: answer?.body.lead_id
      }
    }

    it("loses no acknowledged lead, duplicates none, settles every lead within 10 s and logs every answered request", async () => {
      expect(replication).toBe("standby|sync")
      const leads: Array<Lead> = []
      let loading = true
      const client = async (index: number) => {
        let turn = index
        while (loading) {
          const lead: Lead = { ...newLead("failover"), origin: origins[index % 2]!, attempts: [] }
          leads.push(lead)
          while (true) {
            const attempt = await post(turn++ % servers.length, lead)
            lead.attempts.push(attempt)
            if (!retried(attempt) || attempt.endedAt - lead.attempts[0]!.startedAt > giveUpAfter) break
            await sleep(backoff[Math.min(lead.attempts.length - 1, backoff.length - 1)]!)
          }
        }
      }
      const load = Array.from({ length: clients }, (_, index) => client(index))
      await sleep(3_000)
      const stopIssuedAt = performance.now()
      await pair.stop(pair.primary, "immediate")
      // pg_ctl has seen the postmaster gone: nothing sent from now on can commit on the old primary.
      const stoppedAt = performance.now()
      await sleep(3_000)
      await pair.promote(pair.standby)
      forwarder.switchTo(pair.standby.port)
      const switchedAt = performance.now()
      await sleep(4_000)
      loading = false
      await Promise.all(load)

      // Both instances, as they are (the same processes, never restarted): the index, and a new lead.
      const serving = await Promise.all(
        servers.map(async (server, instance) => ({
          index: (await fetch(`${server.baseUrl}/v1`)).status,
          create: await post(instance, { ...newLead("after"), origin: origins[instance % 2]! })
        }))
      )

      const db = inspector(pair.url(pair.standby.port))
      try {
        const attempts = leads.flatMap((lead) => lead.attempts)
        const answered = [...attempts, ...serving.map((check) => check.create)].filter(
          (attempt) => attempt.requestId !== undefined
        )
        // The request log is written off the answer's path and retried while the database is away.
        let logged = new Map<string, { origin_id: string | null; key_prefix: string | null }>()
        const logDeadline = performance.now() + 20_000
        while (true) {
          logged = new Map(
            (
              await db.query<{ request_id: string; origin_id: string | null; key_prefix: string | null }>(
                // a row of no origin lands in unattributed_requests
                `SELECT request_id, origin_id, key_prefix FROM logged_requests
                 UNION ALL SELECT request_id, NULL, key_prefix FROM unattributed_requests`
              )
            ).map((row) => [row.request_id, row])
          )
          if (answered.every((attempt) => logged.has(attempt.requestId!))) break
          if (performance.now() > logDeadline) break
          await sleep(500)
        }
        const unlogged = answered.filter((attempt) => !logged.has(attempt.requestId!))
        // Every row under the origin whose key the request carried, with that key's prefix.
        const misfiled = answered.flatMap((attempt) => {
          const row = logged.get(attempt.requestId!)
          return row === undefined ||
            (row.origin_id === attempt.origin.id && row.key_prefix === attempt.origin.prefix)
            ? []
            : [
                `${attempt.requestId} (${answerName(attempt)}, key ${attempt.origin.prefix}): ${row.key_prefix} under ${row.origin_id}`
              ]
        })
        const unattributed = [...logged.values()].filter((row) => row.origin_id === null).length
        const perOrigin = origins.map((origin) => {
          const sent = answered.filter((attempt) => attempt.origin === origin)
          const under = sent.filter((attempt) => logged.get(attempt.requestId!)?.origin_id === origin.id)
          const unavailable = sent.filter((attempt) => attempt.status === 503).length
          return `${origin.prefix} ${under.length} of ${sent.length} (${unavailable} answered 503)`
        })

        const stored = await db.query<{ id: string; telefono: string; notes: number }>(
          "SELECT l.id, l.telefono, (SELECT count(*)::int FROM lead_notes n WHERE n.lead_id = l.id) AS notes FROM leads l"
        )
        const byPhone = new Map<string, Array<{ id: string; notes: number }>>()
        for (const row of stored) {
          const rows = byPhone.get(digits(row.telefono)) ?? []
          rows.push({ id: row.id, notes: row.notes })
          byPhone.set(digits(row.telefono), rows)
        }

        const finals = leads.map((lead) => ({ lead, final: lead.attempts.at(-1)! }))
        const unsettled = finals.filter(({ final }) => !acknowledged(final))
        const lost = finals.filter(({ lead, final }) => {
          if (!acknowledged(final)) return false
          const rows = byPhone.get(digits(lead.phone)) ?? []
          return rows.length !== 1 || rows[0]!.id !== final.leadId
        })
        const duplicated = [...byPhone.entries()].filter(
          ([, rows]) => rows.length > 1 || rows.some((row) => row.notes !== 1)
        )
        const span = (lead: Lead) => lead.attempts.at(-1)!.endedAt - lead.attempts[0]!.startedAt
        const slowest = Math.max(...leads.map(span))
        const late = leads.filter((lead) => span(lead) > settledWithin)
        const firstCreate = Math.min(
          ...attempts
            .filter((attempt) => attempt.status === 201 && attempt.startedAt > stoppedAt)
            .map((attempt) => attempt.endedAt)
        )
        const inProgress = attempts.filter(
          (attempt) => attempt.status === 409 && attempt.code === "idempotency_in_progress"
        )
        const held = leads
          .map((lead) =>
            lead.attempts.filter(
              (attempt) => attempt.status === 409 && attempt.code === "idempotency_in_progress"
            )
          )
          .filter((answers) => answers.length > 0)
        const longestHeld = Math.max(
          0,
          ...held.map((answers) => answers.at(-1)!.endedAt - answers[0]!.startedAt)
        )
        const statuses: Record<string, number> = {}
        for (const attempt of attempts)
          statuses[answerName(attempt)] = (statuses[answerName(attempt)] ?? 0) + 1
        const logRows = (
          await db.query<{ rows: number }>(
            "SELECT ((SELECT count(*) FROM logged_requests) + (SELECT count(*) FROM unattributed_requests))::int AS rows"
          )
        )[0]!.rows

        console.log(
          `failover (${pair.version}): ${leads.length} leads, ${attempts.length} attempts ${JSON.stringify(statuses)}; ` +
            `stop to first 201 ${seconds(firstCreate - stopIssuedAt)} (switch to first 201 ${seconds(firstCreate - switchedAt)}); ` +
            `slowest lead ${seconds(slowest)} (${late.length} over ${seconds(settledWithin)}, ${unsettled.length} unsettled); ` +
            `keys held: ${inProgress.length} 409 in-progress answers on ${held.length} keys, longest ${seconds(longestHeld)}; ` +
            `request log ${logRows} rows for ${answered.length} answered POSTs (${unlogged.length} answered without a row); ` +
            `rows under their key's origin: ${perOrigin.join(", ")}; ${unattributed} unattributed`
        )

        // What the instances said about keys (and their 500s), for a late lead's diagnosis.
        if (late.length > 0 || unsettled.length > 0)
          console.log(
            servers
              .flatMap((server, instance) =>
                server.output.stdout
                  .split("\n")
                  .filter((line) =>
                    line.includes('"msg":"request"')
                      ? line.includes('"status":500')
                      : /idempotency/i.test(line)
                  )
                  .map((line) => `instance ${instance}: ${line}`)
              )
              .slice(0, 40)
              .join("\n")
          )
        for (const [instance, check] of serving.entries()) {
          expect.soft(check.index, `GET /v1 on instance ${instance}`).toBe(200)
          expect.soft(check.create.status, `a new POST on instance ${instance}`).toBe(201)
        }
        expect
          .soft(
            lost.map(({ lead, final }) => ({
              phone: lead.phone,
              leadId: final.leadId,
              stored: byPhone.get(digits(lead.phone))
            })),
            "acknowledged leads not on the new primary exactly once"
          )
          .toEqual([])
        expect.soft(duplicated, "phones stored twice, or a lead written twice (a second note)").toEqual([])
        expect
          .soft(
            unlogged.map((attempt) => `${attempt.requestId} (${attempt.status})`),
            "answered POSTs without a request-log row"
          )
          .toEqual([])
        expect.soft(misfiled, "requests not logged under the origin whose key they carried").toEqual([])
        expect.soft(unattributed, "rows of no origin (every request carried a well-formed key)").toBe(0)
        expect
          .soft(
            unsettled.map(({ lead }) => `${lead.key}: ${trace(lead)}`),
            "leads that never got a 201 or 200"
          )
          .toEqual([])
        expect
          .soft(
            late.map((lead) => `${lead.key}: ${seconds(span(lead))}, ${trace(lead)}`),
            `leads whose retries took over ${seconds(settledWithin)}`
          )
          .toEqual([])
      } finally {
        await db.close()
      }
    }, 90_000)
  }
)
