import { spawn } from "node:child_process"
import type { LoadPlan, LoadResult } from "./load.ts"

/** Runs autocannon in a process of its own, so the load generator shares nothing with the servers. */
export const drive = (plan: LoadPlan) =>
  new Promise<LoadResult>((resolve, reject) => {
    const child = spawn(process.execPath, ["scripts/lib/load.ts"], { stdio: ["pipe", "pipe", "inherit"] })
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8")
    })
    child.on("exit", (code) =>
      code === 0
        ? resolve(JSON.parse(output) as LoadResult)
        : reject(new Error(`load process exited ${code}`))
    )
    child.stdin.end(JSON.stringify(plan))
  })
