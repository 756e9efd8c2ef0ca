import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort, type RunningServer, startServer } from "../e2e/Processes.ts"
import {
  type Attempt,
  type CitusCluster,
  type CitusNode,
  citusUnavailable,
  type Partner,
  partnersOnEveryWorker,
  postLead,
  startCitusCluster
} from "./citus-cluster.ts"
import { inspector, newLead, sleep } from "./support.ts"

/** Clients per partner, each sending one lead at a time and retrying it with its Idempotency-Key. */
const clientsPerPartner = 3
/** A lead's retries give up this long after its first attempt. */
const giveUpAfter = 40_000
/** Between a lead's retries: quicker than the 503's `Retry-After: 5`, as an impatient partner retries. */
const backoff = [100, 200, 300, 500, 1_000] as const

interface Lead {
  readonly phone: string
  readonly key: string
  readonly body: Uint8Array
  readonly partner: Partner
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
const tally = (attempts: ReadonlyArray<Attempt>) => {
  const counts: Record<string, number> = {}
  for (const attempt of attempts) counts[answerName(attempt)] = (counts[answerName(attempt)] ?? 0) + 1
  return JSON.stringify(counts)
}
const took = (attempt: Attempt) => attempt.endedAt - attempt.startedAt
const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted.length === 0
    ? Number.NaN
    : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!
}
const times = (attempts: ReadonlyArray<Attempt>) =>
  `median ${percentile(attempts.map(took), 0.5).toFixed(0)} ms, p95 ${percentile(attempts.map(took), 0.95).toFixed(0)} ms, ` +
  `max ${Math.max(...attempts.map(took)).toFixed(0)} ms`
const seconds = (millis: number) => `${(millis / 1000).toFixed(2)} s`
const address = (node: CitusNode) => `127.0.0.1:${node.port}`

interface Probe {
  readonly at: number
  readonly status: number
  readonly nodes: Record<string, string> | undefined
}

const skipped = citusUnavailable()

/**
 * docs/sre.md, "Losing a node (Citus)", on a cluster of `.ci/citus` of the file's own: a partner on
 * each worker, its clients sending leads through `serve` and retrying each with its Idempotency-Key,
 * while one worker is stopped with `pg_ctl stop -m immediate`. First the worker comes back after
 * 10 s (`pg_ctl start`); then it is lost for good and its synchronous streaming standby is promoted
 * (`pg_ctl promote`) and the coordinator pointed at it (`citus_update_node`), as Patroni does. The
 * same `serve` throughout, never restarted.
 */
