/**
 * `--name value` and `--flag` arguments; `--name=value` works too. The options named in `withValue`
 * always take the next argument, even one that starts with `--` (`--node-flags "--max-semi-space-size=8"`).
 */
export const parseArgs = (
  argv: ReadonlyArray<string>,
  withValue: ReadonlyArray<string> = []
): ReadonlyMap<string, string> => {
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
    if (next !== undefined && (!next.startsWith("--") || withValue.includes(argument.slice(2)))) {
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
