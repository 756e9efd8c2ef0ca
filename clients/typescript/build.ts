/**
 * Builds the package into dist/: compiled JavaScript and .d.ts, no bundler. The Effect client's
 * contract is copied from the service's sources (every module src/Client.ts reaches by relative
 * import) and compiled in, so the package never depends on the server's; the fetch client's types
 * are generated from openapi.json with openapi-typescript.
 *
 *   node clients/typescript/build.ts
 */
import { execFileSync } from "node:child_process"
import { cp, mkdir, readFile, rm, writeFile } from "node:fs/promises"
import * as path from "node:path"
import { typesText } from "../../scripts/openapi.ts"

const here = import.meta.dirname
const root = path.resolve(here, "../..")
const staging = path.join(here, "staging")
const contractEntry = path.join(root, "src", "Client.ts")

/** The entry and every module it reaches through relative imports, as paths relative to src/. */
const contractModules = async (entry: string): Promise<ReadonlyArray<string>> => {
  const found = new Set<string>()
  const visit = async (file: string) => {
    if (found.has(file)) return
    found.add(file)
    const text = await readFile(file, "utf8")
    for (const match of text.matchAll(/\bfrom\s+"(\.{1,2}\/[^"]+\.ts)"/g)) {
      await visit(path.resolve(path.dirname(file), match[1]!))
    }
  }
  await visit(entry)
  return [...found].map((file) => path.relative(path.join(root, "src"), file))
}

export const build = async () => {
  await rm(staging, { recursive: true, force: true })
  await rm(path.join(here, "dist"), { recursive: true, force: true })
  for (const module of await contractModules(contractEntry)) {
    if (module.startsWith("..")) throw new Error(`the contract reaches outside src/: ${module}`)
    const target = path.join(staging, "contract", module)
    await mkdir(path.dirname(target), { recursive: true })
    await cp(path.join(root, "src", module), target)
  }
  await cp(path.join(here, "src"), staging, { recursive: true })
  await writeFile(path.join(staging, "openapi-types.ts"), await typesText())
  execFileSync(path.join(root, "node_modules", ".bin", "tsc"), ["-p", path.join(here, "tsconfig.json")], {
    stdio: "inherit"
  })
  await rm(staging, { recursive: true, force: true })
}

if (import.meta.main) await build()
