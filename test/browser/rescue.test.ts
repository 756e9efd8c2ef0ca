import { mkdir } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { json } from "../e2e/Processes.ts"
import {
  addOperator,
  type ConsoleServer,
  createOrg,
  launchBrowser,
  type Operator,
  postLead,
  signIn,
  startConsole,
  watchProblems
} from "./support.ts"

/** Screenshots to look at while working on these views; kept out of docs/console/. */
const shots = path.join(process.env.RESCUE_SHOTS ?? tmpdir(), "lead-intake-rescue")
const shoot = async (page: Page, name: string) => {
  await mkdir(shots, { recursive: true })
  await page.evaluate("document.getElementById('toasts')?.replaceChildren()")
  await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true })
}

/**
 * A rejected lead rescued in the console (docs/contract.md#11-rejected-leads-are-kept-for-rescue): a
 * partner's form sends a nine-digit phone (400); the overview counts it and links to the requests
 * kept for rescue; the admin opens it, sees the body as received, fixes the phone (the form refuses
 * the still-wrong body itself) and rescues it: the lead exists. A viewer sees it kept, never the body.
 */
describe("rescuing a rejected lead in the operator console", () => {
  let app: ConsoleServer
  let browser: Browser
  let org = ""
  let admin: Operator
  let viewer: Operator
  let requestId = ""
  const nineDigits = { nombre: "Rosa Rescate", telefono: "55 1234 567", mensaje: "Quiero visitar el sábado" }

  beforeAll(async () => {
    app = await startConsole()
    browser = await launchBrowser()
    org = await createOrg(app, "Inmobiliaria Rescate")
    const key = json(await app.cli("origin", "create", "--org", org, "--label", "Portal web", "--json")).key
    const rejected = await postLead(app.publicUrl, key, nineDigits)
    expect([rejected.status, rejected.body.error.field]).toEqual([400, "telefono"])
    requestId = rejected.body.request_id
    admin = await addOperator(app, { org, email: "admin@rescate.test" })
    viewer = await addOperator(app, { org, email: "viewer@rescate.test", role: "viewer" })
  })

  afterAll(async () => {
    await browser?.close()
    await app?.stop()
  })

  it("overview count, filter, open, fix the phone, rescue: the lead exists", async () => {
    const context = await browser.newContext({
      baseURL: app.adminUrl,
      viewport: { width: 1280, height: 860 },
      locale: "en-GB",
      timezoneId: "UTC"
    })
    const page = await context.newPage()
    const problems = watchProblems(page)
    await signIn(page, admin)

    const waiting = page.getByRole("link", { name: "1 kept for rescue" })
    await waiting.waitFor()
    await shoot(page, "overview-en-1280")
    await waiting.click()
    await page.getByRole("heading", { level: 1, name: "Requests" }).waitFor()
    expect(new URL(page.url()).searchParams.get("kept")).toBe("true")
    await expect.poll(() => page.getByLabel("Kept for rescue only").isChecked()).toBe(true)
    const row = page.locator(`tr[data-request-id="${requestId}"]`)
    await expect.poll(() => row.textContent()).toContain("Kept for rescue")
    await expect.poll(() => page.locator("tr[data-request-id]").count()).toBe(1)
    await shoot(page, "requests-kept-en-1280")

    await row.getByRole("button", { name: `Request ${requestId}, details` }).click()
    const dialog = page.getByRole("dialog")
    const editor = dialog.getByLabel("Corrected body (JSON)")
    await editor.waitFor()
    expect(await dialog.locator("pre.kept-body").textContent()).toBe(JSON.stringify(nineDigits))
    await shoot(page, "detail-en-1280")

    // Still nine digits: the form says so with the contract's own words, and sends nothing.
    await dialog.getByRole("button", { name: "Rescue lead" }).click()
    await expect
      .poll(() => dialog.getByRole("alert").textContent())
      .toMatch(/^Still not valid: Enter a phone number with at least 10 digits/)
    expect(await editor.getAttribute("aria-invalid")).toBe("true")
    await shoot(page, "detail-invalid-en-1280")

    await editor.fill(JSON.stringify({ ...nineDigits, telefono: "55 1234 5670" }))
    await dialog.getByRole("button", { name: "Rescue lead" }).click()
    const openLead = dialog.getByRole("link", { name: "Open lead" })
    await openLead.waitFor()
    expect(await dialog.textContent()).toContain("Lead created from the corrected body.")
    await shoot(page, "rescued-en-1280")
    await openLead.click()
    await page.getByRole("heading", { level: 1, name: "Rosa Rescate" }).waitFor()

    const leads = json(await app.cli("lead", "list", "--org", org, "--json"))
    expect(leads).toEqual([expect.objectContaining({ nombre: "Rosa Rescate", telefono: "55 1234 5670" })])
    const shown = json(await app.cli("request", "show", "--id", requestId, "--json"))
    expect(shown).toMatchObject({ body: null, rescued_lead_id: leads[0].id })
    expect(problems).toEqual([])
    await context.close()
  })

  it("a viewer sees a request kept, never its body", async () => {
    const key = json(await app.cli("origin", "create", "--org", org, "--label", "Portal dos", "--json")).key
    const rejected = await postLead(app.publicUrl, key, { ...nineDigits, nombre: "Otra Persona" })
    const context = await browser.newContext({ baseURL: app.adminUrl, locale: "en-GB", timezoneId: "UTC" })
    const page = await context.newPage()
    await signIn(page, viewer)
    await page.goto("/requests?kept=true")
    const row = page.locator(`tr[data-request-id="${rejected.body.request_id}"]`)
    await row.getByRole("button", { name: /details/ }).click()
    const dialog = page.getByRole("dialog")
    await dialog.getByText("Only admins see the body kept for rescue.").waitFor()
    expect(await dialog.textContent()).not.toContain("Otra Persona")
    expect(await dialog.locator("textarea").count()).toBe(0)
    await context.close()
  })

  it("the same views in Spanish and at 375 px (screenshots to look at)", async () => {
    const key = json(await app.cli("origin", "create", "--org", org, "--label", "Portal tres", "--json")).key
    const rejected = await postLead(app.publicUrl, key, { ...nineDigits, nombre: "Tercera Persona" })
    for (const [language, locale] of [
      ["es", "es-MX"],
      ["en", "en-GB"]
    ] as const) {
      for (const width of [1280, 375]) {
        const context = await browser.newContext({
          baseURL: app.adminUrl,
          viewport: { width, height: 860 },
          locale,
          timezoneId: "America/Mexico_City"
        })
        const page = await context.newPage()
        const problems = watchProblems(page)
        await page.goto("/login")
        await page.locator("input[type=email]").fill(admin.email)
        await page.locator("input[type=password]").fill(admin.password)
        await page.locator("button[type=submit]").click()
        await page.locator(".stat").first().waitFor()
        await shoot(page, `overview-${language}-${width}`)
        await page.goto("/requests?kept=true")
        const row = page.locator(`tr[data-request-id="${rejected.body.request_id}"]`)
        await row.waitFor()
        await shoot(page, `requests-kept-${language}-${width}`)
        await row.locator("button.link").click()
        await page.getByRole("dialog").locator("textarea").waitFor()
        await shoot(page, `detail-${language}-${width}`)
        if (language === "es") {
          expect(await page.getByRole("dialog").textContent()).toContain("Cuerpo corregido (JSON)")
          expect(await page.locator("html").getAttribute("lang")).toBe("es-MX")
        }
        expect(problems).toEqual([])
        await context.close()
      }
    }
  })
})
