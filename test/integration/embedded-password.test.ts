import { mkdtemp, readFile, rm, stat } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import { afterAll, describe, expect, it } from "vitest"
import { acquireEmbeddedCluster, type EmbeddedCluster } from "../../src/Platform/EmbeddedPostgres.ts"

/** Runs `statement` as the superuser with `password`; false when the server refuses the password. */
const connectsWith = (cluster: EmbeddedCluster, password: string, statement = "SELECT 1") =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const sql = yield* PgClient.makeClient({
          host: "127.0.0.1",
          port: cluster.port,
          username: cluster.user,
          password: Redacted.make(password),
          database: "postgres",
          connectTimeout: "10 seconds"
        })
        yield* sql.unsafe(statement)
      })
    ).pipe(
      Effect.provide(Reactivity.layer),
      Effect.as(true),
      Effect.catchTag("SqlError", () => Effect.succeed(false))
    )
  )

const passwordFile = (dataDir: string) => path.join(dataDir, "pg-password")

describe("the embedded PostgreSQL's superuser password", { timeout: 240_000 }, () => {
  const dataDirs: Array<string> = []
  const freshDataDir = async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "lead-intake-pw-test-"))
    dataDirs.push(dir)
    return dir
  }
  afterAll(async () => {
    for (const dir of dataDirs) await rm(dir, { recursive: true, force: true })
  })

  it("is random per data directory, made at first start, kept in a 0600 file there, and the one the service connects with", async () => {
    const first = await freshDataDir()
    const cluster = await acquireEmbeddedCluster(first, () => {})
    try {
      const file = await stat(passwordFile(first))
      expect(file.mode & 0o777).toBe(0o600)
      expect(file.uid).toBe(process.getuid?.())
      const saved = (await readFile(passwordFile(first), "utf8")).trim()
      expect(saved).toBe(cluster.password)
      expect(saved).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect(await connectsWith(cluster, cluster.password)).toBe(true)
      expect(await connectsWith(cluster, "lead-intake"), "the former fixed password").toBe(false)
    } finally {
      await cluster.release()
    }
    const again = await acquireEmbeddedCluster(first, () => {})
    try {
      expect(again.password, "kept across restarts").toBe(cluster.password)
      expect(await connectsWith(again, again.password)).toBe(true)
    } finally {
      await again.release()
    }
    const second = await acquireEmbeddedCluster(await freshDataDir(), () => {})
    try {
      expect(second.password).not.toBe(cluster.password)
    } finally {
      await second.release()
    }
  })

  it("of a data directory made with the former fixed password is replaced by a random one at the next start", async () => {
    const dir = await freshDataDir()
    const made = await acquireEmbeddedCluster(dir, () => {})
    try {
      // What a data directory from before looks like: the fixed password and no file.
      expect(await connectsWith(made, made.password, "ALTER ROLE postgres PASSWORD 'lead-intake'")).toBe(true)
    } finally {
      await made.release()
    }
    await rm(passwordFile(dir))

    const lines: Array<string> = []
    const adopted = await acquireEmbeddedCluster(dir, (line) => lines.push(line))
    try {
      expect(adopted.password).not.toBe("lead-intake")
      expect(adopted.password).not.toBe(made.password)
      expect((await readFile(passwordFile(dir), "utf8")).trim()).toBe(adopted.password)
      expect((await stat(passwordFile(dir))).mode & 0o777).toBe(0o600)
      expect(await connectsWith(adopted, adopted.password)).toBe(true)
      expect(await connectsWith(adopted, "lead-intake"), "the fixed password no longer works").toBe(false)
      expect(lines.join("\n")).toMatch(/replaced the former fixed superuser password/)
      expect(lines.join("\n")).not.toContain(adopted.password)
    } finally {
      await adopted.release()
    }
    const later = await acquireEmbeddedCluster(dir, () => {})
    try {
      expect(later.password).toBe(adopted.password)
    } finally {
      await later.release()
    }
  })

  it("refuses to start when the cluster has no file and does not take the former password, saying so", async () => {
    const dir = await freshDataDir()
    const made = await acquireEmbeddedCluster(dir, () => {})
    await made.release()
    await rm(passwordFile(dir))
    await expect(acquireEmbeddedCluster(dir, () => {})).rejects.toThrow(/has no password file/)
  })
})
