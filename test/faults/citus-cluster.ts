import { execFile } from "node:child_process"
import { existsSync } from "node:fs"
import { appendFile, chown, mkdtemp, readFile, rename, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { freePort } from "../cluster/support.ts"
import { type Env, json, projectRoot, runInProcess } from "../e2e/Processes.ts"
import { asPostgres, postgresOwner, stopPostmaster } from "./standby.ts"

const run = promisify(execFile)
const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis))

/** `.ci/citus`'s servers: Debian's PostgreSQL 15, with the Citus build it installs. */
const bin = "/usr/lib/postgresql/15/bin"

/** Why a cluster of the test's own cannot be started here, or undefined when it can. */
export const citusUnavailable = (): string | undefined => {
  if (!existsSync(path.join(bin, "pg_ctl"))) return `Debian's PostgreSQL 15 is not installed (${bin})`
  if (!existsSync("/usr/lib/postgresql/15/lib/citus.so"))
    return "Citus is not installed for PostgreSQL 15 (`.ci/citus start` installs it)"
  if (process.getuid?.() !== 0) return "`.ci/citus` runs its servers as `postgres`: run the tests as root"
  return undefined
}

export interface CitusNode {
  /** `coordinator`, `worker1`, `worker2`, or a standby's name. */
  readonly name: string
  readonly port: number
  readonly dataDir: string
}

/**
 * A Citus cluster of the test file's own, started by `.ci/citus start` (a coordinator and two
 * workers, each node's settings in its postgresql.conf), in a temporary directory: the tests stop,
 * promote and restore its nodes, which the run's shared cluster must not see. The service's role
 * (`lead_intake_ci`) owns the database `intake`, a copy of template1 (the schema, distributed); the
 * operator's steps (`psql`, `pg_ctl`, `pg_basebackup`) run as `postgres` over the directory's socket.
 */
export interface CitusCluster {
  readonly dir: string
  readonly coordinator: CitusNode
  readonly workers: ReadonlyArray<CitusNode>
  /** The service's DATABASE_URL on the coordinator, database `intake`. */
  readonly url: string
  /** A query as the `postgres` superuser on the node at `port`, in `intake`; rows as `|`-separated lines. */
  readonly psql: (port: number, query: string) => Promise<string>
  /** `pg_ctl start` of a stopped node's data directory, as `.ci/citus` starts it (its passwords for the other nodes). */
  readonly start: (node: CitusNode) => Promise<void>
  readonly stop: (node: CitusNode, mode: "fast" | "immediate") => Promise<void>
  /** `pg_basebackup -X stream -c fast` of every node, each into `DIR/backup/NODE`. */
  readonly baseBackups: () => Promise<void>
  /** `pg_switch_wal()` on every node, then waits until each node's archive holds the segment it closed. */
  readonly archiveCurrentSegments: () => Promise<void>
  /**
   * Every node (all stopped) restored in a new data directory at its own path (the old one moved
   * aside to `NODE-lost`) from its base backup and its own archive to the restore point `name`,
   * on its own port, then started; resolves once no node is in recovery.
   */
  readonly restoreToName: (name: string) => Promise<void>
  /**
   * A streaming standby of `node` (`pg_basebackup -R`) on a free port, started, and made the
   * synchronous standby of the node (`synchronous_standby_names`).
   */
  readonly synchronousStandby: (node: CitusNode) => Promise<CitusNode>
  readonly promote: (node: CitusNode) => Promise<void>
  /** Stops every node and standby (by their postmasters' PIDs) and removes the directory. */
  readonly release: () => Promise<void>
  /** SIGKILL to every postmaster it knows, without waiting: for the process's exit. */
  readonly releaseNow: () => void
}

const exported = (output: string, name: string) => {
  const match = new RegExp(`^export ${name}='([^']*)'$`, "m").exec(output)
  if (match === null) throw new Error(`.ci/citus start printed no ${name}`)
  return match[1]!
}

const postmasterPid = async (dataDir: string) =>
  Number((await readFile(path.join(dataDir, "postmaster.pid"), "utf8")).split("\n")[0])

