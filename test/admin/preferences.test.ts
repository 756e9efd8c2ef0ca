import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  expectError,
  type Harness,
  makeHarness,
  type Signed,
  send,
  signIn,
  signInEveryone
} from "./support.ts"

const stored = (
  harness: Harness,
  query: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<unknown>, unknown>
) => harness.run(Effect.flatMap(Effect.service(SqlClient.SqlClient), query).pipe(Effect.orDie))

const lastAudit = async (signed: Signed) => (await signed.call("GET", "/api/audit")).body.items[0]

describe("the console's language and time zone (docs/contract.md#12), on PostgreSQL", {
  timeout: 120_000
}, () => {
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

  describe("the operator's language, kept with the account", () => {
    it("is null until chosen; the session names the organization, its country and its zone (MX: America/Mexico_City)", async () => {
      const session = await viewerA.call("GET", "/api/session")
      expect(session.status, session.text).toBe(200)
      expect(session.body.operator.language).toBeNull()
      expect(session.body.organization).toEqual({
        id: harness.a.organizationId,
        name: "Inmobiliaria Test",
        country: "MX",
        time_zone: "America/Mexico_City"
      })
      const platform = await root.call("GET", "/api/session")
      expect(platform.body.operator.organization_id).toBeNull()
      expect(platform.body.organization).toBeNull()
    })

    it("a viewer saves their own language; it is stored, audited, returned at the next sign-in, and cleared with null", async () => {
      const saved = await viewerA.call("PUT", "/api/session/language", { body: { language: "es" } })
      expect(saved.status, saved.text).toBe(200)
      expect(saved.body.operator).toEqual(
        expect.objectContaining({ id: harness.a.viewer.id, language: "es" })
      )
      expect(saved.body.csrf_token).toBe(viewerA.csrf)
      const rows = await stored(
        harness,
        (sql) => sql`SELECT language FROM operators WHERE id = ${harness.a.viewer.id}`
      )
      expect(rows).toEqual([{ language: "es" }])
      expect(await lastAudit(adminA)).toEqual(
        expect.objectContaining({
          operator_email: harness.a.viewer.email,
          action: "operator.set_language",
          target: "language es"
        })
      )
      const again = await signIn(harness, harness.a.viewer)
      expect((await again.call("GET", "/api/session")).body.operator.language).toBe("es")
      expect(
        (await adminA.call("GET", "/api/session")).body.operator.language,
        "another operator's is their own"
      ).toBeNull()

      const cleared = await viewerA.call("PUT", "/api/session/language", { body: { language: null } })
      expect(cleared.status, cleared.text).toBe(200)
      expect(cleared.body.operator.language).toBeNull()
      expect((await lastAudit(adminA)).target).toBe("language unset")
    })

    it("refuses a language the console does not speak, and a change without the CSRF token", async () => {
      expectError(
        await viewerA.call("PUT", "/api/session/language", { body: { language: "fr" } }),
        400,
        "validation_error",
        "language"
      )
      expectError(
        await viewerA.call("PUT", "/api/session/language", { body: {} }),
        400,
        "validation_error",
        "language"
      )
      expectError(
        await viewerA.call("PUT", "/api/session/language", { body: { language: "en" }, csrf: null }),
        403,
        "csrf_failed"
      )
      expect((await viewerA.call("GET", "/api/session")).body.operator.language).toBeNull()
    })
  })

  describe("the organization's time zone", () => {
    it("reads its country's zone until an admin sets one; an admin sets it (canonical IANA name), audited", async () => {
      expect((await viewerA.call("GET", "/api/organization")).body).toEqual({
        id: harness.a.organizationId,
        name: "Inmobiliaria Test",
        country: "MX",
        time_zone: "America/Mexico_City"
      })
      const set = await adminA.call("PATCH", "/api/organization", { body: { time_zone: "america/tijuana" } })
      expect(set.status, set.text).toBe(200)
      expect(set.body.time_zone).toBe("America/Tijuana")
      expect(
        await stored(
          harness,
          (sql) => sql`SELECT time_zone FROM organizations WHERE id = ${harness.a.organizationId}`
        )
      ).toEqual([{ time_zone: "America/Tijuana" }])
      expect((await viewerA.call("GET", "/api/session")).body.organization.time_zone).toBe("America/Tijuana")
      expect(await lastAudit(adminA)).toEqual(
        expect.objectContaining({
          operator_email: harness.a.admin.email,
          action: "organization.set_time_zone",
          target: `organization ${harness.a.organizationId} America/Tijuana`
        })
      )
      expect((await adminB.call("GET", "/api/organization")).body.time_zone, "B keeps its own").toBe(
        "America/Mexico_City"
      )
      expect(
        (await adminA.call("PATCH", "/api/organization", { body: { time_zone: "America/Mexico_City" } }))
          .status
      ).toBe(200)
    })

    it("refuses what is not an IANA zone (400 on time_zone), a viewer (403), and ?org= of another organization for its admin", async () => {
      for (const time_zone of ["Mars/Olympus_Mons", "+06:00", "GMT-6", "", "America/Mexico_City\u0000"]) {
        expectError(
          await adminA.call("PATCH", "/api/organization", { body: { time_zone } }),
          400,
          "validation_error",
          "time_zone"
        )
      }
      expectError(
        await viewerA.call("PATCH", "/api/organization", { body: { time_zone: "America/Cancun" } }),
        403,
        "forbidden"
      )
      const other = await adminA.call("PATCH", `/api/organization?org=${harness.b.organizationId}`, {
        body: { time_zone: "America/Cancun" }
      })
      expect(other.status).toBe(200)
      expect(other.body.id, "?org= is ignored for an organization's operator").toBe(harness.a.organizationId)
      expect((await adminB.call("GET", "/api/organization")).body.time_zone).toBe("America/Mexico_City")
      await adminA.call("PATCH", "/api/organization", { body: { time_zone: "America/Mexico_City" } })
    })

    it("a platform administrator reads and sets any organization's zone with ?org=", async () => {
      const b = harness.b.organizationId
      expect((await root.call("GET", `/api/organization?org=${b}`)).body.id).toBe(b)
      const set = await root.call("PATCH", `/api/organization?org=${b}`, { body: { time_zone: "UTC" } })
      expect(set.status, set.text).toBe(200)
      expect(set.body).toEqual({ id: b, name: "Inmobiliaria Test", country: "MX", time_zone: "UTC" })
      expect((await adminB.call("GET", "/api/session")).body.organization.time_zone).toBe("UTC")
      expectError(await root.call("GET", `/api/organization?org=${crypto.randomUUID()}`), 404, "not_found")
    })
  })

  describe("the page shell's <html lang>", () => {
    const langOf = async (headers: Record<string, string>) => {
      const page = await send(harness.admin, "GET", "/overview", { headers })
      expect(page.status).toBe(200)
      return /<html lang="([^"]+)"/.exec(page.text)?.[1]
    }

    it("the operator's saved language, else the browser's first es*/en*, else the organization's country, else English", async () => {
      expect(await langOf({ "accept-language": "es-ES,es;q=0.9,en;q=0.8" })).toBe("es-MX")
      expect(await langOf({ "accept-language": "en-US,en;q=0.9" })).toBe("en")
      expect(await langOf({ "accept-language": "fr-FR, es-419;q=0.5" })).toBe("es-MX")
      expect(await langOf({})).toBe("en")

      expect(
        await langOf({ cookie: viewerA.cookie }),
        "MX organization, no choice, no browser language"
      ).toBe("es-MX")
      expect(await langOf({ cookie: viewerA.cookie, "accept-language": "en-GB" })).toBe("en")
      expect((await viewerA.call("PUT", "/api/session/language", { body: { language: "en" } })).status).toBe(
        200
      )
      expect(await langOf({ cookie: viewerA.cookie, "accept-language": "es-MX" }), "the choice wins").toBe(
        "en"
      )
      expect((await viewerA.call("PUT", "/api/session/language", { body: { language: "es" } })).status).toBe(
        200
      )
      expect(await langOf({ cookie: viewerA.cookie, "accept-language": "en-US" })).toBe("es-MX")
      await viewerA.call("PUT", "/api/session/language", { body: { language: null } })

      expect(await langOf({ cookie: root.cookie }), "a platform administrator has no country").toBe("en")
      expect(await langOf({ cookie: "lead_intake_session=not-a-session" })).toBe("en")
      const signedOut = await signIn(harness, harness.a.admin)
      await signedOut.call("DELETE", "/api/session")
      expect(await langOf({ cookie: signedOut.cookie }), "a revoked session says nothing").toBe("en")
    })
  })
})
