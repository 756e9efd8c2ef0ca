import * as NodeServices from "@effect/platform-node/NodeServices"
import { ConfigProvider, Console, Effect, Exit, Layer, Logger, Sink, Stdio } from "effect"
import { runCli } from "../../src/Cli/Main.ts"

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
    const out: Array<string> = []
    const err: Array<string> = []
    const chunks: Array<string> = []
    const console = {
      ...globalThis.console,
      log: (...parts: ReadonlyArray<unknown>) => out.push(parts.join(" ")),
      info: (...parts: ReadonlyArray<unknown>) => out.push(parts.join(" ")),
      error: (...parts: ReadonlyArray<unknown>) => err.push(parts.join(" ")),
      warn: (...parts: ReadonlyArray<unknown>) => err.push(parts.join(" "))
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
    return { ok: Exit.isSuccess(exit), out: out.join("\n"), err: err.flatMap((e) => e.split("\n")), chunks }
  }
