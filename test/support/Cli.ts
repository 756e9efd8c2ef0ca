import { format } from "node:util"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { ConfigProvider, Console, Effect, Exit, Layer, Logger, Sink, Stdio } from "effect"
import { runCli } from "../../src/Cli/Main.ts"

/** What a command run in this process did: its exit, its lines on stdout and stderr, and its stream. */
export interface InProcess {
  readonly exit: Exit.Exit<unknown, unknown>
  readonly out: ReadonlyArray<string>
  readonly err: ReadonlyArray<string>
  /** What went to stdout as a stream (a CSV export), chunk by chunk. */
  readonly chunks: ReadonlyArray<string>
}

/**
 * `lead-intake ...args` run to completion in this process (`runCli`, the CLI's own code) with exactly
 * `env` as its environment. The one in-process runner: `cliIn` below and `runInProcess`
 * (test/e2e/Processes.ts) shape its result for their suites.
 */
export const runCliInProcess = async (
  args: ReadonlyArray<string>,
  env: Record<string, string>
): Promise<InProcess> => {
  const out: Array<string> = []
  const err: Array<string> = []
  const chunks: Array<string> = []
  const console = {
    ...globalThis.console,
    log: (...parts: ReadonlyArray<unknown>) => out.push(format(...parts)),
    info: (...parts: ReadonlyArray<unknown>) => out.push(format(...parts)),
    error: (...parts: ReadonlyArray<unknown>) => err.push(format(...parts)),
    warn: (...parts: ReadonlyArray<unknown>) => err.push(format(...parts))
  } as unknown as Console.Console
  const exit = await Effect.runPromiseExit(
    runCli.pipe(
      Effect.provide(
        Layer.mergeAll(
          NodeServices.layer,
          Stdio.layerTest({
            args: Effect.succeed(args),
            // A CSV export streams to stdout through this sink (not Console.log): kept chunk by chunk.
            stdout: () =>
              Sink.forEachArray((batch: ReadonlyArray<string | Uint8Array>) =>
                Effect.sync(() => {
                  for (const chunk of batch)
                    chunks.push(typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk))
                })
              )
          }),
          ConfigProvider.layer(ConfigProvider.fromEnv({ env }))
        )
      ),
      Effect.provideService(Console.Console, console),
      Effect.provideService(Logger.LogToStderr, true)
    )
  )
  return { exit, out, err, chunks }
}

export interface Ran {
  readonly ok: boolean
  readonly out: string
  readonly err: ReadonlyArray<string>
  /** What went to stdout as a stream (a CSV export), chunk by chunk. */
  readonly chunks: ReadonlyArray<string>
}

/** The CLI in this process (argv cannot carry U+0000 between processes): its exit and what it wrote. */
export const cliIn =
  (env: Record<string, string>) =>
  async (...args: ReadonlyArray<string>): Promise<Ran> => {
    const ran = await runCliInProcess(args, env)
    return {
      ok: Exit.isSuccess(ran.exit),
      out: ran.out.join("\n"),
      err: ran.err.flatMap((e) => e.split("\n")),
      chunks: ran.chunks
    }
  }
