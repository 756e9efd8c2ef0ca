import { execFile } from "node:child_process"
import { promisify } from "node:util"
import type { Browser } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cliFor, json } from "../e2e/Processes.ts"
import { type ConsoleServer, launchBrowser, newContext, startConsole, watchProblems } from "./support.ts"

const curl = promisify(execFile)

/** The "Done means", word for word: from `serve` and `demo` alone, with curl, in a real browser. */
describe("a new operator, from `serve` and `demo` alone", () => {
  let app: ConsoleServer
  let browser: Browser

  beforeAll(async () => {
    app = await startConsole()
    browser = await launchBrowser()
  })

  afterAll(async () => {
    await browser?.close()
    await app?.stop()
  })

  const sendWithCurl = async (key: string, body: unknown) => {
    const { stdout } = await curl("curl", [
      "-sS",
      "-X",
      "POST",
      `${app.publicUrl}/v1/leads`,
      "-H",
      `Authorization: Bearer ${key}`,
      "-H",
      "Content-Type: application/json",
      "-d",
      JSON.stringify(body),
      "-w",
      "\n%{http_code}"
    ])
    const lines = stdout.trimEnd().split("\n")
    const status = Number(lines.pop())
    return { status, body: JSON.parse(lines.join("\n")) }
  }

  it("signs in with demo's operator, creates an origin, copies its key, sends a lead with curl, sees it, revokes the key", async () => {
    const adminPort = new URL(app.adminUrl).port
    // the same environment `npm start` would have: demo prints the console URL it is served at
    const demo = json(await cliFor({ ...app.env, ADMIN_PORT: adminPort })("demo", "--json"))
    expect(demo.console_url).toBe(`http://127.0.0.1:${adminPort}/`)

    const context = await newContext(browser, app)
    const page = await context.newPage()
    const problems = watchProblems(page)
    await page.goto(demo.console_url)
    await page.getByLabel("Email").fill(demo.operator_email)
    await page.getByLabel("Password").fill(demo.operator_password)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor()

    await page.getByRole("link", { name: "Origins", exact: true }).click()
    await page.locator("tr", { hasText: demo.label }).waitFor()
    await page.getByRole("button", { name: "New origin" }).click()
    await page.getByRole("dialog").getByLabel("Label").fill("Portal inmobiliario")
    await page.getByRole("dialog").getByRole("button", { name: "Create" }).click()
    const dialog = page.getByRole("dialog", { name: "Origin created" })
    await dialog.getByRole("button", { name: "Copy key" }).click()
    const key = (await page.evaluate("navigator.clipboard.readText()")) as string
    expect(key).toBe((await dialog.getByTestId("new-key").textContent())!.trim())
    await dialog.getByRole("button", { name: "Done" }).click()

    const sent = await sendWithCurl(key, {
      nombre: "Marta Díaz",
      telefono: "+52 33 1234 5678",
      propiedad: { codigo: demo.properties[0].codigo }
    })
    expect(sent.status).toBe(201)

    await page.getByRole("link", { name: "Requests", exact: true }).click()
    const row = page.locator(`tr[data-request-id="${sent.body.request_id}"]`)
    await row.waitFor({ timeout: 15_000 })
    await expect(row.textContent()).resolves.toContain("Portal inmobiliario")
    await row.getByRole("link", { name: "Open" }).click()
    await page.getByRole("heading", { level: 1, name: "Marta Díaz" }).waitFor()
    await expect(page.getByRole("region", { name: "Details" }).textContent()).resolves.toContain(
      demo.properties[0].codigo
    )

    await page.getByRole("link", { name: "Origins", exact: true }).click()
    await page
      .locator("tr", { hasText: "Portal inmobiliario" })
      .getByRole("button", { name: "Revoke key" })
      .click()
    await page.getByRole("dialog").getByRole("button", { name: "Confirm" }).click()
    await expect
      .poll(() => page.locator("tr", { hasText: "Portal inmobiliario" }).textContent())
      .toMatch(/Revoked/)

    const refused = await sendWithCurl(key, { nombre: "Marta Díaz", telefono: "+52 33 1234 5678" })
    expect(refused.status).toBe(401)
    await page.getByRole("link", { name: "Requests", exact: true }).click()
    const logged = page.locator(`tr[data-request-id="${refused.body.request_id}"]`)
    await logged.waitFor({ timeout: 15_000 })
    await expect(logged.locator("td[data-label=Outcome]").textContent()).resolves.toBe("Invalid key")
    expect(problems).toEqual([])
    await context.close()
  })
})
