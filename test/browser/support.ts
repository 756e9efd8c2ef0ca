import { mkdir } from "node:fs/promises"
import * as path from "node:path"
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core"
import { expect } from "vitest"
import {
  cliFor,
  type Env,
  type Finished,
  freePort,
  freshDatabaseEnv,
  json,
  projectRoot,
  type RunningServer,
  startServer
} from "../e2e/Processes.ts"

export const screenshotDir = path.join(projectRoot, "docs", "console")

/** Debian's Chromium; browser downloads are not reachable here. */
export const launchBrowser = (): Promise<Browser> =>
  chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })

export interface ConsoleServer {
  readonly env: Env
  /** The public API (`/v1`), where partners send leads. */
  readonly publicUrl: string
  /** The admin listener: console pages and `/api`. */
  readonly adminUrl: string
  readonly cli: (...args: ReadonlyArray<string>) => Promise<Finished>
  readonly server: RunningServer
  readonly stop: () => Promise<void>
}

/**
 * A real `serve` process on a fresh database, with its admin listener on its own port. `env` adds
 * settings (a test that turns the delivery worker on must point its endpoints at 127.0.0.1 only).
 */
export const startConsole = async (extra: Record<string, string> = {}): Promise<ConsoleServer> => {
  const env = await freshDatabaseEnv()
  const port = await freePort()
  const adminPort = await freePort()
  // No delivery worker: the webhook pages add endpoints at public addresses, and a test must never dial out.
  const server = await startServer(port, {
    env: {
      ...env,
      ADMIN_PORT: String(adminPort),
      ADMIN_HOST: "127.0.0.1",
      LOG_LEVEL: "Warn",
      WEBHOOK_WORKER: "false",
      ...extra
    }
  })
  const adminUrl = `http://127.0.0.1:${adminPort}`
  const deadline = Date.now() + 30_000
  while (true) {
    const ready = await fetch(`${adminUrl}/login`).then(
      (response) => response.ok,
      () => false
    )
    if (ready) break
    if (Date.now() > deadline) {
      await server.stop("SIGKILL")
      throw new Error(`the admin listener did not answer on ${adminUrl}:\n${server.output.stderr}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return {
    env,
    publicUrl: server.baseUrl,
    adminUrl,
    cli: cliFor(env),
    server,
    stop: async () => {
      await server.stop("SIGTERM")
    }
  }
}

export interface Operator {
  readonly id: string
  readonly email: string
  readonly password: string
}

/** `lead-intake operator add`: the generated password is printed once. */
export const addOperator = async (
  app: ConsoleServer,
  options: { readonly org?: string; readonly email: string; readonly role?: "admin" | "viewer" }
): Promise<Operator> => {
  const args = ["operator", "add", "--email", options.email]
  if (options.org === undefined) args.push("--all-orgs")
  else args.push("--org", options.org)
  if (options.role !== undefined) args.push("--role", options.role)
  const operator = json(await app.cli(...args, "--json"))
  expect(operator).toMatchObject({
    id: expect.any(String),
    email: options.email,
    password: expect.any(String)
  })
  return operator
}

export const createOrg = async (app: ConsoleServer, name: string): Promise<string> =>
  json(await app.cli("org", "create", "--name", name, "--json")).id

export const newContext = (
  browser: Browser,
  app: ConsoleServer,
  options: { readonly width?: number; readonly height?: number } = {}
): Promise<BrowserContext> =>
  browser.newContext({
    baseURL: app.adminUrl,
    viewport: { width: options.width ?? 1280, height: options.height ?? 860 },
    locale: "en-GB",
    timezoneId: "UTC",
    permissions: ["clipboard-read", "clipboard-write"]
  })

/** Collects what the page reports as broken: uncaught errors and console errors (CSP violations land there). */
export const watchProblems = (page: Page) => {
  const problems: Array<string> = []
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`))
  page.on("console", (message) => {
    if (message.type() !== "error") return
    const text = message.text()
    // The API's own refusals (401 before sign-in, 403/404 the tests provoke) are logged by Chromium as failed loads.
    if (/Failed to load resource: the server responded with a status of (401|403|404|409|400|429)/.test(text))
      return
    problems.push(`console: ${text}`)
  })
  return problems
}

export const signIn = async (page: Page, operator: { readonly email: string; readonly password: string }) => {
  await page.goto("/login")
  await page.getByLabel("Email").fill(operator.email)
  await page.getByLabel("Password").fill(operator.password)
  await page.getByRole("button", { name: "Sign in" }).click()
  const overview = page.getByRole("heading", { level: 1, name: "Overview" })
  const refused = page.getByRole("alert")
  await overview.or(refused).first().waitFor()
  if (!(await overview.isVisible())) throw new Error(`sign-in failed: ${await refused.first().textContent()}`)
}

export const goTo = async (page: Page, name: string, heading: string = name) => {
  await page.getByRole("navigation", { name: "Primary" }).getByRole("link", { name, exact: true }).click()
  await page.getByRole("heading", { level: 1, name: heading }).waitFor()
}

/** A full-page screenshot kept in docs/console/ (docs/operators.md shows them). */
export const screenshot = async (page: Page, name: string, options: { readonly fullPage?: boolean } = {}) => {
  await mkdir(screenshotDir, { recursive: true })
  await page.waitForLoadState("networkidle").catch(() => undefined)
  // passing notices would cover the page
  await page.evaluate("document.getElementById('toasts')?.replaceChildren()")
  await page.screenshot({ path: path.join(screenshotDir, `${name}.png`), fullPage: options.fullPage ?? true })
}

export const postLead = async (
  publicUrl: string,
  key: string,
  body: unknown,
  headers: Record<string, string> = {}
) => {
  const response = await fetch(`${publicUrl}/v1/leads`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body)
  })
  // biome-ignore lint/suspicious/noExplicitAny: tests read the answer field by field
  const answer: any = await response.json()
  return { status: response.status, body: answer }
}

/** Calls the admin API from inside the signed-in page (its cookie), with or without the CSRF header. */
export const apiFromPage = (
  page: Page,
  method: string,
  url: string,
  options: { readonly body?: unknown; readonly csrf?: boolean } = {}
): Promise<{ status: number; body: unknown }> =>
  page.evaluate(
    async ({ method, url, body, csrf }) => {
      const headers: Record<string, string> = { "content-type": "application/json" }
      if (csrf) {
        const session = (await fetch("/api/session").then((response) => response.json())) as {
          csrf_token: string
        }
        headers["x-csrf-token"] = session.csrf_token
      }
      const response = await fetch(url, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const text = await response.text()
      return { status: response.status, body: text ? JSON.parse(text) : null }
    },
    { method, url, body: options.body, csrf: options.csrf ?? true }
  )
