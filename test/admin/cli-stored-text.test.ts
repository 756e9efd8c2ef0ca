import { Effect } from "effect"
import * as fc from "fast-check"
import { beforeAll, describe, expect, it } from "vitest"
import { isStorableText } from "../../src/AdminApi/StoredText.ts"
import { anyCharacter } from "../fuzz/arbitraries.ts"
import { announceSeed, fuzzParameters } from "../fuzz/support.ts"
import { cliIn, type Ran } from "../support/Cli.ts"
import { createDatabase, databaseUrl } from "../support/Database.ts"

const nulOrSurrogate = fc
  .tuple(
    fc.string({ unit: anyCharacter, maxLength: 12 }),
    fc.constantFrom("\u0000", "\ud800", "\udfff", "x\udc00", "a\u0000b"),
    fc.string({ unit: anyCharacter, maxLength: 12 })
  )
  .map(([before, bad, after]) => `${before}${bad}${after}`)

const anyText = fc.oneof(
  nulOrSurrogate,
  fc.string({ unit: anyCharacter, maxLength: 30 }),
  fc.string({ maxLength: 30 })
)

describe("CLI commands: text PostgreSQL cannot store is refused with one line, before the database", {
  timeout: 600_000
}, () => {
  let cli: (...args: ReadonlyArray<string>) => Promise<Ran>
  let org: string
  let lead: string

  beforeAll(async () => {
    announceSeed("CLI stored text")
    const name = await Effect.runPromise(createDatabase())
    cli = cliIn({ DATABASE_URL: databaseUrl(name), LOG_LEVEL: "Error", LEAD_INTAKE_DATA_DIR: "/nonexistent" })
    const migrated = await cli("migrate")
    expect(migrated.ok, migrated.err.join("\n")).toBe(true)
    const created = await cli("org", "create", "--name", "Texto", "--json")
    expect(created.ok, created.err.join("\n")).toBe(true)
    org = JSON.parse(created.out).id
    lead = crypto.randomUUID()
  }, 120_000)

  /** Every command's text flags: the command line with `value` in the flag, valid values elsewhere. */
  const cases: ReadonlyArray<readonly [flag: string, args: (value: string) => ReadonlyArray<string>]> = [
    ["name", (v) => ["org", "create", "--name", v]],
    ["name", (v) => ["agent", "add", "--org", org, "--name", v]],
    ["label", (v) => ["origin", "create", "--org", org, "--label", v]],
    ["external-code", (v) => ["property", "add", "--org", org, "--codigo", "TXT-0001", "--external-code", v]],
    ["codigo", (v) => ["property", "add", "--org", org, "--codigo", v]],
    ["email", (v) => ["operator", "add", "--org", org, "--email", v]],
    ["email", (v) => ["operator", "reset-password", "--email", v]],
    ["email", (v) => ["operator", "remove", "--email", v]],
    ["phone", (v) => ["lead", "export", "--org", org, "--phone", v]],
    ["reason", (v) => ["lead", "erase", "--id", lead, "--reason", v, "--by", "tester"]],
    ["by", (v) => ["lead", "erase", "--id", lead, "--reason", "request", "--by", v]],
    ["url", (v) => ["webhook", "add", "--org", org, "--url", v]],
    ["events", (v) => ["webhook", "add", "--org", org, "--url", "https://93.184.215.14/h", "--events", v]],
    ["org", (v) => ["origin", "list", "--org", v]],
    ["id", (v) => ["lead", "show", "--id", v]],
    ["country", (v) => ["org", "create", "--name", "Pais", "--country", v]],
    ["host", (v) => ["serve", "--host", v]],
    ["host", (v) => ["demo", "--host", v]]
  ]

  for (const [flag, args] of cases) {
    const words = args("x")
    const command = words
      .slice(
        0,
        words.findIndex((word) => word.startsWith("--"))
      )
      .join(" ")
    it(`${command} --${flag}`, async () => {
      await fc.assert(
        fc.asyncProperty(
          command === "serve" || command === "demo" ? nulOrSurrogate : anyText,
          async (value) => {
            const ran = await cli(...args(value))
            if (ran.ok) return
            expect(ran.err, "one line on stderr").toHaveLength(1)
            expect(ran.err[0]).not.toMatch(/unexpected failure|internal|SqlError|database:/)
            if (!isStorableText(value)) expect(ran.err[0]).toContain(`--${flag}`)
          }
        ),
        fuzzParameters(8)
      )
    })
  }
})
