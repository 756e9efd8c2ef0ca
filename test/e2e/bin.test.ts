import { execFileSync, spawn } from "node:child_process"
import { readFileSync, realpathSync } from "node:fs"
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

  it("runs the sources when LEAD_INTAKE_ENTRY=src, as every test does (vitest.config.ts)", async () => {
    expect(process.env.LEAD_INTAKE_ENTRY).toBe("src")
    const port = await freePort()
    const server = await startServer(port, { entry: bin, env })
    const stopped = await server.stop("SIGTERM")
    expect(stopped.code).toBe(0)
    expect(stopped.stdout).toMatch(/"listener":"api".*"code":"src"/)
  })

  it("runs the CLI in-process under Node 24", async () => {
    const version = await run(["--version"], { entry: bin })
    expect(version.code).toBe(0)
    expect(version.stdout).toMatch(/^lead-intake v/)
    const organization = json(await run(["org", "create", "--name", "Bin", "--json"], { entry: bin, env }))
    expect(organization.name).toBe("Bin")
  })

  it("refuses a LEAD_INTAKE_ENTRY other than src or dist in one line", async () => {
    const refused = await run(["--version"], { entry: bin, env: { LEAD_INTAKE_ENTRY: "bundle" } })
    expect(refused.code).toBe(1)
    expect(refused.stdout).toBe("")
    expect(refused.stderr).toBe('lead-intake: LEAD_INTAKE_ENTRY must be "src" or "dist", not "bundle"\n')
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

  it("run as a program, replaces itself with the project's Node: one process serves, no wrapper", async () => {
    const port = await freePort()
    const pathWithoutProject = (process.env.PATH ?? "")
      .split(path.delimiter)
      .filter((dir) => !dir.includes("node_modules"))
      .join(path.delimiter)
    const child = spawn(bin, ["serve", "--port", String(port)], {
      cwd: projectRoot,
      env: { ...process.env, ...env, PATH: pathWithoutProject, PORT: "", HOST: "" },
      stdio: "ignore"
    })
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve))
    try {
      const deadline = Date.now() + 30_000
      while (
        !(await fetch(`http://127.0.0.1:${port}/v1`).then(
          (r) => r.ok,
          () => false
        ))
      ) {
        if (Date.now() > deadline) throw new Error("the server did not answer")
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      const projectNode = realpathSync(path.join(projectRoot, "node_modules", "node", "bin", "node"))
      expect(realpathSync(`/proc/${child.pid}/exe`)).toBe(projectNode)
      const children = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, "utf8").trim()
      const nodeChildren = children
        .split(" ")
        .filter((pid) => pid !== "")
        .filter((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("lead-intake"))
      expect(nodeChildren).toEqual([])
      expect(readFileSync(`/proc/${child.pid}/cmdline`, "utf8").split("\0")).toContain(
        "--max-semi-space-size=4"
      )
    } finally {
      child.kill("SIGTERM")
    }
    expect(await exited).toBe(0)
  })
})
