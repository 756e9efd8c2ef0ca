import { execFile } from "node:child_process"
import { appendFile, chown, mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { freePort } from "../cluster/support.ts"
import {
  asPostgres,
  debianBinaries,
  postgresOwner,
  randomSecret,
  stopPostmaster,
  unavailable
} from "./standby.ts"

const run = promisify(execFile)

const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis))

/**
 * One PostgreSQL of Debian's (the newest installed) that archives its WAL, as docs/sre.md's
 * "Point-in-time recovery" sets one up: `archive_mode = on` and an `archive_command` that copies each
 * finished segment into a directory, beside a base backup taken with `pg_basebackup`; and the restore
 * of that backup, in a data directory of its own, to a time (`recovery_target_time`) with the
 * archive's segments (`restore_command`). Everything in one temporary directory owned by `postgres`;
 * every postmaster it starts is stopped by its PID. The service's role owns its database and is not a
 * superuser; the operator's steps (`psql`) run as `postgres` over the directory's socket.
 */
export interface ArchivingServer {
  readonly version: string
  /** The primary's port; a restored server's is its own. */
  readonly port: number
  readonly archiveDir: string
  readonly database: string
  readonly url: (port: number) => string
  /** A query as the `postgres` superuser on the server at `port`; rows as `|`-separated lines. */
  readonly psql: (port: number, query: string) => Promise<string>
  /** `pg_basebackup -D <dir> -X stream -c fast` of the primary; the directory it wrote. */
  readonly baseBackup: () => Promise<string>
  /** `pg_switch_wal()`, then waits until the archive holds the segment it closed. */
  readonly archiveCurrentSegment: () => Promise<void>
  readonly stop: (mode: "fast" | "immediate") => Promise<void>
  /**
   * The backup copied into a new data directory and started on a port of its own with
   * `restore_command`, `recovery_target_time = target` and `recovery_target_action = 'promote'`;
   * resolves once recovery has ended (the server is out of recovery and takes writes).
   */
  readonly restoreToTime: (backup: string, target: string) => Promise<{ readonly port: number }>
  readonly release: () => Promise<void>
  readonly releaseNow: () => void
}

export const startArchivingServer = async (): Promise<ArchivingServer> => {
  const bin = debianBinaries()
  if (bin === undefined) throw new Error(unavailable())
  const dir = await mkdtemp(path.join(tmpdir(), "lead-intake-pitr-"))
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
    const root = process.getuid?.() === 0
    const owner = root ? await postgresOwner() : undefined
    const own = (file: string) =>
      owner === undefined ? Promise.resolve() : chown(file, owner.uid, owner.gid)
    await own(dir)
    const archiveDir = path.join(dir, "archive")
    const primaryDir = path.join(dir, "primary")
    const port = await freePort()
    const role = { user: "lead_intake_pitr", password: randomSecret() }
    const database = "intake"
    const asOwner = (program: string, args: ReadonlyArray<string>) => asPostgres(bin, program, args)

    await asOwner("initdb", [
      "-D",
      primaryDir,
      "-U",
      "postgres",
      "--auth-local=trust",
      "--auth-host=scram-sha-256",
      "--encoding=UTF8",
      "--locale=C.UTF-8"
    ])
    await run(root ? "runuser" : "mkdir", root ? ["-u", "postgres", "--", "mkdir", archiveDir] : [archiveDir])
    // In postgresql.conf, so that a base backup (which copies it) starts with the same settings.
    await appendFile(
      path.join(primaryDir, "postgresql.conf"),
      [
        `port = ${port}`,
        "listen_addresses = '127.0.0.1'",
        `unix_socket_directories = '${dir}'`,
        "max_connections = 100",
        "shared_buffers = 32MB",
        "wal_level = replica",
        "max_wal_senders = 5",
        "archive_mode = on",
        `archive_command = 'test ! -f ${archiveDir}/%f && cp %p ${archiveDir}/%f'`,
        ""
      ].join("\n")
    )
    const start = async (dataDir: string, name: string) => {
      await asOwner("pg_ctl", ["-D", dataDir, "-l", path.join(dir, `${name}.log`), "-w", "-t", "60", "start"])
      postmasters.push(Number((await readFile(path.join(dataDir, "postmaster.pid"), "utf8")).split("\n")[0]))
    }
    const psql = (at: number, query: string) =>
      asOwner("psql", [
        "-h",
        dir,
        "-p",
        String(at),
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

    await start(primaryDir, "primary")
    await psql(port, `CREATE ROLE ${role.user} LOGIN PASSWORD '${role.password}'`)
    await psql(port, `CREATE DATABASE ${database} OWNER ${role.user}`)

    let backups = 0
    let restores = 0
    return {
      version: (await asOwner("postgres", ["--version"])).trim(),
      port,
      archiveDir,
      database,
      url: (at) => `postgres://${role.user}:${role.password}@127.0.0.1:${at}/${database}`,
      psql,
      baseBackup: async () => {
        const target = path.join(dir, `backup-${++backups}`)
        await asOwner("pg_basebackup", [
          "-h",
          dir,
          "-p",
          String(port),
          "-U",
          "postgres",
          "-D",
          target,
          "-X",
          "stream",
          "-c",
          "fast"
        ])
        return target
      },
      archiveCurrentSegment: async () => {
        const segment = (await psql(port, "SELECT pg_walfile_name(pg_switch_wal())")).trim()
        for (let waited = 0; ; waited += 100) {
          const archived = (await psql(port, "SELECT last_archived_wal FROM pg_stat_archiver")).trim()
          if (archived !== "" && archived >= segment) return
          if (waited > 30_000)
            throw new Error(`segment ${segment} not archived (last: ${archived || "none"})`)
          await sleep(100)
        }
      },
      stop: (mode) =>
        asOwner("pg_ctl", ["-D", primaryDir, "-m", mode, "-w", "-t", "30", "stop"]).then(() => {}),
      restoreToTime: async (backup, target) => {
        const dataDir = path.join(dir, `restored-${++restores}`)
        const restoredPort = await freePort()
        await run(
          root ? "runuser" : "cp",
          root ? ["-u", "postgres", "--", "cp", "-a", backup, dataDir] : ["-a", backup, dataDir]
        )
        await appendFile(
          path.join(dataDir, "postgresql.auto.conf"),
          [
            `port = ${restoredPort}`,
            `restore_command = 'cp ${archiveDir}/%f %p'`,
            `recovery_target_time = '${target}'`,
            "recovery_target_action = 'promote'",
            ""
          ].join("\n")
        )
        const signal = path.join(dataDir, "recovery.signal")
        await writeFile(signal, "")
        await own(signal)
        await start(dataDir, `restored-${restores}`)
        for (let waited = 0; ; waited += 100) {
          const inRecovery = (await psql(restoredPort, "SELECT pg_is_in_recovery()").catch(() => "t")).trim()
          if (inRecovery === "f") return { port: restoredPort }
          if (waited > 60_000) throw new Error(`the restored server is still in recovery after 60 s`)
          await sleep(100)
        }
      },
      release,
      releaseNow
    }
  } catch (error) {
    await release()
    throw error
  }
}
