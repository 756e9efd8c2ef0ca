import { readdirSync, readFileSync } from "node:fs"

const ticksPerSecond = 100

const statFields = (
  pid: number | "self"
): { readonly comm: string; readonly fields: Array<string> } | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const close = stat.lastIndexOf(")")
    return { comm: stat.slice(stat.indexOf("(") + 1, close), fields: stat.slice(close + 2).split(" ") }
  } catch {
    return undefined
  }
}

/**
 * CPU seconds used so far by the server, by the benchmark's PostgreSQL (postmaster and backends),
 * by this process's finished children (the load generator), and the machine's busy and idle time.
 */
export const cpuSnapshot = (serverPid: number, postmasterPid: number) => {
  let server = 0
  const postgres = new Map<number, number>()
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry)
    if (!Number.isInteger(pid)) continue
    const info = statFields(pid)
    if (info === undefined) continue
    const ticks = Number(info.fields[11]) + Number(info.fields[12])
    if (pid === serverPid) server += ticks
    else if (pid === postmasterPid || Number(info.fields[1]) === postmasterPid) postgres.set(pid, ticks)
  }
  const self = statFields("self")
  const children = self === undefined ? 0 : Number(self.fields[13]) + Number(self.fields[14])
  const cpu = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number)
  const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0)
  const total = cpu.slice(0, 8).reduce((sum, ticks) => sum + ticks, 0)
  return {
    server: server / ticksPerSecond,
    postgres,
    load: children / ticksPerSecond,
    busy: (total - idle) / ticksPerSecond,
    idle: idle / ticksPerSecond
  }
}

export type CpuSnapshot = ReturnType<typeof cpuSnapshot>

/**
 * Share of one core each used between two snapshots, in percent (a 2-core machine has 200);
 * `others` is what processes outside the benchmark took, which makes a run unrepresentative.
 */
export const cpuShare = (before: CpuSnapshot, after: CpuSnapshot, seconds: number) => {
  const percent = (value: number) => Math.round((value / seconds) * 100)
  let postgresSeconds = 0
  for (const [pid, ticks] of after.postgres)
    postgresSeconds += (ticks - (before.postgres.get(pid) ?? 0)) / ticksPerSecond
  const server = percent(after.server - before.server)
  const postgres = percent(postgresSeconds)
  const load = percent(after.load - before.load)
  const busy = percent(after.busy - before.busy)
  return {
    server,
    postgres,
    load,
    others: Math.max(0, busy - server - postgres - load),
    idle: percent(after.idle - before.idle)
  }
}

/**
 * CPU seconds used so far by each process tree, keyed by its root's PID: the root and every live
 * descendant, plus what the exited ones used (a parent's `cutime` and `cstime` once it has reaped
 * them), so a PostgreSQL backend or a Citus connection that ends between two snapshots still counts.
 * Also this process's finished children (the load generator) and the machine's busy time.
 */
export const treeCpuSnapshot = (roots: ReadonlyArray<number>) => {
  const ticks = new Map<number, number>()
  const children = new Map<number, Array<number>>()
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry)
    if (!Number.isInteger(pid)) continue
    const info = statFields(pid)
    if (info === undefined) continue
    const [utime, stime, cutime, cstime] = info.fields.slice(11, 15).map(Number)
    ticks.set(pid, utime! + stime! + cutime! + cstime!)
    const parent = Number(info.fields[1])
    children.set(parent, [...(children.get(parent) ?? []), pid])
  }
  const treeTicks = (root: number): number =>
    (ticks.get(root) ?? 0) + (children.get(root) ?? []).reduce((sum, child) => sum + treeTicks(child), 0)
  const self = statFields("self")
  const { idle, total } = machineTicks()
  return {
    trees: new Map(roots.map((root) => [root, treeTicks(root) / ticksPerSecond])),
    load: self === undefined ? 0 : (Number(self.fields[13]) + Number(self.fields[14])) / ticksPerSecond,
    busy: (total - idle) / ticksPerSecond
  }
}

export type TreeCpuSnapshot = ReturnType<typeof treeCpuSnapshot>

const machineTicks = () => {
  const cpu = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number)
  const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0)
  return { idle, total: cpu.slice(0, 8).reduce((sum, ticks) => sum + ticks, 0) }
}

/** Busy share of the whole machine over `millis`, 0..1. */
export const machineBusy = async (millis: number) => {
  const before = machineTicks()
  await new Promise((resolve) => setTimeout(resolve, millis))
  const after = machineTicks()
  const total = after.total - before.total
  return total === 0 ? 0 : 1 - (after.idle - before.idle) / total
}

/**
 * Waits until other processes leave the machine mostly idle (under 10% busy over a second), for
 * at most `maxSeconds`; answers whether it got quiet.
 */
export const waitForQuiet = async (maxSeconds: number, log: (line: string) => void) => {
  const deadline = performance.now() + maxSeconds * 1000
  let warned = false
  while (true) {
    const busy = await machineBusy(1_000)
    if (busy < 0.1) return true
    if (performance.now() > deadline) {
      log(`  the machine is still ${Math.round(busy * 100)}% busy with other work; measuring anyway`)
      return false
    }
    if (!warned) {
      log(`  waiting for other work on the machine to finish (${Math.round(busy * 100)}% busy)`)
      warned = true
    }
  }
}
