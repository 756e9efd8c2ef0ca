import { beforeAll, describe, expect, it } from "vitest"
import {
  cliFor,
  type Env,
  expectUserError,
  type Finished,
  freshDatabaseEnv,
  json,
  processTimeout,
  run
} from "./Processes.ts"

const unknownId = "1b4e28ba-2fa1-41d2-883f-0016d3cca427"

describe("lead-intake errors: one line on stderr, exit 1 (real processes)", {
  timeout: processTimeout
}, () => {
  let env: Env
  let cli: (...args: ReadonlyArray<string>) => Promise<Finished>

  beforeAll(async () => {
    env = await freshDatabaseEnv()
    cli = cliFor(env)
  })

  it("unknown ids are one line on stderr and exit 1", async () => {
    const org = json(await cli("org", "create", "--name", "Ids", "--json")).id as string
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
      [["agent", "add", "--org", unknownId, "--name", "Ana"], "organization"],
      [["origin", "list", "--org", unknownId, "--json"], "organization"],
      [["origin", "set-limit", "--origin", unknownId, "--rate-limit", "5"], "origin"],
      [["key", "revoke", "--origin", unknownId, "--json"], "origin"],
      [["property", "archive", "--id", unknownId], "property"],
      [["requests", "--origin", unknownId], "origin"],
      [["lead", "show", "--id", unknownId, "--json"], "lead"],
      [["rule", "add", "--org", org, "--agent", unknownId], "agent"]
    ]
    const results = await Promise.all(cases.map(([args]) => cli(...args)))
    results.forEach((result, index) => {
      expectUserError(result, new RegExp(`^lead-intake: unknown ${cases[index]![1]} ${unknownId}$`))
    })
  })

  it("bad arguments are refused before the database is touched", async () => {
    const unreachable = cliFor({ DATABASE_URL: "postgres://nobody:secret@127.0.0.1:1/none" })
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, RegExp]> = [
      [["agent", "add", "--org", "not-a-uuid", "--name", "Ana"], /--org.*UUID/],
      [["lead", "show", "--id", "1234", "--json"], /--id.*UUID/],
      [["rule", "add", "--org", unknownId, "--round-robin", `${unknownId},nope`], /--round-robin.*UUIDs/],
      [["rule", "add", "--org", unknownId], /one of --agent or --round-robin is required/],
      [
        ["rule", "add", "--org", unknownId, "--agent", unknownId, "--round-robin", unknownId],
        /exclude each other/
      ],
      [["requests"], /one of --origin or --unattributed is required/],
      [["requests", "--unattributed", "--limit", "0"], /--limit/],
      [["property", "add", "--org", unknownId, "--codigo", "AB-123"], /--codigo.*ABC-1234/],
      [["org", "create", "--name", "X", "--country", "MEX"], /--country.*two-letter/],
      [["org", "create"], /Missing required flag: --name/],
      [["org", "create", "--name", "   "], /--name.*non-empty/],
      [["origin", "create", "--org", unknownId, "--label", "w", "--rate-limit", "0"], /--rate-limit/],
      [["org", "create", "--nmae", "X"], /unknown flag --nmae/],
      [["frobnicate"], /unknown command "frobnicate"/],
      [["org"], /lead-intake org: a command is missing/],
      [["serve", "--port", "http"], /--port/]
    ]
    const results = await Promise.all(cases.map(([args]) => unreachable(...args)))
    results.forEach((result, index) => {
      expectUserError(result, cases[index]![1])
      expect(result.stderr).not.toMatch(/database|PostgreSQL/)
    })
  })

  it("an unreachable database is one line too", async () => {
    const result = await run(["org", "create", "--name", "X"], {
      env: { DATABASE_URL: "postgres://nobody:secret@127.0.0.1:1/none" }
    })
    expectUserError(result, /^lead-intake: database: .*ECONNREFUSED/)
    expect(result.stderr).not.toContain("secret")
  })

  it("a bad configuration value stops every command with one line naming the variable", async () => {
    const results = await Promise.all([
      run(["serve"], { env: { ...env, PORT: "abc" } }),
      run(["org", "create", "--name", "X", "--json"], { env: { ...env, PORT: "abc" } }),
      run(["migrate"], { env: { ...env, DASHBOARD_URL: "ftp://crm" } }),
      run(["serve", "--port", "8080"], { env: { ...env, DATABASE_POOL_SIZE: "0" } })
    ])
    expectUserError(results[0]!, /^lead-intake: invalid configuration: PORT: /)
    expectUserError(results[1]!, /^lead-intake: invalid configuration: PORT: /)
    expectUserError(results[2]!, /^lead-intake: invalid configuration: DASHBOARD_URL: /)
    expectUserError(results[3]!, /^lead-intake: invalid configuration: DATABASE_POOL_SIZE: /)
  })

  it("--help and --version print to stdout and exit 0", async () => {
    const [help, subHelp, version] = await Promise.all([
      run(["--help"]),
      run(["rule", "add", "--help", "--json"]),
      run(["--version"])
    ])
    expect(help.code).toBe(0)
    for (const command of [
      "serve",
      "migrate",
      "org",
      "origin",
      "key",
      "property",
      "requests",
      "lead",
      "demo"
    ]) {
      expect(help.stdout).toContain(command)
    }
    expect(subHelp.stdout).toContain("--round-robin")
    expect(version.stdout.trim()).toMatch(/^lead-intake v\d+\.\d+\.\d+$/)
  })
})
