import { execFile } from "node:child_process"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { chown, mkdtemp, readFile, rm } from "node:fs/promises"
import { connect, createServer, type Server, type Socket } from "node:net"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { freePort } from "../cluster/support.ts"

const run = promisify(execFile)

/** The newest Debian PostgreSQL's bin directory holding every program the failover needs. */
export const debianBinaries = (): string | undefined => {
  const root = "/usr/lib/postgresql"
  if (!existsSync(root)) return undefined
  const programs = ["initdb", "pg_ctl", "pg_basebackup", "psql", "postgres"]
  return readdirSync(root)
    .filter((version) => /^\d+$/.test(version))
    .sort((a, b) => Number(b) - Number(a))
    .map((version) => path.join(root, version, "bin"))
    .find((bin) => programs.every((program) => existsSync(path.join(bin, program))))
}

/** Why the failover cannot run here, or undefined when it can. */
export const unavailable = (): string | undefined => {
  if (debianBinaries() === undefined)
    return "Debian's PostgreSQL binaries (/usr/lib/postgresql/*/bin: initdb, pg_ctl, pg_basebackup, psql) are not installed"
  if (process.getuid?.() === 0 && !readFileSync("/etc/passwd", "utf8").includes("\npostgres:"))
    return "running as root and there is no `postgres` user to run PostgreSQL as"
  return undefined
}

export const randomSecret = () =>
  Buffer.from(crypto.getRandomValues(new Uint8Array(18))).toString("base64url")

/**
 * Runs one of PostgreSQL's programs as `postgres` when this process is root (as .ci/postgres does),
 * else as itself, with `env` added to this process's environment (runuser keeps it).
 */
export const asPostgres = async (
  bin: string,
  program: string,
  args: ReadonlyArray<string>,
  env: Record<string, string> = {}
) => {
  const command = path.join(bin, program)
  const [file, argv] =
    process.getuid?.() === 0 ? ["runuser", ["-u", "postgres", "--", command, ...args]] : [command, [...args]]
  try {
    return (
      await run(file, argv, {
        timeout: 90_000,
        maxBuffer: 16 * 1024 * 1024,
        env: { ...process.env, ...env }
      })
    ).stdout
  } catch (error) {
    const failed = error as { stderr?: string; message: string }
    throw new Error(`${program} ${args.join(" ")} failed: ${failed.stderr ?? failed.message}`)
  }
}

export const postgresOwner = async () => {
  const id = async (flag: string) => Number((await run("id", [flag, "postgres"])).stdout.trim())
  return { uid: await id("-u"), gid: await id("-g") }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis))

/** SIGQUIT (PostgreSQL's immediate shutdown), then SIGKILL if it is still there 10 s later. */
export const stopPostmaster = async (pid: number) => {
  if (!alive(pid)) return
  process.kill(pid, "SIGQUIT")
  for (let waited = 0; waited < 10_000 && alive(pid); waited += 100) await sleep(100)
  if (alive(pid)) process.kill(pid, "SIGKILL")
}

export interface Node {
  readonly name: "primary" | "standby"
  readonly port: number
  readonly dataDir: string
}

/**
 * A primary and a streaming standby of Debian's PostgreSQL in a temporary directory of their own
 * (owned by `postgres`), on free ports of 127.0.0.1, their sockets in that directory. The service's
 * role owns its database and is not a superuser; `replicator` only replicates.
 */
export interface Pair {
  readonly version: string
  readonly primary: Node
  readonly standby: Node
  readonly database: string
  readonly role: { readonly user: string; readonly password: string }
  /** The service's URL for a port (a node's, or the forwarder's). */
  readonly url: (port: number) => string
  /** A query as the `postgres` superuser over the node's socket; rows as tab-separated lines. */
  readonly psql: (node: Node, query: string) => Promise<string>
  /** Makes synchronous replication required and waits until the standby is the synchronous one. */
  readonly requireSynchronousStandby: () => Promise<void>
  readonly stop: (node: Node, mode: "fast" | "immediate") => Promise<void>
  readonly promote: (node: Node) => Promise<void>
  /** Stops every postmaster this pair started (by PID) and removes the directory. */
  readonly release: () => Promise<void>
  /** The same without waiting: for the process's exit. */
  readonly releaseNow: () => void
}

