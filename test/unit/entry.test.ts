import { mkdirSync, renameSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { chooseEntry, isFresh, sourceSignature, stampName } from "../../bin/entry.js"

/** The bin's choice between dist/main.js and src/main.ts, on a package tree of its own. */
describe("bin/entry.js: the bundle runs only while it was built from the sources on disk", () => {
  let root: string
  const file = (relative: string, text = `// ${relative}\n`) => {
    mkdirSync(path.dirname(path.join(root, relative)), { recursive: true })
    writeFileSync(path.join(root, relative), text)
  }
  const src = () => path.join(root, "src", "main.ts")
  const dist = () => path.join(root, "dist", "main.js")
  const build = () => {
    file("dist/main.js")
    file(`dist/${stampName}`, JSON.stringify(sourceSignature(root)))
  }

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), "lead-intake-entry-"))
    file("src/main.ts")
    file("src/Intake/Http/App.ts")
    file("src/Console/index.html")
    file("migrations/0001_create_domain.ts")
    file("package.json", '{"name":"lead-intake"}')
    file("package-lock.json", "{}")
    file("scripts/build.ts")
    build()
  })

  afterEach(async () => {
    await rm(root, { recursive: true, force: true })
  })

  it("a fresh build runs the bundle", () => {
    expect(isFresh(root)).toBe(true)
    expect(chooseEntry(root, {})).toBe(dist())
  })

  it("an edited source makes the bundle stale, even with the same size", () => {
    file("src/Intake/Http/App.ts", "// src/Http/App.tX\n")
    expect(chooseEntry(root, {})).toBe(src())
  })

  it("a source whose modification time alone changed makes it stale", () => {
    const future = new Date(Date.now() + 60_000)
    utimesSync(path.join(root, "src", "Console", "index.html"), future, future)
    expect(chooseEntry(root, {})).toBe(src())
  })

  it.each([
    ["an added source", () => file("src/Domain/New.ts")],
    ["a removed source", () => rmSync(path.join(root, "src", "Intake", "Http", "App.ts"))],
    [
      "a renamed source",
      () =>
        renameSync(
          path.join(root, "src", "Intake", "Http", "App.ts"),
          path.join(root, "src", "Intake", "Http", "Ppa.ts")
        )
    ],
    ["a new migration", () => file("migrations/0002_more.ts")],
    ["an edited package.json", () => file("package.json", '{"name":"lead-intake","version":"2"}')],
    ["an edited package-lock.json", () => file("package-lock.json", '{"lockfileVersion":3}')],
    ["an edited build script", () => file("scripts/build.ts", "// other options\n")]
  ])("%s makes it stale", (_, change) => {
    change()
    expect(isFresh(root)).toBe(false)
    expect(chooseEntry(root, {})).toBe(src())
  })

  it("files outside the bundle's inputs do not", () => {
    file("docs/webhooks.md")
    file("test/unit/x.test.ts")
    file("README.md")
    expect(chooseEntry(root, {})).toBe(dist())
  })

  it("rebuilding after an edit makes it fresh again", () => {
    file("src/main.ts", "// edited\n")
    expect(chooseEntry(root, {})).toBe(src())
    build()
    expect(chooseEntry(root, {})).toBe(dist())
  })

  it("no stamp, an unreadable stamp or no dist/main.js runs the sources", () => {
    rmSync(path.join(root, "dist", stampName))
    expect(chooseEntry(root, {})).toBe(src())
    file(`dist/${stampName}`, "{not json")
    expect(chooseEntry(root, {})).toBe(src())
    build()
    rmSync(dist())
    expect(chooseEntry(root, {})).toBe(src())
  })

  it("LEAD_INTAKE_ENTRY forces one, and refuses what it cannot run", () => {
    expect(chooseEntry(root, { LEAD_INTAKE_ENTRY: "src" })).toBe(src())
    file("src/main.ts", "// edited\n")
    expect(chooseEntry(root, { LEAD_INTAKE_ENTRY: "dist" })).toBe(dist())
    expect(chooseEntry(root, { LEAD_INTAKE_ENTRY: "" })).toBe(src())
    expect(() => chooseEntry(root, { LEAD_INTAKE_ENTRY: "bundle" })).toThrow(/must be "src" or "dist"/)
    rmSync(path.join(root, "dist"), { recursive: true })
    expect(() => chooseEntry(root, { LEAD_INTAKE_ENTRY: "dist" })).toThrow(/npm run build/)
  })

  it("checks the sources in a few milliseconds", () => {
    const project = path.resolve(import.meta.dirname, "../..")
    sourceSignature(project)
    const started = performance.now()
    for (let i = 0; i < 5; i++) sourceSignature(project)
    expect((performance.now() - started) / 5).toBeLessThan(50)
  })
})
