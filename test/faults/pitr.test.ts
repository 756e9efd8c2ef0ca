import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Env, freePort, json, type RunningServer, runInProcess, startServer } from "../e2e/Processes.ts"
import { type ArchivingServer, startArchivingServer } from "./archive.ts"
import { expectRestored } from "./restored.ts"
import { unavailable } from "./standby.ts"
import { inspector, newLead, sleep } from "./support.ts"

interface Sent {
  readonly phone: string
  readonly key: string
  readonly body: Uint8Array
  readonly startedAt: number
  readonly endedAt: number
  readonly status: number
  readonly requestId: string | undefined
  readonly leadId: string | undefined
}

const skipped = unavailable()

/**
 * docs/sre.md, "Point-in-time recovery", as an SRE runs it on one PostgreSQL (Debian's, as
 * `.ci/postgres` runs it): WAL archived by `archive_command`, a base backup by `pg_basebackup`,
 * leads sent through the service before and after a time read from the server's clock, and the
 * backup restored in a new data directory to that time (`recovery_target_time`). The service started
 * on the restored server serves exactly the leads acknowledged before the time, each with its note,
 * task, outbox event, completed Idempotency-Key and request-log row, and none sent after it.
 */
describe.skipIf(skipped !== undefined)(
  `point-in-time recovery of one PostgreSQL${skipped === undefined ? "" : ` (skipped: ${skipped})`}`,
  () => {
    let server: ArchivingServer
    let backup: string
    const services: Array<RunningServer> = []
    let key: string
    const killEverything = () => {
      server?.releaseNow()
      for (const service of services) void service.stop("SIGKILL")
    }

    beforeAll(async () => {
      process.once("exit", killEverything)
      server = await startArchivingServer()
      const env: Env = { DATABASE_URL: server.url(server.port) }
      json(await runInProcess(["migrate", "--json"], env))
      const organization = json(await runInProcess(["org", "create", "--name", "PITR", "--json"], env)).id
      key = json(
        await runInProcess(
          ["origin", "create", "--org", organization, "--label", "pitr", "--rate-limit", "1000000", "--json"],
          env
        )
      ).key
      backup = await server.baseBackup()
      services.push(await startServer(await freePort(), { env }))
    }, 120_000)

    afterAll(async () => {
      await Promise.all(services.map((service) => service.stop("SIGTERM")))
      await server?.release()
      process.removeListener("exit", killEverything)
    }, 60_000)

    const post = async (
      service: RunningServer,
      lead: { readonly phone: string; readonly key: string; readonly body: Uint8Array }
    ): Promise<Sent> => {
      const startedAt = performance.now()
      const response = await fetch(`${service.baseUrl}/v1/leads`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${key}`,
          "content-type": "application/json",
          "idempotency-key": lead.key
        },
        body: lead.body
      })
      const body = (await response.json()) as { lead_id?: string; replay?: boolean }
      return {
        ...lead,
        startedAt,
        endedAt: performance.now(),
        status: response.status,
        requestId: response.headers.get("x-request-id") ?? undefined,
        leadId: body.lead_id
      }
    }

    it("restores to a recorded time: every lead acknowledged before it, none sent after, with their keys and request-log rows", async () => {
      const live = services[0]!
      const sent: Array<Sent> = []
      // The time is read while four lanes send: the leads in flight then may land on either side.
      let target: { readonly text: string; readonly askedAt: number; readonly answeredAt: number } | undefined
      const after = () => sent.filter((lead) => target !== undefined && lead.startedAt > target.answeredAt)
      const lane = async () => {
        while (after().length < 24) {
          const answer = await post(live, newLead("pitr"))
          expect(answer.status, "a create on the live server").toBe(201)
          sent.push(answer)
        }
      }
      const db = inspector(server.url(server.port))
      const recordTarget = async () => {
        while (sent.length < 24) await sleep(50)
        // The request log is written off the answer's path: the time is read once the first leads'
        // rows are in, so that those at least must come back with it.
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
        const text = (await server.psql(server.port, "SELECT clock_timestamp()")).trim()
        target = { text, askedAt, answeredAt: performance.now() }
        return first
      }
      const [firstLogged] = await Promise.all([recordTarget(), lane(), lane(), lane(), lane()])
      await db.close()
      const recorded = target!
      const before = sent.filter((lead) => lead.endedAt < recorded.askedAt)
      const straddling = sent.filter(
        (lead) => lead.endedAt >= recorded.askedAt && lead.startedAt <= recorded.answeredAt
      )
      const later = after()

      await server.archiveCurrentSegment()
      await services[0]!.stop("SIGTERM")
      // The primary is lost; the backup and the archive are what is left.
      await server.stop("immediate")
      const restored = await server.restoreToTime(backup, recorded.text)

      const check = inspector(server.url(restored.port))
      let restoredSent: ReadonlyArray<Sent> = []
      try {
        restoredSent = await expectRestored(check, {
          sent,
          before,
          later,
          logged: firstLogged,
          moment: "the target",
          read: ({ leads, keys, rows, restored }) =>
            console.log(
              `point-in-time recovery (${server.version}): ${sent.length} leads acknowledged, target ${recorded.text}; ` +
                `${before.length} before it, ${straddling.length} in flight when it was read, ${later.length} after; ` +
                `restored ${leads} leads (${restored.length - before.length} of those in flight), ` +
                `${keys} keys, ${rows} request-log rows`
            )
        })
      } finally {
        await check.close()
      }

      // The service on the restored server: every restored key answers its lead again; a lead sent
      // after the target is not known, so its key creates it anew.
      const service = await startServer(await freePort(), {
        env: { DATABASE_URL: server.url(restored.port) }
      })
      services.push(service)
      for (const lead of restoredSent.slice(0, 5)) {
        const replay = await post(service, lead)
        expect([replay.status, replay.leadId], `the key ${lead.key} again`).toEqual([201, lead.leadId])
      }
      for (const lead of later.slice(0, 3)) {
        const again = await post(service, lead)
        expect(again.status, `the key ${lead.key}, sent after the target`).toBe(201)
        expect(again.leadId).not.toBe(lead.leadId)
      }
    }, 150_000)
  }
)
