import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import type { TestProject } from "vitest/node"
import { ensureConsole } from "../../scripts/build.ts"
import { acquireEmbeddedCluster } from "../../src/Platform/EmbeddedPostgres.ts"

declare module "vitest" {
  export interface ProvidedContext {
    postgres: {
      readonly host: string
      readonly port: number
      readonly user: string
      readonly password: string
      /** "embedded" for the run's own cluster (the user is its superuser), else the server's version. */
      readonly server: string
      /** A login role with no rights of its own, for tests of a DML-only `serve` (TEST_DML_ROLE). */
      readonly dmlRole: { readonly user: string; readonly password: string } | null
    }
  }
}

/** `user:password`, as `TEST_DML_ROLE` gives a role the CI script created. */
const dmlRoleOf = (raw: string | undefined) => {
  if (raw === undefined || raw === "") return null
  const at = raw.indexOf(":")
  if (at <= 0) throw new Error("TEST_DML_ROLE: expected user:password")
  return { user: raw.slice(0, at), password: raw.slice(at + 1) }
}

/**
 * Every test file makes its own database in one PostgreSQL for the whole run: the server at
 * `TEST_DATABASE_URL` when it is set (as a role with CREATEDB; CI runs Debian's PostgreSQL so), else
 * an embedded one started here. Tests that stop or freeze the server start their own embedded one.
 */
export default async function setup(project: TestProject) {
  // Servers started from src/ serve the console from dist/console: built here when stale.
  if (await ensureConsole()) process.stderr.write("[console] built dist/console\n")
  const external = process.env.TEST_DATABASE_URL
  if (external !== undefined && external !== "") {
    const url = URL.parse(external)
    if (url === null || !url.protocol.startsWith("postgres"))
      throw new Error("TEST_DATABASE_URL: not a postgres:// URL")
    const server = await serverVersion(external)
    process.stderr.write(`[postgres] tests on ${url.hostname}:${url.port} as ${url.username}: ${server}\n`)
    project.provide("postgres", {
      host: url.hostname,
      port: Number(url.port === "" ? 5432 : url.port),
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      server,
      dmlRole: dmlRoleOf(process.env.TEST_DML_ROLE)
    })
    return
  }
  const dataDir = await mkdtemp(path.join(tmpdir(), "lead-intake-test-"))
  const cluster = await acquireEmbeddedCluster(dataDir, (line) => {
    if (!line.startsWith("stopping")) process.stderr.write(`[postgres] ${line}\n`)
  })
  project.provide("postgres", {
    host: "127.0.0.1",
    port: cluster.port,
    user: cluster.user,
    password: cluster.password,
    server: "embedded",
    dmlRole: dmlRoleOf(process.env.TEST_DML_ROLE)
  })
  return async () => {
    await cluster.release()
    await rm(dataDir, { recursive: true, force: true })
  }
}

const serverVersion = async (url: string) => {
  const { default: pg } = await import("pg")
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const result = await client.query<{ version: string }>("SELECT version()")
    return result.rows[0]!.version
  } finally {
    await client.end()
  }
}
