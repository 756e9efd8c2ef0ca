import { execFileSync } from "node:child_process"
import { existsSync, globSync, readdirSync, readFileSync } from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { anchorsOf, withoutCodeBlocks } from "./Markdown.ts"

/**
 * The repository stands on its own: every pointer in code, tests and docs names a file of the
 * repository (and, with `#anchor`, a heading of that file), no pointer leads to the specification
 * the team received outside it, and every repository path the docs name exists. A path of an
 * earlier commit is written `<commit>:<path>` (what `git show` takes) and must exist there.
 */

const root = path.resolve(import.meta.dirname, "../..")

/** Folders whose files are code or tests; generated and installed trees are not read. */
const codeFolders = ["src", "test", "scripts", "migrations", "bin", "examples", "clients", "deploy", ".ci"]
const skipped = new Set(["node_modules", "dist", ".data", ".test-data", "bench-results"])
const binary = /\.(png|jpe?g|gif|ico|woff2?|cpuprofile)$/

const filesUnder = (folder: string): Array<string> =>
  existsSync(path.join(root, folder))
    ? readdirSync(path.join(root, folder), { withFileTypes: true }).flatMap((entry) => {
        const relative = path.posix.join(folder, entry.name)
        if (skipped.has(entry.name)) return []
        if (entry.isDirectory()) return filesUnder(relative)
        return binary.test(entry.name) ? [] : [relative]
      })
    : []

const docFiles = [
  "README.md",
  "CONTRIBUTING.md",
  "CHANGELOG.md",
  ...filesUnder("docs").filter((file) => file.endsWith(".md"))
]
const codeFiles = [
  ...codeFolders.flatMap(filesUnder).filter((file) => !docFiles.includes(file)),
  "Dockerfile",
  "compose.yaml",
  "vitest.config.ts",
  "vitest.browser.config.ts"
]

/** Where a pointer may not lead: the specification as received, and bare section signs standing for it. */
const outside = [
  /\bdecisions\.md\b/,
  /\blead-intake-api\.md\b/,
  /\badmin-cli\.md\b/,
  /\bnotes\/performance\.md\b/
]
const outsideFolder = /(?:\.\.|\/work)\/shared\b/
const sectionSign = "\u00a7"

