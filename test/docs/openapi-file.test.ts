import { execFile } from "node:child_process"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"
import { documentText, outputs } from "../../scripts/openapi.ts"

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

describe("the document's completeness", () => {
  const document = JSON.parse(documentText()) as {
    info: Record<string, unknown>
    servers: ReadonlyArray<{ url: string }>
    tags: ReadonlyArray<{ name: string; description?: string }>
    paths: Record<string, Record<string, Record<string, unknown>>>
  }
  const operations = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({
      name: `${method.toUpperCase()} ${path}`,
      operation
    }))
  )

  it("has a license, a server and a description for every tag", () => {
    expect(document.info.license).toMatchObject({ name: expect.any(String), url: expect.any(String) })
    expect(document.servers).toEqual([expect.objectContaining({ url: "http://127.0.0.1:8080" })])
    for (const tag of document.tags) expect(tag.description, tag.name).toEqual(expect.any(String))
  })

  it("describes every parameter and every response header", () => {
    for (const { name, operation } of operations) {
      for (const parameter of (operation.parameters ?? []) as ReadonlyArray<Record<string, unknown>>) {
        expect(parameter.description, `${name} ${parameter.name}`).toEqual(expect.stringMatching(/\w/))
      }
      for (const [status, response] of Object.entries(
        operation.responses as Record<string, Record<string, unknown>>
      )) {
        for (const [header, spec] of Object.entries(
          (response.headers ?? {}) as Record<string, { description?: string }>
        )) {
          expect(spec.description, `${name} ${status} ${header}`).toEqual(expect.stringMatching(/\w/))
        }
      }
    }
  })

  it("has an example for every request body variant and for every response of every operation", () => {
    const leads = document.paths["/v1/leads"]!.post!
    const body = (
      leads.requestBody as {
        content: Record<string, { examples: Record<string, { value: Record<string, unknown> }> }>
      }
    ).content["application/json"]!
    const references = Object.values(body.examples).map(
      (example) => Object.keys((example.value.propiedad ?? {}) as object)[0] ?? "none"
    )
    expect(new Set(references)).toEqual(new Set(["codigo", "external_code", "id", "none"]))
    for (const { name, operation } of operations) {
      for (const [status, response] of Object.entries(
        operation.responses as Record<string, Record<string, unknown>>
      )) {
        const contents = Object.entries((response.content ?? {}) as Record<string, { examples?: object }>)
        expect(contents.length, `${name} ${status} has a body`).toBeGreaterThan(0)
        for (const [mediaType, media] of contents) {
          expect(Object.keys(media.examples ?? {}).length, `${name} ${status} ${mediaType}`).toBeGreaterThan(
            0
          )
        }
      }
    }
    const examplesOf = (status: string) =>
      Object.values(
        (
          leads.responses as Record<
            string,
            { content: Record<string, { examples: Record<string, { value: unknown }> }> }
          >
        )[status]!.content["application/json"]!.examples
      ).map((example) => example.value as Record<string, unknown>)
    expect(examplesOf("201").map((value) => value.status)).toContain("created")
    expect(examplesOf("200").map((value) => value.status)).toEqual(
      expect.arrayContaining(["enriched", "dry_run"])
    )
    expect(examplesOf("409").map((value) => (value.error as { code: string }).code)).toEqual([
      "idempotency_conflict",
      "idempotency_in_progress"
    ])
  })
})
