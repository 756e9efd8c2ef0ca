import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { WebhookDeliveries } from "../../src/Webhooks/Deliveries.ts"
import { cliIn, type Ran } from "../support/Cli.ts"
import { createDatabase, databaseUrl } from "../support/Database.ts"
import { inProcess } from "../webhooks/support.ts"

/** `webhook disable` and `webhook enable` on PostgreSQL: the endpoint's state, its waiting deliveries, the audit trail. */
describe("webhook disable / enable (the CLI, on PostgreSQL)", { timeout: 120_000 }, () => {
  let cli: (...args: ReadonlyArray<string>) => Promise<Ran>
  let db: ReturnType<typeof inProcess>
  let org: string
  let endpoint: string

  const ok = async (...args: ReadonlyArray<string>) => {
    const ran = await cli(...args)
    expect(ran.ok, ran.err.join("\n")).toBe(true)
    return ran.out
  }

  beforeAll(async () => {
    const url = databaseUrl(await Effect.runPromise(createDatabase()))
    cli = cliIn({ DATABASE_URL: url, LOG_LEVEL: "Error", WEBHOOK_ALLOW_PRIVATE: "true", USER: "ana" })
    await ok("migrate")
    org = JSON.parse(await ok("org", "create", "--name", "Pausa", "--json")).id
    endpoint = JSON.parse(
      await ok("webhook", "add", "--org", org, "--url", "http://127.0.0.1:9/hook", "--json")
    ).id
    db = inProcess(url)
  }, 120_000)

  afterAll(async () => {
    await db?.close()
  })

  const audit = () =>
    db.sql<{ action: string; operator_email: string; target: string; organization_id: string }>(
      (sql) => sql`
        SELECT action, operator_email, target, organization_id FROM audit_log
        WHERE action LIKE 'webhook.%' ORDER BY id`
    )

  it("disables: listed as disabled by an operator, new events wait, audited with who did it", async () => {
    expect(JSON.parse(await ok("webhook", "disable", "--id", endpoint, "--by", "beto", "--json"))).toEqual({
      id: endpoint,
      disabled: true,
      disabled_reason: "operator"
    })
    const [listed] = JSON.parse(await ok("webhook", "list", "--org", org, "--json"))
    expect([listed.disabled, listed.disabled_reason]).toEqual([true, "operator"])
    expect(await ok("webhook", "list", "--org", org)).toContain("yes (operator)")
    // An event for it while it is disabled: queued, and not claimed.
    const queued = JSON.parse(await ok("webhook", "test", "--id", endpoint, "--json"))
    const claimed = await db.run(
      WebhookDeliveries.use((d) =>
        d.claim({ limit: 10, perEndpoint: 10, excludeEndpoints: [], leaseMillis: 1 })
      )
    )
    expect(claimed.filter((c) => c.endpointId === endpoint)).toEqual([])
    expect((await db.deliveries(endpoint)).map((d) => [d.event_id, d.state])).toEqual([
      [queued.event_id, "pending"]
    ])
    expect(await audit()).toEqual([
      {
        action: "webhook.disable",
        operator_email: "cli:beto",
        target: `webhook ${endpoint} http://127.0.0.1:9/hook`,
        organization_id: org
      }
    ])
  })

  it("enables: the waiting delivery is claimed again; audited as the OS user without --by", async () => {
    expect(await ok("webhook", "enable", "--id", endpoint)).toBe(`Webhook ${endpoint} is enabled`)
    const claimed = await db.run(
      WebhookDeliveries.use((d) =>
        d.claim({ limit: 10, perEndpoint: 10, excludeEndpoints: [], leaseMillis: 1 })
      )
    )
    expect(claimed.map((c) => c.endpointId)).toEqual([endpoint])
    expect((await audit()).map((row) => [row.action, row.operator_email])).toEqual([
      ["webhook.disable", "cli:beto"],
      ["webhook.enable", expect.stringMatching(/^cli:./)]
    ])
  })

  it("prints one line for a person, and refuses an unknown or malformed id with one line", async () => {
    expect(await ok("webhook", "disable", "--id", endpoint)).toBe(
      `Webhook ${endpoint} is disabled; its deliveries wait for \`webhook enable --id ${endpoint}\``
    )
    const unknown = await cli("webhook", "disable", "--id", crypto.randomUUID())
    expect([unknown.ok, unknown.err.length]).toEqual([false, 1])
    expect(unknown.err[0]).toMatch(/webhook .* not found|unknown webhook/i)
    const malformed = await cli("webhook", "enable", "--id", "nope")
    expect([malformed.ok, malformed.err.length]).toEqual([false, 1])
    expect(malformed.err[0]).toContain("--id")
  })
})
