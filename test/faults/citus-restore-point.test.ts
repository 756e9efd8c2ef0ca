import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort, type RunningServer, startServer } from "../e2e/Processes.ts"
import {
  type Attempt,
  type CitusCluster,
  citusUnavailable,
  type Partner,
  partnersOnEveryWorker,
  postLead,
  startCitusCluster
} from "./citus-cluster.ts"
import { expectRestored } from "./restored.ts"
import { inspector, newLead, sleep } from "./support.ts"

interface Sent extends Attempt {
  readonly phone: string
  readonly key: string
  readonly body: Uint8Array
  readonly partner: Partner
}

const restorePoint = "before-the-mistake"
const skipped = citusUnavailable()

/**
 * docs/sre.md, "Point-in-time recovery on Citus: a restore point", as an SRE runs it on a cluster of
 * `.ci/citus` with every node archiving its WAL: a base backup of every node (`pg_basebackup`),
 * partners on both workers sending leads through `serve` while `citus_create_restore_point` runs on
 * the coordinator, more leads after it, and every node restored in a new data directory from its
 * backup and its own archive to that name (`recovery_target_name`), on its own port. The service
 * started on the restored cluster serves every lead acknowledged before the restore point was asked
 * for, each with its note, task, outbox event, completed Idempotency-Key and request-log row, none
 * sent after it answered, and nothing half-present.
 */
describe.skipIf(skipped !== undefined)(
  `point-in-time recovery of a Citus cluster to a restore point${skipped === undefined ? "" : ` (skipped: ${skipped})`}`,
  () => {
    let cluster: CitusCluster
    let partners: ReadonlyArray<Partner>
    const services: Array<RunningServer> = []
    const killEverything = () => {
      cluster?.releaseNow()
      for (const service of services) void service.stop("SIGKILL")
    }

    beforeAll(async () => {
      process.once("exit", killEverything)
      const startedAt = performance.now()
      cluster = await startCitusCluster({ archive: true })
      console.log(
        `cluster of its own (.ci/citus start) up in ${((performance.now() - startedAt) / 1000).toFixed(1)} s`
      )
      partners = await partnersOnEveryWorker(cluster)
      await cluster.baseBackups()
      services.push(await startServer(await freePort(), { env: { DATABASE_URL: cluster.url } }))
    }, 300_000)

    afterAll(async () => {
      await Promise.all(services.map((service) => service.stop("SIGTERM")))
      await cluster?.release()
      process.removeListener("exit", killEverything)
    }, 60_000)

    const send = async (
      service: RunningServer,
      partner: Partner,
      lead: { readonly phone: string; readonly key: string; readonly body: Uint8Array } = newLead(
        "citus-pitr"
      )
    ): Promise<Sent> => ({
      ...lead,
      partner,
      ...(await postLead(service.baseUrl, partner, lead))
    })

    it("restores every node to the restore point: every lead acknowledged before it, none sent after, nothing half-present", async () => {
      const live = services[0]!
      const sent: Array<Sent> = []
      let point: { readonly lsn: string; readonly askedAt: number; readonly answeredAt: number } | undefined
      const after = () => sent.filter((lead) => point !== undefined && lead.startedAt > point.answeredAt)
      // Four lanes, two per partner: both workers take writes while the restore point is made.
      const lane = async (partner: Partner) => {
        while (after().length < 24) {
          const answer = await send(live, partner)
          expect(answer.status, "a create on the live cluster").toBe(201)
          sent.push(answer)
        }
      }
      const db = inspector(cluster.url)
      const createRestorePoint = async () => {
        while (sent.length < 24) await sleep(50)
        // The request log is written off the answer's path, in batches: the restore point is made
        // once the first leads' rows are in, so that those at least must come back with it.
        const first = sent.map((lead) => lead.requestId!)
        for (let waited = 0; ; waited += 100) {
          const [row] = await db.query<{ logged: number }>(
            "SELECT count(*)::int AS logged FROM logged_requests WHERE request_id = ANY($1)",
            [first]
          )
          if (row!.logged === first.length) break
          if (waited > 20_000)
            throw new Error(`request log: ${row!.logged} of ${first.length} rows after 20 s`)
          await sleep(100)
        }
        const askedAt = performance.now()
        // As the runbook: a superuser on the coordinator, in the service's database.
        const lsn = (
          await cluster.psql(cluster.coordinator.port, `SELECT citus_create_restore_point('${restorePoint}')`)
        ).trim()
        point = { lsn, askedAt, answeredAt: performance.now() }
        return first
      }
      const [firstLogged] = await Promise.all([
        createRestorePoint(),
        ...partners.flatMap((partner) => [lane(partner), lane(partner)])
      ])
      await db.close()
      const made = point!
      const before = sent.filter((lead) => lead.endedAt < made.askedAt)
      const straddling = sent.filter(
        (lead) => lead.endedAt >= made.askedAt && lead.startedAt <= made.answeredAt
      )
      const later = after()
      for (const partner of partners)
        expect(
          before.filter((lead) => lead.partner === partner).length,
          `leads of ${partner.worker.name}'s partner acknowledged before the restore point`
        ).toBeGreaterThan(0)

      await services[0]!.stop("SIGTERM")
      // Every node's restore point (and what followed) into its archive, then the cluster is lost.
      await cluster.archiveCurrentSegments()
      for (const node of [cluster.coordinator, ...cluster.workers]) await cluster.stop(node, "immediate")
      const restoreStartedAt = performance.now()
      await cluster.restoreToName(restorePoint)
      const restoredIn = performance.now() - restoreStartedAt

      const check = inspector(cluster.url)
      try {
        // The request log: every row written before the restore point was asked for (the service
        // had flushed them) is there.
        await expectRestored(check, {
          sent,
          before,
          later,
          logged: firstLogged,
          moment: "the restore point",
          name: (lead) => `${lead.partner.worker.name} ${lead.key}`,
          read: ({ leads, keys, rows, restored }) =>
            console.log(
              `Citus restore point (${sent.length} leads acknowledged by 2 partners, one per worker): ` +
                `${before.length} before citus_create_restore_point was asked for, ${straddling.length} in flight while it ran ` +
                `(${(made.answeredAt - made.askedAt).toFixed(0)} ms), ${later.length} after; restored 3 nodes in ` +
                `${(restoredIn / 1000).toFixed(1)} s: ${leads} leads (${restored.length - before.length} of those in flight), ` +
                `${keys} keys, ${rows} request-log rows`
            )
        })
      } finally {
        await check.close()
      }

      // The service on the restored cluster: a restored key answers its lead again, on both
      // workers; a key sent after the restore point is not known, so it creates its lead anew.
      const service = await startServer(await freePort(), { env: { DATABASE_URL: cluster.url } })
      services.push(service)
      for (const partner of partners) {
        for (const lead of before.filter((lead) => lead.partner === partner).slice(0, 2)) {
          const replay = await send(service, partner, lead)
          expect([replay.status, replay.leadId, replay.replay], `the key ${lead.key} again`).toEqual([
            201,
            lead.leadId,
            true
          ])
        }
        for (const lead of later.filter((lead) => lead.partner === partner).slice(0, 2)) {
          const again = await send(service, partner, lead)
          expect(again.status, `the key ${lead.key}, sent after the restore point`).toBe(201)
          expect(again.leadId).not.toBe(lead.leadId)
        }
      }
    }, 150_000)
  }
)
