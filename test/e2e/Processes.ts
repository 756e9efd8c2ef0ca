import { type ChildProcess, spawn } from "node:child_process"
import { createServer } from "node:net"
import * as path from "node:path"
import { Cause, Effect, Exit } from "effect"
import { expect } from "vitest"
import { createDatabase, databaseUrl } from "../support/Database.ts"

export const projectRoot = path.resolve(import.meta.dirname, "../..")

const inheritedEnv = (): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined) env[name] = value
  }
  for (const name of [
    "PORT",
    "HOST",
    "DATABASE_URL",
    "LEAD_INTAKE_DATA_DIR",
    "PUBLIC_BASE_URL",
    "DASHBOARD_URL",
    "LOG_LEVEL",
    "NODE_ENV",
    "MIGRATE_ON_START",
    "TRUSTED_PROXIES"
  ]) {
    delete env[name]
  }
  env.PATH = `${path.join(projectRoot, "node_modules", ".bin")}${path.delimiter}${env.PATH ?? ""}`
  return env
}

export type Env = Record<string, string>

/** Per test: each one starts several Node processes, which a loaded 2-core machine runs slowly. */
export const processTimeout = 90_000

/** A fresh database in the run's cluster, as the environment a process needs to use it. */
export const freshDatabaseEnv = async (): Promise<Env> => {
  const name = await Effect.runPromise(createDatabase("e2e"))
  return { DATABASE_URL: databaseUrl(name) }
}

export interface Finished {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/** What the child prints, as it prints it, and how it ended (its code and signal, with all it printed). */
export const collect = (child: ChildProcess) => {
  const output = { stdout: "", stderr: "" }
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    output.stdout += chunk
  })
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    output.stderr += chunk
  })
  const finished = new Promise<Finished>((resolve, reject) => {
    child.on("error", reject)
    child.on("close", (code, signal) => resolve({ code, signal, ...output }))
  })
  return { output, finished }
}

/** Runs `node src/main.ts ...args` (or another entry point) to completion. */
export const run = (
  args: ReadonlyArray<string>,
  options: { readonly env?: Env; readonly node?: string; readonly entry?: string } = {}
): Promise<Finished> => {
  const child = spawn(
    options.node ?? process.execPath,
    [options.entry ?? path.join(projectRoot, "src", "main.ts"), ...args],
    { cwd: projectRoot, env: { ...inheritedEnv(), ...options.env }, stdio: ["ignore", "pipe", "pipe"] }
  )
  return collect(child).finished
}

/** A CLI bound to one environment (one database). */
export const cliFor =
  (env: Env) =>
  (...args: ReadonlyArray<string>) =>
    run(args, { env })

/**
 * `lead-intake ...args` run to completion in this process: the CLI's own code (`runCli`) with the
 * environment a child would get, what it prints to stdout and stderr, and the exit code `main`'s
 * teardown would give. For suites about what commands do; the process itself (the bin, `serve`,
 * signals, the environment of a real process) is tested with `run` and `startServer`.
 */
export const runInProcess = async (args: ReadonlyArray<string>, env: Env = {}): Promise<Finished> => {
  const { runCliInProcess } = await import("../support/Cli.ts")
  const ran = await runCliInProcess(args, { ...inheritedEnv(), ...env })
  const lines = (list: ReadonlyArray<string>) => list.map((line) => `${line}\n`).join("")
  const code = Exit.isSuccess(ran.exit) ? 0 : Cause.hasInterruptsOnly(ran.exit.cause) ? 130 : 1
  return { code, signal: null, stdout: lines(ran.out), stderr: lines(ran.err) }
}

/** `cliFor`, in this process (`runInProcess`). */
export const cliInProcess =
  (env: Env) =>
  (...args: ReadonlyArray<string>) =>
    runInProcess(args, env)

/** The one JSON value on stdout of a successful command. */
// biome-ignore lint/suspicious/noExplicitAny: tests inspect the printed JSON field by field
export const json = (result: Finished): any => {
  expect(result.code, result.stderr).toBe(0)
  return JSON.parse(result.stdout)
}

/** A user error: exit 1, nothing on stdout, one line on stderr and no stack trace. */
export const expectUserError = (result: Finished, pattern: RegExp) => {
  expect(result.code, result.stderr).toBe(1)
  expect(result.stdout).toBe("")
  const lines = result.stderr.trimEnd().split("\n")
  expect(lines, result.stderr).toHaveLength(1)
  expect(result.stderr).not.toMatch(/^\s+at /m)
  expect(lines[0]).toMatch(pattern)
}

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() =>
        typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))
      )
    })
  })

export interface RunningServer {
  readonly baseUrl: string
  readonly output: { readonly stdout: string; readonly stderr: string }
  readonly stop: (signal?: NodeJS.Signals) => Promise<Finished>
}

/** Starts `serve` on the given port and resolves once the API answers there. */
export const startServer = async (
  port: number,
  options: {
    readonly env?: Env
    readonly node?: string
    readonly entry?: string
    readonly args?: ReadonlyArray<string>
  } = {}
): Promise<RunningServer> => {
  const child = spawn(
    options.node ?? process.execPath,
    [
      options.entry ?? path.join(projectRoot, "src", "main.ts"),
      ...(options.args ?? ["serve", "--port", String(port)])
    ],
    { cwd: projectRoot, env: { ...inheritedEnv(), ...options.env }, stdio: ["ignore", "pipe", "pipe"] }
  )
  const { output, finished } = collect(child)
  let exited: Finished | undefined
  finished.then((result) => {
    exited = result
  })
  const baseUrl = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 30_000
  while (true) {
    if (exited !== undefined) throw new Error(`server exited with ${exited.code}:\n${exited.stderr}`)
    if (Date.now() > deadline) {
      // Not left running behind the failed test.
      child.kill("SIGKILL")
      throw new Error(`server did not answer on ${baseUrl}:\n${output.stderr}`)
    }
    const ready = await fetch(`${baseUrl}/v1`).then(
      (response) => response.ok,
      () => false
    )
    if (ready) break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return {
    baseUrl,
    output,
    stop: (signal = "SIGTERM") => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      return finished
    }
  }
}

export const postLead = async (
  baseUrl: string,
  body: unknown,
  options: { readonly key?: string; readonly headers?: Record<string, string> } = {}
) => {
  const response = await fetch(`${baseUrl}/v1/leads`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(options.key === undefined ? {} : { authorization: `Bearer ${options.key}` }),
      ...options.headers
    },
    body: JSON.stringify(body)
  })
  // biome-ignore lint/suspicious/noExplicitAny: tests inspect response bodies field by field
  const json: any = await response.json()
  return { status: response.status, body: json }
}
