import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { verify } from "../../src/Domain/WebhookSignature.ts"
import { createDatabase, databaseUrl } from "../support/Database.ts"
import {
  cliJson,
  inProcess,
  newLead,
  postLead,
  type Receiver,
  type RunningProcess,
  runCli,
  sleep,
  startProcess,
  startReceiver,
  waitFor,
  webhookEnv
} from "./support.ts"

describe("the events partners asked for: webhook.test, lead.erased, test-event opt-in", () => {
  let env: Record<string, string>
  let db: ReturnType<typeof inProcess>
  let server: RunningProcess
  let receiver: Receiver

  beforeAll(async () => {
    const url = databaseUrl(await Effect.runPromise(createDatabase("webhook_events")))
    env = webhookEnv(url)
    db = inProcess(url)
    receiver = await startReceiver()
  }, 60_000)

  afterAll(async () => {
    await server?.stop()
    await receiver?.close()
    await db?.close()
  })

  it("sends webhook.test on demand and exactly one signed lead.erased per erasure, ids only", async () => {
    const { organization, key } = await db.provision()
    server = await startProcess("serve", env)
    const added = await cliJson(env, [
      "webhook",
      "add",
      "--org",
      organization,
      "--url",
      receiver.url(),
      "--test-events"
    ])
    expect(added).toMatchObject({
      events: ["lead.created", "lead.enriched", "lead.erased"],
      test_events: true
    })
    const createdOnly = await cliJson(env, [
      "webhook",
      "add",
      "--org",
      organization,
      "--url",
      receiver.url("/created-only"),
      "--events",
      "lead.created"
    ])
    expect(createdOnly.test_events).toBe(false)
    expect(
      (await cliJson(env, ["webhook", "list", "--org", organization])).map(
        (w: { id: string; events: Array<string>; test_events: boolean }) => [w.id, w.events, w.test_events]
      )
    ).toEqual([
      [added.id, ["lead.created", "lead.enriched", "lead.erased"], true],
      [createdOnly.id, ["lead.created"], false]
    ])

    const queued = await cliJson(env, ["webhook", "test", "--id", added.id])
    expect(queued).toEqual({ event_id: expect.any(String), type: "webhook.test", state: "pending" })
    await waitFor(() => receiver.received.length >= 1, 5_000, "the webhook.test POST")
    const test = receiver.received[0]!
    expect(test.headers["webhook-id"]).toBe(queued.event_id)
    const message = {
      id: queued.event_id,
      timestamp: Number(test.headers["webhook-timestamp"]),
      body: test.body
    }
    expect(verify(added.secret, message, test.headers["webhook-signature"] as string)).toBe(true)
    expect(JSON.parse(test.body)).toEqual({
      type: "webhook.test",
      timestamp: expect.any(String),
      livemode: true,
      data: { event_id: queued.event_id, endpoint_id: added.id, organization_id: organization }
    })
    await sleep(300)
    expect(receiver.received.map((r) => r.path)).toEqual(["/hook"])

    const person = newLead()
    const created = await postLead(server.url, key, person)
    expect(created.status).toBe(201)
    await waitFor(() => receiver.received.length >= 3, 5_000, "lead.created to both endpoints")
    receiver.received.splice(0, 3)

    const erase = (reason: string) =>
      runCli(env, [
        "lead",
        "erase",
        "--id",
        created.body.lead_id,
        "--reason",
        reason,
        "--by",
        "dpo",
        "--json"
      ])
    const first = await erase("ARCO folio 12")
    expect(first.code).toBe(0)
    const erased = JSON.parse(first.stdout)
    expect((await erase("ARCO folio 12 again")).code).toBe(0)
    await waitFor(() => receiver.received.length >= 1, 5_000, "the lead.erased POST")
    await sleep(1_000)
    expect(receiver.received).toHaveLength(1)
    const [gone] = receiver.received
    expect(gone!.path).toBe("/hook")
    expect(JSON.parse(gone!.body)).toEqual({
      type: "lead.erased",
      timestamp: erased.erased_at,
      livemode: true,
      data: {
        event_id: gone!.headers["webhook-id"],
        lead_id: created.body.lead_id,
        organization_id: organization,
        erased_at: erased.erased_at
      }
    })
    expect(gone!.body).not.toContain(person.nombre)
    expect(gone!.body).not.toContain(person.telefono)
    expect(
      verify(
        added.secret,
        {
          id: gone!.headers["webhook-id"] as string,
          timestamp: Number(gone!.headers["webhook-timestamp"]),
          body: gone!.body
        },
        gone!.headers["webhook-signature"] as string
      )
    ).toBe(true)

    const deliveries = await cliJson(env, ["webhook", "deliveries", "--id", added.id])
    expect(deliveries.map((d: { type: string; state: string }) => [d.type, d.state])).toEqual([
      ["lead.erased", "delivered"],
      ["lead.created", "delivered"],
      ["webhook.test", "delivered"]
    ])

    const unknown = await runCli(env, ["webhook", "test", "--id", crypto.randomUUID(), "--json"])
    expect(unknown.code).toBe(1)
  }, 120_000)
})
