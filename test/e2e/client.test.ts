import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  cliFor,
  type Env,
  freePort,
  freshDatabaseEnv,
  json,
  processTimeout,
  projectRoot,
  type RunningServer,
  run,
  startServer
} from "./Processes.ts"

describe("the examples in examples/, run against a real server", { timeout: processTimeout }, () => {
  let env: Env
  let server: RunningServer
  let key: string

  beforeAll(async () => {
    env = await freshDatabaseEnv()
    server = await startServer(await freePort(), { env })
    key = json(await cliFor(env)("demo", "--json")).key
  })

  afterAll(async () => {
    await server?.stop("SIGKILL")
  })

  const runExample = (file: string, apiKey = key) =>
    run([], {
      entry: path.join(projectRoot, "examples", file),
      env: { ...env, LEAD_INTAKE_URL: server.baseUrl, LEAD_INTAKE_KEY: apiKey }
    })

  it("examples/client.ts: the typed client (lead-intake/client) previews, creates, replays and gets a typed error", async () => {
    const result = await runExample("client.ts")
    expect(result.code, result.stderr).toBe(0)
    const printed = JSON.parse(result.stdout)
    expect(printed).toEqual({
      preview: "create",
      created: { status: "created", lead_id: expect.stringMatching(/^[0-9a-f-]{36}$/) },
      replayed: { status: "created", replay: true },
      unknownProperty: "property_not_found"
    })
  })

  it("examples/client.ts fails with the typed InvalidKey error on a wrong key", async () => {
    const result = await runExample("client.ts", "lk_live_00000000_wrong")
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain("InvalidKey")
  })

  it("examples/openapi-fetch.ts: the openapi-typescript + openapi-fetch client creates a lead", async () => {
    const result = await runExample("openapi-fetch.ts")
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual({
      status: 201,
      lead_status: "created",
      lead_id: expect.stringMatching(/^[0-9a-f-]{36}$/)
    })
    const refused = await runExample("openapi-fetch.ts", "lk_live_00000000_wrong")
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/^401 invalid_key .* http:\/\/127\.0\.0\.1:\d+\/v1\/docs#invalid_key\n$/)
  })
})
