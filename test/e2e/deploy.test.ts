import { type ChildProcess, execFile, spawn } from "node:child_process"
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parse as parseYaml } from "yaml"
import { isLoopbackUrl } from "../../src/Platform/ProductionStart.ts"
import * as Sql from "../../src/Platform/Sql/Sql.ts"
import { withSql } from "../faults/support.ts"
import { postgres } from "../support/Database.ts"
import {
  collect,
  type Env,
  type Finished,
  freePort,
  freshDatabaseEnv,
  processTimeout,
  projectRoot,
  run
} from "./Processes.ts"

/**
 * The deploy artefacts (Dockerfile, compose.yaml, the systemd units) run only commands this file runs
 * too. No docker engine or image registry is reachable here, so the image's runtime stage is
 * reproduced in a clean directory: the files its COPY lines name (from the checkout, or for
 * `--from=build` from what the build stage holds: the bundle its `npm run build` makes, i.e.
 * scripts/build.ts, and files of the checkout's node_modules), its ENV, then its ENTRYPOINT with the
 * commands compose and systemd give it, against the test PostgreSQL, with the project's Node 24 as
 * the image's `node`. The stage runs no install: what it adds to the base image is measured.
 */

const read = (file: string) => readFileSync(path.join(projectRoot, file), "utf8")

interface Instruction {
  readonly keyword: string
  readonly args: string
}

/** Dockerfile instructions per stage, continuation lines joined, comments dropped. */
const dockerStages = (text: string): Array<Array<Instruction>> => {
  const stages: Array<Array<Instruction>> = []
  const joined = text
    .split("\n")
    .filter((line) => !line.trimStart().startsWith("#"))
    .join("\n")
    .replaceAll(/\\\n/g, " ")
  for (const line of joined.split("\n")) {
    const match = /^\s*([A-Z]+)\s+(.*)$/.exec(line)
    if (match === null) continue
    const [, keyword, args] = match as unknown as [string, string, string]
    if (keyword === "FROM") stages.push([])
    stages.at(-1)?.push({ keyword, args: args.trim() })
  }
  return stages
}

const dockerfile = dockerStages(read("Dockerfile"))
const [buildStage, runtimeStage] = dockerfile as [Array<Instruction>, Array<Instruction>]
const all = (stage: ReadonlyArray<Instruction>, keyword: string) =>
  stage.filter((instruction) => instruction.keyword === keyword).map((instruction) => instruction.args)
const one = (stage: ReadonlyArray<Instruction>, keyword: string) => {
  const found = all(stage, keyword)
  expect(found, keyword).toHaveLength(1)
  return found[0]!
}
/** A RUN's shell command without BuildKit's `--mount=…` options. */
const runCommand = (args: string) => args.replace(/^(--[a-z]+=\S+\s+)+/, "")

/** `ENV A=1 B=2` (the only form the Dockerfile uses). */
const imageEnv = (): Env =>
  Object.fromEntries(
    all(runtimeStage, "ENV").flatMap((args) =>
      args.split(/\s+/).map((pair) => pair.split("=", 2) as [string, string])
    )
  )

const entrypoint = JSON.parse(one(runtimeStage, "ENTRYPOINT")) as Array<string>
const defaultCommand = JSON.parse(one(runtimeStage, "CMD")) as Array<string>

// biome-ignore lint/suspicious/noExplicitAny: compose.yaml is inspected field by field
const compose: any = parseYaml(read("compose.yaml"), { merge: true })

/** `ExecStart=`-style lines of a systemd unit, as argument vectors. */
const unitLines = (file: string, key: string) =>
  read(file)
    .split("\n")
    .filter((line) => line.startsWith(`${key}=`))
    .map((line) =>
      line
        .slice(key.length + 1)
        .trim()
        .split(/\s+/)
    )

const systemdRoot = "/opt/lead-intake"

/** A unit's `Environment=NAME=value` lines. */
const unitEnvironment = (file: string): Env =>
  Object.fromEntries(
    unitLines(file, "Environment").map(([pair]) => {
      const at = pair!.indexOf("=")
      return [pair!.slice(0, at), pair!.slice(at + 1)]
    })
  )

