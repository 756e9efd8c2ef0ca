import { execFile } from "node:child_process"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { errorCodes } from "../../src/Api/Api.ts"
import {
  cliFor,
  type Env,
  freePort,
  freshDatabaseEnv,
  json,
  processTimeout,
  projectRoot,
  type RunningServer,
  startServer
} from "../e2e/Processes.ts"

type Json = Record<string, unknown>

/** The page's globals in `evaluate` callbacks (the project is type-checked without the DOM lib). */
type PageGlobal = { document: { documentElement: { clientWidth: number; scrollWidth: number } } }

const launch = () =>
  chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })

/** Every example value in the document, as the page prints it. */
const documentExamples = (document: Json): ReadonlyArray<string> => {
  const found: Array<string> = []
  const walk = (node: unknown) => {
    if (Array.isArray(node)) return node.forEach(walk)
    if (typeof node !== "object" || node === null) return
    const record = node as Json
    if (typeof record.examples === "object" && record.examples !== null && !Array.isArray(record.examples)) {
      for (const example of Object.values(record.examples as Record<string, { value: unknown }>)) {
        found.push(typeof example.value === "string" ? example.value : JSON.stringify(example.value, null, 2))
      }
    }
    Object.values(record).forEach(walk)
  }
  walk(document)
  return found
}

/** Blocks that are wider than their box (their text runs off the page or hides behind a scrollbar). */
const overflowing = (page: Page) =>
  page.$$eval("pre, table", (elements) =>
    elements
      .filter(
        (element) =>
          element.scrollWidth > element.clientWidth + 1 ||
          element.getBoundingClientRect().right >
            (globalThis as unknown as PageGlobal).document.documentElement.clientWidth + 1
      )
      .map((element) => element.textContent?.slice(0, 60))
  )

describe("GET /v1/docs in a browser", { timeout: processTimeout }, () => {
  let env: Env
  let server: RunningServer
  let browser: Browser
  let page: Page
  const requested: Array<string> = []

  beforeAll(async () => {
    env = await freshDatabaseEnv()
    server = await startServer(await freePort(), { env })
    browser = await launch()
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    page.on("request", (request) => {
      requested.push(request.url())
    })
    const response = await page.goto(`${server.baseUrl}/v1/docs`)
    expect(response?.status()).toBe(200)
  })

  afterAll(async () => {
    await browser?.close()
    await server?.stop("SIGKILL")
  })

  it("loads nothing from any other host", async () => {
    expect(requested.length).toBeGreaterThan(0)
    for (const url of requested) expect(new URL(url).origin).toBe(server.baseUrl)
  })

  it("has the guides, and every link of its navigation lands on a section", async () => {
    for (const id of [
      "quick-start",
      "authentication",
      "idempotency",
      "dry-run",
      "rate-limits",
      "request-ids",
      "errors"
    ]) {
      expect(await page.locator(`[id="${id}"]`).count(), id).toBe(1)
    }
    const targets = await page.$$eval("nav a[href^='#']", (links) =>
      links.map((a) => a.getAttribute("href")!)
    )
    expect(targets.length).toBeGreaterThan(20)
    for (const target of targets) {
      expect(await page.locator(`[id="${target.slice(1)}"]`).count(), target).toBe(1)
    }
  })

  it("shows every example of the OpenAPI document it is made from", async () => {
    const document = (await (await fetch(`${server.baseUrl}/v1/openapi.json`)).json()) as Json
    const examples = documentExamples(document)
    expect(examples.length).toBeGreaterThanOrEqual(20)
    const blocks = new Set(await page.$$eval("pre", (pres) => pres.map((pre) => pre.textContent ?? "")))
    for (const example of examples) expect(blocks.has(example), example.slice(0, 80)).toBe(true)
    for (const sample of ["curl", "node", "python"]) {
      expect(await page.locator(`pre[data-sample="${sample}"]`).count(), sample).toBe(1)
    }
  })

  it("lets nothing run off the page, on a desktop and on a phone", async () => {
    expect(await overflowing(page)).toEqual([])
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 } })
    await phone.goto(`${server.baseUrl}/v1/docs`)
    expect(await overflowing(phone)).toEqual([])
    expect(
      await phone.evaluate(() => (globalThis as unknown as PageGlobal).document.documentElement.scrollWidth)
    ).toBeLessThanOrEqual(390)
    await phone.close()
  })

  it("every error's docs_url lands on that code's explanation", async () => {
    const unauthorized = await fetch(`${server.baseUrl}/v1/leads`, { method: "POST" })
    const notFound = await fetch(`${server.baseUrl}/v1/nothing`)
    const served = [
      ((await unauthorized.json()) as { error: { docs_url: string } }).error.docs_url,
      ((await notFound.json()) as { error: { docs_url: string } }).error.docs_url
    ]
    const docsUrl = `${server.baseUrl}/v1/docs`
    expect(served).toEqual([`${docsUrl}#invalid_key`, `${docsUrl}#not_found`])
    for (const url of [...served, ...errorCodes.map((code) => `${docsUrl}#${code}`)]) {
      await page.goto(url)
      const code = new URL(url).hash.slice(1)
      const target = page.locator(":target")
      expect(await target.getAttribute("id"), url).toBe(code)
      expect(await target.locator("h3").textContent()).toContain(code)
      expect(await target.isVisible()).toBe(true)
      const box = (await target.boundingBox())!
      expect(box.y, url).toBeGreaterThanOrEqual(-1)
      expect(box.y, url).toBeLessThan(900)
    }
  })

  it("its Node and Python samples, copied from the page, create a lead on the real server", async () => {
    const cli = cliFor(env)
    const demo = json(await cli("demo", "--json"))
    json(await cli("property", "add", "--org", demo.organization_id, "--codigo", "ABC-1234", "--json"))
    await page.goto(`${server.baseUrl}/v1/docs`)
    const sample = async (name: string) => (await page.locator(`pre[data-sample="${name}"]`).textContent())!
    const dir = await mkdtemp(path.join(tmpdir(), "lead-intake-samples-"))
    try {
      await writeFile(path.join(dir, "sample.mjs"), await sample("node"))
      await writeFile(path.join(dir, "sample.py"), await sample("python"))
      const run = (command: string, file: string) =>
        promisify(execFile)(command, [path.join(dir, file)], {
          cwd: projectRoot,
          env: { ...process.env, LEAD_INTAKE_KEY: demo.key }
        })
      const node = await run(process.execPath, "sample.mjs")
      expect(node.stdout).toMatch(/^created [0-9a-f-]{36}\n$/)
      const python = await run("python3", "sample.py")
      expect(python.stdout, "the same Idempotency-Key and body replay the first answer").toBe(node.stdout)
      const curl = await sample("curl")
      expect(curl).toContain(`${server.baseUrl}/v1/leads`)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it("looks right (screenshot in docs/api-docs.png)", async () => {
    await page.goto(`${server.baseUrl}/v1/docs`)
    await page.screenshot({ path: path.join(projectRoot, "docs", "api-docs.png") })
    const text = await page.locator("main").innerText()
    expect(text).toContain("Quick start")
  })
})
