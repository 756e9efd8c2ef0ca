import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { describe, expect, it } from "vitest"

const root = resolve(import.meta.dirname, "../..")
const src = join(root, "src")

const sourceFiles = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith(".ts") ? [path] : []
  })

const withoutComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "")

const importPattern =
  /(?:^|[\n;])\s*(?:import|export)\s+(?:type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?"([^"]+)"|import\(\s*"([^"]+)"\s*\)/g

/** The relative modules a source text imports, statically, dynamically or by re-export. */
const importsOf = (text: string): ReadonlyArray<string> =>
  [...withoutComments(text).matchAll(importPattern)]
    .map((match) => match[1] ?? match[2] ?? "")
    .filter((specifier) => specifier.startsWith("."))

type Layer =
  | "contract"
  | "domain"
  | "service"
  | "observability"
  | "http"
  | "admin"
  | "cli"
  | "client"
  | "entry"
  | "outside"

/** The layer of a path relative to the repository root, e.g. `src/Http/Leads.ts`. */
const layerOf = (path: string): Layer => {
  if (!path.startsWith("src/")) return "outside"
  const inSrc = path.slice("src/".length)
  if (/^(Api|AdminApi)(\.ts$|\/)/.test(inSrc)) return "contract"
  if (inSrc.startsWith("Domain/")) return "domain"
  if (/^Observability(\.ts$|\/)/.test(inSrc)) return "observability"
  if (inSrc.startsWith("Http/")) return "http"
  if (inSrc.startsWith("Admin/")) return "admin"
  if (inSrc.startsWith("Cli/")) return "cli"
  if (inSrc === "Client.ts") return "client"
  if (inSrc === "Server.ts" || inSrc === "main.ts") return "entry"
  return "service"
}

const forbidden: Record<Layer, ReadonlyArray<Layer>> = {
  contract: ["domain", "service", "observability", "http", "admin", "cli", "client", "entry", "outside"],
  domain: ["service", "observability", "http", "admin", "cli", "client", "entry", "outside"],
  client: ["domain", "service", "observability", "http", "admin", "cli", "entry", "outside"],
  service: ["http", "admin", "cli", "client", "entry"],
  observability: ["http", "admin", "cli", "client", "entry"],
  http: ["admin", "cli", "client", "entry"],
  admin: ["http", "cli", "client", "entry"],
  cli: ["http", "admin", "client"],
  entry: [],
  outside: []
}

interface Edge {
  readonly from: string
  readonly to: string
}

/** Every import of one file whose target layer its own layer must not depend on. */
const wrongWay = (from: string, text: string): ReadonlyArray<Edge> =>
  importsOf(text)
    .map((specifier) => ({ from, to: relative(root, resolve(root, dirname(from), specifier)) }))
    .filter((edge) => forbidden[layerOf(edge.from)].includes(layerOf(edge.to)))

const files = sourceFiles(src).map((path) => ({
  path: relative(root, path),
  text: readFileSync(path, "utf8")
}))

describe("imports point one way: contract <- domain <- services <- HTTP <- entry points", () => {
  it("reads the import statements of every file under src/", () => {
    const edges = files.flatMap((file) => importsOf(file.text).map((to) => `${file.path} -> ${to}`))
    expect(files.length).toBeGreaterThan(50)
    expect(edges).toContain("src/Api.ts -> ./Api/LeadRequest.ts")
    expect(edges).toContain("src/Domain/LeadRequest.ts -> ../Api/LeadRequest.ts")
    expect(edges).toContain("src/Cli/Serve.ts -> ../Server.ts")
  })

  it("flags an import that points the wrong way", () => {
    expect(wrongWay("src/Api.ts", 'import { LeadRequest } from "./Domain/LeadRequest.ts"')).toEqual([
      { from: "src/Api.ts", to: "src/Domain/LeadRequest.ts" }
    ])
    expect(wrongWay("src/Domain/Phone.ts", 'export { x } from "../Sql.ts"')).toHaveLength(1)
    expect(wrongWay("src/KeyStore.ts", 'import type {\n  Leads\n} from "./Http/Leads.ts"')).toHaveLength(1)
    expect(wrongWay("src/Observability.ts", 'const m = await import("./Http/Routing.ts")')).toHaveLength(1)
    expect(wrongWay("src/Cli/Leads.ts", 'import { AdminApp } from "../Admin/App.ts"')).toHaveLength(1)
    expect(wrongWay("src/Cli/Leads.ts", '// import { x } from "../Http/App.ts"')).toEqual([])
    expect(wrongWay("src/Http/Leads.ts", 'import { LeadIntake } from "../LeadIntake.ts"')).toEqual([])
  })

  it("no file under src/ imports a layer it must not depend on", () => {
    expect(files.flatMap((file) => wrongWay(file.path, file.text))).toEqual([])
  })

  it("the contracts (src/Api*, src/AdminApi*) stand alone", () => {
    const contracts = files.filter((file) => layerOf(file.path) === "contract")
    expect(contracts.map((file) => file.path)).toContain("src/AdminApi.ts")
    const outsideContract = contracts.flatMap((file) =>
      importsOf(file.text)
        .map((specifier) => relative(root, resolve(root, dirname(file.path), specifier)))
        .filter((to) => layerOf(to) !== "contract")
        .map((to) => `${file.path} -> ${to}`)
    )
    expect(outsideContract).toEqual([])
  })
})
