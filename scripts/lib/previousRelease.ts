import { execFile } from "node:child_process"
import { mkdtemp, rm, symlink } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { promisify } from "node:util"
import type { SqlFunction } from "../../src/Platform/Migrations.ts"

const exec = promisify(execFile)
const projectRoot = path.resolve(import.meta.dirname, "..", "..")

const git = (...args: ReadonlyArray<string>) =>
  exec("git", ["-C", projectRoot, ...args], { maxBuffer: 64 * 2 ** 20 }).then(({ stdout }) => stdout)

/** The number of the newest migration `migrations/index.ts` lists at a commit (0 where it did not exist). */
const newestMigrationAt = async (commit: string) => {
  const text = await git("show", `${commit}:migrations/index.ts`).catch(() => "")
  const ids = [...text.matchAll(/^\s+"(\d{4})_\w+": \w+,?$/gm)].map((match) => Number(match[1]))
  return Math.max(0, ...ids)
}

export interface Release {
  readonly commit: string
  readonly newestMigration: number
}

/**
 * The main line (first parents) just before the newest commit that changed `migrations/index.ts` in
 * the way `added` tells from its newest migration and its parent's.
 */
const releaseBefore = async (added: (newest: number, before: number) => boolean) => {
  const commits = (await git("log", "--first-parent", "--format=%H", "--", "migrations/index.ts"))
    .split("\n")
    .filter((line) => line !== "")
  if (commits.length === 0)
    throw new Error("no history of migrations/index.ts (a shallow clone?): pass --release")
  for (const commit of commits) {
    const before = await newestMigrationAt(`${commit}^`)
    if (added(await newestMigrationAt(commit), before))
      return { commit: (await git("rev-parse", "--short", `${commit}^`)).trim(), newestMigration: before }
  }
  return undefined
}

/**
 * The release whose database has the migrations through `through` and none after: before the newest
 * commit that added one numbered above it. Undefined when none did (nothing follows `through`).
 */
export const releaseThrough = (through: number): Promise<Release | undefined> =>
  releaseBefore((newest, before) => newest > through && before <= through)

/**
 * The previous release: before the newest commit that added this checkout's newest migration, as the
 * rolling-deploy test (test/e2e/production.test.ts) finds it, on the main line.
 */
export const previousRelease = async (newest: number): Promise<Release> => {
  const release = await releaseBefore((at, before) => at === newest && before < newest)
  if (release === undefined)
    throw new Error("no commit added this checkout's newest migration: pass --release")
  return release
}

/** A commit's `migrations/functions.ts` (the SQL functions that release applies), read from git. */
export const functionsAt = async (commit: string): Promise<ReadonlyArray<SqlFunction>> => {
  const root = await mkdtemp(path.join(tmpdir(), "lead-intake-release-"))
  try {
    await exec("sh", [
      "-c",
      `git -C "$1" archive "$2" migrations | tar -x -C "$3"`,
      "sh",
      projectRoot,
      commit,
      root
    ])
    await symlink(path.join(projectRoot, "node_modules"), path.join(root, "node_modules"))
    const module = (await import(pathToFileURL(path.join(root, "migrations", "functions.ts")).href)) as {
      readonly sqlFunctions: ReadonlyArray<SqlFunction>
    }
    return module.sqlFunctions
  } finally {
    await rm(root, { recursive: true, force: true })
  }
}

/** The newest migration a commit lists, for a release named on the command line. */
export const releaseAt = async (commit: string): Promise<Release> => ({
  commit: (await git("rev-parse", "--short", commit)).trim(),
  newestMigration: await newestMigrationAt(commit)
})