export const startPair = async (): Promise<Pair> => {
  const bin = debianBinaries()
  if (bin === undefined) throw new Error(unavailable())
  const dir = await mkdtemp(path.join(tmpdir(), "lead-intake-failover-"))
  const postmasters: Array<number> = []
  const releaseNow = () => {
    for (const pid of postmasters) {
      try {
        process.kill(pid, "SIGKILL")
      } catch {
        // Gone already.
      }
    }
  }
  const release = async () => {
    await Promise.all(postmasters.map(stopPostmaster))
    await rm(dir, { recursive: true, force: true })
  }
  try {
    if (process.getuid?.() === 0) {
      const owner = await postgresOwner()
      await chown(dir, owner.uid, owner.gid)
    }
    const primary: Node = { name: "primary", port: await freePort(), dataDir: path.join(dir, "primary") }
    const standby: Node = { name: "standby", port: await freePort(), dataDir: path.join(dir, "standby") }
    const replicatorPassword = randomSecret()
    const role = { user: "lead_intake_failover", password: randomSecret() }
    const database = "intake"

    const start = async (node: Node) => {
      // Both nodes alike (a hot standby needs at least the primary's max_connections);
      // synchronous_standby_names is set later on the primary alone, so the promoted standby
      // does not wait for a standby of its own.
      await asPostgres(bin, "pg_ctl", [
        "-D",
        node.dataDir,
        "-l",
        path.join(dir, `${node.name}.log`),
        "-w",
        "-t",
        "60",
        "start",
        "-o",
        `-p ${node.port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=100 -c shared_buffers=32MB -c wal_level=replica -c max_wal_senders=5 -c hot_standby=on`
      ])
      postmasters.push(
        Number((await readFile(path.join(node.dataDir, "postmaster.pid"), "utf8")).split("\n")[0])
      )
    }
    const psql = (node: Node, query: string) =>
      asPostgres(bin, "psql", [
        "-h",
        dir,
        "-p",
        String(node.port),
        "-U",
        "postgres",
        "-d",
        "postgres",
        "-v",
        "ON_ERROR_STOP=1",
        "-qAtX",
        "-c",
        query
      ])

    // The socket directory is this 0700 directory of `postgres`, so `trust` there admits only it.
    await asPostgres(bin, "initdb", [
      "-D",
      primary.dataDir,
      "-U",
      "postgres",
      "--auth-local=trust",
      "--auth-host=scram-sha-256",
      "--encoding=UTF8",
      "--locale=C.UTF-8"
    ])
    await start(primary)
    await psql(primary, `CREATE ROLE replicator LOGIN REPLICATION PASSWORD '${replicatorPassword}'`)
    await psql(primary, `CREATE ROLE ${role.user} LOGIN PASSWORD '${role.password}'`)
    await psql(primary, `CREATE DATABASE ${database} OWNER ${role.user}`)
    await asPostgres(bin, "pg_basebackup", [
      "-D",
      standby.dataDir,
      "-R",
      "-X",
      "stream",
      "-c",
      "fast",
      "-d",
      `host=127.0.0.1 port=${primary.port} user=replicator password=${replicatorPassword} application_name=standby`
    ])
    await start(standby)

    return {
      version: (await asPostgres(bin, "postgres", ["--version"])).trim(),
      primary,
      standby,
      database,
      role,
      url: (port) => `postgres://${role.user}:${role.password}@127.0.0.1:${port}/${database}`,
      psql,
      requireSynchronousStandby: async () => {
        await psql(primary, "ALTER SYSTEM SET synchronous_standby_names = 'standby'")
        await psql(primary, "SELECT pg_reload_conf()")
        for (let waited = 0; ; waited += 200) {
          const states = await psql(primary, "SELECT application_name, sync_state FROM pg_stat_replication")
          if (states.trim() === "standby|sync") return
          if (waited > 30_000) throw new Error(`the standby did not become synchronous: ${states}`)
          await sleep(200)
        }
      },
      stop: (node, mode) =>
        asPostgres(bin, "pg_ctl", ["-D", node.dataDir, "-m", mode, "-w", "-t", "30", "stop"]).then(() => {}),
      promote: (node) =>
        asPostgres(bin, "pg_ctl", ["-D", node.dataDir, "-w", "-t", "30", "promote"]).then(() => {}),
      release,
      releaseNow
    }
  } catch (error) {
    await release()
    throw error
  }
}

/**
 * A TCP forwarder standing for an address that moves on failover: every new connection is
 * forwarded to the current target; `switchTo` changes the target and destroys the connections
 * forwarded to the old one.
 */
export interface Forwarder {
  readonly port: number
  readonly switchTo: (port: number) => void
  readonly close: () => Promise<void>
}

export const startForwarder = async (target: number): Promise<Forwarder> => {
  let current = target
  const open = new Set<Socket>()
  const server: Server = createServer((client) => {
    const upstream = connect(current, "127.0.0.1")
    for (const socket of [client, upstream]) {
      open.add(socket)
      socket.on("error", () => {})
      socket.on("close", () => {
        open.delete(socket)
        client.destroy()
        upstream.destroy()
      })
    }
    client.pipe(upstream)
    upstream.pipe(client)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  if (address === null || typeof address !== "object") throw new Error("the forwarder has no port")
  return {
    port: address.port,
    switchTo: (port) => {
      current = port
      for (const socket of open) socket.destroy()
    },
    close: async () => {
      for (const socket of open) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
