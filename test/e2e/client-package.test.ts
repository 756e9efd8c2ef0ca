import { execFile } from "node:child_process"
import { existsSync } from "node:fs"
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  cliFor,
  type Env,
  freePort,
  freshDatabaseEnv,
  json,
  projectRoot,
  type RunningServer,
  startServer
} from "./Processes.ts"

const exec = promisify(execFile)
const clientDir = path.join(projectRoot, "clients", "typescript")

/** The environment without what an `npm run` in this repository exported (its prefix, its scripts). */
const cleanEnv = () =>
  Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith("npm_")))

const effectConsumer = `import { Effect } from "effect"
import { layerFetch, makeClient } from "@lead-intake/client"

const program = Effect.gen(function* () {
  const client = yield* makeClient({ baseUrl: process.env.LEAD_INTAKE_URL, apiKey: process.env.LEAD_INTAKE_KEY })
  const created = yield* client.leads.createOrEnrich({
    payload: { nombre: "Ana Efecto", telefono: "+52 55 4000 1001" },
    headers: { "idempotency-key": "package-effect-1" }
  })
  const refused = yield* client.leads
    .createOrEnrich({ payload: { nombre: "Ana Efecto", telefono: "+52 55 4000 1001", propiedad: { codigo: "ZZZ-9999" } }, headers: {} })
    .pipe(
      Effect.map(() => "accepted"),
      Effect.catchTag("PropertyNotFound", (failure) => Effect.succeed(failure.error.code))
    )
  return { status: created.status, lead_id: created.lead_id, refused }
})

console.log(JSON.stringify(await Effect.runPromise(program.pipe(Effect.provide(layerFetch)))))
`

const fetchConsumer = `import { createLeadIntakeClient } from "@lead-intake/client/fetch"

const client = createLeadIntakeClient({ baseUrl: process.env.LEAD_INTAKE_URL, apiKey: process.env.LEAD_INTAKE_KEY })
const { data, error, response } = await client.POST("/v1/leads", {
  params: { header: { "idempotency-key": "package-fetch-1" } },
  body: { nombre: "Beto Fetch", telefono: "+52 55 4000 2002" }
})
if (error !== undefined) throw new Error(error.error.code)
console.log(JSON.stringify({ http: response.status, status: data.status, lead_id: data.lead_id }))
`

/** Type-checks against the installed .d.ts: a wrong payload must be refused by the compiler. */
const typedConsumer = `import { Effect } from "effect"
import { createLeadIntakeClient, type LeadRequest } from "@lead-intake/client/fetch"
import { makeClient } from "@lead-intake/client"

const lead: LeadRequest = { nombre: "Ana", telefono: "+52 55 4000 3003" }
export const send = () => createLeadIntakeClient({ baseUrl: "http://127.0.0.1:1" }).POST("/v1/leads", { body: lead })
export const effectClient = makeClient({ baseUrl: "http://127.0.0.1:1" })
// @ts-expect-error nombre is required by the contract
export const wrong: LeadRequest = { telefono: "+52 55 4000 3003" }
// @ts-expect-error propiedad names exactly one of codigo, external_code or id
export const twoKeys: LeadRequest = { nombre: "Ana", propiedad: { codigo: "ABC-1234", external_code: "EXT-1" } }
export const twoKeysEffect = effectClient.pipe(
  Effect.flatMap((client) =>
    client.leads.createOrEnrich({
      // @ts-expect-error propiedad names exactly one of codigo, external_code or id
      payload: { nombre: "Ana", propiedad: { codigo: "ABC-1234", external_code: "EXT-1" } },
      headers: {}
    })
  )
)
`

