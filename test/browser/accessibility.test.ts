import { readFile } from "node:fs/promises"
import { createRequire } from "node:module"
import * as path from "node:path"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { auditActions } from "../../src/AdminApi/Audit.ts"
import { requestOutcomes } from "../../src/AdminApi/Requests.ts"
import { en } from "../../src/Console/web/messages/en.ts"
import { es } from "../../src/Console/web/messages/es.ts"
import { json } from "../e2e/Processes.ts"
import { type Receiver, startReceiver } from "../webhooks/support.ts"
import { strayWords } from "./catalog-words.ts"
import {
  everyAuditAction,
  everyOutcome,
  everyWebhookState,
  longestIdempotencyKey,
  longestLead
} from "./every-word.ts"
import {
  addOperator,
  apiFromPage,
  type ConsoleServer,
  launchBrowser,
  type Operator,
  postLead,
  screenshotDir,
  startConsole,
  watchProblems
} from "./support.ts"

/**
 * Every page and dialog of the console, at 1280 and 375 px, in Spanish (Mexico) and English:
 * axe-core finds no WCAG 2.0/2.1/2.2 A or AA violation, and nothing is wider than the viewport, with
 * the longest words the console can show (every-word.ts): every request outcome, endpoint, delivery
 * and attempt state, audited action, and a lead with every field at its longest.
 * Spanish screenshots go to docs/console/es/ (the English ones are the other tests'). In Spanish,
 * every visible word is the Spanish catalog's: none is English, none skipped the catalogs (values,
 * code and numbers aside).
 */

const axeSource = await readFile(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")
const wcagTags = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]

interface AxeViolation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly nodes: ReadonlyArray<{ readonly target: ReadonlyArray<unknown>; readonly failureSummary?: string }>
}

/** axe is evaluated over the DevTools protocol, which the page's CSP does not govern. */
const axeViolations = async (page: Page): Promise<ReadonlyArray<AxeViolation>> => {
  if (!(await page.evaluate("typeof window.axe === 'object'"))) await page.evaluate(axeSource)
  const run = `window.axe.run(document, { runOnly: { type: "tag", values: ${JSON.stringify(wcagTags)} } })`
  return page.evaluate(`${run}.then((result) => result.violations)`) as Promise<ReadonlyArray<AxeViolation>>
}

