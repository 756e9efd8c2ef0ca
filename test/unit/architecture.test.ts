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

/**
 * Where a file sits in the architecture: the contracts and the domain at the bottom, the platform
 * (SQL, config, observability) above them, the parts of the product in the middle (each part's
 * services, then its HTTP handlers), the command line and the entry points on top. The console's
 * handlers stand in three storeys: `Console/Http/` (what its parts' handlers share), each part's
 * `Console/<Part>/Http.ts`, and `Console/Server/`, which assembles them into the console's app.
 */
type Layer =
  | "contract"
  | "browser"
  | "messages"
  | "domain"
  | "platform"
  | "accounts"
  | "intake"
  | "webhooks"
  | "personal-data"
  | "console"
  | "http"
  | "console-part-http"
  | "console-server"
  | "cli"
  | "client"
  | "entry"
  | "outside"
  | "unplaced"

const parts = {
  Accounts: "accounts",
  Intake: "intake",
  Webhooks: "webhooks",
  PersonalData: "personal-data",
  Console: "console"
} as const

/** The console's pages: code that runs in the browser, never on the server. */
const browserFolders = ["src/Console/web/", "src/Console/assets/"]

/** The layer of a path relative to the repository root, e.g. `src/Intake/Http/Leads.ts`. */
const layerOf = (path: string): Layer => {
  if (!path.startsWith("src/")) return "outside"
  // The console's message catalogs are data: the pages show them, the server fills the shell with them.
  if (path.startsWith("src/Console/web/messages/")) return "messages"
  if (browserFolders.some((folder) => path.startsWith(folder))) return "browser"
  const [top = "", second, third] = path.slice("src/".length).split("/")
  if (top === "Api" || top === "AdminApi") return "contract"
  if (top === "Domain") return "domain"
  if (top === "Platform") return "platform"
  if (top === "Cli") return "cli"
  if (top === "Client.ts") return "client"
  if (top === "Server.ts" || top === "main.ts") return "entry"
  if (second === "Http") return "http"
  if (top === "Console" && third === "Http.ts") return "console-part-http"
  if (top === "Console" && second === "Server") return "console-server"
  if (top in parts) return parts[top as keyof typeof parts]
  return "unplaced"
}

/** The layers each layer may import (its own included). */
const allowed: Record<Layer, ReadonlyArray<Layer>> = {
  contract: ["contract", "domain"],
  browser: ["browser", "contract", "messages"],
  messages: ["messages", "contract"],
  domain: ["domain"],
  client: ["client", "contract", "domain"],
  platform: ["platform", "domain"],
  // A row the console and the CLI both read is decoded with its console group's schema (declared once);
  // the public contract (src/Api/) stays out, by the rule below.
  accounts: ["accounts", "platform", "domain", "contract"],
  intake: ["intake", "accounts", "platform", "domain"],
  webhooks: ["webhooks", "intake", "accounts", "platform", "domain"],
  "personal-data": ["personal-data", "webhooks", "intake", "accounts", "platform", "domain"],
  console: ["console", "personal-data", "webhooks", "intake", "accounts", "platform", "domain", "contract"],
  http: [
    "console",
    "personal-data",
    "webhooks",
    "intake",
    "accounts",
    "platform",
    "domain",
    "contract",
    "http",
    "messages"
  ],
  "console-part-http": [
    "console",
    "personal-data",
    "webhooks",
    "intake",
    "accounts",
    "platform",
    "domain",
    "contract",
    "http",
    "console-part-http"
  ],
  "console-server": [
    "console",
    "personal-data",
    "webhooks",
    "intake",
    "accounts",
    "platform",
    "domain",
    "contract",
    "http",
    "console-part-http",
    "console-server",
    "messages"
  ],
  cli: [
    "console",
    "personal-data",
    "webhooks",
    "intake",
    "accounts",
    "platform",
    "domain",
    "contract",
    "cli",
    "entry"
  ],
  entry: [
    "console",
    "personal-data",
    "webhooks",
    "intake",
    "accounts",
    "platform",
    "domain",
    "contract",
    "http",
    "console-server",
    "cli",
    "entry",
    "client"
  ],
  outside: [],
  unplaced: []
}

