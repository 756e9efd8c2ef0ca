import { execFile } from "node:child_process"
import { mkdtemp, readFile, rm, symlink } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { migrations } from "../../migrations/index.ts"
import * as Sql from "../../src/Platform/Sql/Sql.ts"
import { withSql } from "../faults/support.ts"
import { postgres } from "../support/Database.ts"
import {
  cliFor,
  type Env,
  expectUserError,
  freePort,
  freshDatabaseEnv,
  json,
  postLead,
  processTimeout,
  projectRoot,
  run,
  startServer
} from "./Processes.ts"

const exec = promisify(execFile)
const newest = Object.keys(migrations).at(-1)!
const lead = { nombre: "Ana López", telefono: "+52 55 1234 5678", mensaje: "¿Sigue disponible?" }

/** The one error line of a `serve` that refused to start (its JSON log lines go to stdout). */
const refusal = (result: { code: number | null; stderr: string }) => {
  expect(result.code, result.stderr).toBe(1)
  const lines = result.stderr.trimEnd().split("\n")
  expect(lines, result.stderr).toHaveLength(1)
  return lines[0]!
}

/** The SQLSTATE a statement fails with ("" when it succeeds). */
const sqlStateOf = (url: string, text: string) =>
  withSql(url, (sql) =>
    sql.unsafe(text).pipe(
      Effect.as(""),
      Effect.catch((error) => Effect.succeed(Sql.sqlStateOf(error.reason.cause)))
    )
  )

const query = (url: string, text: string) =>
  withSql(url, (sql) => sql.unsafe<Record<string, unknown>>(text)) as Promise<
    ReadonlyArray<Record<string, unknown>>
  >

describe("production mode (real processes)", { timeout: processTimeout }, () => {
  it("NODE_ENV=production without DATABASE_URL: serve and operator commands refuse with one line, exit 1", async () => {
    const production = { NODE_ENV: "production" }
    const serve = await run(["serve", "--port", String(await freePort())], { env: production })
    expect(refusal(serve)).toBe(
      "lead-intake: NODE_ENV=production needs DATABASE_URL (postgres://user:password@host:port/database); the embedded PostgreSQL is for development only"
    )
    expect(serve.stdout, "no embedded cluster was started").not.toContain("embedded")
    expectUserError(
      await run(["org", "create", "--name", "X"], { env: production }),
      /^lead-intake: NODE_ENV=production needs DATABASE_URL/
    )
    expectUserError(
      await run(["migrate"], { env: production }),
      /^lead-intake: NODE_ENV=production needs DATABASE_URL/
    )
  })

  it("NODE_ENV=production without the URLs partners follow: serve and worker refuse with one line; migrate and operator commands run", async () => {
    const env = { ...(await freshDatabaseEnv()), NODE_ENV: "production" }
    const port = await freePort()
    const unset = await run(["serve", "--port", String(port)], { env })
    expect(refusal(unset)).toBe(
      `lead-intake: NODE_ENV=production needs URLs partners can reach: PUBLIC_BASE_URL is unset, so docs_url would be http://127.0.0.1:${port}/v1/docs; DASHBOARD_URL is unset, so lead_url (answers and webhooks) would be http://127.0.0.1:8081/leads/<id>`
    )
    expect(unset.stdout, "nothing started: no listener, no migration").toBe("")

    const loopback = await run(["serve", "--port", String(port)], {
      env: { ...env, PUBLIC_BASE_URL: "https://leads.example.com", DASHBOARD_URL: "http://localhost:8081" }
    })
    expect(refusal(loopback)).toBe(
      "lead-intake: NODE_ENV=production needs URLs partners can reach: DASHBOARD_URL is on this machine, so lead_url (answers and webhooks) would be http://localhost:8081/leads/<id>"
    )
    for (const address of [
      "http://127.1.2.3",
      "http://[::1]:8081",
      "https://console.localhost",
      "http://0.0.0.0"
    ])
      expect(
        refusal(
          await run(["serve", "--port", String(port)], {
            env: { ...env, PUBLIC_BASE_URL: address, DASHBOARD_URL: "https://leads-console.example.com" }
          })
        )
      ).toMatch(
        /^lead-intake: NODE_ENV=production needs URLs partners can reach: PUBLIC_BASE_URL is on this machine/
      )

    // The worker hands out lead_url only (in webhook bodies): DASHBOARD_URL is what it needs.
    const worker = await run(["worker"], {
      env: { ...env, HEALTH_PORT: String(await freePort()), PUBLIC_BASE_URL: "https://leads.example.com" }
    })
    expect(refusal(worker)).toBe(
      "lead-intake: NODE_ENV=production needs URLs partners can reach: DASHBOARD_URL is unset, so lead_url (answers and webhooks) would be http://127.0.0.1:8081/leads/<id>"
    )

    // The deploy step and operator commands hand no link to a partner: they run without them.
    expect(json(await run(["migrate", "--json"], { env })).applied).toEqual(Object.keys(migrations))
    expect(json(await run(["org", "create", "--name", "Inmobiliaria", "--json"], { env })).id).toMatch(
      /^[0-9a-f-]{36}$/
    )
  })

  it("NODE_ENV=production with DATABASE_URL and public URLs starts, and logs host:port/database, never the password", async () => {
    const env = await freshDatabaseEnv()
    const url = new URL(env.DATABASE_URL!)
    const port = await freePort()
    const server = await startServer(port, {
      env: {
        ...env,
        NODE_ENV: "production",
        PUBLIC_BASE_URL: "https://leads.example.com",
        DASHBOARD_URL: "https://leads-console.example.com"
      }
    })
    const finished = await server.stop()
    const listening = finished.stdout.split("\n").find((line) => line.includes('"listener":"api"'))
    expect(JSON.parse(listening!).database).toBe(`PostgreSQL at ${url.hostname}:${url.port}${url.pathname}`)
    expect(JSON.parse(listening!).public_url).toBe("https://leads.example.com")
    expect(finished.stdout + finished.stderr).not.toContain(decodeURIComponent(url.password))
  })
})

