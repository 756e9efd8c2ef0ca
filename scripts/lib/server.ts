import { spawn } from "node:child_process"
import { openSync, readFileSync } from "node:fs"
import { createServer } from "node:net"

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject()))
    })
  })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Resident set size of a process in bytes (`VmRSS`), or its peak so far (`VmHWM`). */
export const memoryOf = (pid: number, field: "VmRSS" | "VmHWM"): number => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8")
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)
    return match === null ? 0 : Number(match[1]) * 1024
  } catch {
    return 0
  }
}

export interface ServerProcess {
  readonly pid: number
  readonly url: string
  /** Samples the RSS every 50 ms until `stop` is called; returns the highest sample in bytes. */
  readonly sampleRss: () => { readonly stop: () => number }
  readonly stop: () => Promise<number | null>
}

/**
 * The server as the README starts it: the package's bin (`lead-intake serve`, executed through its
 * shebang as `npx lead-intake serve` does), in its own process. `command` replaces it (the reference
 * servers); Node flags go through NODE_OPTIONS so they reach whichever Node the bin runs.
 */
export const startServer = async (options: {
  readonly env: Record<string, string>
  readonly logFile: string
  readonly nodeOptions?: ReadonlyArray<string>
  readonly command?: ReadonlyArray<string>
  readonly readyPath?: string
  readonly cwd?: string
}): Promise<ServerProcess> => {
  const port = await freePort()
  const [file, ...args] = options.command ?? ["bin/lead-intake.js", "serve", "--port", String(port)]
  const log = openSync(options.logFile, "a")
  const { DATABASE_URL: _, ...inherited } = process.env
  const nodeOptions = [inherited.NODE_OPTIONS ?? "", ...(options.nodeOptions ?? [])].join(" ").trim()
  const child = spawn(file!, args, {
    env: {
      ...inherited,
      ...(nodeOptions === "" ? {} : { NODE_OPTIONS: nodeOptions }),
      // The console on a port of its own and no probe listener, so two servers (and a developer's
      // own on 8081/8082) never collide; the env given can set either.
      ADMIN_PORT: String(await freePort()),
      HEALTH_PORT: "off",
      ...options.env,
      PORT: String(port),
      HOST: "127.0.0.1"
    },
    stdio: ["ignore", log, log],
    ...(options.cwd === undefined ? {} : { cwd: options.cwd })
  })
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  let alive = true
  void exited.then(() => {
    alive = false
  })
  const url = `http://127.0.0.1:${port}`
  const deadline = performance.now() + 60_000
  while (true) {
    if (!alive) throw new Error(`the server exited during start; see ${options.logFile}`)
    const ready = await fetch(`${url}${options.readyPath ?? "/v1"}`).then(
      (response) => response.ok,
      () => false
    )
    if (ready) break
    if (performance.now() > deadline) {
      child.kill("SIGKILL")
      throw new Error(`the server did not answer within 60 s; see ${options.logFile}`)
    }
    await sleep(100)
  }
  const pid = child.pid!
  return {
    pid,
    url,
    sampleRss: () => {
      let peak = memoryOf(pid, "VmRSS")
      const timer = setInterval(() => {
        peak = Math.max(peak, memoryOf(pid, "VmRSS"))
      }, 50)
      return {
        stop: () => {
          clearInterval(timer)
          return Math.max(peak, memoryOf(pid, "VmRSS"))
        }
      }
    },
    stop: async () => {
      if (alive) child.kill("SIGTERM")
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000)
      const code = await exited
      clearTimeout(timer)
      return code
    }
  }
}
