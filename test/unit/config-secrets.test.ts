import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { type Config, ConfigProvider, Effect, Exit, Option, Redacted } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { appConfig, migrateConfig, secret } from "../../src/Platform/Config.ts"

const from = <A>(config: Config.Config<A>, env: Record<string, string>) =>
  Effect.runPromiseExit(
    Effect.gen(function* () {
      return yield* config
    }).pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env }))))
  )

const value = async <A>(config: Config.Config<A>, env: Record<string, string>) => {
  const exit = await from(config, env)
  if (Exit.isFailure(exit)) throw new Error(String(exit.cause))
  return exit.value
}

const error = async (config: Config.Config<unknown>, env: Record<string, string>) => {
  const exit = await from(config, env)
  expect(Exit.isFailure(exit)).toBe(true)
  return Exit.isFailure(exit) ? String(exit.cause) : ""
}

const reveal = (secret: Option.Option<Redacted.Redacted>) => Option.map(secret, Redacted.value)

const dir = mkdtempSync(path.join(tmpdir(), "lead-intake-secrets-"))
const file = (name: string, contents: string) => {
  const at = path.join(dir, name)
  writeFileSync(at, contents)
  return at
}
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("secret settings: NAME or NAME_FILE", () => {
  const url = "postgres://app:s3cret@db.internal:5432/lead_intake"

  it("reads the variable, or the file the _FILE variable names without its trailing newlines", async () => {
    expect(reveal(await value(secret("DATABASE_URL"), { DATABASE_URL: url }))).toEqual(Option.some(url))
    expect(
      reveal(await value(secret("DATABASE_URL"), { DATABASE_URL_FILE: file("lf", `${url}\n`) }))
    ).toEqual(Option.some(url))
    expect(
      reveal(await value(secret("DATABASE_URL"), { DATABASE_URL_FILE: file("crlf", `${url}\r\n\r\n`) }))
    ).toEqual(Option.some(url))
    // Only line ends go: a password may end in a space.
    expect(
      reveal(await value(secret("DATABASE_URL"), { DATABASE_URL_FILE: file("space", `${url} \n`) }))
    ).toEqual(Option.some(`${url} `))
    expect(await value(secret("DATABASE_URL"), {})).toEqual(Option.none())
  })

  it("refuses both set, an unreadable file and an empty one, naming the variable", async () => {
    expect(
      await error(secret("DATABASE_URL"), { DATABASE_URL: url, DATABASE_URL_FILE: file("both", url) })
    ).toContain("DATABASE_URL and DATABASE_URL_FILE are both set; set one of them")
    const missing = path.join(dir, "missing")
    expect(await error(secret("DATABASE_URL"), { DATABASE_URL_FILE: missing })).toContain(
      `DATABASE_URL_FILE: cannot read ${missing} (ENOENT)`
    )
    expect(await error(secret("DATABASE_URL"), { DATABASE_URL_FILE: dir })).toContain(
      `DATABASE_URL_FILE: cannot read ${dir} (EISDIR)`
    )
    if (process.getuid?.() !== 0) {
      const locked = file("locked", url)
      chmodSync(locked, 0o000)
      expect(await error(secret("DATABASE_URL"), { DATABASE_URL_FILE: locked })).toContain("(EACCES)")
    }
    expect(await error(secret("DATABASE_URL"), { DATABASE_URL_FILE: file("empty", "\n") })).toContain(
      `DATABASE_URL_FILE: ${path.join(dir, "empty")} is empty`
    )
  })

  it("every secret setting takes the convention: DATABASE_URL for the service, MIGRATE_DATABASE_URL for migrate", async () => {
    const owner = "postgres://owner:0wner@db.internal:5432/lead_intake"
    const service = await value(appConfig, { DATABASE_URL_FILE: file("app", `${url}\n`) })
    expect(reveal(service.databaseUrl)).toEqual(Option.some(url))
    const migrating = await value(migrateConfig, {
      DATABASE_URL: url,
      MIGRATE_DATABASE_URL_FILE: file("owner", `${owner}\n`)
    })
    expect(reveal(migrating.databaseUrl), "migrate connects as the owner").toEqual(Option.some(owner))
    const alone = await value(migrateConfig, { DATABASE_URL: url })
    expect(reveal(alone.databaseUrl), "one URL for both without MIGRATE_DATABASE_URL").toEqual(
      Option.some(url)
    )
    expect(
      await error(migrateConfig, {
        MIGRATE_DATABASE_URL: owner,
        MIGRATE_DATABASE_URL_FILE: file("o2", owner)
      })
    ).toContain("MIGRATE_DATABASE_URL and MIGRATE_DATABASE_URL_FILE are both set")
  })
})

describe("the probes' and metrics' addresses", () => {
  it("default to the loopback whatever HOST is, and are set on their own", async () => {
    const wide = await value(appConfig, { HOST: "0.0.0.0" })
    expect(wide).toMatchObject({ host: "0.0.0.0", healthHost: "127.0.0.1", metricsHost: "127.0.0.1" })
    const set = await value(appConfig, { HEALTH_HOST: "0.0.0.0", METRICS_HOST: "10.0.0.5" })
    expect(set).toMatchObject({ healthHost: "0.0.0.0", metricsHost: "10.0.0.5" })
  })
})