describe("clients/typescript: packed, installed in an empty project, calling a real server", () => {
  let env: Env
  let server: RunningServer
  let key: string
  let consumer: string
  let tarball: string

  beforeAll(async () => {
    const [started] = await Promise.all([
      (async () => {
        env = await freshDatabaseEnv()
        server = await startServer(await freePort(), { env })
        key = json(await cliFor(env)("demo", "--json")).key
      })(),
      (async () => {
        await exec(process.execPath, [path.join(clientDir, "build.ts")], { cwd: projectRoot })
        consumer = await mkdtemp(path.join(tmpdir(), "lead-intake-client-"))
        const packed = await exec(
          "npm",
          ["pack", "--ignore-scripts", "--json", "--pack-destination", consumer],
          {
            cwd: clientDir,
            env: cleanEnv()
          }
        )
        tarball = path.join(consumer, (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0]!.filename)
        await writeFile(
          path.join(consumer, "package.json"),
          JSON.stringify({ name: "consumer", private: true, type: "module" })
        )
        // Offline: the tarball, and its dependency and peer from this repository's node_modules.
        await exec(
          "npm",
          [
            "install",
            "--offline",
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
            tarball,
            path.join(projectRoot, "node_modules", "effect"),
            path.join(projectRoot, "node_modules", "openapi-fetch")
          ],
          { cwd: consumer, env: cleanEnv() }
        )
      })()
    ])
    return started
  }, 240_000)

  afterAll(async () => {
    await server?.stop("SIGKILL")
    if (consumer !== undefined) await rm(consumer, { recursive: true, force: true })
  })

  const runConsumer = async (file: string, source: string) => {
    await writeFile(path.join(consumer, file), source)
    const result = await exec(process.execPath, [file], {
      cwd: consumer,
      env: { ...cleanEnv(), LEAD_INTAKE_URL: server.baseUrl, LEAD_INTAKE_KEY: key }
    })
    return JSON.parse(result.stdout)
  }

  it("ships compiled JavaScript and .d.ts with the contract compiled in, and no TypeScript source", async () => {
    const listed = await exec("tar", ["-tzf", tarball])
    const files = listed.stdout.trim().split("\n")
    expect(files).toContain("package/dist/index.js")
    expect(files).toContain("package/dist/index.d.ts")
    expect(files).toContain("package/dist/fetch.js")
    expect(files).toContain("package/dist/fetch.d.ts")
    expect(files).toContain("package/dist/contract/Api/Api.js")
    expect(files.filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))).toEqual([])
    const installed = path.join(consumer, "node_modules", "@lead-intake", "client")
    const manifest = JSON.parse(await readFile(path.join(installed, "package.json"), "utf8"))
    expect(manifest.peerDependencies).toEqual({ effect: "^4.1.0" })
    expect(manifest.dependencies).toEqual({ "openapi-fetch": "0.17.0" })
    expect(Object.keys(manifest.dependencies ?? {})).not.toContain("lead-intake")
    const compiled = await readdir(path.join(installed, "dist", "contract"))
    expect(compiled).toContain("Client.js")
    expect(existsSync(path.join(consumer, "node_modules", "lead-intake"))).toBe(false)
  })

  it("the Effect client creates a lead, and a refusal comes back as the contract's typed error", async () => {
    const printed = await runConsumer("effect.mjs", effectConsumer)
    expect(printed).toEqual({
      status: "created",
      lead_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      refused: "property_not_found"
    })
  })

  it("the fetch client creates a lead", async () => {
    const printed = await runConsumer("fetch.mjs", fetchConsumer)
    expect(printed).toEqual({
      http: 201,
      status: "created",
      lead_id: expect.stringMatching(/^[0-9a-f-]{36}$/)
    })
  })

  it("its .d.ts type-check a consumer, and refuse a payload the contract refuses", async () => {
    await writeFile(path.join(consumer, "consumer.ts"), typedConsumer)
    await writeFile(
      path.join(consumer, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "es2022",
          module: "nodenext",
          moduleResolution: "nodenext",
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          lib: ["es2022", "dom"],
          types: []
        },
        include: ["consumer.ts"]
      })
    )
    const checked = await exec(
      path.join(projectRoot, "node_modules", ".bin", "tsc"),
      ["-p", "tsconfig.json"],
      {
        cwd: consumer
      }
    ).then(
      () => ({ code: 0, stdout: "" }),
      (failure: { code: number; stdout: string }) => failure
    )
    expect(checked.stdout).toBe("")
    expect(checked.code).toBe(0)
  })
})
