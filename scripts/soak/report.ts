import { machine, megabytes, table } from "../lib/report.ts"
import type { Check } from "./consistency.ts"
import type { Answer } from "./traffic.ts"

export interface Memory {
  readonly rssAtStart: number
  readonly rssAtEnd: number
  readonly peakRss: number
}

const statusesByKind = (answers: ReadonlyArray<Answer>) => {
  const byKind = new Map<string, Map<number, number>>()
  for (const answer of answers) {
    const statuses = byKind.get(answer.kind) ?? new Map<number, number>()
    statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
    byKind.set(answer.kind, statuses)
  }
  return byKind
}

/** The soak's result file: throughput, latency, memory, statuses per kind and the checks. */
export const soakReport = (run: {
  readonly minutes: number
  readonly workers: number
  readonly answers: ReadonlyArray<Answer>
  readonly elapsed: number
  readonly memory: Memory
  readonly exitCode: number | null
  readonly checks: ReadonlyArray<Check>
}) => {
  const latencies = run.answers.map((a) => a.millis).sort((a, b) => a - b)
  const percentile = (p: number) => Math.round(latencies[Math.floor((latencies.length - 1) * p)] ?? 0)
  const byKind = statusesByKind(run.answers)
  return {
    at: new Date().toISOString(),
    machine: machine("18"),
    minutes: run.minutes,
    workers: run.workers,
    requests: run.answers.length,
    requestsPerSecond: Math.round(run.answers.length / run.elapsed),
    latencyMs: { p50: percentile(0.5), p99: percentile(0.99), max: Math.round(latencies.at(-1) ?? 0) },
    serverRss: {
      startMB: megabytes(run.memory.rssAtStart),
      endMB: megabytes(run.memory.rssAtEnd),
      peakMB: megabytes(run.memory.peakRss)
    },
    serverExitCode: run.exitCode,
    statuses: Object.fromEntries([...byKind].map(([kind, statuses]) => [kind, Object.fromEntries(statuses)])),
    checks: run.checks
  }
}

export type SoakReport = ReturnType<typeof soakReport>

/** The summary line, the statuses per kind and the checks, as printed on stdout. */
export const printReport = (report: SoakReport, out: string) => {
  process.stdout.write(
    `\nsoak: ${report.minutes} min, ${report.workers} workers, ${report.requests} requests (${report.requestsPerSecond}/s), ` +
      `p50 ${report.latencyMs.p50} ms, p99 ${report.latencyMs.p99} ms; server RSS ${report.serverRss.startMB} -> ` +
      `${report.serverRss.endMB} MB (peak ${report.serverRss.peakMB} MB), exit ${report.serverExitCode}\n\n`
  )
  process.stdout.write(
    `${table([
      ["kind", "statuses"],
      ...Object.entries(report.statuses).map(([kind, statuses]) => [
        kind,
        Object.entries(statuses)
          .sort((a, b) => Number(a[0]) - Number(b[0]))
          .map(([status, count]) => `${status}x${count}`)
          .join(" ")
      ])
    ])}\n\n`
  )
  process.stdout.write(
    `${table([["check", "result", "detail"], ...report.checks.map((c) => [c.name, c.ok ? "ok" : "FAILED", c.detail])])}\n\nresults: ${out}\n`
  )
}
