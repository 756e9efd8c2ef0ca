import { userInfo } from "node:os"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
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
  run,
  startServer
} from "./Processes.ts"

const keysOf = (value: object) => Object.keys(value).sort()

const person = {
  nombre: "Clotilde Arámbula Neri",
  telefono: "+52 33 1618 0339",
  email: "clotilde.an@correo.mx",
  mensaje: "Quiero una casa con alberca",
  extras: { presupuesto: "tres millones" }
}

describe("lead export / erase / erasures (commands in-process, `serve` as a real process)", {
  timeout: 2 * processTimeout
}, () => {
  let env: Env
  let cli: (...args: ReadonlyArray<string>) => Promise<Finished>
  let server: RunningServer
  let org: string
  let key: string
  let leadId: string

  beforeAll(async () => {
    env = await freshDatabaseEnv()
    cli = cliInProcess(env)
    org = json(await cli("org", "create", "--name", "Inmobiliaria Privada", "--json")).id
    key = json(await cli("origin", "create", "--org", org, "--label", "web", "--json")).key
    json(await cli("property", "add", "--org", org, "--codigo", "GDL-0001", "--json"))
    server = await startServer(await freePort(), { env })
    const created = await postLead(server.baseUrl, person, { key, headers: { "idempotency-key": "e2e-1" } })
    expect(created.status).toBe(201)
    leadId = created.body.lead_id
    const enriched = await postLead(
      server.baseUrl,
      {
        nombre: "C. Arámbula",
        telefono: "33-1618-0339",
        mensaje: "Mejor por WhatsApp",
        propiedad: { codigo: "GDL-0001" }
      },
      { key }
    )
    expect(enriched.status).toBe(200)
  }, 120_000)

  afterAll(async () => {
    await server?.stop()
  })

  it("exports by id and by phone in any spelling, as JSON and as a summary; refuses bad lines", async () => {
    const byId = json(await cli("lead", "export", "--id", leadId, "--json"))
    expect(keysOf(byId)).toEqual([
      "erasure",
      "events",
      "exported_at",
      "idempotent_replies",
      "lead",
      "notes",
      "requests",
      "tasks",
      "webhook_attempts",
      "webhook_deliveries"
    ])
    expect(byId.lead).toMatchObject({
      id: leadId,
      nombre: person.nombre,
      telefono: person.telefono,
      email: person.email,
      property: { codigo: "GDL-0001" },
      erased_at: null
    })
    expect(byId.notes.map((note: { body: string }) => note.body)).toEqual([
      "Quiero una casa con alberca\npresupuesto: tres millones",
      "Mejor por WhatsApp"
    ])
    expect(byId.requests.map((row: { outcome: string }) => row.outcome)).toEqual(["created", "enriched"])
    expect(byId.idempotent_replies).toHaveLength(1)
    expect(JSON.stringify(byId)).not.toContain(key.slice(17))

    const byPhone = json(await cli("lead", "export", "--org", org, "--phone", "(33) 1618-0339", "--json"))
    expect(byPhone.lead.id).toBe(leadId)

    const summary = await cli("lead", "export", "--id", leadId)
    expect(summary.code, summary.stderr).toBe(0)
    expect(summary.stdout).toContain(`Lead ${leadId}`)
    expect(summary.stdout).toContain("Notes (2):")
    expect(summary.stdout).toContain("2 logged requests")

    const refused: ReadonlyArray<readonly [ReadonlyArray<string>, RegExp]> = [
      [[], /one of --id or --phone is required/],
      [["--id", leadId, "--org", org, "--phone", "3316180339"], /--id and --phone exclude each other/],
      [["--phone", "3316180339"], /--phone needs --org/],
      [["--org", org, "--phone", "33 9999 0000"], /unknown lead with that phone in organization/],
      [["--org", org, "--phone", "12-34"], /at least 10 digits/],
      [["--id", "not-a-uuid"], /Expected lead id/],
      [["--id", crypto.randomUUID()], /unknown lead/]
    ]
    // The process meanwhile; the in-process commands one after another (each has its own pool).
    const badRetention = run(["lead", "erasures", "--org", org], {
      env: { ...env, REQUEST_LOG_RETENTION_DAYS: "0" }
    })
    for (const [args, pattern] of refused) expectUserError(await cli("lead", "export", ...args), pattern)
    expectUserError(await badRetention, /^lead-intake: invalid configuration: REQUEST_LOG_RETENTION_DAYS: /)
  })

  it("erases once (the OS user by default), says so the second time, and the lead shows as erased", async () => {
    const [personal, noReason] = await Promise.all([
      cli("lead", "erase", "--id", leadId, "--reason", `pedido de ${person.nombre}`),
      cli("lead", "erase", "--id", leadId)
    ])
    expectUserError(personal, /must not contain the person's name, phone or e-mail/)
    expectUserError(noReason, /--reason/)

    const erased = json(await cli("lead", "erase", "--id", leadId, "--reason", "ARCO folio 77", "--json"))
    expect(keysOf(erased)).toEqual(["already_erased", "erased_at", "id"])
    expect(erased).toMatchObject({ id: leadId, already_erased: false })
    const again = json(
      await cli("lead", "erase", "--id", leadId, "--reason", "otra vez", "--by", "jorge", "--json")
    )
    expect(again).toEqual({ ...erased, already_erased: true })
    const text = await cli("lead", "erase", "--id", leadId, "--reason", "otra vez")
    expect(text.stdout).toMatch(/already erased/)

    const shown = json(await cli("lead", "show", "--id", leadId, "--json"))
    expect(shown).toMatchObject({ id: leadId, nombre: null, telefono: null, email: null, notes: [] })
    expect(shown.erased_at).toBe(erased.erased_at)
    const shownText = await cli("lead", "show", "--id", leadId)
    expect(shownText.stdout).toContain("ERASED at")

    const trail = json(await cli("lead", "erasures", "--org", org, "--json"))
    expect(trail).toHaveLength(1)
    expect(trail[0]).toMatchObject({
      lead_id: leadId,
      erased_by: userInfo().username,
      reason: "ARCO folio 77"
    })
    const everything = JSON.stringify(json(await cli("lead", "export", "--id", leadId, "--json")))
    for (const datum of [
      person.nombre,
      person.email,
      "3316180339",
      "1618 0339",
      person.mensaje,
      "tres millones"
    ]) {
      expect(everything).not.toContain(datum)
    }

    const replay = await postLead(server.baseUrl, person, { key, headers: { "idempotency-key": "e2e-1" } })
    expect([replay.status, replay.body.lead_id, replay.body.replay]).toEqual([201, leadId, true])
    const fresh = await postLead(server.baseUrl, person, { key })
    expect(fresh.status).toBe(201)
    expect(fresh.body.lead_id).not.toBe(leadId)
  })
})
