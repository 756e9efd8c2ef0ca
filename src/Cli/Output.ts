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

/** One column of a table: its header, and what a row shows in it. */
export type Column<A> = readonly [header: string, cell: (row: A) => string]

const table = <A>(columns: ReadonlyArray<Column<A>>, rows: ReadonlyArray<A>, whenEmpty: string): string => {
  if (rows.length === 0) return whenEmpty
  const cells = rows.map((row) => columns.map(([, cell]) => cell(row)))
  const widths = columns.map(([header], column) =>
    Math.max(header.length, ...cells.map((row) => (row[column] ?? "").length))
  )
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join("  ")
      .trimEnd()
  return [line(columns.map(([header]) => header)), ...cells.map(line)].join("\n")
}

/** Prints the rows as JSON under `--json`, otherwise as a table of `columns` (`whenEmpty` for none). */
export const emitTable = <A>(rows: ReadonlyArray<A>, columns: ReadonlyArray<Column<A>>, whenEmpty: string) =>
  emit(rows, (rows) => table(columns, rows, whenEmpty))

export const orDash = (value: string | null): string => value ?? "-"
