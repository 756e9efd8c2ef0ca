import { execFile } from "node:child_process"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"
import { outputs } from "../../scripts/openapi.ts"

const root = path.resolve(import.meta.dirname, "../..")
const redocly = path.join(root, "node_modules", "@redocly", "cli", "bin", "cli.js")

interface Problem {
  readonly ruleId: string
  readonly severity: string
  readonly message: string
  readonly location: ReadonlyArray<{ readonly pointer: string }>
}

/** Runs `redocly lint` with the `recommended` ruleset, offline, and returns every problem it reports. */
const lint = async (document: string): Promise<ReadonlyArray<Problem>> => {
  const dir = await mkdtemp(path.join(tmpdir(), "lead-intake-redocly-"))
  try {
    const file = path.join(dir, "openapi.json")
    await writeFile(file, document)
    const result = await promisify(execFile)(
      process.execPath,
      [redocly, "lint", "--extends=recommended", "--format=json", file],
      {
        cwd: dir,
        env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
        maxBuffer: 16 * 1024 * 1024
      }
    ).catch((error: { stdout?: string; stderr?: string }) => ({
      stdout: error.stdout ?? "",
      stderr: error.stderr ?? ""
    }))
    const start = result.stdout.indexOf("{")
    expect(start, `redocly printed no JSON:\n${result.stdout}\n${result.stderr}`).toBeGreaterThanOrEqual(0)
    return (JSON.parse(result.stdout.slice(start)) as { problems: ReadonlyArray<Problem> }).problems
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

const summary = (p: Problem) =>
  `${p.severity} ${p.ruleId} at ${p.location.map((l) => l.pointer).join(", ")}: ${p.message}`

describe("the committed contract files", () => {
  it("openapi.json and examples/openapi-types.ts are what `npm run openapi` writes now", async () => {
    for (const [file, expected] of Object.entries(await outputs())) {
      const committed = await readFile(file, "utf8").catch(() => "")
      expect(committed === expected, `${path.relative(root, file)} is stale: run npm run openapi`).toBe(true)
    }
  })

  it("redocly lint (recommended) finds no error and no warning", async () => {
    const document = await readFile(path.join(root, "openapi.json"), "utf8")
    const problems = await lint(document)
    expect(problems.map(summary)).toEqual([])
  })

  it("the lint really reports problems (a document without license and tag descriptions)", async () => {
    const document = JSON.parse(await readFile(path.join(root, "openapi.json"), "utf8"))
    delete document.info.license
    for (const tag of document.tags) delete tag.description
    const rules = new Set((await lint(JSON.stringify(document))).map((problem) => problem.ruleId))
    expect([...rules]).toEqual(expect.arrayContaining(["info-license", "tag-description"]))
  })
})
