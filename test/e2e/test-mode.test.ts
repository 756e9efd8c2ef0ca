import { beforeAll, describe, expect, it } from "vitest"
import { withSql } from "../faults/support.ts"
import {
  cliInProcess,
  type Env,
  expectUserError,
  type Finished,
  freePort,
  freshDatabaseEnv,
  json,
  postLead,
  processTimeout,
  type RunningServer,
  startServer
} from "./Processes.ts"

const isoUtc = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/

const query = (url: string, text: string, values: ReadonlyArray<unknown> = []) =>
  withSql(url, (sql) => sql.unsafe<Record<string, unknown>>(text, values)) as Promise<
    ReadonlyArray<Record<string, unknown>>
  >

/**
 * Test mode end to end (docs/contract.md#10-test-mode, docs/operators.md): the CLI's test-key rows and a real server
 * taking a test key's requests beside the live key's, on one database.
 */
describe("test-mode keys (commands in-process, `serve` as a real process, one database)", {
  timeout: processTimeout
}, () => {
  let env: Env
  let cli: (...args: ReadonlyArray<string>) => Promise<Finished>

  beforeAll(async () => {
    env = await freshDatabaseEnv()
    cli = cliInProcess(env)
    json(await cli("migrate", "--json"))
  })

  it("a test key writes test data the live side never sees; purge-test removes it; the log keeps both", async () => {
    const demo = json(await cli("demo", "--json"))
    const org = demo.organization_id as string
    const origin = demo.origin_id as string

    const issued = json(await cli("key", "create-test", "--origin", origin, "--json"))
    expect(Object.keys(issued).sort()).toEqual(["key", "prefix"])
    expect(issued.key).toMatch(/^lk_test_[0-9A-Za-z]{8}_[0-9A-Za-z]{38}$/)
    expect(issued.key.startsWith(`${issued.prefix}_`)).toBe(true)
    const replaced = json(await cli("key", "create-test", "--origin", origin, "--json"))
    expect(replaced.prefix).not.toBe(issued.prefix)
    expect(json(await cli("origin", "list", "--org", org, "--json"))).toEqual([
      {
        id: origin,
        label: expect.any(String),
        prefix: demo.prefix,
        revoked: false,
        test_prefix: replaced.prefix
      }
    ])

    // Two endpoints: only the one that opted in to test events hears of a test lead.
    const receiver = "https://93.184.215.14/leads"
    const liveOnly = json(
      await cli("webhook", "add", "--org", org, "--url", receiver, "--events", "lead.created", "--json")
    )
    const withTests = json(
      await cli(
        "webhook",
        "add",
        "--org",
        org,
        "--url",
        `${receiver}/test`,
        "--events",
        "lead.created",
        "--test-events",
        "--json"
      )
    )

    let afterLeadId = ""
    const port = await freePort()
    const server: RunningServer = await startServer(port, { env: { ...env, WEBHOOK_WORKER: "false" } })
    try {
      const lead = {
        nombre: "Prueba Pérez",
        telefono: "+52 55 4000 1234",
        propiedad: { codigo: demo.properties[0].codigo }
      }
      const headers = { "idempotency-key": "order-1" }
      const test = await postLead(server.baseUrl, lead, { key: replaced.key, headers })
      expect(test.status, JSON.stringify(test.body)).toBe(201)
      expect(Object.keys(test.body).sort()).toEqual(["lead_id", "lead_url", "request_id", "status"])
      const old = await postLead(server.baseUrl, lead, { key: issued.key })
      expect(old.status).toBe(401)
      expect(old.body.error.code).toBe("invalid_key")

      // The same phone and Idempotency-Key with the live key: a new live lead, not a replay or a match.
      const live = await postLead(server.baseUrl, lead, { key: demo.key, headers })
      expect(live.status, JSON.stringify(live.body)).toBe(201)
      expect(live.body.lead_id).not.toBe(test.body.lead_id)
      const replay = await postLead(server.baseUrl, lead, { key: replaced.key, headers })
      expect([replay.status, replay.body.lead_id, replay.body.replay]).toEqual([201, test.body.lead_id, true])

      const shown = json(await cli("lead", "show", "--id", test.body.lead_id, "--json"))
      expect(shown).toMatchObject({ livemode: false, assignee_id: null, tasks: [] })
      expect(shown.events.map((event: { type: string }) => event.type)).toEqual(["lead.created"])
      const liveShown = json(await cli("lead", "show", "--id", live.body.lead_id, "--json"))
      expect(liveShown.livemode).toBe(true)
      expect(liveShown.assignee_id).not.toBeNull()
      expect(liveShown.tasks).toHaveLength(1)

      expect(
        json(await cli("lead", "list", "--org", org, "--json")).map((l: { id: string }) => l.id)
      ).toEqual([live.body.lead_id])
      const testLeads = json(await cli("lead", "list", "--org", org, "--test", "--json"))
      expect(testLeads).toEqual([
        {
          id: test.body.lead_id,
          nombre: "Prueba Pérez",
          telefono: "+52 55 4000 1234",
          email: null,
          origin: expect.any(String),
          created_at: expect.stringMatching(isoUtc)
        }
      ])

      const events = await query(
        env.DATABASE_URL!,
        "SELECT lead_id::text, livemode FROM outbox_events WHERE organization_id = $1 ORDER BY id",
        [org]
      )
      expect(events).toEqual([
        { lead_id: test.body.lead_id, livemode: false },
        { lead_id: live.body.lead_id, livemode: true }
      ])
      const [liveOnlyDeliveries, withTestsDeliveries] = await Promise.all([
        cli("webhook", "deliveries", "--id", liveOnly.id, "--json").then(json),
        cli("webhook", "deliveries", "--id", withTests.id, "--json").then(json)
      ])
      expect(liveOnlyDeliveries).toHaveLength(1)
      expect(withTestsDeliveries).toHaveLength(2)

      const requests = json(await cli("requests", "--origin", origin, "--json"))
      expect(
        requests.map((r: { key_prefix: string; status: number; outcome: string; livemode: boolean }) => [
          r.key_prefix,
          r.status,
          r.outcome,
          r.livemode
        ])
      ).toEqual([
        [replaced.prefix, 201, "replay", false],
        [demo.prefix, 201, "created", true],
        [issued.prefix, 401, "invalid_key", false],
        [replaced.prefix, 201, "created", false]
      ])

      // Export applies to a test lead as to a live one; by phone, the live lead comes first.
      const exported = json(await cli("lead", "export", "--id", test.body.lead_id, "--json"))
      expect(exported.idempotent_replies).toEqual([
        expect.objectContaining({
          idempotency_key: "order-1",
          reply: { lead_id: test.body.lead_id, status: "created" }
        })
      ])
      const byPhone = json(await cli("lead", "export", "--org", org, "--phone", lead.telefono, "--json"))
      expect(byPhone.lead.id).toBe(live.body.lead_id)

      expect(json(await cli("lead", "purge-test", "--org", org, "--json"))).toEqual({ purged: 1 })
      expect(json(await cli("lead", "list", "--org", org, "--test", "--json"))).toEqual([])
      expect(json(await cli("lead", "list", "--org", org, "--json"))).toHaveLength(1)
      expect(json(await cli("webhook", "deliveries", "--id", withTests.id, "--json"))).toHaveLength(1)
      expect(json(await cli("requests", "--origin", origin, "--json"))).toHaveLength(4)
      expect(json(await cli("lead", "purge-test", "--org", org, "--json"))).toEqual({ purged: 0 })

      // After the purge the Idempotency-Key is free again: the test lead is written anew.
      const after = await postLead(server.baseUrl, lead, { key: replaced.key, headers })
      expect(after.status).toBe(201)
      expect(after.body.lead_id).not.toBe(test.body.lead_id)
      expect(after.body.replay).toBeUndefined()
      afterLeadId = after.body.lead_id
    } finally {
      await server.stop()
    }

    const revoked = json(await cli("key", "revoke", "--origin", origin, "--test", "--json"))
    expect(revoked).toEqual({ prefix: replaced.prefix, revoked_at: expect.stringMatching(isoUtc) })
    expect(json(await cli("origin", "list", "--org", org, "--json"))[0]).toMatchObject({
      prefix: demo.prefix,
      revoked: false,
      test_prefix: null
    })
    expectUserError(await cli("key", "revoke", "--origin", origin, "--test"), /no active test key/)
    // Erasure applies to a test lead as to a live one; its lead.erased event is a test event.
    const erased = json(
      await cli("lead", "erase", "--id", afterLeadId, "--reason", "prueba de integración", "--json")
    )
    expect(erased).toMatchObject({ id: afterLeadId, already_erased: false })
    const erasures = json(await cli("lead", "erasures", "--org", org, "--json"))
    expect(erasures.find((e: { lead_id: string }) => e.lead_id === afterLeadId)?.removed).toMatchObject({
      idempotency_keys: 1
    })
    expect(
      await query(
        env.DATABASE_URL!,
        "SELECT livemode FROM outbox_events WHERE lead_id = $1 AND type = 'lead.erased'",
        [afterLeadId]
      )
    ).toEqual([{ livemode: false }])
    const text = await cli("lead", "purge-test", "--org", org)
    expect(text.stdout).toMatch(/^Purged 1 test lead with/)
  })
})