describe.skipIf(skipped !== undefined)(
  `fault: a Citus worker lost under retrying load${skipped === undefined ? "" : ` (skipped: ${skipped})`}`,
  () => {
    let cluster: CitusCluster
    let healthy: Partner
    let lost: Partner
    let service: RunningServer
    let healthPort: number
    const everyLead: Array<Lead> = []
    const killEverything = () => {
      cluster?.releaseNow()
      void service?.stop("SIGKILL")
    }

    beforeAll(async () => {
      process.once("exit", killEverything)
      const startedAt = performance.now()
      cluster = await startCitusCluster({ archive: false })
      console.log(
        `cluster of its own (.ci/citus start) up in ${((performance.now() - startedAt) / 1000).toFixed(1)} s`
      )
      ;[healthy, lost] = (await partnersOnEveryWorker(cluster)) as [Partner, Partner]
      healthPort = await freePort()
      service = await startServer(await freePort(), {
        env: { DATABASE_URL: cluster.url, HEALTH_PORT: String(healthPort) }
      })
    }, 300_000)

    afterAll(async () => {
      await service?.stop("SIGTERM")
      await cluster?.release()
      process.removeListener("exit", killEverything)
    }, 60_000)

    /** The clients, sending until `stop`; each then settles its last lead (or gives up on it). */
    const startLoad = () => {
      const leads: Array<Lead> = []
      let loading = true
      const client = async (partner: Partner) => {
        while (loading) {
          const lead: Lead = { ...newLead(partner.worker.name), partner, attempts: [] }
          leads.push(lead)
          everyLead.push(lead)
          while (true) {
            const attempt = await postLead(service.baseUrl, partner, lead)
            lead.attempts.push(attempt)
            if (!retried(attempt) || attempt.endedAt - lead.attempts[0]!.startedAt > giveUpAfter) break
            await sleep(backoff[Math.min(lead.attempts.length - 1, backoff.length - 1)]!)
          }
        }
      }
      const clients = [healthy, lost].flatMap((partner) =>
        Array.from({ length: clientsPerPartner }, () => client(partner))
      )
      return {
        leads,
        stop: async () => {
          loading = false
          await Promise.all(clients)
        }
      }
    }

    /** `/readyz` on the health listener every 250 ms until `stop`. */
    const startProbing = () => {
      const probes: Array<Probe> = []
      let probing = true
      const loop = (async () => {
        while (probing) {
          const at = performance.now()
          const probe = await fetch(`http://127.0.0.1:${healthPort}/readyz`, {
            signal: AbortSignal.timeout(5_000)
          }).then(
            async (response) => ({
              at,
              status: response.status,
              nodes: ((await response.json()) as { nodes?: Record<string, string> }).nodes
            }),
            () => ({ at, status: 0, nodes: undefined })
          )
          probes.push(probe)
          await sleep(250)
        }
      })()
      return {
        probes,
        stop: async () => {
          probing = false
          await loop
        }
      }
    }

    /**
     * What the lost worker's partner may be answered: 201/200, or 503 with `Retry-After` (nothing
     * written); 500 only for a write in flight when the worker stopped (its outcome could not be
     * asked for), and 409 `idempotency_in_progress` only for the retries of such a lead.
     */
    const unexplained = (
      leads: ReadonlyArray<Lead>,
      stop: { readonly issuedAt: number; readonly doneAt: number }
    ) =>
      leads
        .filter((lead) => lead.partner === lost)
        .flatMap((lead) =>
          lead.attempts.flatMap((attempt, index) => {
            const inFlightAtStop = attempt.startedAt < stop.doneAt && attempt.endedAt > stop.issuedAt
            const afterA500 = lead.attempts.slice(0, index).some((earlier) => earlier.status === 500)
            const fine =
              acknowledged(attempt) ||
              (attempt.status === 503 && attempt.retryAfter !== undefined) ||
              (attempt.status === 500 && inFlightAtStop) ||
              (attempt.status === 409 && attempt.code === "idempotency_in_progress" && afterA500)
            return fine
              ? []
              : [
                  `${lead.key} attempt ${index + 1}: ${answerName(attempt)} (Retry-After ${attempt.retryAfter ?? "none"})`
                ]
          })
        )

    /** Leads whose attempts before their first 201/200 were all 503 and whose 201/200 is a replay: a 503 that wrote. */
    const writtenBy503 = (leads: ReadonlyArray<Lead>) =>
      leads.filter((lead) => {
        const first = lead.attempts.findIndex(acknowledged)
        const earlier = lead.attempts.slice(0, Math.max(0, first))
        return first > 0 && earlier.every((attempt) => attempt.status === 503) && lead.attempts[first]!.replay
      })

    /**
     * What both cases assert of every lead's answers: none the contract does not allow, no 503 that
     * wrote, and every lead's retries settled with a 201/200.
     */
    const expectAnswersSettled = (
      leads: ReadonlyArray<Lead>,
      stop: { readonly issuedAt: number; readonly doneAt: number }
    ) => {
      expect.soft(unexplained(leads, stop), "answers the contract does not allow").toEqual([])
      expect
        .soft(
          writtenBy503(leads).map((lead) => lead.key),
          "leads a 503 wrote (their first 2xx a replay)"
        )
        .toEqual([])
      expect
        .soft(
          leads
            .filter((lead) => !acknowledged(lead.attempts.at(-1)))
            .map((lead) => `${lead.key}: ${lead.attempts.map(answerName).join(", ")}`),
          "leads whose retries did not settle"
        )
        .toEqual([])
    }

    /**
     * The answered requests without a request-log row once the worker is back (or replaced): the
     * batches that touched it waited in the instance's queue. Waits up to 20 s for the queue.
     */
    const unlogged = async (leads: ReadonlyArray<Lead>) => {
      const answered = leads.flatMap((lead) => lead.attempts).flatMap((attempt) => attempt.requestId ?? [])
      const db = inspector(cluster.url)
      try {
        for (let waited = 0; ; waited += 250) {
          const logged = new Set(
            (
              await db.query<{ request_id: string }>(
                `SELECT request_id FROM logged_requests WHERE request_id = ANY($1)
                 UNION ALL SELECT request_id FROM unattributed_requests WHERE request_id = ANY($1)`,
                [answered]
              )
            ).map((row) => row.request_id)
          )
          const missing = answered.filter((requestId) => !logged.has(requestId))
          if (missing.length === 0 || waited >= 20_000) return { answered: answered.length, missing, waited }
          await sleep(250)
        }
      } finally {
        await db.close()
      }
    }

    /** Every acknowledged lead exactly once on the cluster, with the id it was acknowledged with and one note. */
    const notStoredOnce = async (leads: ReadonlyArray<Lead>) => {
      const db = inspector(cluster.url)
      try {
        const stored = await db.query<{ id: string; telefono: string; notes: number }>(
          `SELECT l.id, l.telefono,
             (SELECT count(*)::int FROM lead_notes n WHERE n.organization_id = l.organization_id AND n.lead_id = l.id) AS notes
           FROM leads l`
        )
        const byPhone = new Map<string, Array<{ id: string; notes: number }>>()
        for (const row of stored)
          byPhone.set(digits(row.telefono), [...(byPhone.get(digits(row.telefono)) ?? []), row])
        return leads.flatMap((lead) => {
          const final = lead.attempts.at(-1)
          if (!acknowledged(final)) return []
          const rows = byPhone.get(digits(lead.phone)) ?? []
          return rows.length === 1 && rows[0]!.id === final!.leadId && rows[0]!.notes === 1
            ? []
            : [
                `${lead.partner.worker.name} ${lead.key}: acknowledged ${final!.leadId}, stored ${JSON.stringify(rows)}`
              ]
        })
      } finally {
        await db.close()
      }
    }

    /** The service's log lines from `offset` (of its stdout) on that mention `text`. */
    const logLinesSince = (offset: number, text: string) =>
      service.output.stdout
        .slice(offset)
        .split("\n")
        .filter((line) => line.includes(text))

    /** What the service said about the keys of writes whose outcome it did not know (the 500s). */
    const printKeysKept = (offset: number) => {
      const kept = logLinesSince(offset, "idempotency key")
      if (kept.length > 0) console.log(kept.slice(0, 6).join("\n"))
    }

    it("stopped for 10 s and started again: the other worker's partner served, the lost one's answered 503 and settled after, nothing lost", async () => {
      const worker = lost.worker
      const logFrom = service.output.stdout.length
      const load = startLoad()
      const probing = startProbing()
      await sleep(3_000)
      const issuedAt = performance.now()
      await cluster.stop(worker, "immediate")
      const doneAt = performance.now()
      await sleep(10_000)
      const restartIssuedAt = performance.now()
      await cluster.start(worker)
      const restartedAt = performance.now()
      await sleep(5_000)
      await load.stop()
      await sleep(500)
      await probing.stop()

      const attempts = (partner: Partner) =>
        load.leads.filter((lead) => lead.partner === partner).flatMap((lead) => lead.attempts)
      const during = (partner: Partner) =>
        attempts(partner).filter(
          (attempt) => attempt.startedAt >= doneAt && attempt.endedAt <= restartIssuedAt
        )
      const healthyDuring = during(healthy)
      const lostDuring = during(lost)
      const healthyBefore = attempts(healthy).filter((attempt) => attempt.endedAt < issuedAt)
      const servedShare = healthyDuring.filter(acknowledged).length / healthyDuring.length
      const firstBack = Math.min(
        ...attempts(lost)
          .filter((attempt) => acknowledged(attempt) && attempt.startedAt >= restartIssuedAt)
          .map((attempt) => attempt.endedAt)
      )
      const outageProbes = probing.probes.filter((probe) => probe.at >= doneAt && probe.at <= restartIssuedAt)
      const unreachableProbes = outageProbes.filter(
        (probe) => probe.nodes?.[address(worker)] === "unreachable"
      )
      const lastProbe = probing.probes.at(-1)
      const logLines = logLinesSince(logFrom, "database node unreachable")
      console.log(
        `Citus worker stopped for ${seconds(restartIssuedAt - doneAt)} (pg_ctl stop -m immediate took ${seconds(doneAt - issuedAt)}, ` +
          `pg_ctl start ${seconds(restartedAt - restartIssuedAt)}): ${load.leads.length} leads; ` +
          `the other worker's partner during the outage ${tally(healthyDuring)} (${(servedShare * 100).toFixed(1)} % 2xx; ` +
          `${times(healthyDuring)}; before it ${times(healthyBefore)}); ` +
          `the lost worker's partner during the outage ${tally(lostDuring)} (${times(lostDuring)}), in all ${tally(attempts(lost))}; ` +
          `its first 201/200 ${seconds(firstBack - restartIssuedAt)} after pg_ctl start was issued; ` +
          `/readyz ${outageProbes.length} probes during the outage, ${unreachableProbes.length} listing the worker unreachable, ` +
          `statuses ${[...new Set(probing.probes.map((probe) => probe.status))].join(",")}, last ${JSON.stringify(lastProbe?.nodes)}; ` +
          `${logLines.length} "database node unreachable" log lines`
      )
      if (logLines[0] !== undefined) console.log(logLines[0])
      printKeysKept(logFrom)

      expect
        .soft(healthyDuring.length, "the other worker's partner sent during the outage")
        .toBeGreaterThan(10)
      expect
        .soft(servedShare, "share of 2xx of the other worker's partner during the outage")
        .toBeGreaterThanOrEqual(0.95)
      expect.soft(lostDuring.length, "the lost worker's partner sent during the outage").toBeGreaterThan(5)
      expect
        .soft(
          lostDuring
            .filter((attempt) => attempt.status !== 503 || attempt.retryAfter === undefined)
            .filter((attempt) => attempt.code !== "idempotency_in_progress")
            .map(answerName),
          "the lost worker's partner during the outage: anything but 503 with Retry-After (or 409 after a 500)"
        )
        .toEqual([])
      expectAnswersSettled(load.leads, { issuedAt, doneAt })
      expect.soft(await notStoredOnce(load.leads), "acknowledged leads not stored exactly once").toEqual([])
      const log = await unlogged(load.leads)
      console.log(
        `request log: ${log.answered} answered requests, ${log.missing.length} without a row ${seconds(log.waited)} after the load`
      )
      expect.soft(log.missing, "answered requests without a request-log row").toEqual([])
      expect
        .soft(unreachableProbes.length, "/readyz listing the worker unreachable during the outage")
        .toBeGreaterThan(0)
      expect
        .soft(probing.probes.filter((probe) => probe.status !== 200).length, "/readyz answers other than 200")
        .toBe(0)
      expect.soft(lastProbe?.nodes, "/readyz once the worker is back").toEqual({
        [address(healthy.worker)]: "ok",
        [address(worker)]: "ok"
      })
      expect
        .soft(
          logLines.filter((line) => line.includes(`"database_node":"${address(worker)}"`)).length,
          "log lines naming the node"
        )
        .toBeGreaterThan(0)
    }, 90_000)

    it("lost for good: its synchronous standby promoted and the coordinator pointed at it (citus_update_node) serve its partner again, nothing acknowledged lost", async () => {
      const worker = lost.worker
      const standby = await cluster.synchronousStandby(worker)
      const logFrom = service.output.stdout.length
      const load = startLoad()
      const probing = startProbing()
      await sleep(3_000)
      const issuedAt = performance.now()
      await cluster.stop(worker, "immediate")
      const doneAt = performance.now()
      // What Patroni or pg_auto_failover does once it has seen the worker gone (here 3 s later).
      await sleep(3_000)
      const promoteIssuedAt = performance.now()
      await cluster.promote(standby)
      const promotedAt = performance.now()
      await cluster.psql(
        cluster.coordinator.port,
        `SELECT citus_update_node(nodeid, '127.0.0.1', ${standby.port}) FROM pg_dist_node
         WHERE nodename = '127.0.0.1' AND nodeport = ${worker.port}`
      )
      const switchedAt = performance.now()
      await sleep(5_000)
      await load.stop()
      await sleep(500)
      await probing.stop()

      const attempts = (partner: Partner) =>
        load.leads.filter((lead) => lead.partner === partner).flatMap((lead) => lead.attempts)
      const healthyDuring = attempts(healthy).filter(
        (attempt) => attempt.startedAt >= doneAt && attempt.endedAt <= switchedAt
      )
      const servedShare = healthyDuring.filter(acknowledged).length / healthyDuring.length
      const firstBack = Math.min(
        ...attempts(lost)
          .filter((attempt) => acknowledged(attempt) && attempt.startedAt >= doneAt)
          .map((attempt) => attempt.endedAt)
      )
      const lastProbe = probing.probes.at(-1)
      console.log(
        `Citus worker lost, standby promoted: pg_ctl promote ${seconds(promotedAt - promoteIssuedAt)}, citus_update_node ` +
          `${seconds(switchedAt - promotedAt)}; ${load.leads.length} leads; the other worker's partner until the switch ` +
          `${tally(healthyDuring)} (${(servedShare * 100).toFixed(1)} % 2xx, ${times(healthyDuring)}); the lost worker's partner ` +
          `${tally(attempts(lost))}, its first 201/200 ${seconds(firstBack - switchedAt)} after citus_update_node answered ` +
          `(${seconds(firstBack - doneAt)} after the stop); /readyz last ${JSON.stringify(lastProbe?.nodes)}`
      )
      printKeysKept(logFrom)

      expect
        .soft(servedShare, "share of 2xx of the other worker's partner until the switch")
        .toBeGreaterThanOrEqual(0.95)
      expectAnswersSettled(load.leads, { issuedAt, doneAt })
      expect
        .soft(firstBack, "a 201/200 for the lost worker's partner after the switch")
        .toBeGreaterThan(switchedAt)
      // Both cases' leads: what the old worker acknowledged is on the promoted standby.
      expect.soft(await notStoredOnce(everyLead), "acknowledged leads not stored exactly once").toEqual([])
      const log = await unlogged(load.leads)
      console.log(
        `request log: ${log.answered} answered requests, ${log.missing.length} without a row ${seconds(log.waited)} after the load`
      )
      expect.soft(log.missing, "answered requests without a request-log row").toEqual([])
      expect.soft(lastProbe?.nodes, "/readyz after the switch").toEqual({
        [address(healthy.worker)]: "ok",
        [address(standby)]: "ok"
      })
      expect
        .soft(probing.probes.filter((probe) => probe.status !== 200).length, "/readyz answers other than 200")
        .toBe(0)
    }, 90_000)
  }
)
