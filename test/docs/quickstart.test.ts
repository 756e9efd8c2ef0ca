import { type ChildProcess, execFile, spawn } from "node:child_process"
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort, projectRoot } from "../e2e/Processes.ts"

/**
 * The README's quick start, run as written by a newcomer: in a copy of the checkout (its files, and
 * the node_modules `npm ci` made, linked), with the embedded PostgreSQL in the copy's `.data/`, the
 * first block in the background (the "terminal" that runs the server), the next ones after it. The
 * only change: the ports come from PORT/ADMIN_PORT/HEALTH_PORT, free ones, since 8080-8082 may be
 * taken on a shared machine; nothing in the commands names a port.
 */

const execFileAsync = promisify(execFile)

const readme = readFileSync(path.join(projectRoot, "README.md"), "utf8")

/** The fenced blocks of the README's "## Quick start" section, with their language. */
const quickStartBlocks = () => {
  const start = readme.indexOf("\n## Quick start\n")
  expect(start).toBeGreaterThan(0)
  const end = readme.indexOf("\n## ", start + 1)
  const section = readme.slice(start, end === -1 ? undefined : end)
  return [...section.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map(([, lang, body]) => ({
    lang: lang!,
    lines: body!.split("\n").filter((line) => line.trim() !== "")
  }))
}

/** A shell block's commands, `&&` chains split, comments dropped. */
const commandsOf = (lines: ReadonlyArray<string>) =>
  lines
    .map((line) => line.replace(/\s+#.*$/, "").trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
    .flatMap((line) => line.split(/\s*&&\s*/))

describe("the README's quick start", { timeout: 240_000 }, () => {
  const blocks = quickStartBlocks()
  const shell = blocks.filter((block) => block.lang === "sh").map((block) => commandsOf(block.lines))
  let copy: string
  let env: Record<string, string>
  let server: ChildProcess | undefined
  let serverOutput = ""
  let ports: { api: number; admin: number; health: number }

  beforeAll(async () => {
    copy = await mkdtemp(path.join(tmpdir(), "lead-intake-quickstart-"))
    const { stdout } = await execFileAsync(
      "git",
      ["ls-files", "-z", "--cached", "--others", "--exclude-standard"],
      {
        cwd: projectRoot,
        maxBuffer: 16 * 1024 * 1024
      }
    )
    for (const file of stdout.split("\0").filter((name) => name !== "")) {
      const source = path.join(projectRoot, file)
      if (!existsSync(source)) continue
      mkdirSync(path.dirname(path.join(copy, file)), { recursive: true })
      cpSync(source, path.join(copy, file))
    }
    // What `npm ci` made in this checkout (CI runs it as written, `.ci/run`).
    symlinkSync(path.join(projectRoot, "node_modules"), path.join(copy, "node_modules"))
    ports = { api: await freePort(), admin: await freePort(), health: await freePort() }
    env = {}
    for (const [name, value] of Object.entries(process.env)) {
      if (value === undefined) continue
      if (
        /^(npm_|NODE_ENV$|PORT$|HOST$|DATABASE_|LEAD_INTAKE_|ADMIN_|HEALTH_|METRICS_|PUBLIC_BASE_URL$|OTEL_)/.test(
          name
        )
      )
        continue
      env[name] = value
    }
    // The system's PATH: the newcomer's npm and Node, not the ones vitest runs under.
    env.PATH = (env.PATH ?? "")
      .split(path.delimiter)
      .filter((dir) => !dir.includes(`${path.sep}node_modules${path.sep}`))
      .join(path.delimiter)
    Object.assign(env, {
      PORT: String(ports.api),
      ADMIN_PORT: String(ports.admin),
      HEALTH_PORT: String(ports.health)
    })
  }, 60_000)

  afterAll(async () => {
    if (server?.pid !== undefined && server.exitCode === null) process.kill(-server.pid, "SIGKILL")
    // A postmaster left behind (the server was killed) is stopped by its own pid.
    const pidFile = path.join(copy, ".data", "pg", "postmaster.pid")
    if (existsSync(pidFile)) {
      const pid = Number(readFileSync(pidFile, "utf8").split("\n")[0])
      if (pid > 0) {
        try {
          process.kill(pid, "SIGQUIT")
        } catch {}
      }
    }
    if (copy !== undefined) await rm(copy, { recursive: true, force: true })
  }, 30_000)

  it("has the server's block, then the demo, and an example of what demo prints", () => {
    expect(shell).toEqual([["npm ci", "npm start"], ["npx lead-intake demo"]])
    expect(blocks.filter((block) => block.lang === "text")).toHaveLength(1)
  })

  it("runs to a first 201 and a console sign-in; then docs/partners.md's request enriches and replays", async () => {
    const [serverBlock, demoBlock] = shell as [Array<string>, Array<string>]
    // `npm ci` is what made node_modules; the block's next command is the server, left running.
    expect(serverBlock[0]).toBe("npm ci")
    expect(existsSync(path.join(copy, "node_modules", "effect", "package.json"))).toBe(true)
    server = spawn("sh", ["-c", serverBlock.slice(1).join(" && ")], {
      cwd: copy,
      env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"]
    })
    server.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      serverOutput += chunk
    })
    server.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      serverOutput += chunk
    })
    const exited = new Promise<number | null>((resolve) => server!.on("close", (code) => resolve(code)))
    const deadline = Date.now() + 120_000
    while (
      !(await fetch(`http://127.0.0.1:${ports.api}/v1`).then(
        (r) => r.ok,
        () => false
      ))
    ) {
      expect(server.exitCode, serverOutput).toBeNull()
      expect(Date.now(), serverOutput).toBeLessThan(deadline)
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
    expect(serverOutput).toContain(".data")

    // The second terminal.
    let printed = ""
    for (const command of demoBlock) {
      const { stdout } = await execFileAsync("sh", ["-c", command], { cwd: copy, env, timeout: 60_000 })
      printed += stdout
    }
    // The README's example of that output names the lines a newcomer looks for.
    const example = blocks.find((block) => block.lang === "text")!.lines
    for (const line of example) {
      const stem = line.trim().split("…")[0]!
      expect(printed, stem).toContain(
        stem.replace(/\b8080\b/, String(ports.api)).replace(/\b8081\b/, String(ports.admin))
      )
    }

    const curl = printed
      .split("\n")
      .map((line) => line.trim())
      .find((line) => line.startsWith("curl "))
    expect(curl).toContain(`http://127.0.0.1:${ports.api}/v1/leads`)
    const sent = await execFileAsync("sh", ["-c", `${curl} -w '\\n%{http_code}'`], { cwd: copy, env })
    const [body, status] = sent.stdout.trim().split("\n")
    expect(status, body).toBe("201")
    expect(JSON.parse(body!)).toMatchObject({ status: "created", lead_id: expect.any(String) })

    const consoleUrl = /The console at (\S+), signed in as:/.exec(printed)?.[1]
    const email = /e-mail: (\S+)/.exec(printed)?.[1]
    const password = /password \(shown this once\): (\S+)/.exec(printed)?.[1]
    expect(consoleUrl).toBe(`http://127.0.0.1:${ports.admin}/`)
    const page = await fetch(consoleUrl!)
    expect(page.status).toBe(200)
    const signIn = await fetch(new URL("api/session", consoleUrl), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password })
    })
    expect(signIn.status, await signIn.clone().text()).toBe(200)
    expect(signIn.headers.get("set-cookie")).toMatch(/^lead_intake_session=/)

    // docs/partners.md's request, with the variables it names: the base URL and the key demo printed.
    const key = /Key \(shown this once\): (\S+)/.exec(printed)?.[1]
    const partners = readFileSync(path.join(projectRoot, "docs", "partners.md"), "utf8")
    const partnerBlocks = [...partners.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map(([, body]) => body!)
    expect(partnerBlocks).toHaveLength(1)
    const partnerEnv = { ...env, BASE_URL: `http://127.0.0.1:${ports.api}`, LEAD_INTAKE_KEY: key! }
    for (const attempt of ["first", "retry"]) {
      const answer = await execFileAsync("sh", ["-c", `${partnerBlocks[0]!.trim()} -w '\\n%{http_code}'`], {
        cwd: copy,
        env: partnerEnv
      })
      const [partnerBody, partnerStatus] = answer.stdout.trim().split("\n")
      // The quick start's lead has the same phone: the partner's request enriches it, then replays.
      expect(partnerStatus, `${attempt}: ${partnerBody}`).toBe("200")
      expect(JSON.parse(partnerBody!)).toMatchObject(
        attempt === "first" ? { status: "enriched" } : { status: "enriched", replay: true }
      )
    }

    process.kill(-server.pid!, "SIGTERM")
    await exited
  })
})
