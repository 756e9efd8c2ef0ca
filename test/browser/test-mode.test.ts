import { mkdir } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { json } from "../e2e/Processes.ts"
import {
  addOperator,
  apiFromPage,
  type ConsoleServer,
  createOrg,
  goTo,
  launchBrowser,
  newContext,
  type Operator,
  postLead,
  signIn,
  startConsole,
  watchProblems
} from "./support.ts"

/** Screenshots to look at while working on these pages; kept out of docs/console/. */
const shots = path.join(process.env.TEST_MODE_SHOTS ?? tmpdir(), "lead-intake-test-mode")
const shoot = async (page: Page, name: string, fullPage = true) => {
  await mkdir(shots, { recursive: true })
  await page.evaluate("document.getElementById('toasts')?.replaceChildren()")
  await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage })
}

const statValue = (page: Page, label: string) =>
  page.locator(".stat", { hasText: label }).locator(".stat-value").textContent()

/**
 * Test mode in the console (docs/contract.md#10-test-mode): a test key created on the origins page and shown once,
 * a lead sent with it over HTTP kept out of the default lists and the overview, shown behind the
 * "Test data" switch with its marker, then purged in one action.
 */
describe("test mode in the operator console", () => {
  let app: ConsoleServer
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let problems: Array<string>
  let operator: Operator
  let liveKey = ""
  let testKey = ""
  let testLeadId = ""
  let testRequestId = ""
  const label = "Portal de pruebas"

  beforeAll(async () => {
    app = await startConsole()
    browser = await launchBrowser()
    const org = await createOrg(app, "Inmobiliaria Sandbox")
    const agent = json(await app.cli("agent", "add", "--org", org, "--name", "Ana Agente", "--json"))
    json(await app.cli("rule", "add", "--org", org, "--agent", agent.id, "--json"))
    liveKey = json(await app.cli("origin", "create", "--org", org, "--label", label, "--json")).key
    const live = await postLead(app.publicUrl, liveKey, {
      nombre: "Lucía Real",
      telefono: "+52 55 1234 5678"
    })
    expect(live.status, JSON.stringify(live.body)).toBe(201)
    operator = await addOperator(app, { org, email: "admin@sandbox.test" })
    context = await newContext(browser, app)
    page = await context.newPage()
    problems = watchProblems(page)
    await signIn(page, operator)
  })

  afterAll(async () => {
    await browser?.close()
    await app?.stop()
  })

  it("creates a test key on the origins page: shown once, then only its prefix", async () => {
    await goTo(page, "Origins")
    const row = page.locator("tr", { hasText: label })
    await expect.poll(() => row.textContent()).toMatch(/no test key/)
    expect(await row.getByRole("button", { name: "Revoke test key" }).count()).toBe(0)
    await row.getByRole("button", { name: "Create test key" }).click()
    const dialog = page.getByRole("dialog", { name: "Test key created" })
    await dialog.waitFor()
    testKey = (await dialog.getByTestId("new-key").textContent())!.trim()
    expect(testKey).toMatch(/^lk_test_[0-9A-Za-z]{8}_[0-9A-Za-z]{38}$/)
    await expect(dialog.textContent()).resolves.toMatch(/only time the test key is shown/)
    await expect(dialog.textContent()).resolves.toMatch(/Test data switch/)
    await shoot(page, "test-key-dialog", false)
    await dialog.getByRole("button", { name: "Done" }).click()
    await expect.poll(() => page.content()).not.toContain(testKey)
    await expect.poll(() => row.textContent()).toContain(testKey.slice(0, 16))
    await expect(row.getByRole("button", { name: "Rotate test key" }).count()).resolves.toBe(1)
    await expect(row.getByRole("button", { name: "Revoke test key" }).count()).resolves.toBe(1)
    // the live key is still the one shown as the key, and still works
    await expect(row.locator("code").first().textContent()).resolves.toBe(liveKey.slice(0, 16))
    await shoot(page, "origins-with-test-key")
  })

  it("a lead sent with the test key is absent from the default leads list and the overview's figures", async () => {
    const sent = await postLead(app.publicUrl, testKey, {
      nombre: "Prueba Integración",
      telefono: "+52 55 1234 5678",
      email: "qa@partner.test"
    })
    expect(sent.status, JSON.stringify(sent.body)).toBe(201)
    expect(sent.body.status).toBe("created")
    testLeadId = sent.body.lead_id
    testRequestId = sent.body.request_id

    await goTo(page, "Overview")
    await expect.poll(() => statValue(page, "Leads created, 30 days")).toBe("1")
    await expect(statValue(page, "Requests, 24 h")).resolves.toBe("1")
    await shoot(page, "overview-live-only")

    await goTo(page, "Leads")
    const testSwitch = page.getByRole("switch", { name: "Test data" })
    await expect(testSwitch.getAttribute("aria-checked")).resolves.toBe("false")
    await page.locator("tr", { hasText: "Lucía Real" }).waitFor()
    await expect(page.content()).resolves.not.toContain("Prueba Integración")
    await expect(page.locator(".badge.test, .test-banner").count()).resolves.toBe(0)
    await shoot(page, "leads-live-default")
  })

  it("the switch (keyboard, kept in the URL across a reload) shows the test lead, marked", async () => {
    const testSwitch = page.getByRole("switch", { name: "Test data" })
    await testSwitch.focus()
    await page.keyboard.press("Space")
    await expect.poll(() => new URL(page.url()).searchParams.get("test")).toBe("true")
    await expect
      .poll(() => page.getByRole("switch", { name: "Test data" }).getAttribute("aria-checked"))
      .toBe("true")
    await expect
      .poll(() => page.evaluate("document.activeElement?.getAttribute('role')"), {
        message: "focus stays on the switch"
      })
      .toBe("switch")
    const row = page.locator("tr", { hasText: "Prueba Integración" })
    await row.waitFor()
    await expect(row.textContent()).resolves.toMatch(/TEST/)
    await expect(page.content()).resolves.not.toContain("Lucía Real")
    await expect(page.getByRole("note", { name: "Test data" }).textContent()).resolves.toMatch(/TEST DATA/)

    await page.reload()
    await page.getByRole("heading", { level: 1, name: "Leads" }).waitFor()
    await expect
      .poll(() => page.getByRole("switch", { name: "Test data" }).getAttribute("aria-checked"))
      .toBe("true")
    await page.locator("tr", { hasText: "Prueba Integración" }).waitFor()
    // the search keeps the switch: a phone in another spelling finds the test lead, not the live one
    await page.getByLabel("Phone, name or e-mail").fill("55-1234-5678")
    await page.getByRole("button", { name: "Search" }).click()
    await expect.poll(() => new URL(page.url()).searchParams.get("q")).toBe("55-1234-5678")
    expect(new URL(page.url()).searchParams.get("test")).toBe("true")
    await page.locator("tr", { hasText: "Prueba Integración" }).waitFor()
    await expect(page.content()).resolves.not.toContain("Lucía Real")
    await shoot(page, "leads-test-data")

    await page.locator("tr", { hasText: "Prueba Integración" }).getByRole("link").click()
    const heading = page.getByRole("heading", { level: 1 })
    await expect.poll(() => heading.textContent()).toMatch(/Prueba Integración.*TEST DATA/)
    await expect(page.getByRole("note", { name: "Test data" }).textContent()).resolves.toMatch(
      /never assigned/
    )
    await shoot(page, "test-lead")
  })

  it("the request log marks test requests and shows them only with the switch on", async () => {
    await goTo(page, "Requests")
    await expect
      .poll(() => page.getByRole("switch", { name: "Test data" }).getAttribute("aria-checked"))
      .toBe("false")
    await page.locator("tr.clickable").first().waitFor()
    await expect(page.locator(`tr[data-request-id="${testRequestId}"]`).count()).resolves.toBe(0)
    await page.getByRole("switch", { name: "Test data" }).click()
    await expect.poll(() => new URL(page.url()).searchParams.get("test")).toBe("true")
    const row = page.locator(`tr[data-request-id="${testRequestId}"]`)
    await row.waitFor()
    await expect(row.textContent()).resolves.toMatch(/TEST/)
    await expect(page.locator("tr.clickable").count()).resolves.toBe(1)
    await shoot(page, "requests-test-data")
    await row.getByRole("button", { name: `Request ${testRequestId}, details` }).click()
    const detail = page.getByRole("dialog", { name: "Request" })
    await expect.poll(() => detail.textContent()).toMatch(/TEST DATA made with a test key/)
    await detail.getByRole("button", { name: "Close" }).click()
  })

  it("purges the test data in one action, after a confirmation naming what goes", async () => {
    await page.goto("/leads?test=true")
    await page.locator("tr", { hasText: "Prueba Integración" }).waitFor()
    await page.getByRole("button", { name: "Purge test data" }).click()
    const dialog = page.getByRole("dialog", { name: "Purge this organization's test data?" })
    await dialog.waitFor()
    const text = await dialog.textContent()
    for (const part of [
      "every test lead",
      "notes, tasks and events",
      "webhook deliveries",
      "idempotency records"
    ])
      expect(text).toContain(part)
    expect(text).toMatch(/request log keeps its rows/)
    await shoot(page, "purge-dialog", false)
    // cancelling changes nothing
    await dialog.getByRole("button", { name: "Cancel" }).click()
    await expect.poll(() => page.getByRole("dialog").count()).toBe(0)
    await expect(page.locator("tr", { hasText: "Prueba Integración" }).count()).resolves.toBe(1)

    await page.getByRole("button", { name: "Purge test data" }).click()
    await page.getByRole("dialog").getByRole("button", { name: "Purge test data" }).click()
    await expect.poll(() => page.locator(".purge-status").textContent()).toMatch(/^Purged 1 test lead with/)
    await expect.poll(() => page.locator("tr", { hasText: "Prueba Integración" }).count()).toBe(0)
    await expect(page.getByText("No test leads.").count()).resolves.toBe(1)
    await shoot(page, "leads-after-purge")

    await page.goto(`/leads/${testLeadId}`)
    await page.getByRole("heading", { level: 1, name: "Lead not found" }).waitFor()
    await page.goto("/leads")
    await page.locator("tr", { hasText: "Lucía Real" }).waitFor()
    await page.goto("/requests?test=true")
    await page.locator(`tr[data-request-id="${testRequestId}"]`).waitFor()

    const audit = (await apiFromPage(page, "GET", "/api/audit")).body as {
      items: ReadonlyArray<{ action: string; target: string }>
    }
    expect(audit.items.map((entry) => entry.action)).toEqual(
      expect.arrayContaining(["key.test_rotated", "test_data.purged"])
    )
    expect(JSON.stringify(audit)).not.toContain(testKey)
    // the test key itself stays: a partner keeps testing after a purge
    expect((await postLead(app.publicUrl, testKey, { nombre: "Otra prueba" })).status).toBe(201)
    expect(problems).toEqual([])
  })
})
