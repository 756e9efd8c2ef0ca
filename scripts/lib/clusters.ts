import { execFile } from "node:child_process"
import { appendFile, mkdtemp, readFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import pg from "pg"
import type { Cleanups } from "./main.ts"

/** The servers `.ci/` starts for the suites: Debian's PostgreSQL, a Citus cluster, PgBouncer in front of either. */
export type CiScript = "postgres" | "citus" | "pgbouncer"

export interface CiServer {
  readonly dir: string
  /** What the script printed for `eval`: TEST_DATABASE_URL, TEST_CITUS_WORKERS, ... */
  readonly env: Readonly<Record<string, string>>
}

const runScript = (
  script: CiScript,
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  logFile: string
) =>
  new Promise<string>((resolve, reject) => {
    execFile(
      path.join(".ci", script),
      args,
      { env: { ...process.env, ...env }, maxBuffer: 1 << 20 },
      (error, stdout, stderr) => {
        void appendFile(logFile, `$ .ci/${script} ${args.join(" ")}\n${stderr}`).finally(() =>
          error === null
            ? resolve(stdout)
            : reject(new Error(`.ci/${script} ${args[0]} failed (${error.message.trim()}); see ${logFile}`))
        )
      }
    )
  })

/** `export NAME='value'` lines; the scripts' values (ports, base64url passwords) hold no quote. */
const exportsOf = (output: string) =>
  Object.fromEntries(
    [...output.matchAll(/^export ([A-Z_]+)='([^']*)'$/gm)].map((match) => [match[1]!, match[2]!])
  )

/**
 * Starts one of `.ci/`'s servers in a directory of its own under the system's temporary directory
 * (its script gives it to the `postgres` user), with `env` (PgBouncer's upstream). Its stop, by its
 * PIDs, is pushed onto `cleanups` before it starts, so one that fails half-way is stopped too.
 */
export const startCiServer = async (
  script: CiScript,
  options: { readonly env?: Record<string, string>; readonly logFile: string; readonly cleanups: Cleanups }
): Promise<CiServer> => {
  const dir = await mkdtemp(path.join(tmpdir(), `lead-intake-scale-${script}-`))
  options.cleanups.push(() => runScript(script, ["stop", dir], {}, options.logFile))
  const output = await runScript(script, ["start", dir], options.env ?? {}, options.logFile)
  return { dir, env: exportsOf(output) }
}

/** The PID a server wrote in its directory: a postmaster's (`postmaster.pid`) or PgBouncer's. */
export const pidIn = async (file: string) => Number((await readFile(file, "utf8")).split("\n")[0])

/** `url` with another database, or another `host:port`. */
export const withDatabase = (url: string, database: string) => {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

export const withHost = (url: string, host: string) => {
  const parsed = new URL(url)
  parsed.host = host
  return parsed.toString()
}

/** One connection to `url` for a few statements, closed afterwards. */
export const withClient = async <A>(url: string, use: (client: pg.Client) => Promise<A>) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await use(client)
  } finally {
    await client.end()
  }
}

/** A connection kept open for the run (statistics read between measurements), closed by `cleanups`. */
export const openClient = async (url: string, cleanups: Cleanups) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  cleanups.push(() => client.end())
  return client
}