const layers = Object.keys(allowed) as ReadonlyArray<Layer>

/** Migrations and package.json sit outside src/: the platform and what stands on it may read them. */
const forbiddenFor = (layer: Layer) =>
  layers.filter(
    (other) =>
      !allowed[layer].includes(other) && !(other === "outside" && allowed[layer].includes("platform"))
  )

/** A part's HTTP handlers import their own part's services, never another part's handlers. */
const httpOwner = (path: string) => path.split("/")[1]

const handlerLayers: ReadonlyArray<Layer> = ["http", "console-part-http", "console-server"]

/** The console's part whose handlers a `Console/<Part>/Http.ts` is. */
const consolePart = (path: string) => path.split("/")[2]

interface Edge {
  readonly from: string
  readonly to: string
}

/** Every import of one file whose target layer its own layer must not depend on. */
const wrongWay = (from: string, text: string): ReadonlyArray<Edge> =>
  importsOf(text)
    .map((specifier) => ({ from, to: relative(root, resolve(root, dirname(from), specifier)) }))
    .filter(
      (edge) =>
        forbiddenFor(layerOf(edge.from)).includes(layerOf(edge.to)) ||
        (handlerLayers.includes(layerOf(edge.from)) &&
          layerOf(edge.to) === "http" &&
          httpOwner(edge.from) !== httpOwner(edge.to)) ||
        (layerOf(edge.from) === "console-part-http" &&
          layerOf(edge.to) === "console-part-http" &&
          consolePart(edge.from) !== consolePart(edge.to))
    )

/** Every package a text imports, relative or not. */
const allImportsOf = (text: string): ReadonlyArray<string> =>
  [...withoutComments(text).matchAll(importPattern)].map((match) => match[1] ?? match[2] ?? "")

const browserPackages = new Set(["effect", "effect/http-api"])

/** The imports of a contract module the browser could not load: a package beside effect's schema and API, or a non-contract module. */
const browserSafe = (from: string, text: string): ReadonlyArray<string> =>
  allImportsOf(text).filter((specifier) =>
    specifier.startsWith(".")
      ? layerOf(relative(root, resolve(root, dirname(from), specifier))) !== "contract"
      : !browserPackages.has(specifier)
  )

/**
 * The public contract (src/Api/) is imported by the contracts, the HTTP handlers, the command line
 * and the entry points; the domain, the platform and the parts' services speak their own types.
 */
const mayImportPublicContract = (path: string) =>
  ["src/Api/", "src/AdminApi/", "src/Cli/"].some((folder) => path.startsWith(folder)) ||
  ["src/Server.ts", "src/main.ts", "src/Client.ts"].includes(path) ||
  path.split("/").includes("Http") ||
  path.endsWith("/Http.ts")

const publicContractImports = (from: string, text: string): ReadonlyArray<Edge> =>
  mayImportPublicContract(from)
    ? []
    : importsOf(text)
        .map((specifier) => ({ from, to: relative(root, resolve(root, dirname(from), specifier)) }))
        .filter((edge) => edge.to.startsWith("src/Api/"))

/** The console's contract, the accounts and the domain sit below the console: none of them imports it. */
const belowConsole = ["src/AdminApi/", "src/Accounts/", "src/Domain/"]

const intoConsole = (from: string, text: string): ReadonlyArray<Edge> =>
  belowConsole.some((folder) => from.startsWith(folder))
    ? importsOf(text)
        .map((specifier) => ({ from, to: relative(root, resolve(root, dirname(from), specifier)) }))
        .filter((edge) => edge.to.startsWith("src/Console/"))
    : []

const files = sourceFiles(src).map((path) => ({
  path: relative(root, path),
  text: readFileSync(path, "utf8")
}))