/** The top folders of the repository a path in prose starts with. */
const tops = "src|test|scripts|migrations|docs|deploy|bin|examples|clients|\\.ci"
const rootedPath = new RegExp(
  `(?<![\\w/.@<-])(?:([0-9a-f]{7,40}):)?((?:${tops})/[\\w./*@-]*[\\w*/])(?:#([\\w-]+))?`,
  "g"
)
/** `name.md#anchor`, or a file of a known kind named in backticks (`Leads.ts`, `Http/App.ts`). */
const markdownPointer = /(?<![\w/.@-])((?:\.\.\/)*[\w./-]*[\w-]\.md)(?:#([\w-]+))?/g
const backticked =
  /`([\w.@-]+(?:\/[\w.*@-]+)*\.(?:ts|js|mjs|md|json|ya?ml|sql|html|css|png|service|example))`/g

const read = (file: string) => readFileSync(path.join(root, file), "utf8")

const allFiles = [
  ...readdirSync(root, { withFileTypes: true }).flatMap((entry) => (entry.isFile() ? [entry.name] : [])),
  ...codeFiles,
  ...docFiles,
  ...filesUnder("docs")
]

/** What code says in comments (where its pointers are), one line each; a doc is read whole. */
const commentsOf = (text: string): string =>
  text
    .split("\n")
    .map((line) => {
      if (/^\s*(?:\/\/|\*|\/\*|#|--|<!--)/.test(line)) return line
      const trailing = line.indexOf(" // ")
      return trailing >= 0 ? line.slice(trailing) : ""
    })
    .join("\n")

/** A placeholder (`NNNN_name.ts`), a package (`ipaddr.js`) or an extension (`.d.ts`), not a file. */
const notAFile = (name: string): boolean =>
  name.includes("NNNN") || name.startsWith(".") || existsSync(path.join(root, "node_modules", name))

/** Earlier commits can be read: a git checkout with its history (a shallow clone lacks it). */
const historyReadable = (() => {
  try {
    const shallow = execFileSync("git", ["rev-parse", "--is-shallow-repository"], {
      cwd: root,
      encoding: "utf8"
    })
    return shallow.trim() === "false"
  } catch {
    return false
  }
})()

const existsInCommit = (commit: string, file: string): boolean => {
  try {
    execFileSync("git", ["cat-file", "-e", `${commit}:${file.replace(/\/$/, "")}`], {
      cwd: root,
      stdio: "ignore"
    })
    return true
  } catch {
    return false
  }
}

const exists = (file: string): boolean =>
  file.includes("*") ? globSync(file, { cwd: root }).length > 0 : existsSync(path.join(root, file))

/** A pointer's target as a repository path: relative to the file that names it, else to the root. */
const resolve = (from: string, target: string): string | undefined => {
  const candidates = [path.posix.normalize(path.posix.join(path.posix.dirname(from), target)), target]
  return candidates.find((candidate) => !candidate.startsWith("..") && exists(candidate))
}

const anchorProblem = (file: string, anchor: string | undefined): string | undefined =>
  anchor === undefined || !file.endsWith(".md") || anchorsOf(read(file)).has(anchor)
    ? undefined
    : `no heading #${anchor} in ${file}`

/** Every broken pointer in one file's text, as `file: pointer (why)`. */
const brokenPointers = (file: string, whole: string): Array<string> => {
  const broken: Array<string> = []
  const isDoc = file.endsWith(".md")
  const text = isDoc ? whole : commentsOf(whole)
  const report = (pointer: string, why: string) => broken.push(`${file}: ${pointer} (${why})`)

  for (const pattern of outside)
    for (const [match] of text.matchAll(new RegExp(pattern, "g"))) report(match, "outside the repository")
  for (const [match] of text.matchAll(new RegExp(outsideFolder, "g"))) report(match, "outside the repository")
  // A section sign is a pointer only as the text of a link, which names its file and anchor.
  for (const [match] of text.matchAll(new RegExp(`(?<!\\[)${sectionSign}[\\d-]*`, "g")))
    report(match, "a section of what? name a file and its anchor")

  for (const [pointer, commit, target, anchor] of text.matchAll(rootedPath)) {
    if (target!.startsWith("dist/") || notAFile(target!)) continue
    if (commit !== undefined) {
      if (historyReadable && !existsInCommit(commit, target!)) report(pointer, `not in ${commit}`)
      continue
    }
    if (!exists(target!)) {
      report(pointer, "no such path")
      continue
    }
    const problem = anchorProblem(target!, anchor)
    if (problem !== undefined) report(pointer, problem)
  }

  for (const [pointer, target, anchor] of text.matchAll(markdownPointer)) {
    if (new RegExp(`^(?:${tops})/`).test(target!)) continue
    const resolved = resolve(file, target!)
    if (resolved === undefined) {
      if (!outside.some((pattern) => pattern.test(target!))) report(pointer, "no such file")
      continue
    }
    const problem = anchorProblem(resolved, anchor)
    if (problem !== undefined) report(pointer, problem)
  }

  if (isDoc)
    for (const [pointer, target] of withoutCodeBlocks(text).matchAll(backticked)) {
      if (new RegExp(`^(?:${tops}|dist)/`).test(target!) || target!.endsWith(".md") || notAFile(target!))
        continue
      const found = target!.includes("/")
        ? [target!, `src/${target}`].some(exists) || resolve(file, target!) !== undefined
        : allFiles.some((candidate) => path.posix.basename(candidate) === target)
      if (!found) report(pointer, "no such file in the repository")
    }
  return broken
}

describe("pointers", () => {
  it("every pointer in code, tests and docs resolves, and every path the docs name exists", () => {
    const self = path.posix.relative(root, import.meta.filename.split(path.sep).join("/"))
    const broken = [...codeFiles, ...docFiles]
      .filter((file) => file !== self)
      .flatMap((file) => brokenPointers(file, read(file)))
    expect(broken).toEqual([])
  })

  it("reports what does not resolve", () => {
    // The outside names are assembled here, so that no file of the repository names them, not even
    // as a sample of what this test refuses.
    const outsideFile = ["decisions", "md"].join(".")
    const outsideDir = ["..", "shared", "notes"].join("/")
    const samples = [
      `// the order of checks (${outsideFile} §3)`,
      `// see ${outsideDir} for why`,
      "// docs/contract.md#99-no-such-decision",
      "// docs/no-such-file.md",
      "// a helper in src/Janitor.ts",
      "// README.md#no-such-heading"
    ]
    expect(samples.map((sample) => brokenPointers("src/Example.ts", sample).length > 0)).toEqual(
      samples.map(() => true)
    )
    expect(
      brokenPointers("docs/example.md", "The janitor (`Janitr.ts`) and `src/Nowhere/Nothing.ts`.")
    ).toHaveLength(2)
    expect(brokenPointers("docs/example.md", "At a2d298a: `0000000:scripts/no-such-probe.ts`.")).toHaveLength(
      historyReadable ? 1 : 0
    )
  })

  it("accepts what resolves", () => {
    expect(
      brokenPointers(
        "src/Example.ts",
        "// docs/contract.md#5-idempotency, README.md#contract-decisions, src/Intake/Janitor.ts, test/unit/Webhook*.test.ts"
      )
    ).toEqual([])
    expect(
      brokenPointers("docs/example.md", "[sre](sre.md#capacity), `Intake/Janitor.ts`, `Leads.ts`")
    ).toEqual([])
  })
})
