import { readFile } from "node:fs/promises"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { json } from "../e2e/Processes.ts"
import { type Receiver, startReceiver } from "../webhooks/support.ts"
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
    await expect.poll(() => form.getByRole("alert").textContent()).toMatch(/This URL is not accepted/)
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
      .toMatch(/without the person's personal data/)
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
    await expect(log.textContent()).resolves.toContain("Lead erased")
    await expect(log.textContent()).resolves.toContain("Lead exported")
    await expect(log.textContent()).resolves.toContain("Webhook endpoint removed")
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

/** An instant's wall-clock time in a zone, as a `datetime-local` input takes it. */
const wallClock = (ms: number, timeZone: string) => {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-CA", {
      timeZone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23"
    })
      .formatToParts(new Date(ms))
      .map((part) => [part.type, part.value])
  )
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}`
}

/**
 * An endpoint whose receiver refuses (127.0.0.1 only, so the delivery worker runs and never dials
 * out): the console shows each failure's error and attempts, the endpoint failing and then paused
 * after a short WEBHOOK_DISABLE_AFTER, the overview's link to it, Resume, and "Resend failed since".
 */
describe("an endpoint that keeps failing, in the console", () => {
  let app: ConsoleServer
  let receiver: Receiver
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let problems: Array<string>
  let org: string
  let viewer: Operator
  let key = ""
  let webhookId = ""
  let failingSince = 0
  const started = Date.now()
  const disableAfterMillis = 3000

  const deliveries = async () => json(await app.cli("webhook", "deliveries", "--id", webhookId, "--json"))
  const endpoint = async () =>
    json(await app.cli("webhook", "list", "--org", org, "--json")).find(
      (w: { id: string }) => w.id === webhookId
    )

  beforeAll(async () => {
    receiver = await startReceiver(() => ({ status: 503 }))
    app = await startConsole({
      WEBHOOK_WORKER: "true",
      WEBHOOK_ALLOW_PRIVATE: "true",
      WEBHOOK_RETRY_SCHEDULE: "200ms,200ms",
      WEBHOOK_DISABLE_AFTER: `${disableAfterMillis}ms`,
      WEBHOOK_POLL_INTERVAL: "200ms"
    })
    browser = await launchBrowser()
    org = await createOrg(app, "Casas del Bajío")
    key = json(await app.cli("origin", "create", "--org", org, "--label", "Portal", "--json")).key
    const admin = await addOperator(app, { org, email: "admin@bajio.test" })
    viewer = await addOperator(app, { org, email: "viewer@bajio.test", role: "viewer" })
    context = await newContext(browser, app)
    page = await context.newPage()
    problems = watchProblems(page)
    await signIn(page, admin)
  })

  afterAll(async () => {
    await browser?.close()
    await app?.stop()
    await receiver?.close()
  })

  it("shows each failed delivery's error, and its attempts with time, HTTP status, error and duration", async () => {
    await goTo(page, "Webhooks")
    await page.getByRole("button", { name: "New endpoint" }).click()
    const form = page.getByRole("dialog", { name: "New webhook endpoint" })
    await form.getByLabel("URL").fill(receiver.url("/crm"))
    await form.getByRole("button", { name: "Add endpoint" }).click()
    await page.getByRole("dialog", { name: "Endpoint added" }).getByRole("button", { name: "Done" }).click()
    webhookId = json(await app.cli("webhook", "list", "--org", org, "--json"))[0].id

    expect(
      (await postLead(app.publicUrl, key, { nombre: "Inés Treviño", telefono: "+52 442 555 0101" })).status
    ).toBe(201)
    await expect.poll(async () => (await deliveries())[0]?.state, { timeout: 45_000 }).toBe("failed")
    const [failed] = await deliveries()
    expect(failed).toMatchObject({ attempts: 3, last_status: 503, last_error: "HTTP 503" })
    expect(receiver.received.length).toBe(3)

    await page.reload()
    const row = page.locator(`tr[data-webhook-id="${webhookId}"]`)
    await row.waitFor()
    await expect(row.textContent()).resolves.toMatch(/Failing\s*since /)
    await expect(row.textContent()).resolves.toContain("Last error: The receiver answered 503")
    await expect(row.getByRole("button", { name: "Resume" }).count()).resolves.toBe(0)

    await row.getByRole("button", { name: "Deliveries" }).click()
    const region = page.getByRole("region", { name: /^Deliveries to / })
    const deliveryRow = region.locator(`tr[data-event-id="${failed.event_id}"]`)
    await deliveryRow.waitFor()
    await expect(deliveryRow.textContent()).resolves.toMatch(/failed/)
    await expect(deliveryRow.textContent()).resolves.toContain("The receiver answered 503")
    await deliveryRow.getByRole("button", { name: `Attempts of ${failed.event_id}` }).click()
    const dialog = page.getByRole("dialog", { name: "Delivery attempts" })
    await dialog.waitFor()
    const attempts = json(
      await app.cli("webhook", "attempts", "--id", webhookId, "--event", failed.event_id, "--json")
    )
    expect(attempts).toHaveLength(3)
    failingSince = Date.parse(attempts[0].at)
    const shown = dialog.locator("tbody tr")
    await expect(shown.count()).resolves.toBe(3)
    for (const [index, attempt] of attempts.entries()) {
      const cells = await shown.nth(index).locator("td").allTextContents()
      expect(cells[0]).not.toBe("")
      expect(cells.slice(1)).toEqual(["503", "The receiver answered 503", `${attempt.duration_ms} ms`])
      await expect(shown.nth(index).locator("time").getAttribute("datetime")).resolves.toBe(attempt.at)
    }
    await screenshot(page, "webhook-attempts", { fullPage: false })
    await dialog.getByRole("button", { name: "Close" }).click()
    await expect.poll(() => page.getByRole("dialog").count()).toBe(0)
  })

  it("pauses the endpoint after WEBHOOK_DISABLE_AFTER without a success; the overview links to it", async () => {
    await page.waitForTimeout(Math.max(0, failingSince + disableAfterMillis + 500 - Date.now()))
    expect(
      (await postLead(app.publicUrl, key, { nombre: "Óscar Luján", telefono: "+52 442 555 0202" })).status
    ).toBe(201)
    await expect.poll(async () => (await endpoint()).disabled_reason, { timeout: 45_000 }).toBe("failing")
    expect((await endpoint()).disabled).toBe(true)
    const waiting = (await deliveries()).find((d: { state: string }) => d.state === "pending")
    expect(waiting).toBeDefined()

    await goTo(page, "Overview")
    const alerts = page.getByRole("region", { name: "Webhooks that need attention" })
    await alerts.waitFor()
    await expect(alerts.textContent()).resolves.toMatch(/Paused automaticallyon /)
    await expect(alerts.textContent()).resolves.toContain("The receiver answered 503")
    await screenshot(page, "overview-webhook-alerts", { fullPage: false })
    await alerts.getByRole("link", { name: receiver.url("/crm") }).click()
    await page.waitForURL(new RegExp(`/webhooks\\?endpoint=${webhookId}$`))
    const row = page.locator(`tr[data-webhook-id="${webhookId}"]`)
    await row.waitFor()
    await expect(row.getAttribute("class")).resolves.toMatch(/selected/)
    await expect(row.textContent()).resolves.toContain("Paused automatically")
    await expect(row.textContent()).resolves.toMatch(/No successful attempt since .+\./)
    await expect(row.textContent()).resolves.toContain("Last error: The receiver answered 503")
    const waitingRow = page
      .getByRole("region", { name: /^Deliveries to / })
      .locator(`tr[data-event-id="${waiting.event_id}"]`)
    await waitingRow.waitFor()
    await expect(waitingRow.textContent()).resolves.toContain("waits for Resume")
    await screenshot(page, "webhook-paused")
  })

  it("a viewer sees the state and the errors, but neither Resume nor Resend failed", async () => {
    const viewerContext = await newContext(browser, app)
    const viewerPage = await viewerContext.newPage()
    const viewerProblems = watchProblems(viewerPage)
    await signIn(viewerPage, viewer)
    await expect
      .poll(() => viewerPage.getByRole("region", { name: "Webhooks that need attention" }).count())
      .toBe(1)
    await goTo(viewerPage, "Webhooks")
    const row = viewerPage.locator(`tr[data-webhook-id="${webhookId}"]`)
    await row.waitFor()
    await expect(row.textContent()).resolves.toContain("Paused automatically")
    await expect(row.getByRole("button", { name: "Resume" }).count()).resolves.toBe(0)
    await expect(row.getByRole("button", { name: "Resend failed…" }).count()).resolves.toBe(0)
    await row.getByRole("button", { name: "Deliveries" }).click()
    const region = viewerPage.getByRole("region", { name: /^Deliveries to / })
    await region.locator("tr[data-event-id]").first().waitFor()
    await expect(region.textContent()).resolves.toContain("The receiver answered 503")
    await expect(region.getByRole("button", { name: /^Attempts of / }).count()).resolves.toBeGreaterThan(0)
    await expect(region.getByRole("button", { name: /^Resend / }).count()).resolves.toBe(0)
    expect(viewerProblems).toEqual([])
    await viewerContext.close()
  })

  it("resumes the endpoint (its waiting delivery goes out) and resends the failed ones since a time in the organization's zone", async () => {
    receiver.answer = () => ({ status: 204 })
    const row = page.locator(`tr[data-webhook-id="${webhookId}"]`)
    await row.getByRole("button", { name: "Resume" }).click()
    await page
      .getByRole("dialog", { name: "Resume this endpoint?" })
      .getByRole("button", { name: "Resume" })
      .click()
    await expect.poll(() => page.getByText(/resumed; its waiting deliveries are sent again/).count()).toBe(1)
    await expect.poll(() => row.textContent()).toMatch(/Active/)
    expect(await endpoint()).toMatchObject({ disabled: false, disabled_reason: null })
    await expect
      .poll(async () => (await deliveries()).map((d: { state: string }) => d.state).sort(), {
        timeout: 45_000
      })
      .toEqual(["delivered", "failed"])

    // Ten minutes before the test began, as the organization's clock (Mexico City) reads it.
    const sinceMinute = Math.floor((started - 600_000) / 60_000) * 60_000
    await row.getByRole("button", { name: "Resend failed…" }).click()
    const dialog = page.getByRole("dialog", { name: "Resend failed deliveries" })
    await expect(dialog.getByLabel("Since").inputValue()).resolves.toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/)
    await expect(dialog.textContent()).resolves.toMatch(/In the organization's time zone \(GMT-6\)/)
    await dialog.getByLabel("Since").fill(wallClock(sinceMinute, "America/Mexico_City"))
    await dialog.getByRole("button", { name: "Queue again" }).click()
    await expect
      .poll(() => page.getByText(`1 failed delivery to ${receiver.url("/crm")} queued again.`).count())
      .toBe(1)
    await expect
      .poll(async () => (await deliveries()).map((d: { state: string }) => d.state), { timeout: 45_000 })
      .toEqual(["delivered", "delivered"])

    await goTo(page, "Audit")
    const log = page.getByRole("table", { name: "Audit log" })
    await expect
      .poll(() => log.textContent())
      .toContain(`webhook ${webhookId} since ${new Date(sinceMinute).toISOString()}: 1 queued`)
    await expect(log.textContent()).resolves.toContain("Webhook endpoint paused automatically")
    await goTo(page, "Overview")
    await page.locator("main .stats").waitFor()
    await expect(page.getByRole("region", { name: "Webhooks that need attention" }).count()).resolves.toBe(0)
    expect(problems).toEqual([])
  })

  it("an admin disables the endpoint after confirming: Disabled by an operator, nothing sent, until Enable", async () => {
    await goTo(page, "Webhooks")
    const row = page.locator(`tr[data-webhook-id="${webhookId}"]`)
    await row.getByRole("button", { name: "Disable", exact: true }).click()
    const confirm = page.getByRole("dialog", { name: "Disable this endpoint?" })
    await expect(confirm.textContent()).resolves.toContain("wait for it")
    await confirm.getByRole("button", { name: "Disable", exact: true }).click()
    await expect.poll(() => row.textContent()).toMatch(/Disabled by an operator/)
    expect(await endpoint()).toMatchObject({ disabled: true, disabled_reason: "operator" })
    await expect(row.getByRole("button", { name: "Disable", exact: true }).count()).resolves.toBe(0)

    const sent = receiver.received.length
    expect(
      (await postLead(app.publicUrl, key, { nombre: "Ofelia Ruiz", telefono: "+52 442 555 0199" })).status
    ).toBe(201)
    await expect.poll(async () => (await deliveries()).length).toBe(3)
    expect((await deliveries())[0]).toMatchObject({ state: "pending", attempts: 0 })

    await row.getByRole("button", { name: "Enable" }).click()
    await page
      .getByRole("dialog", { name: "Enable this endpoint?" })
      .getByRole("button", { name: "Enable" })
      .click()
    await expect.poll(() => row.textContent()).toMatch(/Active/)
    await expect.poll(() => receiver.received.length, { timeout: 45_000 }).toBe(sent + 1)
    expect(await endpoint()).toMatchObject({ disabled: false, disabled_reason: null })
    expect(problems).toEqual([])
  })
})
