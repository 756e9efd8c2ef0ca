import { beforeAll, describe, expect, it } from "vitest"
import {
  cliInProcess,
  type Env,
  expectUserError,
  type Finished,
  freshDatabaseEnv,
  json,
  processTimeout,
  run
} from "./Processes.ts"

const isoUtc = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const keysOf = (value: object) => Object.keys(value).sort()

describe("lead-intake commands (in-process, one database)", { timeout: processTimeout }, () => {
  let env: Env
  let cli: (...args: ReadonlyArray<string>) => Promise<Finished>

  beforeAll(async () => {
    env = await freshDatabaseEnv()
    cli = cliInProcess(env)
  })

  it("migrate applies the schema once and reports what it applied", async () => {
    const first = json(await cli("migrate", "--json"))
    expect(first.applied).toContain("0001_create_domain")
    expect(json(await cli("migrate", "--json"))).toEqual({ applied: [] })
    const text = await cli("migrate")
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(/up to date/)
  })

  it("each operator command prints its JSON shape and exits 0", async () => {
    const organization = json(await cli("org", "create", "--name", "Inmobiliaria Uno", "--json"))
    expect(organization).toEqual({ id: expect.stringMatching(uuid), name: "Inmobiliaria Uno", country: "MX" })
    const colombian = json(await cli("org", "create", "--name", "Otra", "--country", "co", "--json"))
    expect(colombian.country).toBe("CO")
    const org = organization.id as string

    const [ana, luis, property, archived] = await Promise.all([
      cli("agent", "add", "--org", org, "--name", "Ana", "--json").then(json),
      cli("agent", "add", "--org", org, "--name", "Luis", "--json").then(json),
      cli("property", "add", "--org", org, "--codigo", "abc-1234", "--external-code", "EXT-1", "--json").then(
        json
      ),
      cli("property", "add", "--org", org, "--codigo", "OLD-0001", "--archived", "--json").then(json)
    ])
    expect(ana).toEqual({ id: expect.stringMatching(uuid), name: "Ana" })
    expect(property).toEqual({
      id: expect.stringMatching(uuid),
      codigo: "ABC-1234",
      external_code: "EXT-1",
      archived: false
    })
    expect(archived).toMatchObject({ codigo: "OLD-0001", external_code: null, archived: true })

    const origin = json(await cli("origin", "create", "--org", org, "--label", "web", "--json"))
    expect(keysOf(origin)).toEqual(["id", "key", "label", "prefix", "rate_limit"])
    expect(origin).toMatchObject({ label: "web", rate_limit: 60 })
    expect(origin.key).toMatch(/^lk_live_[0-9A-Za-z]{8}_[0-9A-Za-z]{38}$/)
    expect(origin.key.startsWith(origin.prefix)).toBe(true)
    expect(origin.prefix).toHaveLength(16)

    const [limited, byAgent, byTurns, archivedNow] = await Promise.all([
      cli("origin", "set-limit", "--origin", origin.id, "--rate-limit", "120", "--json").then(json),
      cli(
        "rule",
        "add",
        "--org",
        org,
        "--agent",
        ana.id,
        "--origin",
        origin.id,
        "--priority",
        "10",
        "--json"
      ).then(json),
      cli(
        "rule",
        "add",
        "--org",
        org,
        "--round-robin",
        `${ana.id},${luis.id}`,
        "--property",
        property.id,
        "--json"
      ).then(json),
      cli("property", "archive", "--id", archived.id, "--json").then(json)
    ])
    expect(limited).toEqual({ id: origin.id, rate_limit: 120 })
    expect(byAgent).toEqual({ id: expect.stringMatching(uuid) })
    expect(byTurns).toEqual({ id: expect.stringMatching(uuid) })
    expect(archivedNow).toEqual({ id: archived.id, archived: true })

    const rotated = json(await cli("key", "rotate", "--origin", origin.id, "--json"))
    expect(keysOf(rotated)).toEqual(["key", "prefix"])
    expect(rotated.prefix).not.toBe(origin.prefix)

    const revoked = json(await cli("key", "revoke", "--origin", origin.id, "--json"))
    expect(revoked).toEqual({ prefix: rotated.prefix, revoked_at: expect.stringMatching(isoUtc) })

    const [origins, leads, requests, unattributed] = await Promise.all([
      cli("origin", "list", "--org", org, "--json").then(json),
      cli("lead", "list", "--org", org, "--json").then(json),
      cli("requests", "--origin", origin.id, "--limit", "5", "--json").then(json),
      cli("requests", "--unattributed", "--json").then(json)
    ])
    expect(origins).toEqual([
      { id: origin.id, label: "web", prefix: rotated.prefix, revoked: true, test_prefix: null }
    ])
    expect(leads).toEqual([])
    expect(requests).toEqual([])
    expect(unattributed).toEqual([])

    const [again, twice] = await Promise.all([
      cli("property", "add", "--org", org, "--codigo", "ABC-1234"),
      cli("key", "revoke", "--origin", origin.id)
    ])
    expectUserError(again, /already has a property with that code/)
    expectUserError(twice, /no active key/)
    expectUserError(await cli("origin", "create", "--org", org, "--label", "web"), /already has an origin/)
  })

  it("demo creates everything a first request needs and prints the key and a curl line", async () => {
    const demo = json(await cli("demo", "--json"))
    expect(demo).toMatchObject({
      organization_id: expect.stringMatching(uuid),
      origin_id: expect.stringMatching(uuid),
      key: expect.stringMatching(/^lk_live_/),
      prefix: expect.stringMatching(/^lk_live_/)
    })
    expect(demo.properties).toHaveLength(2)
    expect(demo.curl).toContain(`Bearer ${demo.key}`)
    expect(demo.curl).toContain("http://127.0.0.1:8080/v1/leads")
    expect(demo.curl).toContain(demo.properties[0].codigo)
    const origins = json(await cli("origin", "list", "--org", demo.organization_id, "--json"))
    expect(origins).toEqual([
      {
        id: demo.origin_id,
        label: expect.any(String),
        prefix: demo.prefix,
        revoked: false,
        test_prefix: null
      }
    ])

    const text = await run(["demo"], { env: { ...env, PUBLIC_BASE_URL: "https://leads.example.com/" } })
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(/curl .*https:\/\/leads\.example\.com\/v1\/leads/)
    expect(text.stdout).toMatch(/lk_live_\w+/)
  })

  it("without --json prints sentences and tables, not JSON", async () => {
    const created = await cli("org", "create", "--name", "Texto")
    expect(created.code).toBe(0)
    expect(created.stdout).toMatch(/^Created organization "Texto" \(MX\): [0-9a-f-]{36}\n$/)
    const org = /([0-9a-f-]{36})/.exec(created.stdout)?.[1] ?? ""
    await cli("origin", "create", "--org", org, "--label", "form")
    const listed = await cli("origin", "list", "--org", org)
    expect(listed.stdout.split("\n")[0]).toMatch(/^ID\s+LABEL\s+KEY PREFIX\s+REVOKED\s+TEST KEY PREFIX$/)
    expect(listed.stdout).toMatch(/form\s+lk_live_\w{8}\s+no\s+-/)
  })
})