describe("migrations as a deploy step (real processes)", { timeout: processTimeout }, () => {
  let env: Env

  beforeAll(async () => {
    env = await freshDatabaseEnv()
  })

  it("serve --no-migrate refuses an empty database, names what is pending, and creates nothing", async () => {
    const serve = await run(["serve", "--no-migrate", "--port", String(await freePort())], { env })
    expect(refusal(serve)).toBe(
      `lead-intake: the database schema is older than this code (pending: ${Object.keys(migrations).join(", ")}); run \`lead-intake migrate\` first (MIGRATE_ON_START=false)`
    )
    const [table] = await query(env.DATABASE_URL!, "SELECT to_regclass('schema_migrations') AS t")
    expect(table!.t).toBeNull()
  })

  it("MIGRATE_ON_START=false refuses a schema one migration short; migrate is the deploy step; then it serves", async () => {
    expect(json(await run(["migrate", "--json"], { env })).applied).toEqual(Object.keys(migrations))
    await query(
      env.DATABASE_URL!,
      `DELETE FROM schema_migrations WHERE migration_id = ${Number(newest.slice(0, 4))}`
    )
    const noMigrate = { ...env, MIGRATE_ON_START: "false" }
    const refused = await run(["serve", "--port", String(await freePort())], { env: noMigrate })
    expect(refusal(refused)).toContain(`(pending: ${newest});`)
    expectUserError(await run(["org", "create", "--name", "X"], { env: noMigrate }), /pending: /)

    // The newest migration is re-applied by `migrate` (it is idempotent at this point: nothing was dropped).
    await query(env.DATABASE_URL!, "DELETE FROM schema_migrations")
    await query(
      env.DATABASE_URL!,
      `INSERT INTO schema_migrations (migration_id, name) VALUES ${Object.keys(migrations)
        .filter((name) => name !== newest)
        .map((name) => `(${Number(name.slice(0, 4))}, '${name.slice(5)}')`)
        .join(", ")}`
    )
    expect(json(await run(["migrate", "--json"], { env })).applied).toEqual([newest])

    const { key } = json(await cliFor(noMigrate)("demo", "--json"))
    const port = await freePort()
    const server = await startServer(port, {
      env: noMigrate,
      args: ["serve", "--no-migrate", "--port", String(port)]
    })
    try {
      expect((await postLead(server.baseUrl, lead, { key })).status).toBe(201)
    } finally {
      await server.stop()
    }
  })

  it("serve --no-migrate accepts a schema newer than the code (expand before the code ships)", async () => {
    const url = env.DATABASE_URL!
    await query(
      url,
      "INSERT INTO schema_migrations (migration_id, name) VALUES (9999, 'from_the_next_release')"
    )
    const port = await freePort()
    const server = await startServer(port, { env, args: ["serve", "--no-migrate", "--port", String(port)] })
    await server.stop()
    await query(url, "DELETE FROM schema_migrations WHERE migration_id = 9999")
  })
})

