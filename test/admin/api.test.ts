import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { pagePaths } from "../../src/Console/Server/Pages.ts"
import {
  type Answer,
  actsOnOrganization,
  changes,
  cookieOf,
  endpoints,
  expectError,
  type Harness,
  makeHarness,
  pathFor,
  type Signed,
  send,
  signIn,
  signInEveryone,
  validBody
} from "./support.ts"

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const isoUtc = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

// biome-ignore lint/suspicious/noExplicitAny: tests inspect response bodies field by field
type Sent = { readonly status: number; readonly body: any }

const postLead = (
  harness: Harness,
  key: string,
  body: unknown = { nombre: "Luis", telefono: "+52 33 9876 5432" }
): Promise<Sent> =>
  harness
    .publicApi(
      new Request("http://api.test/v1/leads", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify(body)
      })
    )
    .then(async (response) => ({ status: response.status, body: await response.json() }))

const auditCount = (harness: Harness) =>
  harness.run(
    Effect.flatMap(
      Effect.service(SqlClient.SqlClient),
      (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM audit_log`
    ).pipe(
      Effect.map((rows) => rows[0]!.n),
      Effect.orDie
    )
  )

/** Every text value in every table of the schema, to look for secrets stored in clear. */
const everyStoredRow = (harness: Harness) =>
  harness.run(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const tables = yield* sql<{ table_name: string }>`
        SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`
      const rows: Array<string> = []
      for (const { table_name } of tables) {
        const dump = yield* sql<{ row: string }>`SELECT t::text AS row FROM ${sql(table_name)} t`
        rows.push(...dump.map((d) => d.row))
      }
      return rows.join("\n")
    }).pipe(Effect.orDie)
  )

describe("admin API through the real router, on PostgreSQL", { timeout: 120_000 }, () => {
  let harness: Harness
  let adminA: Signed
  let viewerA: Signed
  let adminB: Signed
  let root: Signed

  beforeAll(async () => {
    harness = await makeHarness()
    ;({ adminA, viewerA, adminB, root } = await signInEveryone(harness))
  }, 120_000)

  afterAll(() => harness?.close())

  describe("sign-in, sessions and sign-out", () => {
    it("signs in with a session cookie (HttpOnly, SameSite=Strict, Path=/; Secure under HTTPS) and a CSRF token", async () => {
      const answer = await send(harness.admin, "POST", "/api/session", {
        body: { email: harness.a.admin.email.toUpperCase(), password: harness.a.admin.password }
      })
      expect(answer.status, answer.text).toBe(200)
      expect(answer.body).toEqual({
        operator: {
          id: harness.a.admin.id,
          email: harness.a.admin.email,
          role: "admin",
          organization_id: harness.a.organizationId,
          language: null
        },
        organization: {
          id: harness.a.organizationId,
          name: "Inmobiliaria Test",
          country: "MX",
          time_zone: "America/Mexico_City"
        },
        csrf_token: expect.any(String)
      })
      const cookie = answer.headers.get("set-cookie")!
      expect(cookie).toMatch(/^lead_intake_session=[A-Za-z0-9_-]{43};/)
      expect(cookie).toMatch(/; HttpOnly/)
      expect(cookie).toMatch(/; SameSite=Strict/)
      expect(cookie).toMatch(/; Path=\//)
      expect(cookie).not.toMatch(/; Secure/)
      // X-Forwarded-Proto from a peer that is no trusted proxy is ignored (test/admin/proxies.test.ts).
      const spoofed = await send(harness.admin, "POST", "/api/session", {
        body: { email: harness.a.admin.email, password: harness.a.admin.password },
        headers: { "x-forwarded-proto": "https" }
      })
      expect(spoofed.headers.get("set-cookie")).not.toMatch(/; Secure/)

      const current = await send(harness.admin, "GET", "/api/session", {
        headers: { cookie: `lead_intake_session=${cookieOf(answer)}` }
      })
      expect(current.status).toBe(200)
      expect(current.body).toEqual(answer.body)
    })

    it("refuses a request without a session, with a made-up one, and a bad sign-in body", async () => {
      expectError(await send(harness.admin, "GET", "/api/session"), 401, "unauthenticated")
      expectError(await send(harness.admin, "GET", "/api/origins"), 401, "unauthenticated")
      expectError(
        await send(harness.admin, "GET", "/api/origins", {
          headers: { cookie: "lead_intake_session=forged" }
        }),
        401,
        "unauthenticated"
      )
      expectError(
        await send(harness.admin, "POST", "/api/session", { body: { email: "a@b.c" } }),
        400,
        "validation_error",
        "password"
      )
    })

    it("signs out one session (the others live on) and everywhere (all end)", async () => {
      const first = await signIn(harness, harness.a.viewer)
      const second = await signIn(harness, harness.a.viewer)
      const third = await signIn(harness, harness.a.viewer)
      const out = await first.call("DELETE", "/api/session")
      expect(out.status).toBe(204)
      expect(out.headers.get("set-cookie")).toMatch(/^lead_intake_session=;.*Expires=Thu, 01 Jan 1970/)
      expectError(await first.call("GET", "/api/session"), 401, "unauthenticated")
      expect((await second.call("GET", "/api/session")).status).toBe(200)
      expect((await second.call("POST", "/api/session/revoke-all")).status).toBe(204)
      expectError(await second.call("GET", "/api/session"), 401, "unauthenticated")
      expectError(await third.call("GET", "/api/origins"), 401, "unauthenticated")
      expectError(await viewerA.call("GET", "/api/origins"), 401, "unauthenticated")
      viewerA = await signIn(harness, harness.a.viewer)
      expect((await adminA.call("GET", "/api/session")).status).toBe(200)
    })
  })

  describe("every state change needs the CSRF token", () => {
    const stateChanging = endpoints.filter((endpoint) => changes(endpoint) && endpoint.name !== "login")

    it("covers every POST, PATCH and DELETE of the contract but sign-in", () => {
      expect(stateChanging.map((e) => e.name).sort()).toEqual(
        [
          "archiveProperty",
          "createAgent",
          "createOrigin",
          "createProperty",
          "createRule",
          "createWebhook",
          "deleteRule",
          "deleteWebhook",
          "disableWebhook",
          "enableWebhook",
          "eraseLead",
          "exportLead",
          "logout",
          "purgeTestData",
          "rescue",
          "resendFailedWebhookDeliveries",
          "resendWebhookDelivery",
          "rotateWebhookSecret",
          "restoreProperty",
          "revokeAll",
          "revokeKey",
          "revokeTestKey",
          "rotateKey",
          "rotateTestKey",
          "setLanguage",
          "setRateLimit",
          "setTimeZone",
          "testWebhook"
        ].sort()
      )
    })

    for (const endpoint of stateChanging) {
      it(`${endpoint.method} ${endpoint.path} without or with a wrong X-CSRF-Token: 403 csrf_failed, nothing done`, async () => {
        const before = await auditCount(harness)
        const path = pathFor(endpoint, harness.a)
        const body = validBody(endpoint, harness.a)
        expectError(await adminA.call(endpoint.method, path, { body, csrf: null }), 403, "csrf_failed")
        expectError(
          await adminA.call(endpoint.method, path, { body, csrf: "x".repeat(43) }),
          403,
          "csrf_failed"
        )
        expectError(await adminA.call(endpoint.method, path, { body, csrf: adminB.csrf }), 403, "csrf_failed")
        expect(await auditCount(harness)).toBe(before)
        expect((await adminA.call("GET", "/api/session")).status, "the session is still live").toBe(200)
      })
    }
  })

  describe("requests from another origin, or forms' bodies, change nothing", () => {
    it("refuses a state change carrying another Origin (sign-in included), or marked cross-site", async () => {
      const before = await auditCount(harness)
      const login = await send(harness.admin, "POST", "/api/session", {
        body: { email: harness.a.admin.email, password: harness.a.admin.password },
        headers: { origin: "https://evil.example" }
      })
      expectError(login, 403, "csrf_failed")
      expect(login.headers.get("set-cookie")).toBeNull()
      expectError(
        await adminA.call("POST", "/api/origins", {
          body: { label: "from-evil" },
          headers: { origin: "https://evil.example" }
        }),
        403,
        "csrf_failed"
      )
      expectError(
        await adminA.call("POST", "/api/origins", {
          body: { label: "from-evil" },
          headers: { origin: "null" }
        }),
        403,
        "csrf_failed"
      )
      expectError(
        await adminA.call("POST", "/api/origins", {
          body: { label: "from-evil" },
          headers: { "sec-fetch-site": "cross-site" }
        }),
        403,
        "csrf_failed"
      )
      expect(await auditCount(harness)).toBe(before)
      const labels = (await adminA.call("GET", "/api/origins")).body.items.map(
        (o: { label: string }) => o.label
      )
      expect(labels).not.toContain("from-evil")
    })

    it("refuses a body that is not JSON (what a cross-site form can send) with 415", async () => {
      const form = await harness.admin(
        new Request("http://127.0.0.1:8081/api/session", {
          method: "POST",
          headers: { "content-type": "text/plain" },
          body: JSON.stringify({ email: harness.a.admin.email, password: harness.a.admin.password })
        })
      )
      expect(form.status).toBe(415)
      expect(((await form.json()) as { error: { code: string } }).error.code).toBe("unsupported_media_type")
      expect(form.headers.get("set-cookie")).toBeNull()
    })
  })

  describe("viewers cannot change anything", () => {
    const refused = endpoints.filter((endpoint) => changes(endpoint) && endpoint.group !== "session")

    for (const endpoint of refused) {
      it(`${endpoint.method} ${endpoint.path} as a viewer: 403 forbidden, nothing done`, async () => {
        const before = await auditCount(harness)
        const origins = (await viewerA.call("GET", "/api/origins")).body
        const answer = await viewerA.call(endpoint.method, pathFor(endpoint, harness.a), {
          body: validBody(endpoint, harness.a)
        })
        expectError(answer, 403, "forbidden")
        expect(await auditCount(harness)).toBe(before)
        expect((await viewerA.call("GET", "/api/origins")).body).toEqual(origins)
      })
    }

    it("a viewer reads every page's data, but never a body kept for rescue (admins' data)", async () => {
      for (const endpoint of endpoints.filter((e) => !changes(e) && actsOnOrganization(e))) {
        const answer = await viewerA.call("GET", pathFor(endpoint, harness.a))
        if (endpoint.name === "keptBody") expectError(answer, 403, "forbidden")
        else expect(answer.status, `${endpoint.path}: ${answer.text}`).toBe(200)
      }
    })
  })

  describe("tenancy: another organization's id answers 404", () => {
    const withId = endpoints.filter((endpoint) => endpoint.path.includes(":"))

    it("covers every endpoint that takes an id", () => {
      expect(withId.map((e) => e.name).sort()).toEqual(
        [
          "archiveProperty",
          "deleteRule",
          "deleteWebhook",
          "disableWebhook",
          "enableWebhook",
          "eraseLead",
          "exportLead",
          "keptBody",
          "lead",
          "request",
          "rescue",
          "resendFailedWebhookDeliveries",
          "resendWebhookDelivery",
          "rotateWebhookSecret",
          "webhookAttempts",
          "webhookDeliveries",
          "restoreProperty",
          "revokeKey",
          "revokeTestKey",
          "rotateKey",
          "rotateTestKey",
          "setRateLimit",
          "testWebhook"
        ].sort()
      )
    })

    for (const endpoint of withId) {
      it(`${endpoint.method} ${endpoint.path} with organization B's id, as A's admin: 404; B unchanged`, async () => {
        const before = (await adminB.call("GET", "/api/origins")).body
        const rulesBefore = (await adminB.call("GET", "/api/rules")).body
        const propertiesBefore = (await adminB.call("GET", "/api/properties")).body
        const webhooksBefore = (await adminB.call("GET", "/api/webhooks")).body
        const leadBefore = (await adminB.call("GET", `/api/leads/${harness.b.leadId}`)).body
        const answer = await adminA.call(endpoint.method, pathFor(endpoint, harness.b), {
          body: validBody(endpoint, harness.a)
        })
        expectError(answer, 404, "not_found")
        const asked = await adminA.call(
          endpoint.method,
          `${pathFor(endpoint, harness.b)}?org=${harness.b.organizationId}`,
          {
            body: validBody(endpoint, harness.a)
          }
        )
        expectError(asked, 404, "not_found")
        expect((await adminB.call("GET", "/api/origins")).body).toEqual(before)
        expect((await adminB.call("GET", "/api/rules")).body).toEqual(rulesBefore)
        expect((await adminB.call("GET", "/api/properties")).body).toEqual(propertiesBefore)
        expect((await adminB.call("GET", "/api/webhooks")).body).toEqual(webhooksBefore)
        expect((await adminB.call("GET", `/api/leads/${harness.b.leadId}`)).body).toEqual(leadBefore)
        expect((await postLead(harness, harness.b.key, { nombre: "Sigue" })).status).toBeLessThan(300)
        const malformed = await adminA.call(
          endpoint.method,
          endpoint.path.replace(/:[a-z_]+/, "not-a-uuid"),
          {
            body: validBody(endpoint, harness.a)
          }
        )
        expectError(malformed, 404, "not_found")
      })
    }

    it("ids of another organization inside a query or body are 404 too; ?org= is ignored for an organization's operator", async () => {
      expectError(await adminA.call("GET", `/api/requests?origin=${harness.b.originId}`), 404, "not_found")
      expectError(
        await adminA.call("POST", "/api/rules", {
          body: { agent_ids: [harness.b.agentIds[0]], round_robin: false }
        }),
        404,
        "not_found"
      )
      expectError(
        await adminA.call("POST", "/api/rules", {
          body: { agent_ids: [harness.a.agentIds[0]], round_robin: false, origin_id: harness.b.originId }
        }),
        404,
        "not_found"
      )
      const origins = await adminA.call("GET", `/api/origins?org=${harness.b.organizationId}`)
      expect(origins.body.items.map((o: { id: string }) => o.id)).toContain(harness.a.originId)
      expect(origins.body.items.map((o: { id: string }) => o.id)).not.toContain(harness.b.originId)
      const leads = await adminA.call("GET", `/api/leads?org=${harness.b.organizationId}`)
      expect(leads.body.items.map((l: { id: string }) => l.id)).not.toContain(harness.b.leadId)
      const requests = await adminA.call("GET", `/api/requests?org=${harness.b.organizationId}`)
      expect(requests.body.items.map((r: { request_id: string }) => r.request_id)).not.toContain(
        harness.b.requestId
      )
      expect((await adminA.call("GET", "/api/organizations")).body).toEqual([
        { id: harness.a.organizationId, name: "Inmobiliaria Test", country: "MX" }
      ])
      expectError(await adminA.call("GET", "/api/requests?unattributed=true"), 403, "forbidden")
    })

    it("a platform administrator picks the organization with ?org= and sees unattributed requests", async () => {
      const organizations = (await root.call("GET", "/api/organizations")).body
      expect(organizations.map((o: { id: string }) => o.id)).toEqual(
        expect.arrayContaining([harness.a.organizationId, harness.b.organizationId])
      )
      const originsOfB = await root.call("GET", `/api/origins?org=${harness.b.organizationId}`)
      expect(originsOfB.body.items.map((o: { id: string }) => o.id)).toEqual([harness.b.originId])
      expect(
        (await root.call("GET", `/api/leads/${harness.b.leadId}?org=${harness.b.organizationId}`)).status
      ).toBe(200)
      expectError(
        await root.call("GET", `/api/leads/${harness.b.leadId}?org=${harness.a.organizationId}`),
        404,
        "not_found"
      )
      expectError(await root.call("GET", `/api/origins?org=${crypto.randomUUID()}`), 404, "not_found")
      expectError(await root.call("GET", "/api/origins?org=nope"), 404, "not_found")
      const bogus = await postLead(harness, "lk_live_ZZZZZZZZ_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
      expect(bogus.status).toBe(401)
      const unattributed = await root.call("GET", "/api/requests?unattributed=true")
      expect(unattributed.status, unattributed.text).toBe(200)
      expect(unattributed.body.items.map((r: { request_id: string }) => r.request_id)).toContain(
        bogus.body.request_id
      )
      expect(unattributed.body.items.every((r: { origin_id: string | null }) => r.origin_id === null)).toBe(
        true
      )
      const one = await root.call("GET", `/api/requests/${bogus.body.request_id}`)
      expect(one.status).toBe(200)
      expectError(await adminA.call("GET", `/api/requests/${bogus.body.request_id}`), 404, "not_found")
    })
  })

  describe("what operators do", () => {
    it("creates an origin whose key is shown once; lists it with prefix, counts and state; never stores the key", async () => {
      const created = await adminA.call("POST", "/api/origins", {
        body: { label: " chatbot ", rate_limit: 30 }
      })
      expect(created.status, created.text).toBe(201)
      expect(created.body).toEqual({
        id: expect.stringMatching(uuid),
        label: "chatbot",
        key: expect.stringMatching(/^lk_live_/),
        prefix: created.body.key.slice(0, 16),
        rate_limit: 30
      })
      expect(created.headers.get("cache-control")).toBe("no-store")
      expect((await postLead(harness, created.body.key)).status).toBeLessThan(300)
      const list = await adminA.call("GET", "/api/origins")
      const item = list.body.items.find((o: { id: string }) => o.id === created.body.id)
      expect(item).toEqual({
        id: created.body.id,
        label: "chatbot",
        prefix: created.body.prefix,
        created_at: expect.stringMatching(isoUtc),
        last_used_at: expect.stringMatching(isoUtc),
        requests_24h: 1,
        rate_limit: 30,
        revoked: false,
        test_prefix: null
      })
      expect(list.text).not.toContain(created.body.key)
      expectError(
        await adminA.call("POST", "/api/origins", { body: { label: "chatbot" } }),
        409,
        "conflict",
        "label"
      )
      expectError(
        await adminA.call("POST", "/api/origins", { body: { label: "x", rate_limit: 0 } }),
        400,
        "validation_error",
        "rate_limit"
      )
      const stored = await everyStoredRow(harness)
      expect(stored).not.toContain(created.body.key)
      expect(stored).not.toContain(created.body.key.slice(17))
      expect(stored).not.toContain(adminA.token)
      expect(stored).not.toContain(harness.a.admin.password)
    })

    it("rotates (old key stops at once, new one works), changes the limit and revokes (next request logged invalid_key)", async () => {
      const created = (
        await adminA.call("POST", "/api/origins", { body: { label: `rot-${crypto.randomUUID()}` } })
      ).body
      const rotated = await adminA.call("POST", `/api/origins/${created.id}/rotate`)
      expect(rotated.status, rotated.text).toBe(200)
      expect(rotated.body).toEqual({
        key: expect.stringMatching(/^lk_live_/),
        prefix: rotated.body.key.slice(0, 16)
      })
      expect((await postLead(harness, created.key)).status).toBe(401)
      expect((await postLead(harness, rotated.body.key)).status).toBeLessThan(300)
      const limit = await adminA.call("PATCH", `/api/origins/${created.id}`, { body: { rate_limit: 5 } })
      expect(limit.body).toEqual({ id: created.id, rate_limit: 5 })
      const revoked = await adminA.call("POST", `/api/origins/${created.id}/revoke`)
      expect(revoked.body).toEqual({ prefix: rotated.body.prefix, revoked_at: expect.stringMatching(isoUtc) })
      expectError(await adminA.call("POST", `/api/origins/${created.id}/revoke`), 409, "conflict")
      const refused = await postLead(harness, rotated.body.key)
      expect(refused.status).toBe(401)
      const log = await adminA.call("GET", `/api/requests?origin=${created.id}`)
      expect(log.body.items[0]).toMatchObject({
        request_id: refused.body.request_id,
        status: 401,
        outcome: "invalid_key",
        key_prefix: rotated.body.prefix,
        origin_id: created.id,
        origin_label: created.label
      })
      const origin = (await adminA.call("GET", "/api/origins")).body.items.find(
        (o: { id: string }) => o.id === created.id
      )
      expect(origin).toMatchObject({ revoked: true, rate_limit: 5, prefix: rotated.body.prefix })
    })

    it("lists requests newest first with filters and cursor pagination; opens one", async () => {
      const origin = (
        await adminA.call("POST", "/api/origins", { body: { label: `log-${crypto.randomUUID()}` } })
      ).body
      const sent = []
      for (let i = 0; i < 3; i++)
        sent.push(
          await postLead(harness, origin.key, { nombre: `Lead ${i}`, telefono: `+52 81 5555 000${i}` })
        )
      const bad = await postLead(harness, origin.key, { nombre: "" })
      expect(bad.status).toBe(400)
      const first = await adminA.call("GET", `/api/requests?origin=${origin.id}&limit=2`)
      expect(first.body.items.map((r: { request_id: string }) => r.request_id)).toEqual([
        bad.body.request_id,
        sent[2]!.body.request_id
      ])
      const second = await adminA.call(
        "GET",
        `/api/requests?origin=${origin.id}&limit=2&cursor=${first.body.next_cursor}`
      )
      expect(second.body.items.map((r: { request_id: string }) => r.request_id)).toEqual([
        sent[1]!.body.request_id,
        sent[0]!.body.request_id
      ])
      expect(second.body.next_cursor).toBeNull()
      const errors = await adminA.call("GET", `/api/requests?origin=${origin.id}&status_class=4xx`)
      expect(errors.body.items.map((r: { outcome: string }) => r.outcome)).toEqual(["validation_error"])
      const byOutcome = await adminA.call("GET", `/api/requests?origin=${origin.id}&outcome=created`)
      expect(byOutcome.body.items).toHaveLength(3)
      const byId = await adminA.call("GET", `/api/requests?request_id=${sent[1]!.body.request_id}`)
      expect(byId.body.items.map((r: { lead_id: string }) => r.lead_id)).toEqual([sent[1]!.body.lead_id])
      const future = await adminA.call("GET", `/api/requests?origin=${origin.id}&from=2999-01-01T00:00:00Z`)
      expect(future.body.items).toEqual([])
      const all = await adminA.call("GET", "/api/requests?limit=200")
      expect(all.body.items.map((r: { request_id: string }) => r.request_id)).toContain(harness.a.requestId)
      expectError(
        await adminA.call("GET", "/api/requests?status_class=3xx"),
        400,
        "validation_error",
        "status_class"
      )
      expectError(await adminA.call("GET", "/api/requests?cursor=garbage"), 400, "validation_error", "cursor")
      expectError(await adminA.call("GET", "/api/requests?from=yesterday"), 400, "validation_error", "from")
      const one = await adminA.call("GET", `/api/requests/${sent[0]!.body.request_id}`)
      expect(one.body).toEqual({
        request_id: sent[0]!.body.request_id,
        at: expect.stringMatching(isoUtc),
        status: 201,
        outcome: "created",
        lead_id: sent[0]!.body.lead_id,
        key_prefix: origin.prefix,
        idempotency_key: null,
        duration_ms: expect.any(Number),
        origin_id: origin.id,
        origin_label: origin.label,
        livemode: true,
        kept: false,
        rescued_lead_id: null
      })
      expectError(await adminA.call("GET", "/api/requests/no-such-request"), 404, "not_found")
    })

    it("finds leads by phone in any format (the match key), name or e-mail, and opens one with names", async () => {
      for (const q of [
        "+52 55 1234 5678",
        "55-1234-5678",
        "+52 1 55 1234 5678",
        "ana lóp",
        "ANA@EXAMPLE.COM"
      ]) {
        const found = await adminA.call("GET", `/api/leads?q=${encodeURIComponent(q)}`)
        expect(found.status, found.text).toBe(200)
        expect(
          found.body.items.map((l: { id: string }) => l.id),
          q
        ).toContain(harness.a.leadId)
      }
      const none = await adminA.call("GET", `/api/leads?q=${encodeURIComponent("+52 99 0000 0000")}`)
      expect(none.body.items).toEqual([])
      const wildcard = await adminA.call("GET", `/api/leads?q=${encodeURIComponent("%")}`)
      expect(wildcard.body.items).toEqual([])
      const lead = await adminA.call("GET", `/api/leads/${harness.a.leadId}`)
      expect(lead.body).toMatchObject({
        id: harness.a.leadId,
        nombre: "Ana López",
        telefono: "+52 55 1234 5678",
        email: "ana@example.com",
        origin: { id: harness.a.originId, label: expect.any(String) },
        property: null,
        assignee: { id: harness.a.agentIds[0], name: "Ana" },
        created_at: expect.stringMatching(isoUtc),
        events: [{ type: "lead.created", created_at: expect.stringMatching(isoUtc) }],
        tasks: [{ kind: expect.any(String), assignee: "Ana", due_at: expect.stringMatching(isoUtc) }]
      })
      expect(lead.body.requests.map((r: { request_id: string }) => r.request_id)).toContain(
        harness.a.requestId
      )
      expectError(await adminA.call("GET", `/api/leads/${crypto.randomUUID()}`), 404, "not_found")
    })

    it("adds, searches, archives and restores properties", async () => {
      const created = await adminA.call("POST", "/api/properties", {
        body: { codigo: "cas-0042", external_code: "CASA-42" }
      })
      expect(created.status, created.text).toBe(201)
      expect(created.body).toEqual({
        id: expect.stringMatching(uuid),
        codigo: "CAS-0042",
        external_code: "CASA-42",
        archived: false,
        created_at: expect.stringMatching(isoUtc)
      })
      expectError(
        await adminA.call("POST", "/api/properties", { body: { codigo: "CAS-0042" } }),
        409,
        "conflict",
        "codigo"
      )
      expectError(
        await adminA.call("POST", "/api/properties", { body: { codigo: "CASA42" } }),
        400,
        "validation_error",
        "codigo"
      )
      const search = await adminA.call("GET", "/api/properties?q=casa-4")
      expect(search.body.items.map((p: { id: string }) => p.id)).toEqual([created.body.id])
      const archived = await adminA.call("POST", `/api/properties/${created.body.id}/archive`)
      expect(archived.body).toMatchObject({ id: created.body.id, archived: true })
      const restored = await adminA.call("POST", `/api/properties/${created.body.id}/restore`)
      expect(restored.body).toMatchObject({ id: created.body.id, archived: false })
    })

    it("adds agents and capture rules, lists rules in the order they apply, deletes one", async () => {
      const agent = await adminA.call("POST", "/api/agents", { body: { name: " Marta " } })
      expect(agent.status).toBe(201)
      expect(agent.body).toEqual({ id: expect.stringMatching(uuid), name: "Marta" })
      expect((await adminA.call("GET", "/api/agents")).body.items).toContainEqual(agent.body)
      const first = await adminA.call("POST", "/api/rules", {
        body: {
          agent_ids: [agent.body.id],
          round_robin: false,
          priority: 10,
          origin_id: harness.a.originId,
          property_id: harness.a.propertyId
        }
      })
      expect(first.status, first.text).toBe(201)
      expect(first.body).toEqual({
        id: expect.stringMatching(uuid),
        priority: 10,
        origin: { id: harness.a.originId, label: expect.any(String) },
        property: { id: harness.a.propertyId, codigo: "ABC-1234" },
        agents: [agent.body],
        round_robin: false
      })
      const robin = await adminA.call("POST", "/api/rules", {
        body: { agent_ids: [harness.a.agentIds[1], agent.body.id], round_robin: true, priority: 5 }
      })
      expect(robin.body.agents.map((a: { id: string }) => a.id)).toEqual([
        harness.a.agentIds[1],
        agent.body.id
      ])
      expectError(
        await adminA.call("POST", "/api/rules", {
          body: { agent_ids: harness.a.agentIds, round_robin: false }
        }),
        400,
        "validation_error",
        "agent_ids"
      )
      expectError(
        await adminA.call("POST", "/api/rules", { body: { agent_ids: [], round_robin: true } }),
        400,
        "validation_error",
        "agent_ids"
      )
      const rules = (await adminA.call("GET", "/api/rules")).body.items
      expect(rules.map((r: { priority: number }) => r.priority)).toEqual(
        [...rules.map((r: { priority: number }) => r.priority)].sort((x, y) => x - y)
      )
      expect(rules[0].id).toBe(robin.body.id)
      expect((await adminA.call("DELETE", `/api/rules/${robin.body.id}`)).status).toBe(204)
      expect(
        (await adminA.call("GET", "/api/rules")).body.items.map((r: { id: string }) => r.id)
      ).not.toContain(robin.body.id)
      expectError(await adminA.call("DELETE", `/api/rules/${robin.body.id}`), 404, "not_found")
    })

    it("shows the overview: requests per minute per origin, leads per day, error codes", async () => {
      const overview = await adminA.call("GET", "/api/overview")
      expect(overview.status, overview.text).toBe(200)
      expect(overview.body.requests_per_minute.length).toBeGreaterThan(0)
      expect(overview.body.requests_per_minute[0]).toEqual({
        minute: expect.stringMatching(/:00\.000Z$/),
        origin_id: expect.stringMatching(uuid),
        label: expect.any(String),
        count: expect.any(Number)
      })
      // Days are the organization's local days (its zone, else its country's), not UTC's:
      // between 00:00 and 06:00 UTC a lead made in Mexico City belongs to the day before. The day
      // is the lead's own, not the one this test runs in (the file may run across midnight); the
      // boundaries themselves are tested on a set clock in test/services/ConsoleReads.test.ts.
      const zone = (await adminA.call("GET", "/api/organization")).body.time_zone
      const createdAt = (await adminA.call("GET", `/api/leads/${harness.a.leadId}`)).body.created_at
      const day = new Intl.DateTimeFormat("en-CA", { timeZone: zone }).format(new Date(createdAt))
      expect(overview.body.leads_per_day).toEqual([
        {
          day,
          created: expect.any(Number),
          enriched: expect.any(Number)
        }
      ])
      expect(overview.body.leads_per_day[0].created).toBeGreaterThanOrEqual(1)
      const b = await adminB.call("GET", "/api/overview")
      expect(
        b.body.requests_per_minute.every((r: { origin_id: string }) => r.origin_id === harness.b.originId)
      ).toBe(true)
    })

    it("keeps an audit log of who did what, when and from where", async () => {
      const patched = await adminA.call("PATCH", `/api/origins/${harness.a.originId}`, {
        body: { rate_limit: 999 }
      })
      expect(patched.status, patched.text).toBe(200)
      const audit = await adminA.call("GET", "/api/audit")
      expect(audit.status).toBe(200)
      expect(audit.body.items[0]).toEqual({
        id: expect.any(String),
        at: expect.stringMatching(isoUtc),
        operator_email: harness.a.admin.email,
        action: "origin.set_rate_limit",
        target: `origin ${harness.a.originId} rate limit 999`,
        ip: expect.any(String)
      })
      const actions = new Set(audit.body.items.map((e: { action: string }) => e.action))
      for (const action of [
        "origin.create",
        "key.rotate",
        "key.revoke",
        "property.create",
        "rule.create",
        "session.sign_in"
      ]) {
        expect(actions, action).toContain(action)
      }
      const bAudit = await adminB.call("GET", "/api/audit")
      expect(
        bAudit.body.items.every((e: { operator_email: string }) => e.operator_email !== harness.a.admin.email)
      ).toBe(true)
      expect(audit.text).not.toMatch(/lk_live_[A-Za-z0-9]{8}_/)
    })

    it("serves its own OpenAPI document", async () => {
      const document = await send(harness.admin, "GET", "/api/openapi.json")
      expect(document.status).toBe(200)
      expect(document.body.info.title).toBe("Lead Intake operator console API")
      expect(Object.keys(document.body.paths)).toContain("/api/origins/{id}/rotate")
    })
  })

  describe("test mode: test keys, the Test data switch, the purge", () => {
    const lastAudit = async (signed: Signed) => (await signed.call("GET", "/api/audit")).body.items[0]
    const leadIds = (answer: Answer) => answer.body.items.map((item: { id: string }) => item.id)
    const requestIds = (answer: Answer) =>
      answer.body.items.map((item: { request_id: string }) => item.request_id)

    it("creates, rotates and revokes an origin's test key beside its live key; each step audited", async () => {
      const origin = (
        await adminA.call("POST", "/api/origins", { body: { label: `test-key-${crypto.randomUUID()}` } })
      ).body
      const listed = async () =>
        (await adminA.call("GET", "/api/origins")).body.items.find((o: { id: string }) => o.id === origin.id)
      expect(await listed()).toMatchObject({ prefix: origin.prefix, revoked: false, test_prefix: null })
      expectError(await adminA.call("POST", `/api/origins/${origin.id}/test-key/revoke`), 409, "conflict")

      const created = await adminA.call("POST", `/api/origins/${origin.id}/test-key/rotate`)
      expect(created.status, created.text).toBe(200)
      expect(created.body).toEqual({
        key: expect.stringMatching(/^lk_test_[0-9A-Za-z]{8}_[0-9A-Za-z]{38}$/),
        prefix: created.body.key.slice(0, 16)
      })
      expect(created.headers.get("cache-control")).toBe("no-store")
      expect(await lastAudit(adminA)).toMatchObject({
        action: "key.test_rotated",
        target: `origin ${origin.id} new test key ${created.body.prefix}`
      })
      expect(await listed()).toMatchObject({
        prefix: origin.prefix,
        revoked: false,
        test_prefix: created.body.prefix
      })
      expect((await postLead(harness, created.body.key)).status).toBe(201)
      expect((await postLead(harness, origin.key)).status, "the live key still works").toBeLessThan(300)

      const rotated = await adminA.call("POST", `/api/origins/${origin.id}/test-key/rotate`)
      expect(rotated.body.key).toMatch(/^lk_test_/)
      expect(rotated.body.prefix).not.toBe(created.body.prefix)
      expect((await postLead(harness, created.body.key)).status, "the earlier test key stops at once").toBe(
        401
      )
      expect((await postLead(harness, rotated.body.key)).status).toBe(200)
      expect((await listed()).test_prefix).toBe(rotated.body.prefix)

      const revoked = await adminA.call("POST", `/api/origins/${origin.id}/test-key/revoke`)
      expect(revoked.status, revoked.text).toBe(200)
      expect(revoked.body).toEqual({ prefix: rotated.body.prefix, revoked_at: expect.stringMatching(isoUtc) })
      expect(await lastAudit(adminA)).toMatchObject({
        action: "key.test_revoked",
        target: `origin ${origin.id} test key ${rotated.body.prefix}`
      })
      expect((await postLead(harness, rotated.body.key)).status).toBe(401)
      expect(await listed()).toMatchObject({ prefix: origin.prefix, revoked: false, test_prefix: null })
      expectError(await adminA.call("POST", `/api/origins/${origin.id}/test-key/revoke`), 409, "conflict")
      expect((await postLead(harness, origin.key)).status, "the live key is untouched").toBe(200)
      const audit = await adminA.call("GET", "/api/audit")
      expect(audit.text).not.toContain(created.body.key)
      expect(audit.text).not.toContain(rotated.body.key)
      const stored = await everyStoredRow(harness)
      expect(stored).not.toContain(rotated.body.key.slice(17))
    })

    it("test data only behind ?test=true (leads, search, requests), marked, left out of the overview; purged in one action", async () => {
      const origin = (
        await adminA.call("POST", "/api/origins", { body: { label: `sandbox-${crypto.randomUUID()}` } })
      ).body
      const testKey = (await adminA.call("POST", `/api/origins/${origin.id}/test-key/rotate`)).body.key
      expect(
        (await adminA.call("POST", "/api/test-data/purge")).status,
        "no test data left by other tests"
      ).toBe(200)
      const overviewBefore = (await adminA.call("GET", "/api/overview")).body
      const originsBefore = (await adminA.call("GET", "/api/origins")).body.items.find(
        (o: { id: string }) => o.id === origin.id
      )
      const sent = await postLead(harness, testKey, {
        nombre: "Prueba Sandbox",
        telefono: "+52 81 5555 0101",
        email: "sandbox@example.com"
      })
      expect(sent.status, JSON.stringify(sent.body)).toBe(201)
      const failed = await postLead(harness, testKey, { nombre: "" })
      expect(failed.status).toBe(400)
      const bSent = await postLead(
        harness,
        (await adminB.call("POST", `/api/origins/${harness.b.originId}/test-key/rotate`)).body.key,
        { nombre: "Prueba B", telefono: "+52 81 5555 0101" }
      )
      expect(bSent.status).toBe(201)

      expect(leadIds(await adminA.call("GET", "/api/leads"))).not.toContain(sent.body.lead_id)
      expect(leadIds(await adminA.call("GET", "/api/leads?q=Sandbox"))).toEqual([])
      expect(leadIds(await adminA.call("GET", "/api/leads?test=false"))).not.toContain(sent.body.lead_id)
      const testLeads = await viewerA.call("GET", "/api/leads?test=true")
      expect(testLeads.status, testLeads.text).toBe(200)
      expect(leadIds(testLeads)).toEqual([sent.body.lead_id])
      expect(leadIds(await viewerA.call("GET", "/api/leads?test=true&q=81%205555%200101"))).toEqual([
        sent.body.lead_id
      ])
      expect(leadIds(await adminA.call("GET", "/api/leads?test=true&q=Ana"))).toEqual([])
      expectError(await adminA.call("GET", "/api/leads?test=yes"), 400, "validation_error", "test")

      const lead = await viewerA.call("GET", `/api/leads/${sent.body.lead_id}`)
      expect(lead.body).toMatchObject({ livemode: false, assignee: null, tasks: [] })
      expect(lead.body.requests.map((r: { livemode: boolean }) => r.livemode)).toEqual([false])
      expect((await adminA.call("GET", `/api/leads/${harness.a.leadId}`)).body.livemode).toBe(true)

      const liveLog = await adminA.call("GET", "/api/requests")
      expect(requestIds(liveLog)).not.toContain(sent.body.request_id)
      expect(liveLog.body.items.every((r: { livemode: boolean }) => r.livemode)).toBe(true)
      const testLog = await adminA.call("GET", "/api/requests?test=true")
      expect(requestIds(testLog).slice(0, 2)).toEqual([failed.body.request_id, sent.body.request_id])
      expect(requestIds(await adminA.call("GET", `/api/requests?test=true&origin=${origin.id}`))).toEqual([
        failed.body.request_id,
        sent.body.request_id
      ])
      expect(testLog.body.items.every((r: { livemode: boolean }) => !r.livemode)).toBe(true)
      expect(
        requestIds(await adminA.call("GET", `/api/requests?test=true&origin=${origin.id}&status_class=4xx`))
      ).toEqual([failed.body.request_id])
      expect((await adminA.call("GET", `/api/requests/${sent.body.request_id}`)).body.livemode).toBe(false)

      const overviewAfter = (await adminA.call("GET", "/api/overview")).body
      expect(overviewAfter.leads_per_day).toEqual(overviewBefore.leads_per_day)
      expect(overviewAfter.error_codes).toEqual(overviewBefore.error_codes)
      expect(
        overviewAfter.requests_per_minute.filter((r: { origin_id: string }) => r.origin_id === origin.id)
      ).toEqual([])
      const originAfter = (await adminA.call("GET", "/api/origins")).body.items.find(
        (o: { id: string }) => o.id === origin.id
      )
      expect(originAfter.requests_24h).toBe(originsBefore.requests_24h)
      expect(originAfter.last_used_at).toBe(originsBefore.last_used_at)

      const purged = await adminA.call("POST", "/api/test-data/purge")
      expect(purged.status, purged.text).toBe(200)
      expect(purged.body).toEqual({ purged: 1 })
      expect(await lastAudit(adminA)).toMatchObject({
        action: "test_data.purged",
        target: `1 test lead of organization ${harness.a.organizationId}`
      })
      expect(leadIds(await adminA.call("GET", "/api/leads?test=true"))).toEqual([])
      expectError(await adminA.call("GET", `/api/leads/${sent.body.lead_id}`), 404, "not_found")
      expect((await adminA.call("GET", `/api/leads/${harness.a.leadId}`)).status, "live leads stay").toBe(200)
      expect(
        requestIds(await adminA.call("GET", `/api/requests?test=true&origin=${origin.id}`)),
        "the request log keeps its rows"
      ).toEqual([failed.body.request_id, sent.body.request_id])
      expect(
        leadIds(await adminB.call("GET", "/api/leads?test=true")),
        "another organization's stay"
      ).toEqual([bSent.body.lead_id])
      expect((await adminA.call("POST", "/api/test-data/purge")).body).toEqual({ purged: 0 })
      expect(
        (await postLead(harness, testKey, { nombre: "Otra", telefono: "+52 81 5555 0101" })).status
      ).toBe(201)
    })
  })

  describe("webhooks, lead export and erasure", () => {
    const lastAudit = async () => (await adminA.call("GET", "/api/audit")).body.items[0]

    it("adds an endpoint (secret shown once), lists it without the secret, rotates, enables, removes; every step audited", async () => {
      const refused = await adminA.call("POST", "/api/webhooks", { body: { url: "http://127.0.0.1:9/hook" } })
      expectError(refused, 400, "validation_error", "url")
      expect(refused.body.error.message).toMatch(/^url: URL not allowed: /)
      expectError(
        await adminA.call("POST", "/api/webhooks", { body: { url: "not a url" } }),
        400,
        "validation_error",
        "url"
      )
      expectError(
        await adminA.call("POST", "/api/webhooks", {
          body: { url: "https://93.184.215.14/x", events: ["lead.deleted"] }
        }),
        400,
        "validation_error"
      )
      const created = await adminA.call("POST", "/api/webhooks", {
        body: { url: "https://93.184.215.14/crm", events: ["lead.enriched"] }
      })
      expect(created.status, created.text).toBe(201)
      expect(created.body).toEqual({
        endpoint: {
          id: expect.stringMatching(uuid),
          url: "https://93.184.215.14/crm",
          events: ["lead.enriched"],
          test_events: false,
          disabled: false,
          disabled_reason: null,
          disabled_at: null,
          failing_since: null,
          last_error: null,
          created_at: expect.stringMatching(isoUtc)
        },
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/)
      })
      const id = created.body.endpoint.id
      const entry = await lastAudit()
      expect(entry).toMatchObject({ operator_email: harness.a.admin.email, action: "webhook.create" })
      expect(entry.target).toContain(id)
      expect(entry.target).not.toContain(created.body.secret)
      const listed = await viewerA.call("GET", "/api/webhooks")
      expect(listed.text).not.toContain("whsec_")
      expect(listed.body.items).toContainEqual(created.body.endpoint)
      expect(listed.body.items.map((w: { id: string }) => w.id)).not.toContain(harness.b.webhookId)

      const rotated = await adminA.call("POST", `/api/webhooks/${id}/rotate-secret`)
      expect(rotated.status, rotated.text).toBe(200)
      expect(rotated.body).toEqual({ id, secret: expect.stringMatching(/^whsec_/) })
      expect(rotated.body.secret).not.toBe(created.body.secret)
      expect(await lastAudit()).toMatchObject({ action: "webhook.rotate_secret", target: `webhook ${id}` })

      expectError(await viewerA.call("POST", `/api/webhooks/${id}/disable`), 403, "forbidden")
      const disabled = await adminA.call("POST", `/api/webhooks/${id}/disable`)
      expect(disabled.status, disabled.text).toBe(200)
      expect(disabled.body).toEqual({
        ...created.body.endpoint,
        disabled: true,
        disabled_reason: "operator",
        disabled_at: expect.stringMatching(isoUtc)
      })
      expect(await lastAudit()).toMatchObject({
        operator_email: harness.a.admin.email,
        action: "webhook.disable",
        target: `webhook ${id} ${created.body.endpoint.url}`
      })
      expect((await viewerA.call("GET", "/api/webhooks")).body.items).toContainEqual(disabled.body)

      const enabled = await adminA.call("POST", `/api/webhooks/${id}/enable`)
      expect(enabled.status).toBe(200)
      expect(enabled.body).toEqual(created.body.endpoint)
      expect((await lastAudit()).action).toBe("webhook.enable")

      expect((await adminA.call("DELETE", `/api/webhooks/${id}`)).status).toBe(204)
      expect((await lastAudit()).action).toBe("webhook.remove")
      expectError(await adminA.call("DELETE", `/api/webhooks/${id}`), 404, "not_found")
      const after = await adminA.call("GET", "/api/webhooks")
      expect(after.body.items.map((w: { id: string }) => w.id)).not.toContain(id)
    })

    it("subscribes to the three lead events by default, opts in to test events, and sends webhook.test on demand (audited)", async () => {
      const created = await adminA.call("POST", "/api/webhooks", {
        body: { url: "https://93.184.215.14/partner", test_events: true }
      })
      expect(created.status, created.text).toBe(201)
      expect(created.body.endpoint).toMatchObject({
        events: ["lead.created", "lead.enriched", "lead.erased"],
        test_events: true
      })
      const id = created.body.endpoint.id
      expect(
        (await viewerA.call("GET", "/api/webhooks")).body.items.find((w: { id: string }) => w.id === id)
      ).toEqual(created.body.endpoint)
      expectError(await viewerA.call("POST", `/api/webhooks/${id}/test`), 403, "forbidden")

      const queued = await adminA.call("POST", `/api/webhooks/${id}/test`)
      expect(queued.status, queued.text).toBe(202)
      expect(queued.body).toEqual({
        event_id: expect.stringMatching(uuid),
        type: "webhook.test",
        state: "pending"
      })
      expect(await lastAudit()).toMatchObject({
        action: "webhook.test",
        target: `webhook ${id} event ${queued.body.event_id}`
      })
      const deliveries = await viewerA.call("GET", `/api/webhooks/${id}/deliveries`)
      expect(deliveries.body.items).toEqual([
        {
          event_id: queued.body.event_id,
          type: "webhook.test",
          state: "pending",
          attempts: 0,
          last_status: null,
          last_error: null,
          last_attempt_at: null,
          next_attempt_at: expect.stringMatching(isoUtc)
        }
      ])
      expectError(await adminA.call("POST", `/api/webhooks/${crypto.randomUUID()}/test`), 404, "not_found")
      expect((await adminA.call("DELETE", `/api/webhooks/${id}`)).status).toBe(204)
    })

    it("lists an endpoint's deliveries and queues one again with Resend", async () => {
      const listed = await viewerA.call("GET", `/api/webhooks/${harness.a.webhookId}/deliveries`)
      expect(listed.status, listed.text).toBe(200)
      expect(listed.body.items).toContainEqual({
        event_id: harness.a.eventId,
        type: "lead.created",
        state: "pending",
        attempts: 0,
        last_status: null,
        last_error: null,
        last_attempt_at: null,
        next_attempt_at: expect.stringMatching(isoUtc)
      })
      const resent = await adminA.call(
        "POST",
        `/api/webhooks/${harness.a.webhookId}/deliveries/${harness.a.eventId}/resend`
      )
      expect(resent.status, resent.text).toBe(200)
      expect(resent.body).toEqual({ event_id: harness.a.eventId, state: "pending" })
      expect(await lastAudit()).toMatchObject({
        action: "webhook.resend",
        target: `webhook ${harness.a.webhookId} event ${harness.a.eventId}`
      })
      expectError(
        await adminA.call(
          "POST",
          `/api/webhooks/${harness.a.webhookId}/deliveries/${harness.b.eventId}/resend`
        ),
        404,
        "not_found"
      )
      expectError(
        await adminA.call("POST", `/api/webhooks/${harness.a.webhookId}/deliveries/nope/resend`),
        404,
        "not_found"
      )
    })

    it("exports a lead (audited without personal data), erases it behind a reason; the erasure is listed", async () => {
      const sent = await postLead(harness, harness.a.key, {
        nombre: "Rosa Méndez",
        telefono: "+52 81 5555 0101",
        email: "rosa@example.com"
      })
      expect(sent.status).toBeLessThan(300)
      const leadId = sent.body.lead_id as string
      const exported = await adminA.call("POST", `/api/leads/${leadId}/export`)
      expect(exported.status, exported.text).toBe(200)
      expect(exported.body.lead).toMatchObject({
        id: leadId,
        nombre: "Rosa Méndez",
        email: "rosa@example.com"
      })
      expect(exported.body.erasure).toBeNull()
      const exportEntry = await lastAudit()
      expect(exportEntry).toMatchObject({ action: "lead.export", target: `lead ${leadId}` })

      const naming = await adminA.call("POST", `/api/leads/${leadId}/erase`, {
        body: { reason: "Rosa Méndez asked by phone" }
      })
      expectError(naming, 400, "validation_error", "reason")
      expectError(
        await adminA.call("POST", `/api/leads/${leadId}/erase`, { body: { reason: "  " } }),
        400,
        "validation_error",
        "reason"
      )
      expect((await adminA.call("GET", `/api/leads/${leadId}`)).body.nombre).toBe("Rosa Méndez")

      const erased = await adminA.call("POST", `/api/leads/${leadId}/erase`, {
        body: { reason: "Data subject request #41" }
      })
      expect(erased.status, erased.text).toBe(200)
      expect(erased.body).toEqual({
        id: leadId,
        erased_at: expect.stringMatching(isoUtc),
        already_erased: false
      })
      const entry = await lastAudit()
      expect(entry).toMatchObject({ action: "lead.erase", target: `lead ${leadId}` })
      expect(JSON.stringify(entry)).not.toMatch(/Rosa|Méndez|rosa@|5555/)
      const again = await adminA.call("POST", `/api/leads/${leadId}/erase`, { body: { reason: "twice" } })
      expect(again.body.already_erased).toBe(true)
      const after = (await adminA.call("POST", `/api/leads/${leadId}/export`)).body
      expect(after.lead).toMatchObject({
        nombre: null,
        telefono: null,
        email: null,
        erased_at: erased.body.erased_at
      })
      expect(after.erasure).toMatchObject({
        reason: "Data subject request #41",
        erased_by: harness.a.admin.email
      })
      const erasures = await viewerA.call("GET", "/api/erasures")
      expect(erasures.body.items).toContainEqual({
        lead_id: leadId,
        erased_at: erased.body.erased_at,
        erased_by: harness.a.admin.email,
        reason: "Data subject request #41"
      })
      expect((await adminB.call("GET", "/api/erasures")).body.items).toEqual([])
    })
  })

  describe("headers", () => {
    it("pages: the shell with a fresh CSP nonce per response, no-store, nosniff, no referrer, no framing", async () => {
      const nonces = new Set<string>()
      const paths = [...pagePaths.map((path) => path.replace(":id", harness.a.leadId)), "/login"]
      for (const path of paths) {
        const page = await send(harness.admin, "GET", path)
        expect(page.status, path).toBe(200)
        expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8")
        const csp = page.headers.get("content-security-policy")!
        const nonce = /script-src 'self' 'nonce-([A-Za-z0-9+/=]+)'/.exec(csp)?.[1]
        expect(nonce, csp).toBeDefined()
        expect(csp).toContain("frame-ancestors 'none'")
        expect(csp).toContain("default-src 'self'")
        expect(csp).not.toContain("unsafe-inline")
        expect(page.text).toContain(`nonce="${nonce}"`)
        expect(page.text).not.toContain("{{nonce}}")
        nonces.add(nonce!)
        expect(page.headers.get("cache-control")).toBe("no-store")
        expect(page.headers.get("x-content-type-options")).toBe("nosniff")
        expect(page.headers.get("referrer-policy")).toBe("no-referrer")
      }
      expect(nonces.size).toBe(paths.length)
    })

    it("data answers are no-store; nothing ever carries a CORS header, preflights included", async () => {
      const answers = [
        await adminA.call("GET", "/api/origins", { headers: { origin: "https://evil.example" } }),
        await send(harness.admin, "GET", "/api/session", { headers: { origin: "https://evil.example" } }),
        await send(harness.admin, "OPTIONS", "/api/origins", {
          headers: { origin: "https://evil.example", "access-control-request-method": "POST" }
        }),
        await send(harness.admin, "GET", "/login", { headers: { origin: "https://evil.example" } }),
        await send(harness.admin, "GET", "/assets/app.js", { headers: { origin: "https://evil.example" } })
      ]
      for (const answer of answers) {
        for (const name of answer.headers.keys()) expect(name).not.toMatch(/^access-control-/)
      }
      expect(answers[0]!.headers.get("cache-control")).toBe("no-store")
      expect(answers[1]!.headers.get("cache-control")).toBe("no-store")
      expect(answers[0]!.headers.get("content-security-policy")).toContain("frame-ancestors 'none'")
      expect(answers[2]!.status).toBe(404)
    })

    it("bodies: over 64 KiB is 413, malformed JSON is 400, before anything is done", async () => {
      const huge = await send(harness.admin, "POST", "/api/session", {
        body: { email: "a@example.com", password: "x".repeat(70_000) }
      })
      expectError(huge, 413, "payload_too_large")
      const before = await auditCount(harness)
      const hugeOrigin = await adminA.call("POST", "/api/origins", { body: { label: "y".repeat(70_000) } })
      expectError(hugeOrigin, 413, "payload_too_large")
      const malformed = await harness.admin(
        new Request("http://127.0.0.1:8081/api/origins", {
          method: "POST",
          headers: {
            cookie: adminA.cookie,
            "x-csrf-token": adminA.csrf,
            "content-type": "application/json"
          },
          body: '{"label": '
        })
      )
      expect(malformed.status).toBe(400)
      expect(((await malformed.json()) as { error: { code: string } }).error.code).toBe("validation_error")
      expect(await auditCount(harness)).toBe(before)
    })

    it("assets: right content types, cacheable, nothing outside the assets folder", async () => {
      const script = await send(harness.admin, "GET", "/assets/app.js")
      expect(script.status).toBe(200)
      expect(script.headers.get("content-type")).toMatch(/^text\/javascript/)
      expect(script.headers.get("cache-control")).toMatch(/max-age=/)
      const style = await send(harness.admin, "GET", "/assets/app.css")
      expect(style.headers.get("content-type")).toMatch(/^text\/css/)
      for (const path of [
        "/assets/../index.html",
        "/assets/..%2findex.html",
        "/assets/%2e%2e%2f%2e%2e%2fpackage.json",
        "/assets/.hidden.js",
        "/assets/missing.js",
        "/assets/"
      ]) {
        const answer = await send(harness.admin, "GET", path)
        expect(answer.status, path).toBe(404)
        expect(answer.text).not.toContain("<!doctype")
      }
      expectError(await send(harness.admin, "GET", "/api/nothing-here"), 404, "not_found")
    })
  })
})