describe("imports point one way: contracts, domain <- platform <- parts <- HTTP <- CLI, entry points", () => {
  it("reads the import statements of every file under src/", () => {
    const edges = files.flatMap((file) => importsOf(file.text).map((to) => `${file.path} -> ${to}`))
    expect(files.length).toBeGreaterThan(50)
    expect(edges).toContain("src/Client.ts -> ./Api/Api.ts")
    expect(edges).toContain("src/Cli/Serve.ts -> ../Server.ts")
  })

  it("flags an import that points the wrong way", () => {
    expect(wrongWay("src/Api/Api.ts", 'import { Sql } from "../Platform/Sql/Sql.ts"')).toEqual([
      { from: "src/Api/Api.ts", to: "src/Platform/Sql/Sql.ts" }
    ])
    expect(
      wrongWay("src/Api/LeadRequest.ts", 'import { isAcceptablePhone } from "../Domain/Phone.ts"')
    ).toEqual([])
    expect(
      publicContractImports("src/Accounts/KeyStore.ts", 'import type { CallerShape } from "../Api/Api.ts"')
    ).toHaveLength(1)
    expect(
      wrongWay("src/Platform/Observability/Request.ts", 'import { isErrorCode } from "../../Api/Errors.ts"')
    ).toHaveLength(1)
    expect(
      wrongWay("src/Console/web/api.ts", 'import { AdminApi } from "../../AdminApi/AdminApi.ts"')
    ).toEqual([])
    expect(wrongWay("src/Console/web/page.ts", 'import { Sessions } from "../Sessions.ts"')).toHaveLength(1)
    expect(wrongWay("src/Console/web/page.ts", 'import { x } from "../Http/Shared.ts"')).toHaveLength(1)
    expect(wrongWay("src/Domain/Phone.ts", 'export { x } from "../Api/Api.ts"')).toHaveLength(1)
    expect(wrongWay("src/Domain/Phone.ts", 'export { x } from "../Platform/Sql/Sql.ts"')).toHaveLength(1)
    expect(
      wrongWay("src/Accounts/KeyStore.ts", 'import type {\n  Leads\n} from "../Intake/Http/Leads.ts"')
    ).toHaveLength(1)
    expect(
      wrongWay(
        "src/Platform/Observability/Observability.ts",
        'const m = await import("../../Intake/Http/Routing.ts")'
      )
    ).toHaveLength(1)
    expect(
      wrongWay("src/Intake/LeadRepository.ts", 'import { Operators } from "../Console/Operators.ts"')
    ).toHaveLength(1)
    expect(wrongWay("src/Cli/Leads.ts", 'import { AdminApp } from "../Console/Server/App.ts"')).toHaveLength(
      1
    )
    expect(
      wrongWay("src/Console/Server/App.ts", 'import { x } from "../../Intake/Http/Leads.ts"')
    ).toHaveLength(1)
    expect(
      wrongWay("src/Console/Http/Shared.ts", 'import { layerLeadsHandlers } from "../Leads/Http.ts"')
    ).toHaveLength(1)
    expect(wrongWay("src/Console/Http/Shared.ts", 'import { x } from "../Server/Handlers.ts"')).toHaveLength(
      1
    )
    expect(wrongWay("src/Console/Leads/Http.ts", 'import { x } from "../Server/App.ts"')).toHaveLength(1)
    expect(wrongWay("src/Console/Leads/Http.ts", 'import { x } from "../Requests/Http.ts"')).toHaveLength(1)
    expect(
      wrongWay("src/Console/Server/Handlers.ts", 'import { layerLeadsHandlers } from "../Leads/Http.ts"')
    ).toEqual([])
    expect(wrongWay("src/Console/Server/App.ts", 'import { x } from "../Http/RequestContext.ts"')).toEqual([])
    expect(wrongWay("src/Server.ts", 'import { x } from "./Console/Server/App.ts"')).toEqual([])
    expect(wrongWay("src/Cli/Leads.ts", '// import { x } from "../Intake/Http/App.ts"')).toEqual([])
    expect(
      wrongWay("src/Intake/Http/Leads.ts", 'import { LeadRepository } from "../LeadRepository.ts"')
    ).toEqual([])
    expect(
      wrongWay("src/Console/Server/App.ts", 'import { RequestLog } from "../../Intake/RequestLog.ts"')
    ).toEqual([])
    expect(
      wrongWay("src/AdminApi/Origins.ts", 'import { listOrigins } from "../Console/Origins/Queries.ts"')
    ).toHaveLength(1)
    expect(
      wrongWay("src/AdminApi/Origins.ts", 'import { x } from "../Console/Origins/Http.ts"')
    ).toHaveLength(1)
    expect(wrongWay("src/AdminApi/Leads.ts", 'import { RequestItem } from "./Requests.ts"')).toEqual([])
    expect(
      wrongWay("src/Console/Leads/Queries.ts", 'import { LeadItem } from "../../AdminApi/Leads.ts"')
    ).toEqual([])
    expect(
      wrongWay("src/Console/Origins/Http.ts", 'import { organizationScope } from "../Http/Shared.ts"')
    ).toEqual([])
  })

  it("flags the public contract imported outside the contracts, the HTTP handlers, the CLI and the entry points", () => {
    const phoneRule = 'import { isAcceptablePhone } from "../Api/LeadRequest.ts"'
    expect(publicContractImports("src/Console/ConsoleQueries.ts", phoneRule)).toEqual([
      { from: "src/Console/ConsoleQueries.ts", to: "src/Api/LeadRequest.ts" }
    ])
    expect(
      publicContractImports("src/Console/Leads/Queries.ts", 'import { x } from "../../Api/LeadRequest.ts"')
    ).toHaveLength(1)
    expect(
      publicContractImports(
        "src/Intake/LeadRepository.ts",
        'import type { LeadRequest } from "../Api/LeadRequest.ts"'
      )
    ).toHaveLength(1)
    expect(
      publicContractImports("src/Intake/Http/Leads.ts", 'import { Api } from "../../Api/Api.ts"')
    ).toEqual([])
    expect(
      publicContractImports("src/Console/Leads/Http.ts", 'import { x } from "../../Api/Errors.ts"')
    ).toEqual([])
    expect(publicContractImports("src/Cli/Keys.ts", 'import { x } from "../Api/Api.ts"')).toEqual([])
  })

  it("only the contracts, the HTTP handlers, the CLI and the entry points import the public contract", () => {
    expect(files.flatMap((file) => publicContractImports(file.path, file.text))).toEqual([])
  })

  it("every file under src/ sits in a known place", () => {
    expect(files.filter((file) => layerOf(file.path) === "unplaced").map((file) => file.path)).toEqual([])
  })

  it("no file under src/ imports a layer it must not depend on", () => {
    expect(files.flatMap((file) => wrongWay(file.path, file.text))).toEqual([])
  })

  it("the contracts (src/Api/, src/AdminApi/) stand on the domain alone and the domain imports no contract", () => {
    const contracts = files.filter((file) => layerOf(file.path) === "contract")
    expect(contracts.map((file) => file.path)).toContain("src/AdminApi/AdminApi.ts")
    const outsideContract = contracts.flatMap((file) =>
      importsOf(file.text)
        .map((specifier) => relative(root, resolve(root, dirname(file.path), specifier)))
        .filter((to) => layerOf(to) !== "contract" && layerOf(to) !== "domain")
        .map((to) => `${file.path} -> ${to}`)
    )
    expect(outsideContract).toEqual([])
  })

  it("the console's contract (src/AdminApi/, one module per part) is bundled for the browser: it imports effect's schema and HTTP API modules and other contracts only", () => {
    const contracts = files.filter((file) => file.path.startsWith("src/AdminApi/"))
    expect(contracts.map((file) => file.path)).toContain("src/AdminApi/Origins.ts")
    expect(browserSafe("src/AdminApi/Origins.ts", 'import { SqlClient } from "effect/sql"')).toHaveLength(1)
    expect(browserSafe("src/AdminApi/Origins.ts", 'import { readFileSync } from "node:fs"')).toHaveLength(1)
    expect(
      browserSafe("src/AdminApi/Origins.ts", 'import { x } from "../Console/Origins/Queries.ts"')
    ).toHaveLength(1)
    expect(browserSafe("src/AdminApi/Origins.ts", 'import { Schema } from "effect"')).toEqual([])
    expect(contracts.flatMap((file) => browserSafe(file.path, file.text))).toEqual([])
  })

  it("flags an import into the console from its contract, the accounts or the domain", () => {
    expect(
      intoConsole("src/AdminApi/AdminApi.ts", 'import { OriginsGroup } from "../Console/Origins/Api.ts"')
    ).toEqual([{ from: "src/AdminApi/AdminApi.ts", to: "src/Console/Origins/Api.ts" }])
    expect(
      intoConsole("src/Accounts/KeyStore.ts", 'import { OriginItem } from "../Console/Origins/Api.ts"')
    ).toHaveLength(1)
    expect(
      intoConsole("src/Domain/Locale.ts", 'import type { Messages } from "../Console/web/messages/en.ts"')
    ).toHaveLength(1)
    expect(
      intoConsole("src/Accounts/KeyStore.ts", 'import { OriginItem } from "../AdminApi/Origins.ts"')
    ).toEqual([])
    expect(
      intoConsole("src/Cli/Operators.ts", 'import { Operators } from "../Console/Operators.ts"')
    ).toEqual([])
  })

  it("the console's contract, the accounts and the domain import nothing from src/Console/", () => {
    expect(files.flatMap((file) => intoConsole(file.path, file.text))).toEqual([])
  })

  it("src/ holds only the entry points at its root", () => {
    expect(
      files
        .filter((file) => file.path.split("/").length === 2)
        .map((file) => file.path)
        .sort()
    ).toEqual(["src/Client.ts", "src/Server.ts", "src/main.ts"])
  })

  it("src/Console/Http/ holds only what the console's parts import: each of its files serves a part's handlers", () => {
    const shared = files.filter((file) => file.path.startsWith("src/Console/Http/")).map((file) => file.path)
    expect(shared).toContain("src/Console/Http/Shared.ts")
    expect(unservedBy(files, shared)).toEqual([])
    expect(
      unservedBy(
        [...files, { path: "src/Console/Http/Assembly.ts", text: 'import { x } from "../Leads/Http.ts"' }],
        [...shared, "src/Console/Http/Assembly.ts"]
      )
    ).toEqual(["src/Console/Http/Assembly.ts"])
  })
})

