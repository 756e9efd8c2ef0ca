import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Harness, makeHarness, type Signed, signIn } from "./support.ts"

/** A partner's form that sends nine digits (docs/contract.md#11-rejected-leads-are-kept-for-rescue). */
const nineDigits = '{"nombre":"Rosa Consola","telefono":"551234567"}'

describe("the console's kept bodies and rescue, through the real router on PostgreSQL", {
  timeout: 120_000
}, () => {
  let harness: Harness
  let admin: Signed
  let viewer: Signed
  let otherAdmin: Signed
  let requestId: string

  beforeAll(async () => {
    harness = await makeHarness()
    admin = await signIn(harness, harness.a.admin)
    viewer = await signIn(harness, harness.a.viewer)
    otherAdmin = await signIn(harness, harness.b.admin)
    const response = await harness.publicApi(
      new Request("http://api.test/v1/leads", {
        method: "POST",
        headers: { authorization: `Bearer ${harness.a.key}`, "content-type": "application/json" },
        body: nineDigits
      })
    )
    expect(response.status).toBe(400)
    requestId = ((await response.json()) as { request_id: string }).request_id
  }, 120_000)

  afterAll(() => harness?.close())

  it("lists the kept requests, shows the body to admins only and counts them on the overview", async () => {
    const kept = await viewer.call("GET", "/api/requests?kept=true")
    expect(kept.status, kept.text).toBe(200)
    expect(kept.body.items).toEqual([
      expect.objectContaining({ request_id: requestId, status: 400, kept: true, rescued_lead_id: null })
    ])
    expect(JSON.stringify(kept.body), "a list never carries a body").not.toContain("Rosa Consola")
    const all = await viewer.call("GET", "/api/requests")
    expect(all.body.items.map((item: { kept: boolean }) => item.kept)).toEqual([true, false])

    const refused = await viewer.call("GET", `/api/requests/${requestId}/kept`)
    expect([refused.status, refused.body.error.code]).toEqual([403, "forbidden"])
    expect(refused.text).not.toContain("Rosa Consola")
    const shown = await admin.call("GET", `/api/requests/${requestId}/kept`)
    expect(shown.status, shown.text).toBe(200)
    expect(shown.body).toEqual({ request_id: requestId, body: nineDigits, rescued_lead_id: null })
    expect(
      (await otherAdmin.call("GET", `/api/requests/${requestId}/kept`)).status,
      "another organization's"
    ).toBe(404)

    const overview = await viewer.call("GET", "/api/overview")
    expect(overview.body.waiting_for_rescue).toBe(1)
  })

  it("rescues once, as POST /v1/leads would, audited; a wrong body changes nothing; viewers are refused", async () => {
    const byViewer = await viewer.call("POST", `/api/requests/${requestId}/rescue`, {
      body: { body: '{"nombre":"Rosa Consola","telefono":"5512345671"}' }
    })
    expect(byViewer.status).toBe(403)
    const wrong = await admin.call("POST", `/api/requests/${requestId}/rescue`, {
      body: { body: nineDigits }
    })
    expect([wrong.status, wrong.body.error.code, wrong.body.error.field]).toEqual([
      400,
      "validation_error",
      "telefono"
    ])
    const retired = await admin.call("POST", `/api/requests/${requestId}/rescue`, {
      body: { body: '{"nombre":"Rosa Consola","telefono":"5512345671","propiedad":{"codigo":"OLD-0001"}}' }
    })
    expect([retired.status, retired.body.error.code, retired.body.error.field]).toEqual([
      422,
      "property_not_found",
      "propiedad"
    ])
    expect((await admin.call("GET", `/api/requests/${requestId}/kept`)).body.body, "nothing changed").toBe(
      nineDigits
    )

    const rescued = await admin.call("POST", `/api/requests/${requestId}/rescue`, {
      body: { body: '{"nombre":"Rosa Consola","telefono":"5512345671"}' }
    })
    expect(rescued.status, rescued.text).toBe(200)
    expect(rescued.body).toEqual({
      lead_id: expect.any(String),
      status: "created",
      lead_url: `https://crm.test/leads/${rescued.body.lead_id}`,
      request_id: requestId
    })
    const lead = await admin.call("GET", `/api/leads/${rescued.body.lead_id}`)
    expect(lead.status, lead.text).toBe(200)
    expect((await admin.call("GET", `/api/requests/${requestId}`)).body).toMatchObject({
      kept: false,
      rescued_lead_id: rescued.body.lead_id
    })
    const again = await admin.call("POST", `/api/requests/${requestId}/rescue`, {
      body: { body: '{"nombre":"Rosa Consola","telefono":"5512345671"}' }
    })
    expect([again.status, again.body.error.code]).toEqual([409, "conflict"])
    const audit = await admin.call("GET", "/api/audit")
    expect(audit.body.items[0]).toMatchObject({
      action: "request.rescue",
      target: requestId,
      operator_email: harness.a.admin.email
    })
    expect((await viewer.call("GET", "/api/overview")).body.waiting_for_rescue).toBe(0)
  })
})
