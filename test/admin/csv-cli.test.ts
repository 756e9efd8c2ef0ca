import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cliIn, type Ran } from "../support/Cli.ts"
import { createDatabase, databaseUrl } from "../support/Database.ts"
import { inProcess } from "../webhooks/support.ts"

/** `requests --csv` and `lead list --csv` on PostgreSQL: the file, the filters, the audit row, a large export streamed. */
describe("CSV exports from the command line", { timeout: 300_000 }, () => {
  let cli: (...args: ReadonlyArray<string>) => Promise<Ran>
  let db: ReturnType<typeof inProcess>
  let org: string
  let origin: string
  let otherOrigin: string

  const ok = async (...args: ReadonlyArray<string>) => {
    const ran = await cli(...args)
    expect(ran.ok, ran.err.join("\n")).toBe(true)
    return ran
  }

  beforeAll(async () => {
    const url = databaseUrl(await Effect.runPromise(createDatabase()))
    cli = cliIn({ DATABASE_URL: url, LOG_LEVEL: "Error" })
    await ok("migrate")
    org = JSON.parse((await ok("org", "create", "--name", "Hojas", "--json")).out).id
    origin = JSON.parse(
      (await ok("origin", "create", "--org", org, "--label", "Sitio, web", "--json")).out
    ).id
    otherOrigin = JSON.parse((await ok("origin", "create", "--org", org, "--label", "Otro", "--json")).out).id
    db = inProcess(url)
    await db.sql(
      (sql) => sql`SELECT logged_requests_add_partitions('2026-11-20T10:00:00Z', '2026-11-20T12:00:00Z')`
    )
    await db.sql(
      (sql) => sql`
        INSERT INTO logged_requests (organization_id, request_id, at, origin_id, key_prefix, status, outcome, idempotency_key,
                                 duration_ms, livemode)
        VALUES (${org}, 'req-1', '2026-11-20T10:00:00Z', ${origin}, 'lk_live_ab', 201, 'created', '=HYPERLINK("http://x","y")', 3.500199999999, true),
               (${org}, 'req-2', '2026-11-20T11:00:00Z', ${origin}, 'lk_test_cd', 422, 'validation_error', 'con "comillas"', 1, false),
               (${org}, 'req-3', '2026-11-20T12:00:00Z', ${otherOrigin}, 'lk_live_ef', 201, 'created', NULL, 2, true)
        RETURNING id`
    )
    await db.sql(
      (sql) => sql`
        INSERT INTO leads (organization_id, origin_id, nombre, telefono, phone_key, email, created_at, updated_at, livemode)
        VALUES (${org}, ${origin}, 'Pérez, Ana', '+52 55 1234 5678', 'k1', '@ana@example.com', '2026-11-20T10:00:00Z', '2026-11-20T10:00:00Z', true),
               (${org}, ${origin}, 'Prueba', NULL, NULL, NULL, '2026-11-21T10:00:00Z', '2026-11-21T10:00:00Z', false)
        RETURNING id`
    )
  }, 120_000)

  afterAll(async () => {
    await db?.close()
  })

  const audit = (action: string) =>
    db.sql<{ operator_email: string; target: string; organization_id: string | null }>(
      (sql) => sql`
        SELECT operator_email, target, organization_id FROM audit_log WHERE action = ${action} ORDER BY id`
    )

  it("requests --csv: BOM, header, CRLF, quoted and formula-safe cells, only the origin's rows, audited", async () => {
    const ran = await ok("requests", "--origin", origin, "--csv")
    const file = ran.chunks.join("")
    expect(file.startsWith("\uFEFFrequest_id,at,status,outcome,origin_id,origin_label,key_prefix,")).toBe(
      true
    )
    const lines = file.slice(1).split("\r\n")
    expect(lines.at(-1)).toBe("")
    expect(lines.slice(1, -1)).toEqual([
      `req-2,2026-11-20T11:00:00.000Z,422,validation_error,${origin},"Sitio, web",lk_test_cd,"con ""comillas""",,1,false,false,`,
      `req-1,2026-11-20T10:00:00.000Z,201,created,${origin},"Sitio, web",lk_live_ab,"'=HYPERLINK(""http://x"",""y"")",,3.5,true,false,`
    ])
    expect(file).not.toContain("req-3")
    expect(await audit("requests.export_csv")).toEqual([
      {
        operator_email: expect.stringMatching(/^cli:./),
        target: `origin ${origin}: 2 rows`,
        organization_id: org
      }
    ])
  })

  it("lead list --csv: the live leads (--test: the test ones), phone and e-mail kept as text, audited", async () => {
    const live = (await ok("lead", "list", "--org", org, "--csv")).chunks.join("")
    const [header, first, end, ...rest] = live.split("\r\n")
    expect(header).toBe("\uFEFFid,nombre,telefono,email,origin_id,origin_label,created_at")
    expect(first).toMatch(
      new RegExp(
        `^[0-9a-f-]{36},"Pérez, Ana",'\\+52 55 1234 5678,'@ana@example.com,${origin},"Sitio, web",2026-11-20T10:00:00.000Z$`
      )
    )
    expect([end, rest]).toEqual(["", []])
    const test = (await ok("lead", "list", "--org", org, "--test", "--csv")).chunks.join("")
    expect(test.split("\r\n")[1]).toContain(",Prueba,,,")
    expect((await audit("leads.export_csv")).map((row) => row.target)).toEqual([
      "leads: 1 row",
      "leads test: 1 row"
    ])
  })

  it("refuses an unknown origin or organization with one line, and writes no audit row", async () => {
    const unknown = await cli("requests", "--origin", crypto.randomUUID(), "--csv")
    expect([unknown.ok, unknown.err]).toEqual([false, [expect.stringMatching(/origin not found/)]])
    const noOrg = await cli("lead", "list", "--org", crypto.randomUUID(), "--csv")
    expect([noOrg.ok, noOrg.err]).toEqual([false, [expect.stringMatching(/organization not found/)]])
    expect(await audit("requests.export_csv")).toHaveLength(1)
  })

  it("streams a large export: 50,000 rows arrive in many chunks, none holding the file", async () => {
    await db.sql(
      (sql) => sql`SELECT logged_requests_add_partitions('2026-11-01T00:00:00Z', '2026-11-02T00:00:00Z')`
    )
    await db.sql(
      (sql) => sql`
        INSERT INTO logged_requests (organization_id, request_id, at, origin_id, key_prefix, status, outcome, duration_ms,
                                 livemode)
        SELECT ${org}, 'bulk-' || n, timestamptz '2026-11-01T00:00:00Z' + n * interval '1 second', ${otherOrigin},
               'lk_live_ef', 201, 'created', 1, true
        FROM generate_series(1, 50000) AS n`
    )
    const ran = await ok("requests", "--origin", otherOrigin, "--csv")
    const rows = ran.chunks.join("").split("\r\n").length - 2
    expect(rows).toBe(50_001)
    expect(ran.chunks.length).toBeGreaterThanOrEqual(100)
    const largest = Math.max(...ran.chunks.map((chunk) => chunk.length))
    expect(largest).toBeLessThan(ran.chunks.join("").length / 50)
    expect((await audit("requests.export_csv")).at(-1)?.target).toBe(`origin ${otherOrigin}: 50001 rows`)
  })
})
