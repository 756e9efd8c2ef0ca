#!/bin/sh
":" //; self=$(readlink -f -- "$0"); root=${self%/bin/*}; node=$root/node_modules/.bin/node; [ -x "$node" ] || node=$root/../.bin/node; [ -x "$node" ] || node=node; case "$NODE_OPTIONS" in *semi-space*) exec "$node" "$self" "$@";; esac; exec "$node" --max-semi-space-size=4 "$self" "$@"
// The package bin, a shell script and an ES module in one file. Run as a program (`npx lead-intake`,
// `node_modules/.bin/lead-intake`), the shell line above replaces itself with the project's Node 24
// (`exec`: one process, no wrapper left waiting) with the heap flags chosen by measurement (docs/performance.md,
// Performance) unless NODE_OPTIONS sets the young generation itself. Run as `node bin/lead-intake.js`, Node skips that line: under Node 24 the CLI runs
// in-process, and an older Node hands over to the project's own, replacing itself where it can.
// In-process it runs the bundle (dist/main.js) when that was built from the current sources, else
// src/main.ts (bin/entry.js; LEAD_INTAKE_ENTRY=src|dist forces one).
import { spawn } from "node:child_process"
import { realpathSync } from "node:fs"
import { constants } from "node:os"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const requiredMajor = 24
const major = Number(process.versions.node.split(".")[0])

const self = realpathSync(fileURLToPath(import.meta.url))

if (major >= requiredMajor) {
  // Old-generation growth bounded, and no allocation-site pretenuring (docs/performance.md#findings, "Memory under
  // load" and "Pretenuring"), both by measurement: set at run time, since NODE_OPTIONS may not carry them, so every
  // way of starting the bin gets them.
  const heapFlags =
    process.env.LEAD_INTAKE_HEAP_FLAGS ?? "--heap-growing-percent=60 --no-allocation-site-pretenuring"
  if (heapFlags !== "") {
    const { setFlagsFromString } = await import("node:v8")
    setFlagsFromString(heapFlags)
  }
  const { chooseEntry } = await import("./entry.js")
  let entry
  try {
    entry = chooseEntry(path.dirname(path.dirname(self)), process.env)
  } catch (error) {
    process.stderr.write(`lead-intake: ${error.message}\n`)
    process.exit(1)
  }
  await import(pathToFileURL(entry).href)
} else {
  const projectNode = path.join(path.dirname(self), "..", "node_modules", "node", "bin", "node")
  const heap = (process.env.NODE_OPTIONS ?? "").includes("semi-space") ? [] : ["--max-semi-space-size=4"]
  const args = [...heap, self, ...process.argv.slice(2)]
  try {
    // Node 22.15+ can replace its own process; older ones keep a parent that forwards signals.
    if (typeof process.execve === "function") process.execve(projectNode, [projectNode, ...args], process.env)
  } catch {}
  const child = spawn(projectNode, args, { stdio: "inherit" })
  const forward = (signal) => () => child.kill(signal)
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, forward(signal))
  child.on("error", (error) => {
    process.stderr.write(
      `lead-intake: Node ${requiredMajor} is required and ${projectNode} cannot run (${error.message}); run npm ci first\n`
    )
    process.exit(1)
  })
  child.on("exit", (code, signal) => {
    process.exit(code ?? 128 + (constants.signals[signal] ?? 0))
  })
}
