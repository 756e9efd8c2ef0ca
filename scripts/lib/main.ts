/**
 * Runs a script's `main` with a cleanup stack: what it pushes is undone in reverse order when the
 * run fails half-way, so no server or cluster outlives it; the failure ends the process with status 1.
 */
export type Cleanups = Array<() => Promise<unknown>>

export const runMain = async (main: (cleanups: Cleanups) => Promise<void>) => {
  const cleanups: Cleanups = []
  await main(cleanups).catch(async (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {})
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
