#!/usr/bin/env node
// The package bin. It must start under any Node on PATH (`npx` or a system Node 20), while the
// service needs Node 24 to run TypeScript directly: an older Node hands over to the project's own.
import { spawn } from "node:child_process"
import { realpathSync } from "node:fs"
import { constants } from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const requiredMajor = 24
const major = Number(process.versions.node.split(".")[0])

if (major >= requiredMajor) {
  await import("../src/main.ts")
} else {
  const self = realpathSync(fileURLToPath(import.meta.url))
  const projectNode = path.join(path.dirname(self), "..", "node_modules", "node", "bin", "node")
  const child = spawn(projectNode, [self, ...process.argv.slice(2)], { stdio: "inherit" })
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
