import { readFile } from "node:fs/promises"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { json } from "../e2e/Processes.ts"
import {
  addOperator,
  type ConsoleServer,
  createOrg,
  goTo,
  launchBrowser,
  newContext,
  type Operator,
  postLead,
  screenshot,
  signIn,
  startConsole,
  watchProblems
} from "./support.ts"

/**
 * The console's webhook page and the lead page's export and erasure, in Chromium against a real
 * `serve`: what an operator sees and does, checked against the CLI's view of the same data.
 */
describe("webhooks, lead export and erasure in the console", () => {
  let app: ConsoleServer
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let problems: Array<string>
  let org: string
  let admin: Operator
  let viewer: Operator
  let key = ""
  let secret = ""

  beforeAll(async () => {
    app = await startConsole()
    browser = await launchBrowser()
    org = await createOrg(app, "Inmobiliaria Ganchos")
    const agent = json(await app.cli("agent", "add", "--org", org, "--name", "Beto Agente", "--json"))
    json(await app.cli("rule", "add", "--org", org, "--agent", agent.id, "--json"))
    key = json(await app.cli("origin", "create", "--org", org, "--label", "Sitio web", "--json")).key
    admin = await addOperator(app, { org, email: "admin@ganchos.test" })
    viewer = await addOperator(app, { org, email: "viewer@ganchos.test", role: "viewer" })
    context = await newContext(browser, app)
    page = await context.newPage()
    problems = watchProblems(page)
    await signIn(page, admin)
  })

  afterAll(async () => {
    await browser?.close()
    await app?.stop()
  })

  it("refuses a private address with the reason next to the URL field, then adds an endpoint and shows its secret once", async () => {
    await goTo(page, "Webhooks")
    await expect.poll(() => page.getByText("No endpoints yet").count()).toBe(1)
    await page.getByRole("button", { name: "New endpoint" }).click()
    const form = page.getByRole("dialog", { name: "New webhook endpoint" })
    await form.getByLabel("URL").fill("http://10.0.0.5/hooks")
    await form.getByRole("button", { name: "Add endpoint" }).click()
    await expect.poll(() => form.getByRole("alert").textContent()).toMatch(/URL not allowed/)
    await expect(form.getByLabel("URL").getAttribute("aria-invalid")).resolves.toBe("true")

    await form.getByLabel("URL").fill("https://93.184.215.14/hooks/leads")
    await form.getByLabel("lead.enriched").uncheck()
    await form.getByLabel(/Also send the events of test leads/).check()
    await form.getByRole("button", { name: "Add endpoint" }).click()
    const dialog = page.getByRole("dialog", { name: "Endpoint added" })
    await dialog.waitFor()
    secret = (await dialog.getByTestId("new-secret").textContent())!.trim()
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    await expect(dialog.textContent()).resolves.toMatch(/only time the secret is shown/)
    await dialog.getByRole("button", { name: "Copy secret" }).click()
    await expect.poll(() => dialog.getByRole("button", { name: "Copied" }).count()).toBe(1)
    await expect(page.evaluate("navigator.clipboard.readText()")).resolves.toBe(secret)
    await dialog.getByRole("button", { name: "Done" }).click()
    await expect.poll(() => page.getByRole("dialog").count()).toBe(0)

    const row = page.locator("tr", { hasText: "https://93.184.215.14/hooks/leads" })
    await row.waitFor()
    await expect(row.textContent()).resolves.toMatch(/lead\.created/)
    await expect(row.textContent()).resolves.not.toMatch(/lead\.enriched/)
    await expect(row.textContent()).resolves.toMatch(/lead\.erased/)
    await expect(row.textContent()).resolves.toMatch(/Included/)
    await expect(row.textContent()).resolves.toMatch(/Active/)
    await expect.poll(() => page.content()).not.toContain(secret)
    const listed = json(await app.cli("webhook", "list", "--org", org, "--json"))
    expect(listed).toEqual([
      expect.objectContaining({
        url: "https://93.184.215.14/hooks/leads",
        events: ["lead.created", "lead.erased"],
        test_events: true,
        disabled: false
      })
    ])
  })

  it("lists the endpoint's deliveries and queues one again with Resend", async () => {
    const sent = await postLead(app.publicUrl, key, { nombre: "Carla Ruiz", telefono: "+52 33 4444 0000" })
    expect(sent.status).toBe(201)
    const row = page.locator("tr", { hasText: "https://93.184.215.14/hooks/leads" })
    await row.getByRole("button", { name: "Deliveries" }).click()
    const deliveries = page.getByRole("region", { name: /^Deliveries to / })
    const [webhook] = json(await app.cli("webhook", "list", "--org", org, "--json"))
    const [delivery] = json(await app.cli("webhook", "deliveries", "--id", webhook.id, "--json"))
    expect(delivery.type).toBe("lead.created")
    const deliveryRow = deliveries.locator(`tr[data-event-id="${delivery.event_id}"]`)
    await deliveryRow.waitFor()
    await expect(deliveryRow.textContent()).resolves.toMatch(/lead\.created/)
    await expect(deliveryRow.textContent()).resolves.toMatch(/pending|failed|delivered/)
    await deliveryRow.getByRole("button", { name: "Resend" }).click()
    await expect.poll(() => page.getByText(`Event ${delivery.event_id} queued again`).count()).toBe(1)

    await row.getByRole("button", { name: "Send test event" }).click()
    await expect.poll(() => page.getByText(/^Test event .* queued for /).count()).toBe(1)
    const queued = json(await app.cli("webhook", "deliveries", "--id", webhook.id, "--json")).filter(
      (d: { type: string }) => d.type === "webhook.test"
    )
    expect(queued).toHaveLength(1)
    const testRow = deliveries.locator(`tr[data-event-id="${queued[0].event_id}"]`)
    await testRow.waitFor()
    await expect(testRow.textContent()).resolves.toMatch(/webhook\.test/)
    await screenshot(page, "webhooks")
  })

  it("rotates the secret behind a confirmation (new secret shown once) and removes the endpoint", async () => {
    const row = page.locator("tr", { hasText: "https://93.184.215.14/hooks/leads" })
    await row.getByRole("button", { name: "Rotate secret" }).click()
    const confirm = page.getByRole("dialog", { name: "Rotate the signing secret?" })
    await confirm.getByRole("button", { name: "Confirm" }).click()
    const dialog = page.getByRole("dialog", { name: "Secret rotated" })
    const rotated = (await dialog.getByTestId("new-secret").textContent())!.trim()
    expect(rotated).toMatch(/^whsec_/)
    expect(rotated).not.toBe(secret)
    await expect(dialog.textContent()).resolves.toMatch(/24 hours/)
    await page.keyboard.press("Escape")
    await expect.poll(() => page.getByRole("dialog").count()).toBe(0)

    await row.getByRole("button", { name: "Remove" }).click()
    const removal = page.getByRole("dialog", { name: "Remove this endpoint?" })
    await removal.getByRole("button", { name: "Cancel" }).click()
    await expect(row.count()).resolves.toBe(1)
    await row.getByRole("button", { name: "Remove" }).click()
    await page
      .getByRole("dialog", { name: "Remove this endpoint?" })
      .getByRole("button", { name: "Confirm" })
      .click()
    await expect.poll(() => page.getByText("No endpoints yet").count()).toBe(1)
    expect(json(await app.cli("webhook", "list", "--org", org, "--json"))).toEqual([])
  })

  it("exports a lead as JSON and erases it behind a reason; the page says so and the Audit page lists it", async () => {
    const sent = await postLead(app.publicUrl, key, {
      nombre: "Diego Salas",
      telefono: "+52 55 7777 1212",
      email: "diego@example.com"
    })
    expect(sent.status).toBe(201)
    const leadId = sent.body.lead_id as string
    await page.goto(`/leads/${leadId}`)
    await page.getByRole("heading", { level: 1, name: "Diego Salas" }).waitFor()
    await screenshot(page, "lead-export-erase")

    const download = page.waitForEvent("download")
    await page.getByRole("button", { name: "Export" }).click()
    const file = await download
    expect(file.suggestedFilename()).toBe(`lead-${leadId}.json`)
    const exported = JSON.parse(await readFile((await file.path())!, "utf8"))
    expect(exported.lead).toMatchObject({ id: leadId, nombre: "Diego Salas", email: "diego@example.com" })
    expect(exported).toEqual(
      expect.objectContaining({ lead: expect.any(Object), requests: expect.any(Array), erasure: null })
    )

    await page.getByRole("button", { name: "Erase personal data" }).click()
    const dialog = page.getByRole("dialog", { name: "Erase this lead's personal data?" })
    await dialog.getByLabel("Reason").fill("Diego Salas asked for it")
    await dialog.getByRole("button", { name: "Confirm" }).click()
    await expect
      .poll(() => dialog.getByRole("alert").textContent())
      .toMatch(/must not contain the person's name/)
    await expect(page.getByRole("heading", { level: 1, name: "Diego Salas" }).count()).resolves.toBe(1)
    await dialog.getByLabel("Reason").fill("Data subject request #7")
    await dialog.getByRole("button", { name: "Confirm" }).click()
    await page.getByRole("heading", { level: 1, name: "Erased lead" }).waitFor()
    await expect(page.getByRole("status").filter({ hasText: "was erased on" }).count()).resolves.toBe(1)
    await expect(page.content()).resolves.not.toContain("diego@example.com")
    await expect(page.getByRole("button", { name: "Erase personal data" }).count()).resolves.toBe(0)
    await screenshot(page, "lead-erased", { fullPage: false })
    const shown = json(await app.cli("lead", "export", "--id", leadId, "--json"))
    expect(shown.lead).toMatchObject({ nombre: null, email: null, telefono: null })
    expect(shown.erasure).toMatchObject({ erased_by: admin.email, reason: "Data subject request #7" })

    await goTo(page, "Audit")
    const erasures = page.getByRole("region", { name: "Erasures" })
    await erasures.locator(`tr[data-erased-lead-id="${leadId}"]`).waitFor()
    await expect(erasures.textContent()).resolves.toContain("Data subject request #7")
    const log = page.getByRole("table", { name: "Audit log" })
    await expect(log.textContent()).resolves.toContain("lead.erase")
    await expect(log.textContent()).resolves.toContain("lead.export")
    await expect(log.textContent()).resolves.toContain("webhook.remove")
    await expect(log.textContent()).resolves.not.toContain("Diego")
  })

  it("a viewer sees the webhooks and a lead, but no button that changes them", async () => {
    const viewerContext = await newContext(browser, app)
    const viewerPage = await viewerContext.newPage()
    const viewerProblems = watchProblems(viewerPage)
    await signIn(viewerPage, viewer)
    json(await app.cli("webhook", "add", "--org", org, "--url", "https://93.184.215.14/crm", "--json"))
    await goTo(viewerPage, "Webhooks")
    const row = viewerPage.locator("tr", { hasText: "https://93.184.215.14/crm" })
    await row.waitFor()
    await expect(viewerPage.getByRole("button", { name: "New endpoint" }).count()).resolves.toBe(0)
    await expect(row.getByRole("button", { name: "Remove" }).count()).resolves.toBe(0)
    await expect(row.getByRole("button", { name: "Rotate secret" }).count()).resolves.toBe(0)
    await expect(row.getByRole("button", { name: "Send test event" }).count()).resolves.toBe(0)
    await row.getByRole("button", { name: "Deliveries" }).click()
    await viewerPage.getByRole("region", { name: /^Deliveries to / }).waitFor()
    const lead = await postLead(app.publicUrl, key, { nombre: "Eva", telefono: "+52 55 3333 9090" })
    await viewerPage.goto(`/leads/${lead.body.lead_id}`)
    await viewerPage.getByRole("heading", { level: 1, name: "Eva" }).waitFor()
    await expect(viewerPage.getByRole("button", { name: "Export" }).count()).resolves.toBe(0)
    await expect(viewerPage.getByRole("button", { name: "Erase personal data" }).count()).resolves.toBe(0)
    expect(viewerProblems).toEqual([])
    await viewerContext.close()
  })

  it("reported no script errors or CSP violations", () => {
    expect(problems).toEqual([])
  })
})