/** `NAME=value` lines of an environment file (comments and blank lines skipped). */
const envFile = (file: string): Env =>
  Object.fromEntries(
    read(file)
      .split("\n")
      .filter((line) => /^[A-Z_]+=/.test(line))
      .map((line) => {
        const at = line.indexOf("=")
        return [line.slice(0, at), line.slice(at + 1)]
      })
  )

/** A compose value `${NAME:-default}` as its default (what runs when NAME is not exported). */
const composeDefault = (value: string) => /^\$\{\w+:-(.*)\}$/.exec(value)?.[1] ?? value

/** The URLs production hands to partners: both set, and on no loopback address. */
const partnerUrls = ["PUBLIC_BASE_URL", "DASHBOARD_URL"] as const

/** The commands each artefact gives the image's entry point (or the installed bin). */
const commands = {
  migrate: ["migrate"],
  serve: ["serve", "--no-migrate"],
  worker: ["worker"]
}

describe("deploy artefacts: what they say", () => {
  it("the image is the project's Node major, multi-stage, non-root, with a HEALTHCHECK on /readyz", () => {
    const nodeMajor = (
      JSON.parse(read("package.json")) as { devDependencies: Record<string, string> }
    ).devDependencies.node!.split(".")[0]
    expect(dockerfile).toHaveLength(2)
    for (const stage of dockerfile)
      expect(one(stage, "FROM")).toMatch(new RegExp(`^node:${nodeMajor}-bookworm-slim\\b`))
    expect(all(buildStage, "RUN").map(runCommand)).toEqual(["npm ci --no-audit --no-fund", "npm run build"])
    expect(all(runtimeStage, "RUN"), "the runtime stage installs nothing").toEqual([])
    expect(all(runtimeStage, "COPY")).toContain("--from=build /build/dist ./dist")
    for (const copy of all(runtimeStage, "COPY").filter((args) => args.includes("node_modules")))
      expect(copy, "one file of a package, never a whole node_modules").toMatch(
        /^--from=build \/build\/(node_modules\/@scalar\/api-reference\/\S+\.(js|json)) \.\/\1$/
      )
    const user = one(runtimeStage, "USER")
    expect(user).not.toMatch(/^(root|0)(:|$)/)
    expect(imageEnv()).toMatchObject({ NODE_ENV: "production", LEAD_INTAKE_ENTRY: "dist" })
    expect(one(runtimeStage, "HEALTHCHECK")).toMatch(/CMD \["node", "-e", ".*HEALTH_PORT.*\/readyz/)
    expect(entrypoint).toEqual(["/app/bin/lead-intake.js"])
    expect(defaultCommand).toEqual(["serve"])
  })

  it("compose runs the migration once, then the API without migrating and the worker on its own", () => {
    const { services } = compose
    expect(Object.keys(services).sort()).toEqual(["api", "migrate", "otel-collector", "postgres", "worker"])
    expect(services.migrate.command).toEqual(commands.migrate)
    expect(services.api.command).toEqual(commands.serve)
    expect(services.worker.command).toEqual(commands.worker)
    const version = (JSON.parse(read("package.json")) as { version: string }).version
    for (const service of Object.values(services) as Array<{ image: string }>)
      expect(service.image, "pinned to a release").toMatch(
        /^[\w./-]+:\d+(\.\d+)+(-[\w.]+)?(@sha256:[0-9a-f]{64})?$/
      )
    for (const name of ["migrate", "api", "worker"]) {
      expect(services[name].build, name).toBe(".")
      expect(services[name].image, name).toBe(`lead-intake:${version}`)
      expect(services[name].environment.NODE_ENV, name).toBe("production")
      // The service's role, DML only, wherever the code runs; the owner only for the migration.
      expect(services[name].environment.DATABASE_URL, name).toMatch(
        /^postgres:\/\/lead_intake_app:.*@postgres:5432\//
      )
    }
    expect(services.migrate.environment.MIGRATE_DATABASE_URL).toMatch(
      /^postgres:\/\/lead_intake_owner:.*@postgres:5432\/lead_intake$/
    )
    for (const name of ["api", "worker"])
      expect(services[name].environment.MIGRATE_DATABASE_URL, name).toBeUndefined()
    expect(services.postgres.volumes).toContain("./deploy/postgres-init:/docker-entrypoint-initdb.d:ro")
    expect(services.postgres.environment.POSTGRES_USER, "the superuser is neither role").toBe("postgres")
    expect(services.api.environment.WEBHOOK_WORKER).toBe("false")
    for (const name of ["api", "worker"])
      expect(services[name].environment.MIGRATE_ON_START, name).toBe("false")
    for (const name of ["api", "worker"])
      for (const variable of partnerUrls) {
        const url = composeDefault(services[name].environment[variable] ?? "")
        expect(URL.canParse(url), `${name} ${variable}`).toBe(true)
        expect(isLoopbackUrl(url), `${name} ${variable}: ${url}`).toBe(false)
      }
    expect(services.migrate.depends_on.postgres.condition).toBe("service_healthy")
    expect(services.api.depends_on.migrate.condition).toBe("service_completed_successfully")
    expect(services.worker.depends_on.migrate.condition).toBe("service_completed_successfully")
    expect(services["otel-collector"].profiles).toEqual(["telemetry"])
    expect(existsSync(path.join(projectRoot, "deploy", "otel-collector.yaml"))).toBe(true)
  })

  it("the systemd units run the same commands from the same install, with the example environment file", () => {
    const bin = `${systemdRoot}/bin/lead-intake.js`
    expect(unitLines("deploy/lead-intake.service", "ExecStartPre"), "the API never migrates").toEqual([])
    expect(unitLines("deploy/lead-intake-migrate.service", "ExecStart")).toEqual([[bin, ...commands.migrate]])
    expect(unitLines("deploy/lead-intake-migrate.service", "Type")).toEqual([["oneshot"]])
    expect(unitLines("deploy/lead-intake.service", "Requires")).toEqual([["lead-intake-migrate.service"]])
    expect(unitLines("deploy/lead-intake.service", "ExecStart")).toEqual([[bin, ...commands.serve]])
    // The owner's URL is a credential of the migration's unit alone; the API and the worker get the service's.
    expect(unitEnvironment("deploy/lead-intake-migrate.service")).toEqual({
      MIGRATE_DATABASE_URL_FILE: "%d/migrate-database-url"
    })
    for (const unit of ["deploy/lead-intake.service", "deploy/lead-intake-worker.service"]) {
      expect(unitEnvironment(unit), unit).toEqual({ DATABASE_URL_FILE: "%d/database-url" })
      expect(unitLines(unit, "LoadCredential"), unit).toEqual([
        ["database-url:/etc/lead-intake/database-url"]
      ])
    }
    expect(unitLines("deploy/lead-intake-worker.service", "ExecStart")).toEqual([[bin, ...commands.worker]])
    for (const unit of [
      "deploy/lead-intake.service",
      "deploy/lead-intake-worker.service",
      "deploy/lead-intake-migrate.service"
    ])
      expect(unitLines(unit, "User")).toEqual([["lead-intake"]])
    expect(unitLines("deploy/lead-intake.service", "EnvironmentFile")).toEqual([
      ["/etc/lead-intake/lead-intake.env"]
    ])
    // The worker reads its own file second (it wins): a probe port apart from the API's on one host.
    expect(unitLines("deploy/lead-intake-worker.service", "EnvironmentFile")).toEqual([
      ["/etc/lead-intake/lead-intake.env"],
      ["/etc/lead-intake/lead-intake-worker.env"]
    ])
    const workerPort = envFile("deploy/lead-intake-worker.env.example").HEALTH_PORT
    expect(workerPort).toMatch(/^\d+$/)
    expect(workerPort).not.toBe(envFile("deploy/lead-intake.env.example").HEALTH_PORT)
    const example = envFile("deploy/lead-intake.env.example")
    for (const variable of partnerUrls) {
      expect(URL.canParse(example[variable] ?? ""), variable).toBe(true)
      expect(isLoopbackUrl(example[variable]!), `${variable}: ${example[variable]}`).toBe(false)
    }
    expect(
      Object.keys(example).filter((name) => /DATABASE_URL|PASSWORD/.test(name)),
      "no secret in it"
    ).toEqual([])
    expect(example).toMatchObject({
      NODE_ENV: "production",
      MIGRATE_ON_START: "false",
      LEAD_INTAKE_ENTRY: "dist",
      WEBHOOK_WORKER: "false"
    })
  })
})

/** The SQLSTATE a statement fails with ("" when it succeeds). */
const sqlStateOf = (url: string, text: string) =>
  withSql(url, (sql) =>
    sql.unsafe(text).pipe(
      Effect.as(""),
      Effect.catch((error) => Effect.succeed(Sql.sqlStateOf(error.reason.cause)))
    )
  )

/** Bytes of the regular files under `dir` (what `docker history` counts for COPY layers). */
const directoryBytes = (dir: string): number =>
  readdirSync(dir, { withFileTypes: true }).reduce(
    (total, entry) =>
      total +
      (entry.isDirectory()
        ? directoryBytes(path.join(dir, entry.name))
        : entry.isFile()
          ? statSync(path.join(dir, entry.name)).size
          : 0),
    0
  )

/** At most this much on top of `node:24-bookworm-slim` (the stage copies files only). */
const imageBudgetBytes = 150e6

describe("deploy artefacts: the image's install, run in a clean directory", {
  timeout: processTimeout
}, () => {
  let app: string
  let env: Env
  let imageBytes = 0
  let roles: Record<"owner" | "app", { user: string; password: string }>
  let urls: Record<"owner" | "app", string>
  let credentials: string
  /** A unit's `Environment=` lines, `%d` being its credentials directory. */
  const asUnit = (unit: string): Env =>
    Object.fromEntries(
      Object.entries(unitEnvironment(`deploy/${unit}`)).map(([name, value]) => [
        name,
        value.replace("%d", credentials)
      ])
    )
  const children: Array<ChildProcess> = []
  // The project's Node 24 stands in for the image's /usr/local/bin/node; nothing else of the checkout.
  const nodeDir = path.join(projectRoot, "node_modules", "node", "bin")
  const PATH = `${nodeDir}${path.delimiter}${process.env.PATH ?? ""}`
  // Until HEALTH_PORT lands, /readyz is on the console's listener: the healthcheck is pointed there.
  const healthListener = readdirSync(path.join(projectRoot, "src"), {
    recursive: true,
    encoding: "utf8"
  }).some((file) => file.endsWith(".ts") && read(path.join("src", file)).includes('"HEALTH_PORT"'))

  const baseEnv = (): Env => {
    const inherited: Env = {}
    for (const [name, value] of Object.entries(process.env)) {
      if (value !== undefined && !/^(PORT|HOST|DATABASE_URL|LEAD_INTAKE_|ADMIN_|HEALTH_|npm_)/.test(name))
        inherited[name] = value
    }
    return { ...inherited, PATH }
  }

  const exec = (args: ReadonlyArray<string>, extra: Env = {}) =>
    promisify(execFile)(path.join(app, entrypoint[0]!.replace(/^\/app\//, "")), args, {
      cwd: app,
      env: { ...env, ...extra }
    }).then(
      ({ stdout, stderr }): Finished => ({ code: 0, signal: null, stdout, stderr }),
      (error: { code: number; signal: NodeJS.Signals | null; stdout: string; stderr: string }): Finished => ({
        code: typeof error.code === "number" ? error.code : 1,
        signal: error.signal,
        stdout: error.stdout,
        stderr: error.stderr
      })
    )

  const start = (args: ReadonlyArray<string>, extra: Env = {}) => {
    const child = spawn(path.join(app, "bin", "lead-intake.js"), args, {
      cwd: app,
      env: { ...env, ...extra },
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.push(child)
    const { output, finished } = collect(child)
    return { child, output, exited: finished.then((result) => result.code) }
  }

  beforeAll(async () => {
    app = await mkdtemp(path.join(tmpdir(), "lead-intake-image-"))
    // The runtime stage's COPY lines, in order; `--from=build` is the build stage's `npm run build`
    // for /build/dist, and the same file of the checkout for /build/node_modules/….
    for (const copy of all(runtimeStage, "COPY")) {
      const fromBuild = copy.startsWith("--from=build")
      const paths = copy.replace(/^--from=build\s+/, "").split(/\s+/)
      const to = paths.at(-1)!
      const sources = paths.slice(0, -1)
      if (fromBuild && sources[0] === "/build/dist") {
        expect(sources).toEqual(["/build/dist"])
        const built = await run(["--out-dir", path.join(app, to)], {
          entry: path.join(projectRoot, "scripts", "build.ts")
        })
        expect(built.code, built.stderr).toBe(0)
        continue
      }
      for (const source of sources) {
        const from = fromBuild ? source.replace(/^\/build\//, "") : source
        expect(from, "a build-stage file the checkout has too").not.toMatch(/^\//)
        const destination = to.endsWith("/") ? path.join(app, to, path.basename(from)) : path.join(app, to)
        cpSync(path.join(projectRoot, from), destination, { recursive: true })
      }
    }
    imageBytes = directoryBytes(app)
    process.stdout.write(
      `deploy: the runtime stage adds ${(imageBytes / 1e6).toFixed(1)} MB to the Node base image (${app})\n`
    )
    expect(readdirSync(path.join(app, "node_modules"))).toEqual(["@scalar"])
    expect(readdirSync(path.join(app, "node_modules", "@scalar"))).toEqual(["api-reference"])
    expect(
      existsSync(
        path.join(app, "node_modules", "@scalar", "api-reference", "dist", "browser", "standalone.js")
      )
    ).toBe(true)
    expect(existsSync(path.join(app, "dist", "main.js"))).toBe(true)
    // The image listens on 0.0.0.0; servers under test stay on 127.0.0.1.
    // The roles as compose's postgres makes them: its init script, run by psql as the superuser
    // in a fresh database (role names of this run's own, since roles belong to the cluster).
    const pg = postgres()
    const owner = new URL((await freshDatabaseEnv()).DATABASE_URL!)
    const database = owner.pathname.slice(1)
    const suffix = crypto.randomUUID().slice(0, 8)
    roles = {
      owner: { user: `lead_intake_owner_${suffix}`, password: crypto.randomUUID() },
      app: { user: `lead_intake_app_${suffix}`, password: crypto.randomUUID() }
    }
    const initScript = compose.services.postgres.volumes
      .find((volume: string) => volume.endsWith(":/docker-entrypoint-initdb.d:ro"))
      .split(":")[0]
    for (const script of readdirSync(path.join(projectRoot, initScript)).filter((name) =>
      name.endsWith(".sh")
    ))
      await promisify(execFile)("bash", [path.join(projectRoot, initScript, script)], {
        env: {
          PATH,
          PGHOST: pg.host,
          PGPORT: String(pg.port),
          PGPASSWORD: pg.password,
          POSTGRES_USER: pg.user,
          POSTGRES_DB: database,
          LEAD_INTAKE_OWNER_ROLE: roles.owner.user,
          LEAD_INTAKE_OWNER_PASSWORD: roles.owner.password,
          LEAD_INTAKE_APP_ROLE: roles.app.user,
          LEAD_INTAKE_APP_PASSWORD: roles.app.password
        }
      })
    const urlAs = (role: { user: string; password: string }) => {
      const url = new URL(owner)
      url.username = role.user
      url.password = role.password
      return url.toString()
    }
    urls = { owner: urlAs(roles.owner), app: urlAs(roles.app) }
    // What systemd's LoadCredential= hands each unit, in the directory %d names.
    credentials = path.join(app, "credentials")
    mkdirSync(credentials)
    writeFileSync(path.join(credentials, "database-url"), `${urls.app}\n`)
    writeFileSync(path.join(credentials, "migrate-database-url"), `${urls.owner}\n`)
    env = {
      ...baseEnv(),
      ...imageEnv(),
      HOST: "127.0.0.1",
      ADMIN_HOST: "127.0.0.1",
      MIGRATE_ON_START: envFile("deploy/lead-intake.env.example").MIGRATE_ON_START!,
      // Production refuses to start without the URLs partners follow: the example file's.
      PUBLIC_BASE_URL: envFile("deploy/lead-intake.env.example").PUBLIC_BASE_URL!,
      DASHBOARD_URL: envFile("deploy/lead-intake.env.example").DASHBOARD_URL!
    }
  }, processTimeout * 2)

  afterAll(async () => {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    if (app !== undefined) await rm(app, { recursive: true, force: true })
  })

  it("the runtime stage is the bundle and the files it reads: at most 150 MB on the base image", () => {
    expect(imageBytes).toBeGreaterThan(0)
    expect(imageBytes).toBeLessThanOrEqual(imageBudgetBytes)
  })

  it("migrate, then serve --no-migrate from the bundle: a first 201, /readyz through the HEALTHCHECK, the worker and its HEALTHCHECK", async () => {
    const migrated = await exec(commands.migrate, asUnit("lead-intake-migrate.service"))
    expect(migrated.code, migrated.stderr).toBe(0)
    expect(migrated.stdout, "the owner applied every migration").toContain("Applied: 0001_")

    // The service's role reads and writes rows and nothing else: no table of its own, none of the owner's dropped.
    expect(await sqlStateOf(urls.app, "CREATE TABLE intruder (id int)")).toBe("42501")
    expect(await sqlStateOf(urls.app, "DROP TABLE leads")).toBe("42501")
    expect(await sqlStateOf(urls.app, "DROP FUNCTION lead_match_key(text, boolean)")).toBe("42501")
    expect(await sqlStateOf(urls.app, "CREATE SCHEMA intruder")).toBe("42501")
    expect(await sqlStateOf(urls.app, "SELECT count(*) FROM leads")).toBe("")

    const [port, healthPort] = [await freePort(), await freePort()]
    const listeners: Env = healthListener
      ? { PORT: String(port), HEALTH_PORT: String(healthPort), ADMIN_PORT: "off" }
      : { PORT: String(port), ADMIN_PORT: String(healthPort) }
    const supportsNoMigrate = (await exec(["serve", "--help"])).stdout.includes("--no-migrate")
    const serveArgs = supportsNoMigrate ? commands.serve : defaultCommand
    const server = start(serveArgs, { ...asUnit("lead-intake.service"), ...listeners })
    const deadline = Date.now() + 30_000
    while (
      !(await fetch(`http://127.0.0.1:${port}/v1`).then(
        (r) => r.ok,
        () => false
      ))
    ) {
      expect(server.child.exitCode, server.output.stderr).toBeNull()
      expect(Date.now(), server.output.stderr).toBeLessThan(deadline)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(server.output.stdout).toContain('"code":"dist"')
    expect(server.output.stdout).not.toContain("migrations applied")

    const demo = await exec(["demo", "--port", String(port), "--json"], asUnit("lead-intake.service"))
    expect(demo.code, demo.stderr).toBe(0)
    const { key } = JSON.parse(demo.stdout) as { key: string }
    const created = await fetch(`http://127.0.0.1:${port}/v1/leads`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        nombre: "Ana López",
        telefono: "+52 55 1234 5678",
        propiedad: { codigo: "DEM-0001" }
      })
    })
    expect(created.status).toBe(201)

    // The HEALTHCHECK's own command line, as Docker runs it inside the container.
    const [healthCommand, ...healthArgs] = JSON.parse(
      one(runtimeStage, "HEALTHCHECK").replace(/^.*?CMD\s+/, "")
    ) as [string, ...Array<string>]
    const probe = (extra: Env) =>
      promisify(execFile)(healthCommand, healthArgs, { cwd: app, env: { ...env, ...extra } }).then(
        () => 0,
        (error: { code: number }) => error.code
      )
    expect(await probe({ HEALTH_PORT: String(healthPort) })).toBe(0)
    expect(await probe({ HEALTH_PORT: String(await freePort()) })).toBe(1)

    // The worker is probed the same way, on its own HEALTH_PORT.
    const workerHealth = String(await freePort())
    const worker = start(commands.worker, {
      ...asUnit("lead-intake-worker.service"),
      HEALTH_PORT: workerHealth
    })
    const workerDeadline = Date.now() + 20_000
    while ((await probe({ HEALTH_PORT: workerHealth })) !== 0) {
      expect(worker.child.exitCode, worker.output.stderr).toBeNull()
      expect(Date.now(), worker.output.stderr).toBeLessThan(workerDeadline)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(worker.output.stdout).toMatch(/"msg":"webhook worker started"/)
    worker.child.kill("SIGTERM")
    expect(await worker.exited, worker.output.stderr).toBe(0)
    server.child.kill("SIGTERM")
    expect(await server.exited, server.output.stderr).toBe(0)
  })
})
