import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import type { TestProject } from "vitest/node"
import { acquireEmbeddedCluster } from "../../src/Platform/EmbeddedPostgres.ts"

declare module "vitest" {
  export interface ProvidedContext {
    postgres: {
      readonly host: string
      readonly port: number
      readonly user: string
      readonly password: string
    }
  }
}

/** One embedded PostgreSQL for the whole run; every test file makes its own database in it. */
export default async function setup(project: TestProject) {
  const dataDir = await mkdtemp(path.join(tmpdir(), "lead-intake-test-"))
  const cluster = await acquireEmbeddedCluster(dataDir, (line) => {
    if (!line.startsWith("stopping")) process.stderr.write(`[postgres] ${line}\n`)
  })
  project.provide("postgres", {
    host: "127.0.0.1",
    port: cluster.port,
    user: cluster.user,
    password: cluster.password
  })
  return async () => {
    await cluster.release()
    await rm(dataDir, { recursive: true, force: true })
  }
}
