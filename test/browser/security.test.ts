import type { Browser } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { generateApiKey } from "../../src/Domain/ApiKey.ts"
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
  screenshot,
  signIn,
  startConsole,
  watchProblems
} from "./support.ts"

/** Tenancy, viewers, CSRF, headers, keyboard-only use and a 375 px phone, in a real Chromium. */
describe("the operator console keeps organizations apart and works for everyone", () => {
  let app: ConsoleServer
  let browser: Browser
  let orgA: string
  let orgB: string
  let adminA: Operator
  let viewerA: Operator
  let platform: Operator
  let originB: { id: string; key: string; label: string }
  let leadB: string
  let originA: { id: string; key: string }

  beforeAll(async () => {
    app = await startConsole()
    browser = await launchBrowser()
    orgA = await createOrg(app, "Alfa Propiedades")
    orgB = await createOrg(app, "Beta Realty")
    originA = json(await app.cli("origin", "create", "--org", orgA, "--label", "Alfa web", "--json"))
    originB = json(
      await app.cli("origin", "create", "--org", orgB, "--label", "Beta secret channel", "--json")
    )
    const sentA = await postLead(app.publicUrl, originA.key, {
      nombre: "Alfa Lead",
      telefono: "+52 55 3000 0001"
    })
    expect(sentA.status).toBe(201)
    const sentB = await postLead(app.publicUrl, originB.key, {
      nombre: "Beta Lead",
      telefono: "+52 55 4000 0001"
    })
    expect(sentB.status).toBe(201)
    leadB = sentB.body.lead_id
    adminA = await addOperator(app, { org: orgA, email: "admin@alfa.test" })
    viewerA = await addOperator(app, { org: orgA, email: "viewer@alfa.test", role: "viewer" })
    platform = await addOperator(app, { email: "root@platform.test" })
  })

  afterAll(async () => {
    await browser?.close()
    await app?.stop()
  })

  const signedIn = async (operator: Operator, options: { width?: number; height?: number } = {}) => {
    const context = await newContext(browser, app, options)
    const page = await context.newPage()
    const problems = watchProblems(page)
    await signIn(page, operator)
    return { context, page, problems }
  }

  it("an operator of one organization sees none of another's origins, leads or requests, even by URL", async () => {
    const { context, page, problems } = await signedIn(adminA)
    await goTo(page, "Origins")
    await page.locator("tr", { hasText: "Alfa web" }).waitFor()
    await expect(page.content()).resolves.not.toContain("Beta secret channel")

    await page.goto(`/leads/${leadB}`)
    await page.getByRole("heading", { level: 1, name: "Lead not found" }).waitFor()
    await expect(page.content()).resolves.not.toContain("Beta Lead")

    await page.goto(`/requests?origin=${originB.id}`)
    await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/not found/i)
    await expect(page.locator("tbody tr[data-request-id]").count()).resolves.toBe(0)

    await goTo(page, "Leads")
    await page.getByLabel("Phone, name or e-mail").fill("Beta Lead")
    await page.getByRole("button", { name: "Search" }).click()
    await expect.poll(() => page.locator("tbody tr.empty-row").count()).toBe(1)

    // the API answers 404 for every id of the other organization, changes included
    for (const [method, url, body] of [
      ["GET", `/api/leads/${leadB}`, undefined],
      ["POST", `/api/origins/${originB.id}/revoke`, {}],
      ["POST", `/api/origins/${originB.id}/rotate`, {}],
      ["PATCH", `/api/origins/${originB.id}`, { rate_limit: 1 }],
      ["GET", `/api/requests?origin=${originB.id}`, undefined],
      ["GET", `/api/leads?org=${orgB}&q=Beta`, undefined]
    ] as const) {
      const answer = await apiFromPage(page, method, url, { body })
      if (url.includes("org=")) {
        // `org` is ignored (or refused) for an organization's own operators: never B's data
        expect(JSON.stringify(answer.body)).not.toContain("Beta Lead")
      } else {
        expect(answer.status, `${method} ${url}`).toBe(404)
      }
    }
    // B's key still works: nothing above touched it
    expect(
      (await postLead(app.publicUrl, originB.key, { nombre: "Beta Lead", telefono: "+52 55 4000 0001" }))
        .status
    ).toBe(200)
    expect(problems).toEqual([])
    await context.close()
  })

  it("a platform administrator switches organization with the switcher", async () => {
    const { context, page } = await signedIn(platform)
    const switcher = page.getByLabel("Organization")
    await goTo(page, "Origins")
    await switcher.selectOption({ label: "Alfa Propiedades" })
    await page.locator("tr", { hasText: "Alfa web" }).waitFor()
    await switcher.selectOption({ label: "Beta Realty" })
    await page.locator("tr", { hasText: "Beta secret channel" }).waitFor()
    await expect(page.content()).resolves.not.toContain("Alfa web")

    // a well-formed key of no origin is logged unattributed: only platform administrators see those rows
    const stranger = generateApiKey()
    const refused = await postLead(app.publicUrl, stranger.key, { nombre: "X", telefono: "+52 55 5000 0001" })
    expect(refused.status).toBe(401)
    await goTo(page, "Requests")
    await page.getByLabel("Origin").selectOption({ label: "Unattributed prefixes" })
    await page.getByRole("button", { name: "Apply filters" }).click()
    const row = page.locator(`tr[data-request-id="${refused.body.request_id}"]`)
    await row.waitFor({ timeout: 15_000 })
    await expect(row.textContent()).resolves.toContain(stranger.prefix)
    await expect(row.textContent()).resolves.toContain("Unattributed")
    await context.close()
  })

  it("a viewer sees everything of its organization but has no buttons that change, and the API refuses", async () => {
    const { context, page } = await signedIn(viewerA)
    await goTo(page, "Origins")
    await page.locator("tr", { hasText: "Alfa web" }).waitFor()
    for (const name of ["New origin", "Rotate key", "Revoke key", "Change rate limit"]) {
      await expect(page.getByRole("button", { name }).count(), name).resolves.toBe(0)
    }
    await expect(page.getByText("You have read-only access").count()).resolves.toBe(1)
    await screenshot(page, "viewer-origins")
    await goTo(page, "Catalog")
    await expect(page.getByRole("button", { name: "Add property" }).count()).resolves.toBe(0)
    await goTo(page, "Capture")
    await expect(page.getByRole("button", { name: "Add agent" }).count()).resolves.toBe(0)
    await expect(page.getByRole("button", { name: "Add rule" }).count()).resolves.toBe(0)

    for (const [method, url, body] of [
      ["POST", "/api/origins", { label: "Sneaky" }],
      ["POST", `/api/origins/${originA.id}/revoke`, {}],
      ["POST", `/api/origins/${originA.id}/rotate`, {}],
      ["PATCH", `/api/origins/${originA.id}`, { rate_limit: 1 }],
      ["POST", "/api/properties", { codigo: "VIE-0001" }],
      ["POST", "/api/agents", { name: "Sneaky" }]
    ] as const) {
      const answer = await apiFromPage(page, method, url, { body })
      expect(answer.status, `${method} ${url}`).toBe(403)
      expect(answer.body).toMatchObject({ error: { code: "forbidden" } })
    }
    expect(
      (await postLead(app.publicUrl, originA.key, { nombre: "Alfa Lead", telefono: "+52 55 3000 0001" }))
        .status
    ).toBe(200)
    await context.close()
  })

  it("a state change without the CSRF header is refused; the same call with it succeeds", async () => {
    const { context, page } = await signedIn(adminA)
    const without = await apiFromPage(page, "POST", "/api/origins", {
      body: { label: "No token" },
      csrf: false
    })
    expect(without.status).toBe(403)
    expect(without.body).toMatchObject({ error: { code: "csrf_failed" } })
    const wrong = await page.evaluate(() =>
      fetch("/api/origins", {
        method: "POST",
        headers: { "content-type": "application/json", "x-csrf-token": "forged" },
        body: JSON.stringify({ label: "Forged" })
      }).then((response) => response.status)
    )
    expect(wrong).toBe(403)
    const origins = await apiFromPage(page, "GET", "/api/origins")
    expect(JSON.stringify(origins.body)).not.toMatch(/No token|Forged/)
    const withHeader = await apiFromPage(page, "POST", "/api/origins", { body: { label: "With token" } })
    expect(withHeader.status).toBe(201)
    await context.close()
  })

  it("pages carry a nonce CSP, frame-ancestors 'none', no-store, and load nothing from another host", async () => {
    const { context, page, problems } = await signedIn(adminA)
    const requested: Array<string> = []
    page.on("request", (request) => requested.push(request.url()))
    const response = await page.goto("/origins")
    const headers = response!.headers()
    const csp = headers["content-security-policy"] ?? ""
    const nonce = /'nonce-([^']+)'/.exec(csp)?.[1]
    expect(nonce).toBeTruthy()
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).not.toContain("unsafe-inline")
    expect(headers["cache-control"]).toContain("no-store")
    expect(headers["access-control-allow-origin"]).toBeUndefined()
    const html = await response!.text()
    expect(html).toContain(`nonce="${nonce}"`)
    expect(html).not.toContain("{{nonce}}")
    await page.locator("tr", { hasText: "Alfa web" }).waitFor()
    for (const url of requested) expect(new URL(url).origin).toBe(app.adminUrl)
    const second = await page.request.get("/origins")
    expect(/'nonce-([^']+)'/.exec(second.headers()["content-security-policy"] ?? "")?.[1]).not.toBe(nonce)
    expect(problems).toEqual([])
    await context.close()
  })

  it("a lost session sends the operator back to sign in, then to the page they wanted", async () => {
    const { context, page } = await signedIn(adminA)
    await goTo(page, "Catalog")
    await context.clearCookies()
    await page
      .getByRole("navigation", { name: "Primary" })
      .getByRole("link", { name: "Leads", exact: true })
      .click()
    await page.getByRole("heading", { level: 1, name: "Sign in to the console" }).waitFor()
    await expect.poll(() => new URL(page.url()).pathname).toBe("/login")
    await page.getByLabel("Email").fill(adminA.email)
    await page.getByLabel("Password").fill(adminA.password)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("heading", { level: 1, name: "Leads" }).waitFor()
    await context.close()
  })

  it("signing out everywhere ends the operator's other sessions too", async () => {
    const first = await signedIn(viewerA)
    const second = await signedIn(viewerA)
    await expect(
      apiFromPage(second.page, "GET", "/api/origins").then((answer) => answer.status)
    ).resolves.toBe(200)
    await first.page.getByRole("button", { name: "Sign out everywhere" }).click()
    await first.page.getByRole("heading", { level: 1, name: "Sign in to the console" }).waitFor()
    await expect(
      apiFromPage(second.page, "GET", "/api/origins").then((answer) => answer.status)
    ).resolves.toBe(401)
    await second.page
      .getByRole("navigation", { name: "Primary" })
      .getByRole("link", { name: "Leads", exact: true })
      .click()
    await second.page.getByRole("heading", { level: 1, name: "Sign in to the console" }).waitFor()
    await first.context.close()
    await second.context.close()
  })

  it("works by keyboard alone: sign in, navigate, create an origin in a dialog that holds focus, Escape closes", async () => {
    const context = await newContext(browser, app)
    const page = await context.newPage()
    await page.goto("/login")
    const focused = () =>
      page.evaluate(`(() => {
        const element = document.activeElement
        return {
          tag: element ? element.tagName : "",
          label: (element && (element.getAttribute("aria-label") || element.textContent.trim())) || "",
          name: (element && element.getAttribute("name")) || "",
          inDialog: element !== null && element.closest("dialog") !== null
        }
      })()`) as Promise<{ tag: string; label: string; name: string; inDialog: boolean }>
    const tabTo = async (predicate: (f: Awaited<ReturnType<typeof focused>>) => boolean, limit = 40) => {
      for (let index = 0; index < limit; index++) {
        if (predicate(await focused())) return
        await page.keyboard.press("Tab")
      }
      throw new Error(`focus never reached the target; last: ${JSON.stringify(await focused())}`)
    }
    await tabTo((f) => f.name === "email")
    await page.keyboard.type(adminA.email)
    await page.keyboard.press("Tab")
    await page.keyboard.type(adminA.password)
    await page.keyboard.press("Enter")
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor()

    await tabTo((f) => f.tag === "A" && f.label === "Origins")
    const outline = await page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    expect(outline).not.toBe("none")
    await page.keyboard.press("Enter")
    await page.getByRole("heading", { level: 1, name: "Origins" }).waitFor()

    await tabTo((f) => f.tag === "BUTTON" && f.label === "New origin")
    await page.keyboard.press("Enter")
    await page.getByRole("dialog", { name: "New origin" }).waitFor()
    expect(await focused()).toMatchObject({ name: "label", inDialog: true })
    for (let index = 0; index < 12; index++) {
      await page.keyboard.press("Tab")
      expect((await focused()).inDialog).toBe(true)
    }
    await page.keyboard.press("Escape")
    await expect.poll(() => page.getByRole("dialog").count()).toBe(0)
    // focus returns to the button that opened the dialog
    expect(await focused()).toMatchObject({ tag: "BUTTON", label: "New origin" })

    await page.keyboard.press("Enter")
    await page.keyboard.type("Keyboard origin")
    await page.keyboard.press("Enter")
    const keyDialog = page.getByRole("dialog", { name: "Origin created" })
    await keyDialog.waitFor()
    expect(await focused()).toMatchObject({ tag: "BUTTON", label: "Copy key", inDialog: true })
    await page.keyboard.press("Escape")
    await expect.poll(() => page.getByRole("dialog").count()).toBe(0)
    await page.locator("tr", { hasText: "Keyboard origin" }).waitFor()
    await context.close()
  })

  it("works at 375 px: the navigation folds behind Menu and nothing scrolls sideways", async () => {
    const { context, page, problems } = await signedIn(adminA, { width: 375, height: 740 })
    const nav = page.getByRole("navigation", { name: "Primary" })
    await expect(nav.isVisible()).resolves.toBe(false)
    const menu = page.getByRole("button", { name: "Menu" })
    await expect(menu.getAttribute("aria-expanded")).resolves.toBe("false")
    await screenshot(page, "mobile-overview", { fullPage: false })
    for (const name of [
      "Origins",
      "Requests",
      "Leads",
      "Catalog",
      "Capture",
      "Webhooks",
      "Audit",
      "Overview"
    ]) {
      await menu.click()
      await expect(menu.getAttribute("aria-expanded")).resolves.toBe("true")
      await nav.getByRole("link", { name, exact: true }).click()
      await page.getByRole("heading", { level: 1, name }).waitFor()
      await page.waitForLoadState("networkidle")
      const overflow = (await page.evaluate(
        "document.documentElement.scrollWidth - window.innerWidth"
      )) as number
      expect(overflow, `${name} scrolls sideways by ${overflow}px`).toBeLessThanOrEqual(0)
      if (name === "Origins") await screenshot(page, "mobile-origins")
      if (name === "Requests") await screenshot(page, "mobile-requests", { fullPage: false })
    }
    await menu.click()
    await screenshot(page, "mobile-menu", { fullPage: false })
    await page.keyboard.press("Escape")
    await expect(menu.getAttribute("aria-expanded")).resolves.toBe("false")
    await expect(nav.isVisible()).resolves.toBe(false)
    expect(problems).toEqual([])
    await context.close()
  })
})
