import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { generateApiKey } from "../../src/Domain/ApiKey.ts"
import {
  cliFor,
  type Env,
  type Finished,
  freePort,
  freshDatabaseEnv,
  json,
  postLead,
  processTimeout,
  type RunningServer,
  startServer
} from "./Processes.ts"

/** The request log is written beside the answer; give it a moment before reading it. */
const eventually = async <A>(read: () => Promise<A>, done: (value: A) => boolean): Promise<A> => {
  const deadline = Date.now() + 5_000
  while (true) {
    const value = await read()
    if (done(value) || Date.now() > deadline) return value
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

describe("the operator's journey: CLI and server as separate processes on one database", {
  timeout: processTimeout
}, () => {
  let env: Env
  let cli: (...args: ReadonlyArray<string>) => Promise<Finished>
  let server: RunningServer | undefined

  beforeAll(async () => {
    env = await freshDatabaseEnv()
    cli = cliFor(env)
  })

  afterAll(async () => {
    await server?.stop("SIGKILL")
  })

  it("sets up an origin, receives leads, reads the log, revokes the key and stops cleanly", async () => {
    const org = json(await cli("org", "create", "--name", "Inmobiliaria Journey", "--json")).id as string
    const [agent, property, origin] = await Promise.all([
      cli("agent", "add", "--org", org, "--name", "Ana", "--json").then(json),
      cli("property", "add", "--org", org, "--codigo", "JRN-0001", "--json").then(json),
      cli("origin", "create", "--org", org, "--label", "sitio-web", "--json").then(json)
    ])
    json(await cli("rule", "add", "--org", org, "--agent", agent.id, "--json"))

    const port = await freePort()
    server = await startServer(port, { env })

    const created = await postLead(
      server.baseUrl,
      {
        nombre: "Lucía Pérez",
        telefono: "+52 55 1234 5678",
        mensaje: "¿Sigue disponible?",
        propiedad: { codigo: "jrn-0001" }
      },
      { key: origin.key, headers: { "idempotency-key": "form-1" } }
    )
    expect(created.status).toBe(201)
    expect(created.body.status).toBe("created")
    const leadId = created.body.lead_id as string

    const enriched = await postLead(
      server.baseUrl,
      {
        nombre: "Lucía",
        telefono: "55-1234-5678",
        email: "LUCIA@example.com",
        extras: { presupuesto: 2500000 }
      },
      { key: origin.key }
    )
    expect(enriched.status).toBe(200)
    expect(enriched.body).toMatchObject({ status: "enriched", lead_id: leadId, matched_on: "telefono" })

    const log = await eventually(
      () => cli("requests", "--origin", origin.id, "--json").then(json),
      (rows) => rows.length >= 2
    )
    expect(log).toEqual([
      {
        request_id: enriched.body.request_id,
        at: expect.any(String),
        status: 200,
        outcome: "enriched",
        lead_id: leadId,
        key_prefix: origin.prefix,
        idempotency_key: null,
        duration_ms: expect.any(Number),
        livemode: true,
        kept: false,
        rescued_lead_id: null
      },
      {
        request_id: created.body.request_id,
        at: expect.any(String),
        status: 201,
        outcome: "created",
        lead_id: leadId,
        key_prefix: origin.prefix,
        idempotency_key: "form-1",
        duration_ms: expect.any(Number),
        livemode: true,
        kept: false,
        rescued_lead_id: null
      }
    ])
    expect(Date.parse(log[0].at)).toBeGreaterThanOrEqual(Date.parse(log[1].at))

    const lead = json(await cli("lead", "show", "--id", leadId, "--json"))
    expect(lead).toMatchObject({
      id: leadId,
      organization_id: org,
      origin: "sitio-web",
      nombre: "Lucía Pérez",
      telefono: "+52 55 1234 5678",
      email: "lucia@example.com",
      property_id: property.id,
      assignee_id: agent.id
    })
    expect(lead.notes.map((note: { body: string }) => note.body)).toEqual([
      "¿Sigue disponible?",
      "presupuesto: 2500000"
    ])
    expect(lead.tasks).toEqual([
      { kind: "first_contact", assignee_id: agent.id, assignee_name: "Ana", due_at: expect.any(String) }
    ])
    expect(lead.events.map((event: { type: string }) => event.type)).toEqual([
      "lead.created",
      "lead.enriched"
    ])
    const listed = json(await cli("lead", "list", "--org", org, "--json"))
    expect(listed).toEqual([expect.objectContaining({ id: leadId, origin: "sitio-web" })])

    const revoked = json(await cli("key", "revoke", "--origin", origin.id, "--json"))
    expect(revoked.prefix).toBe(origin.prefix)
    const refused = await postLead(
      server.baseUrl,
      { nombre: "Otra", telefono: "5512345679" },
      { key: origin.key }
    )
    expect(refused.status).toBe(401)
    expect(refused.body.error.code).toBe("invalid_key")

    const stranger = generateApiKey()
    const unknown = await postLead(server.baseUrl, { nombre: "Nadie" }, { key: stranger.key })
    expect(unknown.status).toBe(401)

    const [afterRevoke, unattributed] = await Promise.all([
      eventually(
        () => cli("requests", "--origin", origin.id, "--limit", "1", "--json").then(json),
        (rows) => rows[0]?.status === 401
      ),
      eventually(
        () => cli("requests", "--unattributed", "--json").then(json),
        (rows) => rows.length > 0
      )
    ])
    expect(afterRevoke).toEqual([
      expect.objectContaining({
        request_id: refused.body.request_id,
        status: 401,
        outcome: "invalid_key",
        lead_id: null,
        key_prefix: origin.prefix
      })
    ])
    expect(unattributed).toEqual([
      expect.objectContaining({
        request_id: unknown.body.request_id,
        status: 401,
        outcome: "invalid_key",
        key_prefix: stranger.prefix
      })
    ])

    const stopped = await server.stop("SIGTERM")
    server = undefined
    expect(stopped.code).toBe(0)
  })

  it("SIGINT stops the server gracefully too, and the port comes from --port over PORT", async () => {
    const port = await freePort()
    const running = await startServer(port, { env: { ...env, PORT: "1" } })
    const index = await fetch(`${running.baseUrl}/v1`)
    expect(index.status).toBe(200)
    const stopped = await running.stop("SIGINT")
    expect(stopped.code).toBe(0)
  })
})
