/**
 * `npm run build`: bundles src/main.ts and what it imports into dist/ (rolldown), then stamps the
 * bundle with the signature of the sources it was built from (bin/entry.js), so the bin runs it only
 * while it is current. A bundle loads only the modules it uses, which halves the server's idle RSS
 * against running src/ through type stripping (docs/performance.md#findings, "Memory: the bundle").
 *
 *   node scripts/build.ts [--out-dir DIR] [--minify full|names|off] [--if-stale] [--prepare]
 *
 * --if-stale builds only when the bundle is not fresh (`npm start`); --prepare (`npm ci`) builds, or
 * when rolldown is absent (an install without dev dependencies) says so and leaves the bin on src/.
 * --console builds only the console's browser code and files into dist/console (`ensureConsole`).
 *
 * The console (src/Console/web: TypeScript, its shell and styles) is built for the browser into
 * dist/console: `index.html` and `assets/` (app.js, its source map, app.css), what the server serves.
 */
import { existsSync, readFileSync } from "node:fs"
import { copyFile, mkdir, rename, rm, writeFile } from "node:fs/promises"
import * as path from "node:path"
import { parseArgs } from "node:util"
import type { OutputOptions } from "rolldown"
import { isFresh, sourceSignature, stampName } from "../bin/entry.js"

const root = path.resolve(import.meta.dirname, "..")

export type Minify = "full" | "names" | "off"

const minifyOptions = (minify: Minify): Pick<OutputOptions, "minify" | "keepNames"> => {
  switch (minify) {
    case "full":
      return { minify: { compress: true, mangle: true, codegen: { asciiOnly: true } } }
    case "names":
      return { minify: { compress: true, mangle: true, codegen: { asciiOnly: true } }, keepNames: true }
    case "off":
      return {
        minify: { compress: false, mangle: false, codegen: { removeWhitespace: false, asciiOnly: true } }
      }
  }
}

const consoleSource = path.join(root, "src", "Console", "web")

/** What the console's assets are built from: the browser code, the contract it is typed from. */
export const consoleInputs = ["src/Console/web", "src/AdminApi", "package-lock.json", "scripts/build.ts"]

/** Builds the console's shell, styles and browser bundle into `outDir` (dist/console). */
export const bundleConsole = async (outDir: string) => {
  const stamp = { ...sourceSignature(root, consoleInputs), builtAt: new Date().toISOString() }
  const staging = `${outDir}.building-${process.pid}`
  await rm(staging, { recursive: true, force: true })
  const { build } = await import("rolldown")
  await build({
    input: path.join(consoleSource, "app.ts"),
    platform: "browser",
    cwd: root,
    logLevel: "warn",
    output: {
      dir: path.join(staging, "assets"),
      entryFileNames: "[name].js",
      format: "esm",
      sourcemap: true,
      minify: true
    }
  })
  await copyFile(path.join(consoleSource, "app.css"), path.join(staging, "assets", "app.css"))
  await copyFile(path.join(consoleSource, "index.html"), path.join(staging, "index.html"))
  await writeFile(path.join(staging, stampName), `${JSON.stringify(stamp, null, 2)}\n`)
  const previous = `${outDir}.previous-${process.pid}`
  await mkdir(path.dirname(outDir), { recursive: true })
  // Two test runs may build at once: whichever lands last wins, both built from the same sources.
  await rename(outDir, previous).catch(() => undefined)
  await rename(staging, outDir).catch(async (error: unknown) => {
    if (!existsSync(outDir)) throw error
  })
  await rm(staging, { recursive: true, force: true })
  await rm(previous, { recursive: true, force: true })
}

const consoleIsFresh = (outDir: string) => {
  try {
    const stamp = JSON.parse(readFileSync(path.join(outDir, stampName), "utf8")) as { signature?: unknown }
    return stamp.signature === sourceSignature(root, consoleInputs).signature
  } catch {
    return false
  }
}

/** Builds dist/console when it is missing or older than its sources (tests that serve src/ call it). */
export const ensureConsole = async (outDir = path.join(root, "dist", "console")) => {
  if (consoleIsFresh(outDir)) return false
  await bundleConsole(outDir)
  return true
}

/** Builds into `outDir` (inside the package, where node_modules and package.json are found). */
export const bundle = async (outDir: string, minify: Minify) => {
  // Taken before anything is read: a source edited during the build leaves the bundle stale.
  const stamp = { ...sourceSignature(root), minify, builtAt: new Date().toISOString() }
  const staging = `${outDir}.building-${process.pid}`
  await rm(staging, { recursive: true, force: true })
  const { build } = await import("rolldown")
  await build({
    input: path.join(root, "src", "main.ts"),
    platform: "node",
    cwd: root,
    logLevel: "warn",
    // Maps cost nothing unless Node runs with --enable-source-maps; then stacks name src/ lines.
    output: { dir: staging, format: "esm", sourcemap: true, ...minifyOptions(minify) }
  })
  await bundleConsole(path.join(staging, "console"))
  await writeFile(path.join(staging, stampName), `${JSON.stringify(stamp, null, 2)}\n`)
  const previous = `${outDir}.previous-${process.pid}`
  if (existsSync(outDir)) await rename(outDir, previous)
  await rename(staging, outDir)
  await rm(previous, { recursive: true, force: true })
  return stamp
}

const rolldownInstalled = () =>
  import("rolldown").then(
    () => true,
    () => false
  )

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      "out-dir": { type: "string", default: path.join(root, "dist") },
      minify: { type: "string", default: "names" },
      "if-stale": { type: "boolean", default: false },
      prepare: { type: "boolean", default: false },
      console: { type: "boolean", default: false }
    }
  })
  const outDir = path.resolve(values["out-dir"])
  const minify = values.minify
  if (minify !== "full" && minify !== "names" && minify !== "off") {
    process.stderr.write(`build: --minify must be full, names or off, not ${minify}\n`)
    process.exit(1)
  }
  if (values["if-stale"] && isFresh(root, outDir)) process.exit(0)
  if (values.prepare && !(await rolldownInstalled())) {
    process.stderr.write(
      "build: rolldown is not installed (no dev dependencies): no bundle, the bin runs src/\n"
    )
    process.exit(0)
  }
  const started = performance.now()
  if (values.console) {
    await bundleConsole(path.join(outDir, "console"))
    process.stderr.write(`build: console in ${Math.round(performance.now() - started)} ms\n`)
    process.exit(0)
  }
  const stamp = await bundle(outDir, minify)
  process.stderr.write(
    `build: ${path.relative(process.cwd(), outDir) || "."} from ${stamp.files} files in ${Math.round(performance.now() - started)} ms\n`
  )
}
