import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { adminBase, expectError, type Harness, makeHarness, type Signed, signInEveryone } from "./support.ts"

const bom = "\uFEFF"
const requestHeader = `${bom}request_id,at,status,outcome,origin_id,origin_label,key_prefix,idempotency_key,lead_id,duration_ms,livemode,kept,rescued_lead_id`
const leadHeader = `${bom}id,nombre,telefono,email,origin_id,origin_label,created_at`

/**
 * The console's CSV exports (`GET /api/requests.csv`, `GET /api/leads.csv`) on PostgreSQL: the file a
 * spreadsheet opens (BOM, header, CRLF, quoted and formula-safe cells), the list's filters applied,
 * what a viewer may export (what its list shows), the audit row of every export, and a large export
 * streamed in chunks.
 */
describe("CSV exports from the console's API", { timeout: 120_000 }, () => {
  let harness: Harness
  let adminA: Signed
  let viewerA: Signed
  let root: Signed

  const sql = <Row extends object>(
    query: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<Row>, unknown>
  ) => harness.run(Effect.flatMap(SqlClient.SqlClient, query).pipe(Effect.orDie))

  /** GET as `signed`, the body read chunk by chunk as it streams. */
  const get = async (signed: Signed, path: string) => {
    const response = await harness.admin(
      new Request(`${adminBase}${path}`, { headers: { cookie: signed.cookie } })
    )
    const chunks: Array<Uint8Array> = []
    const reader = response.body!.getReader()
    for (let next = await reader.read(); !next.done; next = await reader.read()) chunks.push(next.value)
    const text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(Buffer.concat(chunks))
    return { status: response.status, headers: response.headers, chunks, text, lines: text.split("\r\n") }
  }

  const audit = (action: string) =>
    sql<{ operator_email: string; target: string; organization_id: string | null }>(
      (sql) => sql`
        SELECT operator_email, target, organization_id FROM (
          SELECT id, operator_email, target, organization_id FROM audit_log WHERE action = ${action}
          UNION ALL
          SELECT id, operator_email, target, NULL FROM platform_audit_log WHERE action = ${action}
        ) entries ORDER BY id`
    )

  beforeAll(async () => {
    harness = await makeHarness()
    ;({ adminA, viewerA, root } = await signInEveryone(harness))
    const { a, b } = harness
    await sql((sql) => sql`UPDATE origins SET label = 'Sitio, "web"' WHERE id = ${a.originId} RETURNING id`)
    await sql(
      (sql) => sql`SELECT logged_requests_add_partitions('2026-11-20T10:00:00Z', '2026-11-20T13:00:00Z')`
    )
    await sql(
      (sql) => sql`
        INSERT INTO logged_requests (organization_id, request_id, at, origin_id, key_prefix, status, outcome, idempotency_key, duration_ms, livemode)
        VALUES (${a.organizationId}, 'csv-1', '2026-11-20T10:00:00Z', ${a.originId}, ${a.prefix}, 201, 'created', '=HYPERLINK("http://x","y")', 3.5, true),
               (${a.organizationId}, 'csv-2', '2026-11-20T11:00:00Z', ${a.originId}, ${a.prefix}, 400, 'validation_error', '+cmd|calc', 1, true),
               (${a.organizationId}, 'csv-3', '2026-11-20T12:00:00Z', ${a.originId}, 'lk_test_abcdefgh', 400, 'validation_error', NULL, 2, false),
               (${b.organizationId}, 'csv-b', '2026-11-20T13:00:00Z', ${b.originId}, ${b.prefix}, 400, 'validation_error', NULL, 2, true)
        RETURNING id`
    )
    await sql(
      (sql) => sql`
        INSERT INTO unattributed_requests (request_id, at, key_prefix, status, outcome, idempotency_key, duration_ms, livemode)
        VALUES ('csv-none', '2026-11-20T14:00:00Z', 'lk_live_zzzzzzzz', 401, 'invalid_key', NULL, 1, true)
        RETURNING id`
    )
    await sql(
      (sql) => sql`
        INSERT INTO leads (organization_id, origin_id, nombre, telefono, phone_key, email, created_at, updated_at, livemode)
        VALUES (${a.organizationId}, ${a.originId}, 'Pérez, Ana', '+52 55 2222 3333', 'csv-k1', '@ana@example.com', '2026-11-20T10:00:00Z', '2026-11-20T10:00:00Z', true),
               (${a.organizationId}, ${a.originId}, '=SUM(A1:A9)', NULL, NULL, NULL, '2026-11-20T09:00:00Z', '2026-11-20T09:00:00Z', true),
               (${a.organizationId}, ${a.originId}, 'Prueba', NULL, NULL, NULL, '2026-11-21T10:00:00Z', '2026-11-21T10:00:00Z', false),
               (${b.organizationId}, ${b.originId}, 'Pérez de B', NULL, NULL, NULL, '2026-11-20T10:00:00Z', '2026-11-20T10:00:00Z', true)
        RETURNING id`
    )
  }, 120_000)

  afterAll(() => harness?.close())

  it("requests.csv: a file with its filters applied (BOM, header, CRLF, quoted and formula-safe cells), audited with them", async () => {
    const { a } = harness
    const answer = await get(adminA, `/api/requests.csv?origin=${a.originId}&status_class=4xx`)
    expect(answer.status, answer.text).toBe(200)
    expect(answer.headers.get("content-type")).toBe("text/csv; charset=utf-8")
    expect(answer.headers.get("content-disposition")).toMatch(
      /^attachment; filename="requests-\d{4}-\d{2}-\d{2}\.csv"$/
    )
    expect(answer.headers.get("cache-control")).toBe("no-store")
    expect(answer.headers.get("x-content-type-options")).toBe("nosniff")
    expect(answer.lines[0]).toBe(requestHeader)
    // the 4xx live requests of the origin, newest first; not its 201, its test request, nor B's
    expect(answer.lines.slice(1)).toEqual([
      `csv-2,2026-11-20T11:00:00.000Z,400,validation_error,${a.originId},"Sitio, ""web""",${a.prefix},'+cmd|calc,,1,true,false,`,
      ""
    ])
    expect(await audit("requests.export_csv")).toEqual([
      {
        operator_email: harness.a.admin.email,
        target: `requests origin=${a.originId}, status_class=4xx: 1 row`,
        organization_id: a.organizationId
      }
    ])

    const all = await get(adminA, "/api/requests.csv")
    const ids = all.lines.slice(1, -1).map((line) => line.split(",")[0])
    expect(ids).toContain("csv-1")
    expect(ids).not.toContain("csv-3")
    expect(ids).not.toContain("csv-b")
    expect(ids).not.toContain("csv-none")
    const formula = all.lines.find((line) => line.startsWith("csv-1,"))
    expect(formula).toContain(`,"'=HYPERLINK(""http://x"",""y"")",`)
    const test = await get(adminA, "/api/requests.csv?test=true&kept=false")
    expect(test.headers.get("content-disposition")).toMatch(/filename="requests-test-[\d-]+\.csv"/)
    expect(test.lines.slice(1, -1).map((line) => line.split(",")[0])).toEqual(["csv-3"])
    expect((await audit("requests.export_csv")).map((row) => row.target).slice(1)).toEqual([
      expect.stringMatching(/^requests: \d+ rows$/),
      "requests kept=false, test=true: 1 row"
    ])
  })

  it("leads.csv: the search and the test switch applied, phone and e-mail kept as text; the search itself is not audited", async () => {
    const { a } = harness
    const answer = await get(adminA, `/api/leads.csv?q=${encodeURIComponent("Pérez")}`)
    expect(answer.status, answer.text).toBe(200)
    expect(answer.headers.get("content-type")).toBe("text/csv; charset=utf-8")
    expect(answer.headers.get("content-disposition")).toMatch(/^attachment; filename="leads-[\d-]+\.csv"$/)
    expect(answer.lines[0]).toBe(leadHeader)
    expect(answer.lines.slice(1)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^[0-9a-f-]{36},"Pérez, Ana",'\\+52 55 2222 3333,'@ana@example.com,${a.originId},"Sitio, ""web""",2026-11-20T10:00:00.000Z$`
        )
      ),
      ""
    ])
    const all = await get(adminA, "/api/leads.csv")
    expect(all.lines.some((line) => line.includes(",'=SUM(A1:A9),"))).toBe(true)
    expect(all.text).not.toContain("Prueba")
    expect(all.text).not.toContain("Pérez de B")
    const test = await get(adminA, "/api/leads.csv?test=true")
    expect(test.lines.slice(1, -1)).toEqual([expect.stringContaining(",Prueba,,,")])
    const targets = (await audit("leads.export_csv")).map((row) => row.target)
    expect(targets).toEqual([
      "leads q=…: 1 row",
      expect.stringMatching(/^leads: \d+ rows$/),
      "leads test=true: 1 row"
    ])
    expect(targets.join("\n")).not.toContain("Pérez")
  })

  it("a viewer exports what its lists show: its organization's rows only, whatever it asks for; audited under its name", async () => {
    const { a, b } = harness
    const requests = await get(viewerA, `/api/requests.csv?org=${b.organizationId}`)
    expect(requests.status, requests.text).toBe(200)
    const ids = requests.lines.slice(1, -1).map((line) => line.split(",")[0])
    expect(ids).toContain("csv-2")
    expect(ids).toContain(a.requestId)
    expect(ids).not.toContain("csv-b")
    expect(ids).not.toContain(b.requestId)
    const leads = await get(
      viewerA,
      `/api/leads.csv?org=${b.organizationId}&q=${encodeURIComponent("Pérez")}`
    )
    expect(leads.lines.slice(1, -1)).toEqual([expect.stringContaining('"Pérez, Ana"')])
    expect((await audit("leads.export_csv")).at(-1)).toEqual({
      operator_email: a.viewer.email,
      target: "leads q=…: 1 row",
      organization_id: a.organizationId
    })
    expect((await audit("requests.export_csv")).at(-1)).toMatchObject({
      operator_email: a.viewer.email,
      organization_id: a.organizationId
    })

    // what its list refuses, its export refuses, with the envelope and no audit row
    const before = (await audit("requests.export_csv")).length
    expectError(await viewerA.call("GET", `/api/requests.csv?origin=${b.originId}`), 404, "not_found")
    expectError(await viewerA.call("GET", "/api/requests.csv?unattributed=true"), 403, "forbidden")
    expectError(await adminA.call("GET", "/api/requests.csv?from=yesterday"), 400, "validation_error", "from")
    expectError(await adminA.call("GET", "/api/requests.csv?status_class=3xx"), 400, "validation_error")
    expectError(
      await harness.admin(new Request(`${adminBase}/api/leads.csv`)).then(async (response) => {
        const text = await response.text()
        return { status: response.status, headers: response.headers, text, body: JSON.parse(text) }
      }),
      401,
      "unauthenticated"
    )
    expect((await audit("requests.export_csv")).length).toBe(before)
  })

  it("a platform administrator exports the unattributed requests, audited as no organization's", async () => {
    const answer = await get(root, "/api/requests.csv?unattributed=true")
    expect(answer.status, answer.text).toBe(200)
    expect(answer.lines.slice(1, -1).map((line) => line.split(",")[0])).toContain("csv-none")
    expect(answer.lines.find((line) => line.startsWith("csv-none,"))).toContain(",,,lk_live_zzzzzzzz,")
    expect((await audit("requests.export_csv")).at(-1)).toMatchObject({
      operator_email: harness.platform.email,
      target: expect.stringMatching(/^requests unattributed=true: \d+ rows?$/),
      organization_id: null
    })
  })

  it("streams a large export: 20,000 rows arrive in many chunks, none holding the file", async () => {
    const { a } = harness
    await sql(
      (sql) => sql`SELECT logged_requests_add_partitions('2026-10-01T00:00:00Z', '2026-10-02T00:00:00Z')`
    )
    await sql(
      (sql) => sql`
        INSERT INTO logged_requests (organization_id, request_id, at, origin_id, key_prefix, status, outcome, duration_ms, livemode)
        SELECT ${a.organizationId}, 'bulk-' || n, timestamptz '2026-10-01T00:00:00Z' + n * interval '1 second', ${a.originId},
               ${a.prefix}, 201, 'created', 1, true
        FROM generate_series(1, 20000) AS n
        RETURNING id`
    )
    const answer = await get(adminA, `/api/requests.csv?origin=${a.originId}&outcome=created`)
    expect(answer.status).toBe(200)
    expect(answer.lines.length - 2).toBeGreaterThanOrEqual(20_000)
    expect(answer.chunks.length).toBeGreaterThanOrEqual(40)
    const largest = Math.max(...answer.chunks.map((chunk) => chunk.byteLength))
    expect(largest).toBeLessThan(answer.text.length / 20)
    expect((await audit("requests.export_csv")).at(-1)?.target).toMatch(
      new RegExp(`^requests origin=${a.originId}, outcome=created: 2000\\d rows$`)
    )
  })
})
