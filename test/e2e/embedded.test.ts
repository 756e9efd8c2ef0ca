import { existsSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort, json, processTimeout, type RunningServer, run, startServer } from "./Processes.ts"

/** Without DATABASE_URL every process shares the embedded cluster under the data directory. */
describe("the embedded PostgreSQL, shared by the CLI and a running server", {
  timeout: processTimeout
}, () => {
  let dataDir: string
  let server: RunningServer | undefined
  const env = () => ({ LEAD_INTAKE_DATA_DIR: dataDir })
  const postmasterPid = () => path.join(dataDir, "pg", "postmaster.pid")

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "lead-intake-e2e-"))
  })

  afterAll(async () => {
    await server?.stop("SIGTERM")
    await rm(dataDir, { recursive: true, force: true })
  })

  it("a command initialises the cluster, keeps stdout to its JSON and stops the cluster when done", async () => {
    const migrated = await run(["migrate", "--json"], { env: env() })
    expect(json(migrated).applied).toContain("0001_create_domain")
    expect(migrated.stdout.trim().split("\n")).toHaveLength(1)
    expect(migrated.stderr).toMatch(/starting embedded PostgreSQL/)
    expect(existsSync(postmasterPid())).toBe(false)
  })

  it("commands use the cluster of a running server without stopping it", async () => {
    const port = await freePort()
    server = await startServer(port, { env: env() })
    const organization = json(await run(["org", "create", "--name", "Compartida", "--json"], { env: env() }))
    const origins = json(await run(["origin", "list", "--org", organization.id, "--json"], { env: env() }))
    expect(origins).toEqual([])
    expect((await fetch(`${server.baseUrl}/v1`)).status).toBe(200)
    expect(existsSync(postmasterPid())).toBe(true)

    const stopped = await server.stop("SIGTERM")
    server = undefined
    expect(stopped.code).toBe(0)
    expect(existsSync(postmasterPid())).toBe(false)
  })
})
