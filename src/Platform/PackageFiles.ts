import { readFileSync } from "node:fs"
import * as path from "node:path"

/**
 * Files the running code reads from the package, found from the package root rather than from this
 * module's own location: this module sits in `src/` when run from sources and in `dist/` when bundled.
 */
const packageRootFrom = (start: string): string => {
  for (let dir = start; ; dir = path.dirname(dir)) {
    try {
      const manifest = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as { name?: unknown }
      if (manifest.name === "lead-intake") return dir
    } catch {}
    if (path.dirname(dir) === dir) throw new Error(`no package.json named "lead-intake" above ${start}`)
  }
}

let root: string | undefined

/** The directory holding this package's package.json. */
export const packageRoot = (): string => (root ??= packageRootFrom(import.meta.dirname))

/**
 * The operator console's shell (`index.html`) and its `assets/`, as the build makes them from
 * src/Console/web: beside the bundle that runs (`dist/console`, or an `--out-dir`'s), and for the
 * sources in `dist/console` (`npm run build`; tests that serve src/ build it in their global setup).
 */
export const consoleDirectory = (): string =>
  runningFrom() === "dist"
    ? path.join(import.meta.dirname, "console")
    : path.join(packageRoot(), "dist", "console")

/** Whether this process runs the sources (`src`, through type stripping) or the bundle (`dist`). */
export const runningFrom = (): "src" | "dist" => (import.meta.filename.endsWith(".ts") ? "src" : "dist")
