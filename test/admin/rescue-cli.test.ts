import { writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  cliInProcess,
  type Env,
  expectUserError,
  type Finished,
  freePort,
  freshDatabaseEnv,
  json,
  processTimeout,
  type RunningServer,
  startServer
} from "../e2e/Processes.ts"

/** A partner's form that sends nine digits (docs/contract.md#11-rejected-leads-are-kept-for-rescue). */
const nineDigits = '{"nombre":"Rosa Rescate","telefono":"551234567","mensaje":"quiero visitar"}'

const send = async (baseUrl: string, key: string, raw: string) => {
  const response = await fetch(`${baseUrl}/v1/leads`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: raw
  })
  // biome-ignore lint/suspicious/noExplicitAny: tests inspect response bodies field by field
  const body: any = await response.json()
  return { status: response.status, body }
}

const fileWith = async (name: string, text: string) => {
  const file = path.join(tmpdir(), `rescue-${process.pid}-${name}.json`)
  await writeFile(file, text)
  return file
}

describe("request show and request rescue (in-process, beside a real `serve` process)", {
  timeout: processTimeout
}, () => {
  let env: Env
  let cli: (...args: ReadonlyArray<string>) => Promise<Finished>
  let server: RunningServer
  let demo: { organization_id: string; origin_id: string; key: string }

  beforeAll(async () => {
    env = await freshDatabaseEnv()
    cli = cliInProcess(env)
    demo = json(await cli("demo", "--json"))
    server = await startServer(await freePort(), { env })
  }, processTimeout)

  afterAll(async () => {
    const finished = await server?.stop()
    expect(`${finished?.stdout ?? ""}${finished?.stderr ?? ""}`, "no kept body in the logs").not.toContain(
      "Rosa Rescate"
    )
  })

  it("a 400 lead is listed as kept, shown with its body, and rescued once into a lead", async () => {
    const rejected = await send(server.baseUrl, demo.key, nineDigits)
    expect([rejected.status, rejected.body.error.code, rejected.body.error.field]).toEqual([
      400,
      "validation_error",
      "telefono"
    ])
    const requestId: string = rejected.body.request_id
    const created = await send(server.baseUrl, demo.key, '{"nombre":"Otro","telefono":"5512345600"}')
    expect(created.status).toBe(201)

    const kept = json(await cli("requests", "--origin", demo.origin_id, "--rejected", "--json"))
    expect(kept).toEqual([
      expect.objectContaining({
        request_id: requestId,
        status: 400,
        outcome: "validation_error",
        kept: true,
        rescued_lead_id: null
      })
    ])
    const all = json(await cli("requests", "--origin", demo.origin_id, "--json"))
    expect(
      all.map((row: { kept: boolean; rescued_lead_id: string | null }) => [row.kept, row.rescued_lead_id])
    ).toEqual([
      [false, null],
      [true, null]
    ])
    expectUserError(await cli("requests", "--unattributed", "--rejected"), /--rejected .*--origin/)

    const shown = json(await cli("request", "show", "--id", requestId, "--json"))
    expect(Object.keys(shown)).toEqual([
      "request_id",
      "at",
      "status",
      "outcome",
      "origin_id",
      "key_prefix",
      "livemode",
      "body",
      "rescued_lead_id"
    ])
    expect(shown).toMatchObject({
      request_id: requestId,
      status: 400,
      outcome: "validation_error",
      origin_id: demo.origin_id,
      livemode: true,
      body: nineDigits,
      rescued_lead_id: null
    })

    expectUserError(
      await cli("request", "rescue", "--id", requestId, "--body", await fileWith("wrong", nineDigits)),
      /^lead-intake: validation_error \(telefono\): telefono /
    )
    expectUserError(
      await cli(
        "request",
        "rescue",
        "--id",
        requestId,
        "--body",
        await fileWith(
          "property",
          '{"nombre":"Rosa Rescate","telefono":"5512345670","propiedad":{"codigo":"ZZZ-9999"}}'
        )
      ),
      /^lead-intake: property_not_found \(propiedad\): /
    )
    expect(json(await cli("request", "show", "--id", requestId, "--json")).body, "nothing changed").toBe(
      nineDigits
    )

    const fixed = await fileWith(
      "fixed",
      '{"nombre":"Rosa Rescate","telefono":"5512345670","mensaje":"quiero visitar"}'
    )
    const rescued = json(
      await cli("request", "rescue", "--id", requestId, "--body", fixed, "--by", "ana", "--json")
    )
    expect(rescued).toEqual({
      lead_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      status: "created",
      lead_url: expect.stringContaining(`/leads/${rescued.lead_id}`),
      request_id: requestId
    })
    const lead = json(await cli("lead", "show", "--id", rescued.lead_id, "--json"))
    expect(lead).toMatchObject({
      telefono: "5512345670",
      organization_id: demo.organization_id,
      livemode: true
    })
    expect(lead.notes.map((note: { body: string }) => note.body)).toEqual(["quiero visitar"])
    expect(lead.events.map((event: { type: string }) => event.type)).toEqual(["lead.created"])

    expect(json(await cli("request", "show", "--id", requestId, "--json"))).toMatchObject({
      body: null,
      rescued_lead_id: rescued.lead_id
    })
    expect(json(await cli("requests", "--origin", demo.origin_id, "--rejected", "--json"))).toEqual([])
    expect(json(await cli("requests", "--origin", demo.origin_id, "--json"))[1]).toMatchObject({
      request_id: requestId,
      kept: false,
      rescued_lead_id: rescued.lead_id
    })
    expectUserError(
      await cli("request", "rescue", "--id", requestId, "--body", fixed),
      /^lead-intake: already_rescued: request .* was already rescued as lead /
    )
    expectUserError(
      await cli("request", "rescue", "--id", created.body.request_id, "--body", fixed),
      /^lead-intake: nothing_kept: /
    )
  })
  it("lead export --org --phone lists the kept bodies with that phone, also when no lead has it", async () => {
    const raw = '{"nombre":"Rosa Rescate","telefono":"55 7044 1200","email":"no-es-correo"}'
    const rejected = await send(server.baseUrl, demo.key, raw)
    expect([rejected.status, rejected.body.error.field]).toEqual([400, "email"])
    const exported = json(
      await cli("lead", "export", "--org", demo.organization_id, "--phone", "(55) 7044-1200", "--json")
    )
    expect(exported).toEqual({
      lead: null,
      kept_bodies: [
        {
          request_id: rejected.body.request_id,
          at: expect.any(String),
          origin_id: demo.origin_id,
          livemode: true,
          body: raw
        }
      ]
    })
    expectUserError(
      await cli("lead", "export", "--org", demo.organization_id, "--phone", "55 7044 1299"),
      /unknown lead with that phone in organization/
    )
  })
})