/** Starts a cluster with every node archiving its WAL (`CITUS_WAL_ARCHIVE=on`) when `archive` is true. */
export const startCitusCluster = async (options: { readonly archive: boolean }): Promise<CitusCluster> => {
  const dir = await mkdtemp(path.join(tmpdir(), "lead-intake-citus-faults-"))
  const ci = path.join(projectRoot, ".ci/citus")
  const extra: Array<CitusNode> = []
  const known = new Set<number>()
  const nodes: Array<CitusNode> = []
  const releaseNow = () => {
    for (const pid of known) {
      try {
        process.kill(pid, "SIGKILL")
      } catch {
        // Gone already.
      }
    }
  }
  const release = async () => {
    const pids = await Promise.all(
      [...nodes, ...extra].map((node) => postmasterPid(node.dataDir).catch(() => undefined))
    )
    // Only postmasters it started: a pid file left behind may name a process that is not one.
    await Promise.all(
      pids.flatMap((pid) => (pid !== undefined && known.has(pid) ? [stopPostmaster(pid)] : []))
    )
    // Removes the directory (its own servers, stopped above, are gone already).
    await run(ci, ["stop", dir], { timeout: 60_000 })
  }
  try {
    const started = await run(ci, ["start", dir], {
      cwd: projectRoot,
      timeout: 240_000,
      maxBuffer: 16 * 1024 * 1024,
      env: { ...process.env, CITUS_WAL_ARCHIVE: options.archive ? "on" : "off" }
    })
    const serviceUrl = new URL(exported(started.stdout, "TEST_DATABASE_URL"))
    const workerPorts = exported(started.stdout, "TEST_CITUS_WORKERS")
      .split(",")
      .map((worker) => Number(worker.slice(worker.lastIndexOf(":") + 1)))
    nodes.push(
      { name: "coordinator", port: Number(serviceUrl.port), dataDir: path.join(dir, "coordinator") },
      ...workerPorts.map((port, index) => ({
        name: `worker${index + 1}`,
        port,
        dataDir: path.join(dir, `worker${index + 1}`)
      }))
    )
    for (const node of nodes) known.add(await postmasterPid(node.dataDir))
    const owner = await postgresOwner()
    const pgpass = { PGPASSFILE: path.join(dir, "pgpass") }
    const postgres = (program: string, args: ReadonlyArray<string>) => asPostgres(bin, program, args, pgpass)
    const psqlIn = (database: string) => (port: number, query: string) =>
      postgres("psql", [
        "-h",
        dir,
        "-p",
        String(port),
        "-U",
        "postgres",
        "-d",
        database,
        "-v",
        "ON_ERROR_STOP=1",
        "-qAtX",
        "-c",
        query
      ])
    const psql = psqlIn("intake")
    const start = async (node: CitusNode) => {
      await postgres("pg_ctl", [
        "-D",
        node.dataDir,
        "-l",
        path.join(dir, `${node.name}.log`),
        "-w",
        "-t",
        "60",
        "start"
      ])
      known.add(await postmasterPid(node.dataDir))
    }
    const stop = (node: CitusNode, mode: "fast" | "immediate") =>
      postgres("pg_ctl", ["-D", node.dataDir, "-m", mode, "-w", "-t", "30", "stop"]).then(() => {})
    const backupOf = (node: CitusNode) => path.join(dir, "backup", node.name)

    await psqlIn("postgres")(nodes[0]!.port, "CREATE DATABASE intake OWNER lead_intake_ci")
    serviceUrl.pathname = "/intake"

    return {
      dir,
      coordinator: nodes[0]!,
      workers: nodes.slice(1),
      url: serviceUrl.toString(),
      psql,
      start,
      stop,
      baseBackups: async () => {
        await run("runuser", ["-u", "postgres", "--", "mkdir", "-p", path.join(dir, "backup")])
        await Promise.all(
          nodes.map((node) =>
            postgres("pg_basebackup", [
              "-h",
              dir,
              "-p",
              String(node.port),
              "-U",
              "postgres",
              "-D",
              backupOf(node),
              "-X",
              "stream",
              "-c",
              "fast"
            ])
          )
        )
      },
      archiveCurrentSegments: () =>
        Promise.all(
          nodes.map(async (node) => {
            const segment = (await psql(node.port, "SELECT pg_walfile_name(pg_switch_wal())")).trim()
            for (let waited = 0; ; waited += 100) {
              const archived = (
                await psql(node.port, "SELECT last_archived_wal FROM pg_stat_archiver")
              ).trim()
              if (archived !== "" && archived >= segment) return
              if (waited > 30_000)
                throw new Error(`${node.name}: segment ${segment} not archived (last: ${archived || "none"})`)
              await sleep(100)
            }
          })
        ).then(() => {}),
      restoreToName: async (name) => {
        await Promise.all(
          nodes.map(async (node) => {
            await rename(node.dataDir, `${node.dataDir}-lost`)
            await run("cp", ["-a", backupOf(node), node.dataDir])
            await appendFile(
              path.join(node.dataDir, "postgresql.auto.conf"),
              [
                `restore_command = 'cp ${path.join(dir, "archive", node.name)}/%f %p'`,
                `recovery_target_name = '${name}'`,
                "recovery_target_action = 'promote'",
                ""
              ].join("\n")
            )
            const signal = path.join(node.dataDir, "recovery.signal")
            await writeFile(signal, "")
            await chown(signal, owner.uid, owner.gid)
            await start(node)
          })
        )
        for (const node of nodes) {
          for (let waited = 0; ; waited += 100) {
            const inRecovery = (await psql(node.port, "SELECT pg_is_in_recovery()").catch(() => "t")).trim()
            if (inRecovery === "f") break
            if (waited > 60_000) throw new Error(`${node.name} is still in recovery after 60 s`)
            await sleep(100)
          }
          // Out of recovery at the restore point, not at the end of its archive.
          const log = await readFile(path.join(dir, `${node.name}.log`), "utf8")
          if (!log.includes(`recovery stopping at restore point "${name}"`))
            throw new Error(`${node.name} did not stop recovery at the restore point:\n${log.slice(-2_000)}`)
        }
      },
      synchronousStandby: async (node) => {
        const standby: CitusNode = {
          name: `${node.name}-standby`,
          port: await freePort(),
          dataDir: path.join(dir, `${node.name}-standby`)
        }
        const application = `${node.name}_standby`
        await postgres("pg_basebackup", [
          "-d",
          `host=${dir} port=${node.port} user=postgres application_name=${application}`,
          "-D",
          standby.dataDir,
          "-R",
          "-X",
          "stream",
          "-c",
          "fast"
        ])
        // The node's settings came with its postgresql.conf; the standby's own port after them.
        await appendFile(path.join(standby.dataDir, "postgresql.auto.conf"), `port = ${standby.port}\n`)
        extra.push(standby)
        await start(standby)
        await psql(node.port, `ALTER SYSTEM SET synchronous_standby_names = '${application}'`)
        await psql(node.port, "SELECT pg_reload_conf()")
        for (let waited = 0; ; waited += 200) {
          const states = await psql(node.port, "SELECT application_name, sync_state FROM pg_stat_replication")
          if (states.trim() === `${application}|sync`) return standby
          if (waited > 30_000) throw new Error(`${standby.name} did not become synchronous: ${states}`)
          await sleep(200)
        }
      },
      promote: (node) => postgres("pg_ctl", ["-D", node.dataDir, "-w", "-t", "30", "promote"]).then(() => {}),
      release,
      releaseNow
    }
  } catch (error) {
    await release().catch(() => {})
    throw error
  }
}

