/** `--name value` and `--flag` arguments; `--name=value` works too. */
export const parseArgs = (argv: ReadonlyArray<string>): ReadonlyMap<string, string> => {
  const options = new Map<string, string>()
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index]!
    if (!argument.startsWith("--")) continue
    const equals = argument.indexOf("=")
    if (equals !== -1) {
      options.set(argument.slice(2, equals), argument.slice(equals + 1))
      continue
    }
    const next = argv[index + 1]
    if (next !== undefined && !next.startsWith("--")) {
      options.set(argument.slice(2), next)
      index++
    } else {
      options.set(argument.slice(2), "true")
    }
  }
  return options
}

export const numberOption = (options: ReadonlyMap<string, string>, name: string, fallback: number) => {
  const raw = options.get(name)
  if (raw === undefined) return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value <= 0) {
    process.stderr.write(`--${name} must be a positive number, got ${raw}\n`)
    process.exit(1)
  }
  return value
}