/** How many migrations `migrations/index.ts` lists at a commit (0 where it did not exist). */
const migrationsAt = async (commit: string) => {
  const { stdout } = await exec("git", ["-C", projectRoot, "show", `${commit}:migrations/index.ts`]).catch(
    () => ({
      stdout: ""
    })
  )
  return (stdout.match(/^\s+"\d{4}_\w+": \w+,?$/gm) ?? []).length
}

/**
 * The previous release: the tree as it was before this code's newest migration was added (the parent
 * of the newest commit that took `migrations/index.ts` to today's list from a shorter one: a revert
 * that took it back from a longer list is not that commit), extracted with `git archive` and run on
 * this checkout's node_modules, against a database this code migrated. It must keep taking leads
 * while this code runs beside it on the same database: what a rolling deploy does.
 */
describe("the previous release on this release's schema (real processes)", {
  timeout: processTimeout
}, () => {
  let previousRoot: string | undefined
  let previousMigrations = 0

  beforeAll(async () => {
    const { stdout } = await exec("git", [
      "-C",
      projectRoot,
      "log",
      "--format=%H",
      "--",
      "migrations/index.ts"
    ])
    const commits = stdout.split("\n").filter((line) => line !== "")
    if (commits.length === 0)
      throw new Error("no history of migrations/index.ts: a shallow clone cannot run this test")
    const today = Object.keys(migrations).length
    let added: string | undefined
    for (const commit of commits) {
      if ((await migrationsAt(commit)) === today && (await migrationsAt(`${commit}^`)) < today) {
        added = commit
        break
      }
    }
    if (added === undefined) throw new Error("no commit added today's newest migration")
    previousRoot = await mkdtemp(path.join(tmpdir(), "lead-intake-previous-"))
    await exec("sh", [
      "-c",
      `git -C "$1" archive "$2^" | tar -x -C "$3"`,
      "sh",
      projectRoot,
      added,
      previousRoot
    ])
    await symlink(path.join(projectRoot, "node_modules"), path.join(previousRoot, "node_modules"))
    const index = await readFile(path.join(previousRoot, "migrations", "index.ts"), "utf8")
    previousMigrations = (index.match(/^\s+"\d{4}_\w+": \w+,?$/gm) ?? []).length
  }, processTimeout)

  afterAll(async () => {
    if (previousRoot !== undefined) await rm(previousRoot, { recursive: true, force: true })
  })

  it("knows fewer migrations, and takes leads on the new schema beside the new code", async () => {
    expect(previousMigrations).toBeGreaterThan(0)
    expect(previousMigrations).toBeLessThan(Object.keys(migrations).length)
    const env = await freshDatabaseEnv()
    expect(json(await run(["migrate", "--json"], { env })).applied).toEqual(Object.keys(migrations))
    const cli = cliFor(env)
    const demo = json(await cli("demo", "--json"))
    const org = demo.organization_id
    // What both releases' writes set off: a round-robin turn, an event and a webhook delivery.
    const agent = json(await cli("agent", "add", "--org", org, "--name", "Beto", "--json"))
    json(
      await cli(
        "rule",
        "add",
        "--org",
        org,
        "--round-robin",
        `${demo.agent_id},${agent.id}`,
        "--priority",
        "1",
        "--json"
      )
    )
    json(
      await cli(
        "webhook",
        "add",
        "--org",
        org,
        "--url",
        "https://93.184.215.14/leads",
        "--events",
        "lead.created,lead.enriched",
        "--json"
      )
    )
    const [oldPort, newPort] = [await freePort(), await freePort()]
    const previous = await startServer(oldPort, { env, entry: path.join(previousRoot!, "src", "main.ts") })
    const current = await startServer(newPort, {
      env,
      args: ["serve", "--no-migrate", "--port", String(newPort)]
    })
    const keyed = (name: string) => ({ key: demo.key, headers: { "idempotency-key": name } })
    const leadIds: Array<string> = []
    try {
      const first = await postLead(previous.baseUrl, lead, keyed("previous-1"))
      expect(first.status, JSON.stringify(first.body)).toBe(201)
      const replayed = await postLead(current.baseUrl, lead, keyed("previous-1"))
      expect(replayed.status, "the new release replays the previous release's key").toBe(201)
      expect(replayed.body.lead_id).toBe(first.body.lead_id)
      const again = await postLead(current.baseUrl, { ...lead, email: "ana@example.com" }, keyed("current-1"))
      expect(again.status).toBe(200)
      expect(again.body.lead_id).toBe(first.body.lead_id)
      expect(
        (await postLead(previous.baseUrl, { ...lead, email: "ana@example.com" }, keyed("current-1"))).status
      ).toBe(200)
      const other = await postLead(
        previous.baseUrl,
        { ...lead, telefono: "+52 55 8765 4321" },
        keyed("previous-2")
      )
      expect(other.status).toBe(201)
      const third = await postLead(
        current.baseUrl,
        { ...lead, telefono: "+52 55 1111 2222" },
        keyed("current-2")
      )
      expect(third.status).toBe(201)
      const fourth = await postLead(
        previous.baseUrl,
        { ...lead, telefono: "+52 55 3333 4444" },
        { key: demo.key }
      )
      expect(fourth.status).toBe(201)
      leadIds.push(...[first, other, third, fourth].map((answer) => answer.body.lead_id))
    } finally {
      await Promise.all([previous.stop(), current.stop()])
    }
    const [applied] = await query(env.DATABASE_URL!, "SELECT count(*)::int AS n FROM schema_migrations")
    expect(applied!.n, "the previous release migrated nothing").toBe(Object.keys(migrations).length)
    const [wide] = await query(
      env.DATABASE_URL!,
      "SELECT count(*)::int AS n FROM pg_proc WHERE pronamespace = current_schema()::regnamespace AND pronargs > 6"
    )
    // The previous release applied its own SQL texts at its start: none brings back what a contract
    // migration (0028) dropped.
    expect(wide!.n, "no function of more than 6 arguments came back").toBe(0)
    const [events] = await query(
      env.DATABASE_URL!,
      `SELECT (SELECT count(*)::int FROM outbox_events WHERE type IN ('lead.created', 'lead.enriched')) AS events,
              (SELECT count(*)::int FROM webhook_deliveries) AS deliveries,
              (SELECT count(*)::int FROM webhook_deliveries WHERE organization_id IS NULL) AS unowned`
    )
    const assignees = await query(
      env.DATABASE_URL!,
      `SELECT DISTINCT assignee_id::text AS a FROM leads WHERE id IN (${leadIds.map((id) => `'${id}'`).join(", ")})`
    )
    expect(new Set(assignees.map((row) => row.a)), "the round robin took turns across both releases").toEqual(
      new Set([demo.agent_id, agent.id])
    )
    expect(events, "one delivery per event, whichever release wrote it").toEqual({
      events: 5,
      deliveries: 5,
      unowned: 0
    })
  })
})

