import { cpus, release, totalmem } from "node:os"

export const machine = (postgresVersion: string) => ({
  cpu: cpus()[0]?.model ?? "unknown",
  cores: cpus().length,
  memoryGiB: Math.round(totalmem() / 2 ** 30),
  kernel: release(),
  node: process.version,
  postgres: postgresVersion
})

/** A plain text table: the first row is the header, numbers are right-aligned. */
export const table = (rows: ReadonlyArray<ReadonlyArray<string | number>>): string => {
  const cells = rows.map((row) => row.map((cell) => String(cell)))
  const widths = cells[0]!.map((_, column) => Math.max(...cells.map((row) => row[column]?.length ?? 0)))
  const line = (row: ReadonlyArray<string>, raw: ReadonlyArray<string | number>) =>
    row
      .map((cell, column) =>
        typeof raw[column] === "number" ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!)
      )
      .join("  ")
      .trimEnd()
  const [header, ...body] = cells
  return [
    line(header!, rows[0]!),
    widths.map((width) => "-".repeat(width)).join("  "),
    ...body.map((row, index) => line(row, rows[index + 1]!))
  ].join("\n")
}

export const megabytes = (bytes: number) => Math.round(bytes / 2 ** 20)
