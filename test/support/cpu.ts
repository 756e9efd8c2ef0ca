import { readFileSync } from "node:fs"
import { afterAll } from "vitest"

declare module "vitest" {
  interface TaskMeta {
    /**
     * CPU seconds the test file used: its worker's own and those of the processes it started and
     * waited for (`serve`, the CLI). Not PostgreSQL servers', which run on their own.
     */
    cpuSeconds?: number
  }
}

/**
 * This process's CPU seconds with those of its waited-for children (Linux's /proc; 0 elsewhere):
 * utime, stime, cutime and cstime, in clock ticks of 1/100 s.
 */
const cpuSeconds = () => {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return fields.slice(11, 15).reduce((sum, ticks) => sum + Number(ticks), 0) / 100
  } catch {
    return 0
  }
}

const started = cpuSeconds()

// Registered before the file's own hooks, so it runs after them (vitest runs `afterAll` hooks in
// reverse): the servers the file stops in its own `afterAll` are counted.
// (vitest reads a hook's first argument as its fixtures: an empty pattern asks for none.)
// biome-ignore lint/correctness/noEmptyPattern: see above
afterAll(({}, file) => {
  file.meta.cpuSeconds = cpuSeconds() - started
})