const dmlGrants = (role: string, owner: string) => [
  `GRANT USAGE ON SCHEMA public TO ${role}`,
  `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role}`,
  `GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO ${role}`,
  `GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO ${role}`,
  `ALTER DEFAULT PRIVILEGES FOR ROLE ${owner} IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ${role}`,
  `ALTER DEFAULT PRIVILEGES FOR ROLE ${owner} IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO ${role}`,
  `ALTER DEFAULT PRIVILEGES FOR ROLE ${owner} IN SCHEMA public GRANT EXECUTE ON FUNCTIONS TO ${role}`
]

/**
 * Least privilege: migrations as the owner (the test's role), `serve --no-migrate` and the operator
 * commands as a role with only the DML grants above: it takes leads, and the console's and CLI's
 * rule changes (which create and drop a sequence per rule) still work.
 */
describe("serve as a DML-only role (real processes)", { timeout: processTimeout }, () => {
  it("migrated by the owner, a DML-only role serves, takes leads and adds rules, and cannot change the schema", async () => {
    const pg = postgres()
    const env = await freshDatabaseEnv()
    const ownerUrl = env.DATABASE_URL!
    let role = pg.dmlRole
    if (role === null) {
      // The run's own embedded cluster: its user may create the role (CI's server names one instead).
      expect(pg.server, "TEST_DML_ROLE is required with TEST_DATABASE_URL").toBe("embedded")
      role = { user: `dml_${crypto.randomUUID().slice(0, 8)}`, password: crypto.randomUUID() }
      await query(ownerUrl, `CREATE ROLE ${role.user} LOGIN PASSWORD '${role.password}'`)
    }
    expect(json(await run(["migrate", "--json"], { env })).applied).toEqual(Object.keys(migrations))
    for (const statement of dmlGrants(role.user, pg.user)) await query(ownerUrl, statement)
    const dmlUrl = new URL(ownerUrl)
    dmlUrl.username = encodeURIComponent(role.user)
    dmlUrl.password = encodeURIComponent(role.password)
    const dml = { DATABASE_URL: dmlUrl.toString(), MIGRATE_ON_START: "false" }

    // 42501 insufficient_privilege: no DDL for this role.
    expect(await sqlStateOf(dml.DATABASE_URL, "CREATE TABLE intruder (id int)")).toBe("42501")
    const demo = json(await cliFor(dml)("demo", "--json"))
    const agent = json(
      await cliFor(dml)("agent", "add", "--org", demo.organization_id, "--name", "Beto", "--json")
    )
    json(
      await cliFor(dml)(
        "rule",
        "add",
        "--org",
        demo.organization_id,
        "--round-robin",
        `${demo.agent_id},${agent.id}`,
        "--priority",
        "1",
        "--json"
      )
    )
    const port = await freePort()
    const server = await startServer(port, {
      env: dml,
      args: ["serve", "--no-migrate", "--port", String(port)]
    })
    try {
      const first = await postLead(server.baseUrl, lead, { key: demo.key })
      expect(first.status, JSON.stringify(first.body)).toBe(201)
      const second = await postLead(
        server.baseUrl,
        { ...lead, telefono: "+52 55 8765 4321" },
        { key: demo.key }
      )
      expect(second.status).toBe(201)
      const assignees = await query(
        ownerUrl,
        `SELECT assignee_id::text AS a FROM leads WHERE id IN ('${first.body.lead_id}', '${second.body.lead_id}')`
      )
      expect(new Set(assignees.map((row) => row.a)), "the round robin took turns").toEqual(
        new Set([demo.agent_id, agent.id])
      )
    } finally {
      await server.stop()
    }
  })
})
