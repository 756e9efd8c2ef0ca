import { appendFileSync } from "node:fs"
import * as path from "node:path"
import type { Reporter, TestModule } from "vitest/node"

/** How many of the slowest test files a run lists at its end (`TEST_SLOWEST=N`, 0 for none). */
const slowestShown = Number(process.env.TEST_SLOWEST ?? 10)

/**
 * Ends every run with one plain `N passed, N failed` line that any CI log reader understands, after
 * the slowest test files: each one's time from its worker's start to its end and its CPU seconds
 * (`test/support/cpu.ts`), where a run's time goes. With `TEST_TIMINGS_FILE`, every file's figures
 * are also appended there, one tab-separated line each (seconds, CPU seconds, file, project): CI
 * lists a phase's slowest files across its runs from it.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>) {
    let passed = 0
    let failed = 0
    let skipped = 0
    for (const module of modules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state
        if (state === "passed") passed++
        else if (state === "failed") failed++
        else skipped++
      }
    }
    const timings = modules.map(timingOf)
    const file = process.env.TEST_TIMINGS_FILE
    if (file !== undefined && file !== "")
      appendFileSync(
        file,
        timings
          .map(
            (timing) =>
              `${timing.seconds.toFixed(1)}\t${timing.cpu?.toFixed(1) ?? "-"}\t${timing.name}\t${timing.project}\n`
          )
          .join("")
      )
    process.stdout.write(slowest(timings))
    process.stdout.write(`\nTests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`)
  }
}

interface Timing {
  readonly name: string
  readonly project: string
  readonly seconds: number
  readonly cpu: number | undefined
}

const timingOf = (module: TestModule): Timing => {
  const diagnostic = module.diagnostic()
  const milliseconds =
    diagnostic.environmentSetupDuration +
    diagnostic.prepareDuration +
    diagnostic.setupDuration +
    diagnostic.collectDuration +
    diagnostic.duration
  return {
    name: path.relative(process.cwd(), module.moduleId),
    project: module.project.name,
    seconds: milliseconds / 1000,
    cpu: module.meta().cpuSeconds
  }
}

const slowest = (timings: ReadonlyArray<Timing>) => {
  const files = [...timings].sort((a, b) => b.seconds - a.seconds).slice(0, slowestShown)
  if (files.length === 0) return ""
  const rows = files.map((file) => {
    const cpu = file.cpu === undefined ? "-" : `${file.cpu.toFixed(1)}s`
    const project = file.project === "" ? "" : ` (${file.project})`
    return `  ${file.seconds.toFixed(1).padStart(7)}s  ${cpu.padStart(7)}  ${file.name}${project}`
  })
  return `\nSlowest test files (time from the worker's start, CPU of the file and the processes it waited for):\n${rows.join("\n")}\n`
}
