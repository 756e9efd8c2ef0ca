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
  startConsole,
  watchProblems
} from "./support.ts"

/**
 * The "Done means", in a real Chromium against a real `serve`: sign in, create an origin, copy its key,
 * send a lead, find it in the request log and on the lead's page, revoke the key, see the next request refused.
 * Then every page's own actions, with a screenshot of each page for docs/console/.
 */
describe("the operator console, journey by journey", () => {
  let app: ConsoleServer
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let problems: Array<string>
  let org: string
  let operator: Operator
  let key = ""
  let originLabel = ""
  let leadId = ""
  let firstRequestId = ""
  let chatbotKey = ""

  beforeAll(async () => {
    app = await startConsole()
    browser = await launchBrowser()
    org = await createOrg(app, "Inmobiliaria Consola")
    const agent = json(await app.cli("agent", "add", "--org", org, "--name", "Ana Agente", "--json"))
    json(await app.cli("rule", "add", "--org", org, "--agent", agent.id, "--json"))
    json(
      await app.cli(
        "property",
        "add",
        "--org",
        org,
        "--codigo",
        "CON-0001",
        "--external-code",
        "EXT-1",
        "--json"
      )
    )
    operator = await addOperator(app, { org, email: "ana@consola.test" })
    context = await newContext(browser, app)
    page = await context.newPage()
    problems = watchProblems(page)
  })

  afterAll(async () => {
    await browser?.close()
    await app?.stop()
  })

  it("refuses a wrong password with a generic message, then signs in", async () => {
    await page.goto("/origins")
    await expect.poll(() => new URL(page.url()).pathname).toBe("/login")
    await page.getByRole("heading", { name: "Sign in to the console" }).waitFor()
    await screenshot(page, "login")
    await page.getByLabel("Email").fill(operator.email)
    await page.getByLabel("Password").fill("not-the-password")
    await page.getByRole("button", { name: "Sign in" }).click()
    await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/invalid email or password/i)
    await page.getByLabel("Password").fill(operator.password)
    await page.getByRole("button", { name: "Sign in" }).click()
    // back where the operator wanted to go
    await page.getByRole("heading", { level: 1, name: "Origins" }).waitFor()
    expect(new URL(page.url()).pathname).toBe("/origins")
    for (const name of [
      "Overview",
      "Origins",
      "Requests",
      "Leads",
      "Catalog",
      "Capture",
      "Webhooks",
      "Audit"
    ]) {
      await expect(
        page.getByRole("navigation", { name: "Primary" }).getByRole("link", { name, exact: true }).count()
      ).resolves.toBe(1)
    }
  })

  it("creates an origin: the key appears once, in a dialog, and the copy button copies exactly it", async () => {
    originLabel = "Formulario web"
    await page.getByRole("button", { name: "New origin" }).click()
    const form = page.getByRole("dialog", { name: "New origin" })
    await form.getByLabel("Label").fill(originLabel)
    await form.getByLabel("Rate limit").fill("500")
    await form.getByRole("button", { name: "Create" }).click()
    const dialog = page.getByRole("dialog", { name: "Origin created" })
    await dialog.waitFor()
    key = (await dialog.getByTestId("new-key").textContent())!.trim()
    expect(key).toMatch(/^lk_/)
    await expect(dialog.textContent()).resolves.toMatch(/only time the key is shown/)
    await screenshot(page, "origin-key-dialog", { fullPage: false })
    await dialog.getByRole("button", { name: "Copy key" }).click()
    await expect.poll(() => dialog.getByRole("button", { name: "Copied" }).count()).toBe(1)
    await expect(page.evaluate("navigator.clipboard.readText()")).resolves.toBe(key)
    await dialog.getByRole("button", { name: "Done" }).click()
    await expect.poll(() => page.getByRole("dialog").count()).toBe(0)
    // after closing, only the prefix is ever shown
    const row = page.locator("tr", { hasText: originLabel })
    await row.waitFor()
    await expect(page.content()).resolves.not.toContain(key)
    const prefix = (await row.locator("code").first().textContent())!.trim()
    expect(key.startsWith(prefix)).toBe(true)
    await expect(row.textContent()).resolves.toMatch(/500\/min/)
    await expect(row.textContent()).resolves.toMatch(/Active/)
  })

  it("a lead sent with the key shows up in the request log without a reload, and on the lead's page", async () => {
    await goTo(page, "Requests")
    await page.evaluate("window.marker = true")
    const sent = await postLead(
      app.publicUrl,
      key,
      {
        nombre: "Lucía Pérez",
        telefono: "+52 55 1234 5678",
        email: "lucia@example.com",
        mensaje: "¿Sigue disponible?",
        propiedad: { codigo: "CON-0001" }
      },
      { "idempotency-key": "form-1" }
    )
    expect(sent.status, JSON.stringify(sent.body)).toBe(201)
    leadId = sent.body.lead_id
    firstRequestId = sent.body.request_id
    const row = page.locator(`tr[data-request-id="${firstRequestId}"]`)
    await row.waitFor({ timeout: 15_000 })
    // the same document: polling added the row, nobody reloaded
    await expect(page.evaluate("window.marker")).resolves.toBe(true)
    await expect(row.textContent()).resolves.toMatch(/201/)
    await expect(row.textContent()).resolves.toMatch(/created/)
    await expect(row.textContent()).resolves.toMatch(originLabel)

    // the row opens its detail
    await row.getByRole("button", { name: new RegExp(firstRequestId) }).click()
    const detail = page.getByRole("dialog", { name: "Request" })
    await expect.poll(() => detail.textContent()).toContain("form-1")
    const text = (await detail.textContent())!
    expect(text).toContain(firstRequestId)
    expect(text).toContain(leadId)
    expect(text).toMatch(/ms/)
    await page.keyboard.press("Escape")
    await expect.poll(() => page.getByRole("dialog").count()).toBe(0)

    await row.getByRole("link", { name: "Open" }).click()
    await page.getByRole("heading", { level: 1, name: "Lucía Pérez" }).waitFor()
    expect(new URL(page.url()).pathname).toBe(`/leads/${leadId}`)
    const details = page.getByRole("region", { name: "Details" })
    await expect(details.textContent()).resolves.toContain(originLabel)
    await expect(details.textContent()).resolves.toContain("CON-0001")
    await expect(details.textContent()).resolves.toContain("Ana Agente")
    await expect(details.textContent()).resolves.toContain("lucia@example.com")
    await expect(page.getByRole("region", { name: "Notes" }).textContent()).resolves.toContain(
      "¿Sigue disponible?"
    )
    await expect(page.getByRole("region", { name: "Events" }).textContent()).resolves.toContain(
      "lead.created"
    )
    await expect(page.getByRole("region", { name: "Tasks" }).textContent()).resolves.toContain("Ana Agente")
    const requests = page.getByRole("region", { name: "Requests that created or enriched this lead" })
    await expect(requests.locator(`tr[data-request-id="${firstRequestId}"]`).count()).resolves.toBe(1)

    // an enrichment with the phone written differently lands on the same lead and in its requests
    const enriched = await postLead(app.publicUrl, key, { nombre: "Lucía", telefono: "55-1234-5678" })
    expect(enriched.status).toBe(200)
    expect(enriched.body.lead_id).toBe(leadId)
    await page.reload()
    await page.getByRole("heading", { level: 1, name: "Lucía Pérez" }).waitFor()
    await expect
      .poll(() => requests.locator(`tr[data-request-id="${enriched.body.request_id}"]`).count())
      .toBe(1)
    await expect(page.getByRole("region", { name: "Events" }).textContent()).resolves.toContain(
      "lead.enriched"
    )
    await screenshot(page, "lead")
  })

  it("revokes the key after confirming; the next request is logged as invalid_key", async () => {
    await goTo(page, "Origins")
    const row = page.locator("tr", { hasText: originLabel })
    await row.getByRole("button", { name: "Revoke key" }).click()
    const confirm = page.getByRole("dialog")
    await expect(confirm.textContent()).resolves.toMatch(/Revoke the key of Formulario web/)
    await screenshot(page, "origin-revoke-confirm", { fullPage: false })
    await confirm.getByRole("button", { name: "Confirm" }).click()
    await expect.poll(() => row.textContent()).toMatch(/Revoked/)
    await expect(row.getByRole("button", { name: "Revoke key" }).isDisabled()).resolves.toBe(true)

    const refused = await postLead(app.publicUrl, key, { nombre: "Nadie", telefono: "+52 55 9999 0000" })
    expect(refused.status).toBe(401)
    expect(refused.body.error.code).toBe("invalid_key")

    await goTo(page, "Requests")
    await page.getByLabel("Request id").fill(refused.body.request_id)
    await page.getByRole("button", { name: "Apply filters" }).click()
    const logged = page.locator(`tr[data-request-id="${refused.body.request_id}"]`)
    await logged.waitFor({ timeout: 15_000 })
    await expect(logged.textContent()).resolves.toMatch(/401/)
    await expect(logged.textContent()).resolves.toMatch(/Invalid key/)
    await expect(page.locator("tbody tr[data-request-id]").count()).resolves.toBe(1)
  })

  it("rotates a key after confirming: the new key is shown once, the old one stops at once", async () => {
    await goTo(page, "Origins")
    await page.getByRole("button", { name: "New origin" }).click()
    await page.getByRole("dialog").getByLabel("Label").fill("Chatbot")
    await page.getByRole("dialog").getByRole("button", { name: "Create" }).click()
    const created = page.getByRole("dialog", { name: "Origin created" })
    const oldKey = (await created.getByTestId("new-key").textContent())!.trim()
    await created.getByRole("button", { name: "Done" }).click()
    expect(
      (await postLead(app.publicUrl, oldKey, { nombre: "Uno", telefono: "+52 55 1111 2222" })).status
    ).toBe(201)

    const row = page.locator("tr", { hasText: "Chatbot" })
    await row.getByRole("button", { name: "Rotate key" }).click()
    // cancelling changes nothing
    await page.getByRole("dialog").getByRole("button", { name: "Cancel" }).click()
    expect(
      (await postLead(app.publicUrl, oldKey, { nombre: "Uno", telefono: "+52 55 1111 2222" })).status
    ).toBe(200)
    await row.getByRole("button", { name: "Rotate key" }).click()
    await page.getByRole("dialog").getByRole("button", { name: "Confirm" }).click()
    const rotated = page.getByRole("dialog", { name: "Key rotated" })
    const newKey = (await rotated.getByTestId("new-key").textContent())!.trim()
    expect(newKey).not.toBe(oldKey)
    await rotated.getByRole("button", { name: "Done" }).click()
    expect(
      (await postLead(app.publicUrl, oldKey, { nombre: "Uno", telefono: "+52 55 1111 2222" })).status
    ).toBe(401)
    expect(
      (await postLead(app.publicUrl, newKey, { nombre: "Uno", telefono: "+52 55 1111 2222" })).status
    ).toBe(200)
    chatbotKey = newKey
    // shown once: gone from the page once the dialog has closed (it closes asynchronously)
    await expect.poll(() => page.content()).not.toContain(newKey)
  })

  it("changes the rate limit, and shows the API's validation message for a bad one", async () => {
    const row = page.locator("tr", { hasText: "Chatbot" })
    await row.getByRole("button", { name: "Change rate limit" }).click()
    const dialog = page.getByRole("dialog")
    await dialog.getByLabel("Rate limit").fill("0")
    await dialog.getByRole("button", { name: "Save" }).click()
    await expect.poll(() => dialog.getByRole("alert").textContent()).toMatch(/at least 1/)
    await dialog.getByLabel("Rate limit").fill("7")
    await dialog.getByRole("button", { name: "Save" }).click()
    await expect.poll(() => page.getByRole("dialog").count()).toBe(0)
    await expect.poll(() => row.textContent()).toMatch(/7\/min/)
    // the key keeps working under its new limit
    const after = await postLead(app.publicUrl, chatbotKey, { nombre: "Dos", telefono: "+52 55 1111 3333" })
    expect(after.status, JSON.stringify(after.body)).toBe(201)
    await screenshot(page, "origins")
  })

  it("request log: filters by status class and outcome, loads more with the cursor, opens unknown origins as not found", async () => {
    const bulk = json(
      await app.cli("origin", "create", "--org", org, "--label", "Bulk", "--rate-limit", "1000", "--json")
    )
    for (let index = 0; index < 55; index++) {
      const sent = await postLead(app.publicUrl, bulk.key, {
        nombre: `Lead ${index}`,
        telefono: `+52 55 2000 ${String(1000 + index)}`
      })
      expect(sent.status).toBe(201)
    }
    await goTo(page, "Requests")
    await page.getByLabel("Origin").selectOption({ label: "Bulk" })
    await page.getByRole("button", { name: "Apply filters" }).click()
    await expect.poll(() => page.locator("tbody tr[data-request-id]").count()).toBe(50)
    await page.getByRole("button", { name: "Load more" }).click()
    await expect.poll(() => page.locator("tbody tr[data-request-id]").count()).toBe(55)
    await expect(page.getByRole("button", { name: "Load more" }).count()).resolves.toBe(0)
    // newest first
    const times = await page
      .locator("tbody tr[data-request-id] time")
      .evaluateAll((nodes) => nodes.map((node) => node.getAttribute("datetime")!))
    expect([...times].sort().reverse()).toEqual(times)

    await page.goto("/requests")
    await page.getByLabel("Status class").selectOption("4xx")
    await page.getByRole("button", { name: "Apply filters" }).click()
    await expect.poll(() => page.locator("tbody tr[data-request-id]").count()).toBeGreaterThan(0)
    const statuses = await page.locator("tbody tr[data-request-id] td[data-label=Status]").allTextContents()
    expect(statuses.every((status) => status.startsWith("4"))).toBe(true)

    await page.getByLabel("Status class").selectOption("")
    await page.getByLabel("Outcome").selectOption("enriched")
    await page.getByRole("button", { name: "Apply filters" }).click()
    await expect.poll(() => page.locator("tbody tr[data-request-id]").count()).toBeGreaterThan(0)
    const outcomes = await page.locator("tbody tr[data-request-id] td[data-label=Outcome]").allTextContents()
    expect(new Set(outcomes)).toEqual(new Set(["Lead enriched"]))

    await page.getByLabel("Outcome").selectOption("")
    await page.getByLabel("Idempotency key").fill("form-1")
    await page.getByRole("button", { name: "Apply filters" }).click()
    await expect.poll(() => page.locator("tbody tr[data-request-id]").count()).toBe(1)
    await expect(page.locator(`tr[data-request-id="${firstRequestId}"]`).count()).resolves.toBe(1)

    // a time range that starts in the future shows nothing; the form keeps what was chosen
    await page.getByLabel("Idempotency key").fill("")
    await page.getByLabel("From").fill("2099-01-01T00:00")
    await page.getByRole("button", { name: "Apply filters" }).click()
    await expect.poll(() => page.locator("tbody tr.empty-row").count()).toBe(1)
    await expect(page.getByLabel("From").inputValue()).resolves.toBe("2099-01-01T00:00")
    // and one that ends before everything shows nothing either
    await page.goto(`/requests?to=${encodeURIComponent("2020-01-01T00:00:00.000Z")}`)
    await expect.poll(() => page.locator("tbody tr.empty-row").count()).toBe(1)
    await page.goto("/requests")
    await expect.poll(() => page.locator("tbody tr[data-request-id]").count()).toBeGreaterThan(10)
    await screenshot(page, "requests", { fullPage: false })
  })

  it("finds leads by phone in any format, by name and by e-mail", async () => {
    await goTo(page, "Leads")
    for (const query of ["5512345678", "+52 (55) 1234-5678", "Lucía", "LUCIA@example.com"]) {
      await page.getByLabel("Phone, name or e-mail").fill(query)
      await page.getByRole("button", { name: "Search" }).click()
      await expect
        .poll(() => page.locator(`tr[data-lead-id="${leadId}"]`).count(), { message: query })
        .toBe(1)
    }
    await page.getByLabel("Phone, name or e-mail").fill("no-such-person@example.com")
    await page.getByRole("button", { name: "Search" }).click()
    await expect.poll(() => page.locator("tbody tr.empty-row").count()).toBe(1)
    await page.getByLabel("Phone, name or e-mail").fill("")
    await page.getByRole("button", { name: "Search" }).click()
    // 58 leads by now: a first page of 50, then the cursor brings the rest without repeating any
    await expect.poll(() => page.locator("tbody tr[data-lead-id]").count()).toBe(50)
    await page.getByRole("button", { name: "Load more" }).click()
    await expect.poll(() => page.locator("tbody tr[data-lead-id]").count()).toBeGreaterThan(50)
    const ids = await page
      .locator("tbody tr[data-lead-id]")
      .evaluateAll((rows) => rows.map((row) => row.getAttribute("data-lead-id")))
    expect(new Set(ids).size).toBe(ids.length)
    await page.goto("/leads")
    await expect.poll(() => page.locator("tbody tr[data-lead-id]").count()).toBe(50)
    await screenshot(page, "leads", { fullPage: false })
  })

  it("exports the request log and the leads as CSV with the filters in effect; the Audit page lists both exports", async () => {
    const sheet = json(
      await app.cli("origin", "create", "--org", org, "--label", "Hoja, de cálculo", "--json")
    )
    const sent = await postLead(
      app.publicUrl,
      sheet.key,
      { nombre: "=SUMA(1;2)", telefono: "+52 55 3000 4000", email: "hoja@example.com" },
      { "idempotency-key": '=HYPERLINK("http://x","y")' }
    )
    expect(sent.status, JSON.stringify(sent.body)).toBe(201)
    /** Clicks Export CSV and reads the file the browser saved. */
    const exported = async () => {
      const download = page.waitForEvent("download")
      await page.getByRole("button", { name: "Export CSV" }).click()
      const file = await download
      return { name: file.suggestedFilename(), text: await readFile((await file.path())!, "utf8") }
    }

    await goTo(page, "Requests")
    await page.getByLabel("Origin").selectOption({ label: "Hoja, de cálculo" })
    await page.getByRole("button", { name: "Apply filters" }).click()
    await expect.poll(() => page.locator("tbody tr[data-request-id]").count()).toBe(1)
    const requests = await exported()
    expect(requests.name).toMatch(/^requests-\d{4}-\d{2}-\d{2}\.csv$/)
    console.log(`requests CSV (${requests.name}):\n${requests.text.split("\r\n").slice(0, 3).join("\n")}`)
    expect(requests.text.startsWith("\uFEFFrequest_id,at,status,outcome,origin_id,origin_label,")).toBe(true)
    const [, row, end, ...rest] = requests.text.split("\r\n")
    expect([end, rest]).toEqual(["", []])
    expect(row).toMatch(
      new RegExp(
        `^${sent.body.request_id},[^,]+,201,created,${sheet.id},"Hoja, de cálculo",${sheet.prefix},"'=HYPERLINK\\(""http://x"",""y""\\)",${sent.body.lead_id},`
      )
    )
    // the 4xx filter in effect: only refused requests, none of the sheet's
    await page.goto("/requests?status_class=4xx")
    await expect.poll(() => page.locator("tbody tr[data-request-id]").count()).toBeGreaterThan(0)
    const refused = (await exported()).text.split("\r\n").slice(1, -1)
    expect(refused.length).toBeGreaterThan(0)
    expect(
      refused.every((line) => /^[^,]+,[^,]+,4\d\d,/.test(line)),
      refused.join("\n")
    ).toBe(true)

    await goTo(page, "Leads")
    await page.getByLabel("Phone, name or e-mail").fill("SUMA")
    await page.getByRole("button", { name: "Search" }).click()
    await expect.poll(() => page.locator("tbody tr[data-lead-id]").count()).toBe(1)
    const leads = await exported()
    expect(leads.name).toMatch(/^leads-\d{4}-\d{2}-\d{2}\.csv$/)
    console.log(`leads CSV (${leads.name}):\n${leads.text.split("\r\n").slice(0, 2).join("\n")}`)
    expect(leads.text.split("\r\n")).toEqual([
      "\uFEFFid,nombre,telefono,email,origin_id,origin_label,created_at",
      expect.stringMatching(
        new RegExp(
          `^${sent.body.lead_id},'=SUMA\\(1;2\\),'\\+52 55 3000 4000,hoja@example.com,${sheet.id},"Hoja, de cálculo",`
        )
      ),
      ""
    ])

    await goTo(page, "Audit")
    const actions = page.locator("tbody tr[data-audit-id] [data-action]")
    await expect
      .poll(() => actions.allTextContents())
      .toEqual(expect.arrayContaining(["Requests exported (CSV)", "Leads exported (CSV)"]))
    const log = (await page.getByRole("table", { name: "Audit log" }).locator("tbody").textContent())!
    expect(log).toContain(`requests origin=${sheet.id}: 1 row`)
    expect(log).toContain("requests status_class=4xx:")
    expect(log).toContain("leads q=…: 1 row")
  })

  it("catalog: adds, searches by codigo and external code, archives and restores", async () => {
    await goTo(page, "Catalog")
    await page.getByLabel("Codigo", { exact: true }).fill("CAT-7777")
    await page.getByLabel("External code (optional)").fill("PORTAL-42")
    await page.getByRole("button", { name: "Add property" }).click()
    const row = page.locator('tr[data-codigo="CAT-7777"]')
    await row.waitFor()
    await expect(row.textContent()).resolves.toContain("PORTAL-42")
    // a duplicate codigo shows the API's message
    await page.getByLabel("Codigo", { exact: true }).fill("CAT-7777")
    await page.getByRole("button", { name: "Add property" }).click()
    await expect.poll(() => page.getByRole("alert").count()).toBeGreaterThan(0)

    await page.getByLabel("Codigo or external code").fill("PORTAL-42")
    await page.getByRole("button", { name: "Search" }).click()
    await expect.poll(() => page.locator("tbody tr[data-codigo]").count()).toBe(1)
    await page.getByLabel("Codigo or external code").fill("cat-7777")
    await page.getByRole("button", { name: "Search" }).click()
    await expect.poll(() => page.locator("tbody tr[data-codigo]").count()).toBe(1)

    await row.getByRole("button", { name: "Archive CAT-7777" }).click()
    await expect.poll(() => row.textContent()).toMatch(/Archived/)
    await row.getByRole("button", { name: "Restore CAT-7777" }).click()
    await expect.poll(() => row.textContent()).toMatch(/Active/)
    await page.goto("/catalog")
    await page.locator('tr[data-codigo="CAT-7777"]').waitFor()
    await screenshot(page, "catalog")
  })

  it("capture: adds agents and a round-robin rule; rules are listed in the order they apply", async () => {
    await goTo(page, "Capture")
    for (const name of ["Bruno Broker", "Carla Closer"]) {
      await page.getByLabel("Agent name").fill(name)
      await page.getByRole("button", { name: "Add agent" }).click()
      await page.getByRole("listitem").filter({ hasText: name }).waitFor()
    }
    await page.getByLabel("Origin").selectOption({ label: "Chatbot" })
    await page.getByLabel("Property").selectOption({ label: "CON-0001" })
    await page.getByLabel("Priority").fill("-5")
    await page.getByLabel("Round-robin between agents").check()
    await page.getByLabel("Bruno Broker").check()
    await page.getByLabel("Carla Closer").check()
    await page.getByRole("button", { name: "Add rule" }).click()
    const rules = page.locator("tbody tr[data-rule-id]")
    await expect.poll(() => rules.count()).toBe(2)
    // priority -5 applies before the CLI's rule
    const first = await rules.first().textContent()
    expect(first).toContain("Round-robin")
    expect(first).toContain("Chatbot")
    expect(first).toContain("CON-0001")
    expect(first).toContain("Bruno Broker, Carla Closer")
    await expect(rules.first().locator("td").first().textContent()).resolves.toBe("1")
    await screenshot(page, "capture")
    // one agent without choosing one: the form says what is missing
    await page.getByLabel("One agent").check()
    await page.getByRole("button", { name: "Add rule" }).click()
    await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/Choose the agent/)

    // the rule really assigns: a new lead from Chatbot about CON-0001 goes to Bruno or Carla, not to Ana
    const sent = await postLead(app.publicUrl, chatbotKey, {
      nombre: "Rotación",
      telefono: "+52 55 7777 0001",
      propiedad: { codigo: "CON-0001" }
    })
    expect(sent.status, JSON.stringify(sent.body)).toBe(201)
    await page.goto(`/leads/${sent.body.lead_id}`)
    await page.getByRole("heading", { level: 1, name: "Rotación" }).waitFor()
    await expect(page.getByRole("region", { name: "Details" }).textContent()).resolves.toMatch(
      /Assignee(Bruno Broker|Carla Closer)/
    )
  })

  it("overview: charts drawn from the traffic and error codes by count", async () => {
    await goTo(page, "Overview")
    const requestsChart = page.getByRole("img", { name: /Requests per minute over the last 24 hours/ })
    await requestsChart.waitFor()
    await expect.poll(() => requestsChart.locator("path.series").count()).toBeGreaterThan(0)
    const leadsChart = page.getByRole("img", { name: /Leads over the last 30 days/ })
    await expect(leadsChart.getAttribute("aria-label")).resolves.toMatch(/[1-9]\d* created/)
    const errors = page.getByRole("region", { name: "Error codes (24 h)" })
    await expect(errors.textContent()).resolves.toContain("Invalid key")
    await screenshot(page, "overview")
  })

  it("audit: the operator's actions with who and from where, newest first", async () => {
    await goTo(page, "Audit")
    await expect.poll(() => page.locator("tbody tr[data-audit-id]").count()).toBeGreaterThan(5)
    const text = (await page.getByRole("table", { name: "Audit log" }).locator("tbody").textContent())!
    expect(text).toContain(operator.email)
    expect(text).toContain("127.0.0.1")
    const times = await page
      .locator("tbody tr[data-audit-id] time")
      .evaluateAll((nodes) => nodes.map((node) => node.getAttribute("datetime")!))
    expect([...times].sort().reverse()).toEqual(times)
    await screenshot(page, "audit")
  })

  it("signs out: the session ends and pages go back to the sign-in form", async () => {
    await page.getByRole("button", { name: "Sign out", exact: true }).click()
    await page.getByRole("heading", { name: "Sign in to the console" }).waitFor()
    await page.goto("/origins")
    await expect.poll(() => new URL(page.url()).pathname).toBe("/login")
    const status = await page.evaluate(() => fetch("/api/origins").then((response) => response.status))
    expect(status).toBe(401)
    expect(problems).toEqual([])
  })
})