/** A partner: an organization, the node that holds its rows, and an origin's API key that sends for it. */
export interface Partner {
  readonly organization: string
  readonly worker: CitusNode
  readonly key: string
}

/**
 * One partner on each worker: organizations are created (`org create`, as an operator does) until
 * each worker holds one, as placed by `get_shard_id_for_distribution_column` and `pg_dist_placement`.
 */
export const partnersOnEveryWorker = async (cluster: CitusCluster): Promise<ReadonlyArray<Partner>> => {
  const env: Env = { DATABASE_URL: cluster.url }
  const found = new Map<number, string>()
  for (let created = 0; found.size < cluster.workers.length; created++) {
    if (created === 16) throw new Error("16 organizations, and a worker holds none of them")
    const organization: string = json(
      await runInProcess(["org", "create", "--name", `Partner ${created}`, "--json"], env)
    ).id
    const port = Number(
      (
        await cluster.psql(
          cluster.coordinator.port,
          `SELECT n.nodeport FROM pg_dist_placement p JOIN pg_dist_node n USING (groupid)
           WHERE p.shardid = get_shard_id_for_distribution_column('leads', '${organization}')`
        )
      ).trim()
    )
    if (!found.has(port)) found.set(port, organization)
  }
  return Promise.all(
    cluster.workers.map(async (worker) => {
      const organization = found.get(worker.port)!
      const origin = json(
        await runInProcess(
          [
            "origin",
            "create",
            "--org",
            organization,
            "--label",
            worker.name,
            "--rate-limit",
            "1000000",
            "--json"
          ],
          env
        )
      )
      return { organization, worker, key: origin.key as string }
    })
  )
}

export interface Attempt {
  readonly startedAt: number
  readonly endedAt: number
  /** 0: no answer (connection refused or reset, or none within 8 s). */
  readonly status: number
  readonly code: string | undefined
  readonly retryAfter: string | undefined
  readonly requestId: string | undefined
  readonly leadId: string | undefined
  readonly replay: boolean
}

/** One `POST /v1/leads` with the partner's key and the lead's Idempotency-Key. */
export const postLead = async (
  baseUrl: string,
  partner: Partner,
  lead: { readonly key: string; readonly body: Uint8Array }
): Promise<Attempt> => {
  const startedAt = performance.now()
  const answer = await fetch(`${baseUrl}/v1/leads`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${partner.key}`,
      "content-type": "application/json",
      "idempotency-key": lead.key
    },
    body: lead.body,
    signal: AbortSignal.timeout(8_000)
  }).then(
    async (response) => ({
      status: response.status,
      retryAfter: response.headers.get("retry-after") ?? undefined,
      requestId: response.headers.get("x-request-id") ?? undefined,
      body: (await response.json().catch(() => ({}))) as {
        lead_id?: string
        replay?: boolean
        error?: { code: string }
      }
    }),
    () => undefined
  )
  return {
    startedAt,
    endedAt: performance.now(),
    status: answer?.status ?? 0,
    code: answer?.body.error?.code,
    retryAfter: answer?.retryAfter,
    requestId: answer?.requestId,
    leadId: answer?.body.lead_id,
    replay: answer?.body.replay === true
  }
}
