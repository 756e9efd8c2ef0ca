import { type ChildProcess, spawn } from "node:child_process"
import { once } from "node:events"
import { createServer } from "node:net"
import * as path from "node:path"
import { directUrlOf, pooledEnvironment } from "../support/Database.ts"

const root = path.resolve(import.meta.dirname, "../..")
const main = path.join(root, "src/main.ts")

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject()))
    })
  })

const environment = (databaseUrl: string, extra: Record<string, string> = {}) => ({
  ...process.env,
  DATABASE_URL: databaseUrl,
  LOG_LEVEL: "Warn",
  ...pooledEnvironment(databaseUrl),
  ...extra
})

/** Runs an operator command with --json and returns its parsed output; `migrate` on the server itself. */
export const cli = async (databaseUrl: string, args: ReadonlyArray<string>) => {
  const child = spawn(process.execPath, [main, ...args, "--json"], {
    env: environment(args[0] === "migrate" ? directUrlOf(databaseUrl) : databaseUrl),
    cwd: root
  })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (chunk) => (stdout += chunk))
  child.stderr.on("data", (chunk) => (stderr += chunk))
  const [code] = (await once(child, "exit")) as [number]
  if (code !== 0) throw new Error(`lead-intake ${args.join(" ")} exited ${code}: ${stderr}`)
  return JSON.parse(stdout)
}

export interface RunningServer {
  readonly url: string
  readonly process: ChildProcess
  readonly stop: (signal?: NodeJS.Signals) => Promise<number | null>
}

export const startServer = async (databaseUrl: string): Promise<RunningServer> => {
  const port = await freePort()
  const child = spawn(process.execPath, [main, "serve", "--port", String(port)], {
    env: environment(databaseUrl),
    cwd: root,
    stdio: ["ignore", "ignore", "pipe"]
  })
  let stderr = ""
  child.stderr?.on("data", (chunk) => (stderr += chunk))
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 30_000
  while (true) {
    if (child.exitCode !== null) throw new Error(`server exited ${child.exitCode}: ${stderr}`)
    const ready = await fetch(`${url}/v1`).then(
      (response) => response.ok,
      () => false
    )
    if (ready) break
    if (Date.now() > deadline) throw new Error(`server did not start: ${stderr}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return {
    url,
    process: child,
    stop: async (signal = "SIGTERM") => {
      if (child.exitCode !== null) return child.exitCode
      child.kill(signal)
      const [code] = (await once(child, "exit")) as [number | null]
      return code
    }
  }
}

export const post = async (
  url: string,
  key: string,
  body: unknown,
  headers: Record<string, string> = {}
): Promise<{
  status: number
  headers: Headers
  body: Record<string, unknown> & { error?: { code: string } }
}> => {
  const response = await fetch(`${url}/v1/leads`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body)
  })
  return { status: response.status, headers: response.headers, body: (await response.json()) as never }
}

/** Waits until at least `minSeconds` remain in the current Unix minute, so a burst stays in one window. */
export const awaitRoomInWindow = async (minSeconds: number) => {
  const intoMinute = (Date.now() % 60_000) / 1000
  if (60 - intoMinute < minSeconds)
    await new Promise((resolve) => setTimeout(resolve, (60 - intoMinute + 0.5) * 1000))
}
