import { readFile } from "node:fs/promises"

/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`): self time per function and per
 * package, so a benchmark run shows where the server spends its CPU.
 * Usage: node scripts/lib/profile.ts <file.cpuprofile> [top]
 */
interface ProfileNode {
  readonly id: number
  readonly callFrame: {
    readonly functionName: string
    readonly url: string
    readonly lineNumber: number
  }
  readonly children?: ReadonlyArray<number>
}

interface Profile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const packageOf = (url: string) => {
  if (url === "") return "(native/V8)"
  const modules = url.lastIndexOf("node_modules/")
  if (modules !== -1) {
    const rest = url.slice(modules + "node_modules/".length).split("/")
    return rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!
  }
  if (url.startsWith("node:")) return "node core"
  const src = url.indexOf("/src/")
  return src === -1
    ? url
    : `project ${url
        .slice(src + 1)
        .split("/")
        .slice(0, 2)
        .join("/")}`
}

export const summariseProfile = (profile: Profile, top = 30) => {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const self = new Map<number, number>()
  profile.samples.forEach((id, index) => {
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0))
  })
  const total = [...self.values()].reduce((sum, time) => sum + time, 0)
  const functions = new Map<string, number>()
  const packages = new Map<string, number>()
  for (const [id, time] of self) {
    const frame = byId.get(id)!.callFrame
    const name = `${frame.functionName || "(anonymous)"} ${frame.url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*\/src\//, "src/")}:${frame.lineNumber + 1}`
    functions.set(name, (functions.get(name) ?? 0) + time)
    const pkg = packageOf(frame.url)
    packages.set(pkg, (packages.get(pkg) ?? 0) + time)
  }
  const ranked = (map: Map<string, number>) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, time]) => `${((time / total) * 100).toFixed(1).padStart(5)}%  ${name}`)
  return { totalMs: total / 1000, functions: ranked(functions), packages: ranked(packages) }
}

if (import.meta.main) {
  const file = process.argv[2]
  if (file === undefined) {
    process.stderr.write("usage: node scripts/lib/profile.ts <file.cpuprofile> [top]\n")
    process.exit(1)
  }
  const summary = summariseProfile(
    JSON.parse(await readFile(file, "utf8")) as Profile,
    Number(process.argv[3] ?? 30)
  )
  process.stdout.write(
    `sampled ${summary.totalMs.toFixed(0)} ms\n\nby package\n${summary.packages.join("\n")}\n\nby function (self time)\n${summary.functions.join("\n")}\n`
  )
}
