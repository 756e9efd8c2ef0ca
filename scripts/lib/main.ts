/**
 * Runs a script's `main` with a cleanup stack: what it pushes is undone in reverse order when the
 * run fails half-way or is interrupted (SIGINT, SIGTERM), so no server or cluster outlives it; the
 * failure ends the process with status 1. `main` undoes the rest itself with `runCleanups`.
 */
export type Cleanups = Array<() => Promise<unknown>>

/** Undoes what `cleanups` holds, newest first, each once; one that fails does not stop the others. */
export const runCleanups = async (cleanups: Cleanups) => {
  while (cleanups.length > 0) await cleanups.pop()!().catch(() => {})
}

export const runMain = async (main: (cleanups: Cleanups) => Promise<void>) => {
  const cleanups: Cleanups = []
  for (const [signal, status] of [
    ["SIGINT", 130],
    ["SIGTERM", 143]
  ] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping what this run started`)
      void runCleanups(cleanups).finally(() => process.exit(status))
    })
  }
  await main(cleanups).catch(async (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    await runCleanups(cleanups)
    process.exit(1)
  })
}

/** Writes the usage and exits when `--help` was given. */
export const helpRequested = (options: ReadonlyMap<string, string>, usage: string) => {
  if (!options.has("help")) return
  process.stdout.write(`${usage}\n`)
  process.exit(0)
}

export const log = (line: string) => process.stderr.write(`${line}\n`)

export const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis))