const describeViolations = (violations: ReadonlyArray<AxeViolation>) =>
  violations
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help}\n${v.nodes
          .slice(0, 5)
          .map((n) => `    ${JSON.stringify(n.target)} ${n.failureSummary?.split("\n").join(" ") ?? ""}`)
          .join("\n")}`
    )
    .join("\n")

/**
 * How far the page, or an open dialog, reaches past the viewport or past its own box (a dialog
 * scrolls sideways inside itself without widening the page), or a table past its frame (which
 * scrolls sideways and hides its last columns), or a shown field's placeholder past the field (cut
 * off: its example no longer says what to type), measured in the field's own font.
 */
const overflow = (page: Page): Promise<number> =>
  page.evaluate(`(() => {
    const measure = document.createElement("canvas").getContext("2d")
    const placeholders = [...document.querySelectorAll("input[placeholder], textarea[placeholder]")]
      .filter((field) => field.offsetParent !== null && field.value === "")
      .map((field) => {
        const style = getComputedStyle(field)
        measure.font = style.font
        const room = field.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight)
        return Math.ceil(measure.measureText(field.placeholder).width - room)
      })
    return Math.max(
      document.scrollingElement.scrollWidth - window.innerWidth,
      ...[...document.querySelectorAll(".table-wrap")].map((wrap) => wrap.scrollWidth - wrap.clientWidth),
      ...[...document.querySelectorAll("dialog[open]")].flatMap((dialog) => {
        const box = dialog.getBoundingClientRect()
        return [box.right - window.innerWidth, -box.left, dialog.scrollWidth - dialog.clientWidth]
      }),
      ...placeholders
    )
  })()`) as Promise<number>

/**
 * A directory for a screenshot of every view and request detail, in both languages at both widths
 * (`LAYOUT_SCREENSHOTS=/tmp/console-shots`), to look at as an operator would; docs/console/es/ keeps
 * the Spanish ones either way.
 */
const layoutScreenshots = process.env.LAYOUT_SCREENSHOTS

type Language = "es" | "en"
const widths = [1280, 375] as const

/** What a browser in Mexico or in England sends: no choice saved, so its language decides. */
const browserLocale: Record<Language, string> = { es: "es-MX", en: "en-GB" }

interface View {
  readonly name: string
  readonly path: string
  /** Opens the dialog or view on top of the page at `path`; none for the page itself. */
  readonly open?: (page: Page) => Promise<void>
  /** Not shown in docs/console/es/ (a page of test data no operator would send). */
  readonly undocumented?: true
}

const openDialog = async (page: Page, click: () => Promise<void>) => {
  await click()
  await page.locator("dialog[open]").last().waitFor()
  await page.waitForTimeout(150)
}

const headerAction = (page: Page) => page.locator("main .page-actions button.primary").first()

describe("accessibility and width of every page and dialog, in Spanish and English", () => {
  let app: ConsoleServer
  let browser: Browser
  let admin: Operator
  let leadId = ""
  let longestLeadId = ""
  let webhookId = ""
  let receiver: Receiver
  const results: Array<string> = []
  /** The data this test makes: shown as it is, in any language. */
  const knownValues = [
    "Inmobiliaria Las Lomas",
    "Ana Martínez",
    "Bruno Sánchez",
    "Sitio web principal",
    "María Fernanda Gutiérrez",
    "José Ángel Ramírez",
    "mafer.gutierrez@example.com",
    "Me interesa el departamento en la colonia Roma, ¿sigue disponible?",
    "direccion@laslomas.test",
    "EB-77812",
    "Lead Intake",
    "Lucía Treviño",
    "Lucía Treviño Garza",
    "Lucía T.",
    longestIdempotencyKey,
    /^sitio-[0-9a-f]{6}$/,
    /^(María Guadalupe de los Ángeles|Me interesa el departamento de tres|Campaña de preventa)/,
    /^(utm_campaign_|QRO-2048-)/
  ]

  beforeAll(async () => {
    // The endpoint's receiver refuses (503, on 127.0.0.1): its deliveries fail with their attempts
    // and, after four failed attempts over more than WEBHOOK_DISABLE_AFTER, it is paused.
    receiver = await startReceiver((request) => ({
      status: request.path.includes("/al-corriente") ? 204 : 503
    }))
    app = await startConsole({
      WEBHOOK_WORKER: "true",
      WEBHOOK_ALLOW_PRIVATE: "true",
      WEBHOOK_RETRY_SCHEDULE: "400ms,400ms,400ms",
      WEBHOOK_DISABLE_AFTER: "1s",
      WEBHOOK_POLL_INTERVAL: "200ms"
    })
    browser = await launchBrowser()
    const org = json(await app.cli("org", "create", "--name", "Inmobiliaria Las Lomas", "--json")).id
    const agent = json(await app.cli("agent", "add", "--org", org, "--name", "Ana Martínez", "--json"))
    json(await app.cli("agent", "add", "--org", org, "--name", "Bruno Sánchez", "--json"))
    json(await app.cli("rule", "add", "--org", org, "--agent", agent.id, "--json"))
    json(
      await app.cli(
        "property",
        "add",
        "--org",
        org,
        "--codigo",
        "CDM-1024",
        "--external-code",
        "EB-77812",
        "--json"
      )
    )
    json(await app.cli("property", "add", "--org", org, "--codigo", "GDL-0450", "--json"))
    const longestCode = `QRO-2048-${"torre-mirador-juriquilla-".repeat(4)}`.slice(0, 100)
    json(
      await app.cli(
        "property",
        "add",
        "--org",
        org,
        "--codigo",
        "QRO-2048",
        "--external-code",
        longestCode,
        "--json"
      )
    )
    const origin = json(
      await app.cli("origin", "create", "--org", org, "--label", "Sitio web principal", "--json")
    )
    json(await app.cli("key", "create-test", "--origin", origin.id, "--json"))
    admin = await addOperator(app, { org, email: "direccion@laslomas.test" })

    const context = await browser.newContext({ baseURL: app.adminUrl, locale: "en-GB" })
    const page = await context.newPage()
    await signInAnyLanguage(page, admin)
    const created = await apiFromPage(page, "POST", "/api/webhooks", {
      csrf: true,
      body: {
        url: receiver.url("/integraciones/crm-inmobiliario/webhooks/prospectos-recibidos-desde-el-sitio-web"),
        events: ["lead.created", "lead.enriched", "lead.erased"]
      }
    })
    expect(created.status).toBe(201)
    webhookId = (created.body as { endpoint: { id: string } }).endpoint.id
    const active = await apiFromPage(page, "POST", "/api/webhooks", {
      body: {
        url: receiver.url("/crm/al-corriente/prospectos"),
        events: ["lead.created", "lead.enriched", "lead.erased"]
      }
    })
    expect(active.status).toBe(201)
    // an export of each list, so the Audit page shows both actions, in either language
    for (const list of ["requests", "leads"])
      await page.evaluate(async (url) => (await fetch(url)).text(), `/api/${list}.csv`)

    const first = await postLead(app.publicUrl, origin.key, {
      nombre: "María Fernanda Gutiérrez",
      telefono: "+52 55 1234 5678",
      email: "mafer.gutierrez@example.com",
      mensaje: "Me interesa el departamento en la colonia Roma, ¿sigue disponible?",
      propiedad: { codigo: "CDM-1024" }
    })
    expect(first.status).toBe(201)
    leadId = first.body.lead_id
    await postLead(app.publicUrl, origin.key, { nombre: "José Ángel Ramírez", telefono: "+52 33 9876 5432" })
    // a third delivery to the refused endpoint, so its deliveries can show each state
    await postLead(app.publicUrl, origin.key, { nombre: "Lucía Treviño", telefono: "+52 81 5555 0100" })
    await postLead(app.publicUrl, origin.key, { nombre: "", telefono: "12" })
    const deadline = Date.now() + 30_000
    while (
      json(await app.cli("webhook", "list", "--org", org, "--json")).find(
        (w: { id: string }) => w.id === webhookId
      )?.disabled_reason !== "failing"
    ) {
      if (Date.now() > deadline) throw new Error("the refused endpoint was not paused")
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    longestLeadId = await everyOutcome(app, {
      key: origin.key,
      longestLead: longestLead(longestCode),
      rescue: async (requestId, body) => {
        const rescued = await apiFromPage(page, "POST", `/api/requests/${requestId}/rescue`, {
          body: { body }
        })
        expect(rescued.status).toBe(200)
      }
    })
    await everyWebhookState(
      app,
      page,
      (name) => receiver.url(`/integraciones/erp-corporativo-de-la-inmobiliaria/webhooks/eventos-${name}`),
      webhookId
    )
    await everyAuditAction(
      app,
      org,
      admin.email,
      receiver.url("/integraciones/crm-inmobiliario/webhooks/prospectos-recibidos-desde-el-sitio-web")
    )
    await context.close()
    // a server, a sign-in and some forty requests, endpoints and audit entries: on a loaded 2-core
    // machine (load average 25) this took more than the hook's 120 s
  }, 240_000)

  afterAll(async () => {
    if (results.length > 0) console.log(`axe results:\n${results.join("\n")}`)
    await browser?.close()
    await app?.stop()
    await receiver?.close()
  })

  const views = (language: Language): ReadonlyArray<View> => [
    {
      name: "overview",
      path: "/overview",
      open: (page) => page.locator("main .webhook-alerts section").waitFor()
    },
    { name: "origins", path: "/origins" },
    {
      name: "origin-new-dialog",
      path: "/origins",
      open: (page) => openDialog(page, () => headerAction(page).click())
    },
    {
      name: "origin-key-dialog",
      path: "/origins",
      open: async (page) => {
        await openDialog(page, () => headerAction(page).click())
        const dialog = page.locator("dialog[open]")
        await dialog.locator("input[name=label]").fill(`sitio-${crypto.randomUUID().slice(0, 6)}`)
        await dialog.locator("button[type=submit]").click()
        await page.getByTestId("new-key").waitFor()
      }
    },
    {
      name: "origin-revoke-confirm",
      path: "/origins",
      open: (page) =>
        openDialog(page, () =>
          page.locator("main tbody tr").first().locator("button.danger-outline").first().click()
        )
    },
    { name: "requests", path: "/requests" },
    // The last request sent above is a 400 whose body is kept: the dialog shows it with the rescue form.
    { name: "requests-kept", path: "/requests?kept=true" },
    // A replay's: its outcome has the longest words of the log.
    {
      name: "request-dialog",
      path: "/requests",
      open: (page) =>
        openDialog(page, () =>
          page
            .locator("main tbody tr")
            .filter({ has: page.locator('.badge[title="replay"]') })
            .first()
            .locator("button.link")
            .first()
            .click()
        )
    },
    { name: "leads", path: "/leads" },
    { name: "lead", path: "/leads/:lead" },
    { name: "lead-longest", path: "/leads/:longest", undocumented: true },
    {
      name: "lead-erase-dialog",
      path: "/leads/:lead",
      open: (page) => openDialog(page, () => page.locator("main button.danger-outline").first().click())
    },
    { name: "catalog", path: "/catalog" },
    { name: "capture", path: "/capture" },
    {
      name: "capture-delete-confirm",
      path: "/capture",
      open: (page) => openDialog(page, () => page.locator("main tbody button.danger-outline").first().click())
    },
    { name: "webhooks", path: "/webhooks" },
    {
      name: "webhook-new-dialog",
      path: "/webhooks",
      open: (page) => openDialog(page, () => headerAction(page).click())
    },
    {
      name: "webhook-deliveries",
      path: "/webhooks",
      open: async (page) => {
        await page.locator(`main tr[data-webhook-id="${webhookId}"] button`).first().click()
        await page.locator("main tr[data-event-id]").first().waitFor()
      }
    },
    {
      name: "webhook-attempts-dialog",
      path: "/webhooks",
      open: async (page) => {
        await page.locator(`main tr[data-webhook-id="${webhookId}"] button`).first().click()
        const attempted = page.locator("main tr[data-event-id] button:not([disabled])").first()
        await openDialog(page, () => attempted.click())
        await page.locator("dialog[open] tbody tr").first().waitFor()
      }
    },
    {
      name: "webhook-resend-failed-dialog",
      path: "/webhooks",
      open: (page) =>
        openDialog(page, () =>
          page.locator(`main tr[data-webhook-id="${webhookId}"] button`).filter({ hasText: /…$/ }).click()
        )
    },
    {
      name: "audit",
      path: "/audit",
      open: async (page) => {
        const actions = { es, en }[language].audit.actions
        for (const action of auditActions)
          await expect
            .poll(() => page.locator(`main [data-action="${action}"]`).first().textContent())
            .toBe(actions[action])
      }
    }
  ]

  for (const language of ["es", "en"] as const) {
    for (const width of widths) {
      describe(`${language}, ${width} px`, () => {
        let context: BrowserContext
        let page: Page
        let problems: Array<string>

        const newContext = () =>
          browser.newContext({
            baseURL: app.adminUrl,
            viewport: { width, height: width === 375 ? 812 : 860 },
            locale: browserLocale[language],
            timezoneId: "America/Mexico_City",
            permissions: ["clipboard-read", "clipboard-write"]
          })

        beforeAll(async () => {
          context = await newContext()
          page = await context.newPage()
          problems = watchProblems(page)
          await signInAnyLanguage(page, admin)
        })

        afterAll(() => context?.close())

        const check = async (name: string, options: { readonly undocumented?: true } = {}) => {
          const lang = await page.evaluate("document.documentElement.lang")
          expect(lang, `${name}: <html lang>`).toBe(language === "es" ? "es-MX" : "en")
          const violations = await axeViolations(page)
          const wider = await overflow(page)
          results.push(
            `  ${language} ${String(width).padStart(4)} ${name.padEnd(24)} ${violations.length === 0 ? "no violations" : violations.map((v) => v.id).join(", ")}${wider > 0 ? `; ${wider} px too wide` : ""}`
          )
          if (language === "es" && options.undocumented === undefined) {
            const file = width === 375 ? `mobile-${name}` : name
            await page.evaluate("document.getElementById('toasts')?.replaceChildren()")
            await page.screenshot({ path: path.join(screenshotDir, "es", `${file}.png`), fullPage: true })
          }
          if (layoutScreenshots !== undefined)
            await page.screenshot({
              path: path.join(layoutScreenshots, `${language}-${width}-${name}.png`),
              // an open dialog as the screen shows it; a page whole
              fullPage: (await page.locator("dialog[open]").count()) === 0
            })
          if (language === "es")
            expect(await strayWords(page, knownValues), `${name}: words not in Spanish`).toEqual([])
          expect(violations, `${name}:\n${describeViolations(violations)}`).toEqual([])
          expect(wider, `${name}: past the ${width} px viewport, a frame or a field by`).toBeLessThanOrEqual(
            0
          )
        }

        it("the sign-in page", async () => {
          const signedOut = await newContext()
          const main = page
          try {
            page = await signedOut.newPage()
            await page.goto("/login")
            await page.locator("input[name=email]").waitFor()
            await check("login")
          } finally {
            page = main
            await signedOut.close()
          }
        })

        if (width === 375) {
          it("the navigation menu", async () => {
            await page.goto("/overview")
            await page.locator("main h1").waitFor()
            await page.locator(".menu-button").click()
            await page.waitForTimeout(150)
            await check("menu")
          })
        }

        it("the detail of every request, one outcome after another", async () => {
          await page.goto("/requests")
          await page.locator("main h1").waitFor()
          const rows = page.locator("main tbody tr")
          await expect.poll(() => rows.count()).toBeGreaterThanOrEqual(requestOutcomes.length)
          const count = await rows.count()
          const seen = new Set<string>()
          const wider: Array<string> = []
          for (let index = 0; index < count; index++) {
            const row = rows.nth(index)
            const outcome = (await row.locator(".badge[title]").first().getAttribute("title")) ?? "none"
            if (layoutScreenshots !== undefined && !seen.has(outcome))
              await row.screenshot({
                path: path.join(layoutScreenshots, `${language}-${width}-row-${outcome}.png`)
              })
            await openDialog(page, () => row.locator("button.link").first().click())
            const by = await overflow(page)
            if (by > 0) wider.push(`${outcome} (row ${index + 1}): ${by} px`)
            if (layoutScreenshots !== undefined && !seen.has(outcome))
              await page.screenshot({
                path: path.join(layoutScreenshots, `${language}-${width}-request-${outcome}.png`)
              })
            seen.add(outcome)
            await page.keyboard.press("Escape")
            await expect.poll(() => page.locator("dialog[open]").count()).toBe(0)
          }
          expect([...seen]).toEqual(expect.arrayContaining([...requestOutcomes]))
          expect(wider, `request details wider than the ${width} px viewport`).toEqual([])
        })

        for (const view of views(language)) {
          it(view.name, async () => {
            await page.goto(view.path.replace(":lead", leadId).replace(":longest", longestLeadId))
            await page.locator("main h1").waitFor()
            await page.waitForLoadState("networkidle").catch(() => undefined)
            await expect.poll(() => page.locator("[aria-busy=true], main .loading").count()).toBe(0)
            if (view.open !== undefined) await view.open(page)
            await check(view.name, view)
            expect(problems).toEqual([])
          })
        }
      })
    }
  }
})

/** Signs in by the form's field names, whatever the language. */
const signInAnyLanguage = async (page: Page, operator: Operator) => {
  await page.goto("/login")
  await page.locator("input[name=email]").fill(operator.email)
  await page.locator("input[name=password]").fill(operator.password)
  await page.locator("form button[type=submit]").click()
  await page.locator("main h1").and(page.locator(":not(.login-page h1)")).first().waitFor()
  await page.waitForURL(/\/overview$/)
}
