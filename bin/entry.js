// Which code the bin runs: the bundle in dist/ when it was built from exactly the sources on disk,
// otherwise the sources themselves (a developer who edits src/ and forgets to build gets the edit).
// Plain JavaScript and only node: built-ins, so choosing costs no TypeScript loader and a few ms.
import { createHash } from "node:crypto"
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import * as path from "node:path"

/** What the bundle is built from: a change to any of these makes dist/ stale. */
export const bundleInputs = ["src", "migrations", "package.json", "package-lock.json", "scripts/build.ts"]

export const stampName = ".stamp.json"

const walk = (root, relative, into) => {
  const absolute = path.join(root, relative)
  const stat = statSync(absolute, { bigint: true, throwIfNoEntry: false })
  if (stat === undefined) return
  if (stat.isDirectory()) {
    for (const name of readdirSync(absolute).sort()) walk(root, path.join(relative, name), into)
  } else {
    into.push(`${relative}\0${stat.size}\0${stat.mtimeNs}`)
  }
}

/** A hash of the path, size and modification time of every input file: no file is read. */
export const sourceSignature = (root, inputs = bundleInputs) => {
  const entries = []
  for (const input of inputs) walk(root, input, entries)
  return { files: entries.length, signature: createHash("sha256").update(entries.join("\n")).digest("hex") }
}

/** True when `distDir` holds a bundle built from the sources now under `root`. */
export const isFresh = (root, distDir = path.join(root, "dist")) => {
  try {
    const stamp = JSON.parse(readFileSync(path.join(distDir, stampName), "utf8"))
    return existsSync(path.join(distDir, "main.js")) && stamp.signature === sourceSignature(root).signature
  } catch {
    return false
  }
}

/**
 * The module to import: `LEAD_INTAKE_ENTRY=src|dist` forces one (dist must exist); unset, the
 * bundle when fresh, else the sources.
 */
export const chooseEntry = (root, env) => {
  const dist = path.join(root, "dist", "main.js")
  const src = path.join(root, "src", "main.ts")
  const forced = env.LEAD_INTAKE_ENTRY ?? ""
  if (forced === "src") return src
  if (forced === "dist") {
    if (!existsSync(dist))
      throw new Error(`LEAD_INTAKE_ENTRY=dist but ${dist} does not exist; run npm run build`)
    return dist
  }
  if (forced !== "") throw new Error(`LEAD_INTAKE_ENTRY must be "src" or "dist", not "${forced}"`)
  return isFresh(root) ? dist : src
}
