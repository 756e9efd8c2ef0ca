import { execFileSync } from "node:child_process"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { log } from "./main.ts"

/**
 * The bin runs the bundle only when it was built from the sources on disk (bin/entry.js), and
 * `npm ci` builds it, so that is what a deployment serves. A checkout with edits since its last
 * build would be measured on its TypeScript sources instead: 60 MB more RSS and more CPU per
 * request, which once made a bench report the sources' memory as the service's. Each measured
 * checkout is built first when its bundle is stale, and the report says which entry ran.
 */
export const ensureBundle = async (dir: string) => {
  const entry = path.resolve(dir, "bin", "entry.js")
  const { isFresh } = (await import(pathToFileURL(entry).href)) as { isFresh: (root: string) => boolean }
  if (isFresh(path.resolve(dir))) return `${dir}: dist/ (built from the sources on disk)`
  log(`${dir}: dist/ is stale, building it`)
  execFileSync(process.execPath, ["scripts/build.ts"], { cwd: dir, stdio: ["ignore", "ignore", "inherit"] })
  if (!isFresh(path.resolve(dir))) throw new Error(`${dir}: dist/ is still stale after scripts/build.ts`)
  return `${dir}: dist/ (built now)`
}