/** The files of `shared` that no console part's handlers import, directly or through another of them. */
const unservedBy = (
  all: ReadonlyArray<{ readonly path: string; readonly text: string }>,
  shared: ReadonlyArray<string>
): ReadonlyArray<string> => {
  const importsOfPath = new Map(
    all.map((file) => [
      file.path,
      importsOf(file.text).map((specifier) => relative(root, resolve(root, dirname(file.path), specifier)))
    ])
  )
  const served = new Set<string>()
  let reached = all.filter((file) => layerOf(file.path) === "console-part-http").map((file) => file.path)
  while (reached.length > 0) {
    const next = reached
      .flatMap((path) => importsOfPath.get(path) ?? [])
      .filter((path) => shared.includes(path) && !served.has(path))
    for (const path of next) served.add(path)
    reached = next
  }
  return shared.filter((path) => !served.has(path))
}

/** Every module that is both a file `X.ts` and a folder `X/` beside it: a concept with two homes. */
const twoHomes = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const folder = join(dir, entry.name)
      const beside = readdirSync(dir).includes(`${entry.name}.ts`) ? [relative(root, folder)] : []
      return [...beside, ...twoHomes(folder)]
    })

describe("one home per concept", () => {
  it("no module under src/ is both a file X.ts and a folder X/", () => {
    expect(twoHomes(src)).toEqual([])
  })
})
