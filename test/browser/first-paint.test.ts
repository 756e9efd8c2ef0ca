import { gzipSync } from "node:zlib"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  addOperator,
  apiFromPage,
  type ConsoleServer,
  createOrg,
  launchBrowser,
  type Operator,
  postLead,
  startConsole
} from "./support.ts"

/**
 * The console's budgets (CONTRIBUTING.md, "Console front end"): the overview loads at most 250 kB
 * of gzipped JavaScript, and every page paints its first content within a second; in Spanish a
 * browser asking for es-MX gets the Spanish console, its dates in the organization's zone.
 */

const pages = [
  ["/overview", "Resumen"],
  ["/origins", "Orígenes"],
  ["/requests", "Solicitudes"],
  ["/leads", "Prospectos"],
  ["/catalog", "Catálogo"],
  ["/capture", "Asignación"],
  ["/webhooks", "Webhooks"],
  ["/audit", "Auditoría"]
] as const

let app: ConsoleServer
let browser: Browser
let admin: Operator

const contextFor = (locale: string, width = 1280): Promise<BrowserContext> =>
  browser.newContext({
    baseURL: app.adminUrl,
    viewport: { width, height: 860 },
    locale,
    timezoneId: "UTC"
  })

const signIn = async (page: Page, submit: string, heading: string) => {
  await page.goto("/login")
  await page.locator("input[name=email]").fill(admin.email)
  await page.locator("input[name=password]").fill(admin.password)
  await page.getByRole("button", { name: submit }).click()
  await page.getByRole("heading", { level: 1, name: heading }).waitFor()
}

beforeAll(async () => {
  app = await startConsole()
  const org = await createOrg(app, "Inmobiliaria Norte")
  admin = await addOperator(app, { org, email: "paint@example.com" })
  browser = await launchBrowser()
  const context = await contextFor("en-GB")
  const page = await context.newPage()
  await signIn(page, "Sign in", "Overview")
  const created = await apiFromPage(page, "POST", "/api/origins", { body: { label: "Sitio web" } })
  const key = (created.body as { key: string }).key
  const hook = await apiFromPage(page, "POST", "/api/webhooks", {
    body: { url: `https://93.184.216.34/webhooks/lead-intake/${"very-long-path-segment-".repeat(4)}end` }
  })
  expect(hook.status, JSON.stringify(hook.body)).toBe(201)
  for (const [index, telefono] of ["55 1234 5678", "55 2345 6789", "55 3456 7890"].entries())
    expect((await postLead(app.publicUrl, key, { nombre: `Prospecto ${index}`, telefono })).status).toBe(201)
  await context.close()
})

afterAll(async () => {
  await browser?.close()
  await app?.stop()
})

describe("the console's budgets", () => {
  it("the overview loads at most 250 kB of gzipped JavaScript", async () => {
    const context = await contextFor("en-GB")
    const page = await context.newPage()
    await signIn(page, "Sign in", "Overview")
    const scripts: Array<Promise<Buffer>> = []
    page.on("response", (response) => {
      if (response.request().resourceType() === "script") scripts.push(response.body())
    })
    await page.reload()
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor()
    await page.waitForLoadState("networkidle")
    const bodies = await Promise.all(scripts)
    const gzipped = bodies.reduce((sum, body) => sum + gzipSync(body, { level: 9 }).length, 0)
    process.stderr.write(
      `[budget] overview JavaScript: ${bodies.length} file(s), ${(gzipped / 1024).toFixed(1)} kB gzipped\n`
    )
    expect(bodies.length).toBeGreaterThan(0)
    expect(gzipped).toBeLessThan(250 * 1024)
    await context.close()
  })

  it("every page paints within a second, in Spanish for a browser asking for es-MX", async () => {
    const context = await contextFor("es-MX")
    const page = await context.newPage()
    await signIn(page, "Iniciar sesión", "Resumen")
    await expect(page.evaluate("document.documentElement.lang")).resolves.toBe("es-MX")
    const measured: Array<string> = []
    // The best of three loads: on a shared 2-core machine another process can take a core for a while.
    for (const [path, heading] of pages) {
      const paints: Array<number> = []
      for (let attempt = 0; attempt < 3; attempt++) {
        await page.goto(path)
        await page.getByRole("heading", { level: 1, name: heading }).waitFor()
        // Chromium's first-contentful-paint entry; when headless Chromium records none, the time the
        // heading has been painted (two frames after it is in the DOM), an upper bound of it
        paints.push(
          (await page.evaluate(`new Promise((resolve) =>
            requestAnimationFrame(() => requestAnimationFrame(() =>
              resolve(performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? performance.now()))))`)) as number
        )
      }
      if (process.env.CONSOLE_SHOTS)
        await page.screenshot({
          path: `${process.env.CONSOLE_SHOTS}/es-MX${path.replaceAll("/", "-")}-1280.png`
        })
      const paint = Math.min(...paints)
      measured.push(`${path} ${Math.round(paint)} ms`)
      expect(paint, path).toBeGreaterThan(0)
      expect(paint, path).toBeLessThan(1000)
    }
    process.stderr.write(`[budget] first contentful paint: ${measured.join(", ")}\n`)
    await context.close()
  })

  it("says which time zone listed times are in, and nothing scrolls sideways at 375 px", async () => {
    for (const [locale, submit, heading, when] of [
      ["es-MX", "Iniciar sesión", "Resumen", "Cuándo"],
      ["en-GB", "Sign in", "Overview", "When"]
    ] as const) {
      const context = await contextFor(locale, 375)
      const page = await context.newPage()
      await signIn(page, submit, heading)
      for (const [path] of pages) {
        await page.goto(path)
        await page.locator("h1").first().waitFor()
        await page.waitForLoadState("networkidle")
        const overflow = (await page.evaluate(
          "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )) as number
        expect(overflow, `${locale} ${path}`).toBeLessThanOrEqual(0)
        if (process.env.CONSOLE_SHOTS)
          await page.screenshot({
            path: `${process.env.CONSOLE_SHOTS}/${locale}${path.replaceAll("/", "-")}-375.png`,
            fullPage: true
          })
      }
      await page.goto("/audit")
      await expect
        .poll(() => page.locator("table.data th").first().textContent())
        .toMatch(new RegExp(`^${when} \\((GMT|UTC)[-+−]?\\d*\\)$`))
      await context.close()
    }
  })
})
