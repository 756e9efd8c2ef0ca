import { Console, Effect } from "effect"
import { Flag, GlobalFlag } from "effect/cli"

/** `--json`, accepted anywhere on the line: exactly one JSON value on stdout, nothing else there. */
export const Json = GlobalFlag.Setting("json")({
  flag: Flag.Boolean("json").pipe(
    Flag.withDescription("Print exactly one JSON value on stdout"),
    Flag.withDefault(false)
  )
})

/** Prints `value` as JSON under `--json`, otherwise as the text `human` renders for an operator. */
export const emit = <A>(value: A, human: (value: A) => string) =>
  Effect.gen(function* () {
    const json = yield* Json
    yield* Console.log(json ? JSON.stringify(value) : human(value))
  })

export const table = (
  headers: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<string>>,
  whenEmpty: string
): string => {
  if (rows.length === 0) return whenEmpty
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? "").length))
  )
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join("  ")
      .trimEnd()
  return [line(headers), ...rows.map(line)].join("\n")
}

export const orDash = (value: string | null): string => value ?? "-"
