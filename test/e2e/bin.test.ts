import { execFileSync } from "node:child_process"
import * as path from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import {
  type Env,
  freePort,
  freshDatabaseEnv,
  json,
  processTimeout,
  projectRoot,
  run,
  startServer
} from "./Processes.ts"

const bin = path.join(projectRoot, "bin", "lead-intake.js")

/** The first `node` on the PATH outside the project, if it is older than the Node the project needs. */
const olderSystemNode = (() => {
  const dirs = (process.env.PATH ?? "").split(path.delimiter).filter((dir) => !dir.includes("node_modules"))
  for (const dir of [...dirs, "/usr/local/bin", "/usr/bin"]) {
    const candidate = path.join(dir, "node")
    try {
      const version = execFileSync(candidate, ["--version"], { encoding: "utf8" }).trim()
      return Number(/^v(\d+)/.exec(version)?.[1]) < 24 ? candidate : undefined
    } catch {}
  }
  return undefined
})()

describe("the package bin, bin/lead-intake.js", { timeout: processTimeout }, () => {
  let env: Env

  beforeAll(async () => {
    env = await freshDatabaseEnv()
  })

  it("runs the CLI in-process under Node 24", async () => {
    const version = await run(["--version"], { entry: bin })
    expect(version.code).toBe(0)
    expect(version.stdout).toMatch(/^lead-intake v/)
    const organization = json(await run(["org", "create", "--name", "Bin", "--json"], { entry: bin, env }))
    expect(organization.name).toBe("Bin")
  })

  it.skipIf(olderSystemNode === undefined)(
    "hands over to the project's Node under an older Node, with arguments, output, exit codes and signals",
    async () => {
      const node = olderSystemNode!
      const organization = json(
        await run(["org", "create", "--name", "Vieja", "--json"], { node, entry: bin, env })
      )
      expect(organization.name).toBe("Vieja")

      const failed = await run(["lead", "show", "--id", "nope"], { node, entry: bin, env })
      expect(failed.code).toBe(1)
      expect(failed.stderr.trim().split("\n")).toHaveLength(1)

      const port = await freePort()
      const server = await startServer(port, { node, entry: bin, env })
      expect((await fetch(`${server.baseUrl}/v1`)).status).toBe(200)
      const stopped = await server.stop("SIGTERM")
      expect(stopped.code).toBe(0)
    }
  )
})
