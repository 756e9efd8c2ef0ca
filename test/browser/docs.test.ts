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

describe("GET /v1/docs in a browser", { timeout: processTimeout }, () => {
  let env: Env
  let server: RunningServer
  let browser: Browser
  let page: Page
  const requested: Array<string> = []
  const problems: Array<string> = []

  beforeAll(async () => {
    env = await freshDatabaseEnv()
    server = await startServer(await freePort(), { env })
    browser = await launch()
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    page.on("request", (request) => {
      requested.push(request.url())
    })
    page.on("pageerror", (error) => problems.push(error.message))
    page.on("console", (message) => {
      if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) {
        problems.push(message.text())
      }
    })
    const response = await page.goto(`${server.baseUrl}/v1/docs`)
    expect(response?.status()).toBe(200)
    await page.locator('[id$="/description/quick-start"]').first().waitFor()
  })

  afterAll(async () => {
    await browser?.close()
    await server?.stop("SIGKILL")
  })

  it("loads nothing from any other host", async () => {
    expect(requested.length).toBeGreaterThan(0)
    for (const url of requested) expect(new URL(url).origin).toBe(server.baseUrl)
  })

  it("sends a tight Content-Security-Policy, and the renderer runs under it without an error", async () => {
    const response = await fetch(`${server.baseUrl}/v1/docs`)
    const policy = response.headers.get("content-security-policy")!
    expect(policy).toContain("default-src 'none'")
    expect(policy).toContain("script-src 'self';")
    expect(policy).toContain("connect-src 'self'")
    expect(policy).not.toMatch(/unsafe-eval|https?:/)
    expect(problems).toEqual([])
    const script = await fetch(`${server.baseUrl}/v1/docs?asset=scalar.js`)
    expect(script.status).toBe(200)
    expect(script.headers.get("content-type")).toMatch(/^text\/javascript/)
  })

  it("renders the guide from the document's description, with the webhooks and the versioning policy", async () => {
    for (const slug of [
      "quick-start",
      "authentication",
      "idempotency",
      "dry-run",
      "rate-limits",
      "request-ids",
      "webhooks",
      "versioning",
      "errors",
      "license"
    ]) {
      expect(await page.locator(`[id$="/description/${slug}"]`).count(), slug).toBeGreaterThan(0)
    }
    const text = await page.locator("body").innerText()
    expect(text).toContain("Lead Intake API")
    expect(text).toContain("Quick start")
    expect(text).toMatch(/Webhooks/)
    const document = (await (await fetch(`${server.baseUrl}/v1/openapi.json`)).json()) as {
      info: { version: string }
      webhooks: Record<string, unknown>
    }
    expect(document.info.version).toBe("1.2.0")
    expect(Object.keys(document.webhooks)).toEqual([
      "lead.created",
      "lead.enriched",
      "lead.erased",
      "webhook.test"
    ])
  })

  it("offers request samples in curl, Node, Python, PHP and Go", async () => {
    const document = (await (await fetch(`${server.baseUrl}/v1/openapi.json`)).json()) as {
      paths: Record<string, { post?: { "x-codeSamples"?: Array<{ label: string }> } }>
    }
    expect(document.paths["/v1/leads"]!.post!["x-codeSamples"]!.map((sample) => sample.label)).toEqual([
      "curl",
      "Node (fetch)",
      "Python",
      "PHP",
      "Go"
    ])
    const libraries = await page.locator("body").innerText()
    for (const client of ["Shell", "Node.js", "PHP", "Python"]) expect(libraries).toContain(client)
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
    /** The heading of `code`'s explanation, by the id the renderer gives it. */
    const headingOf = (probe: Page, code: string) =>
      probe.locator(`h3[id$="/description/${code.replaceAll("_", "-")}"]`)
    // A partner follows a served docs_url into a new tab: the page loads and lands on the code.
    for (const url of served) {
      const code = new URL(url).hash.slice(1)
      const probe = await browser.newPage({ viewport: { width: 1280, height: 900 } })
      await probe.goto(url)
      const heading = headingOf(probe, code)
      await heading.waitFor()
      expect(await heading.textContent()).toContain(code)
      await expect
        .poll(async () => (await heading.boundingBox())?.y ?? 10_000, { timeout: 10_000, message: url })
        .toBeLessThan(900)
      expect((await heading.boundingBox())!.y, url).toBeGreaterThanOrEqual(-1)
      await probe.close()
    }
    // Every other code's docs_url lands the same way: the renderer finds its heading by the anchor
    // the served ones use, and every code has that heading, once.
    for (const code of errorCodes) {
      expect(await headingOf(page, code).count(), code).toBe(1)
      expect(await headingOf(page, code).textContent(), code).toContain(code)
    }
  })

  it("its Node and Python samples create a lead on the real server", async () => {
    const cli = cliFor(env)
    const demo = json(await cli("demo", "--json"))
    // the samples name the demo's own property (DEM-0001), so they run against a demo as printed
    expect(demo.organization_id).toBeDefined()
    const document = (await (await fetch(`${server.baseUrl}/v1/openapi.json`)).json()) as {
      paths: Record<string, { post?: { "x-codeSamples"?: Array<{ label: string; source: string }> } }>
    }
    const samples = document.paths["/v1/leads"]!.post!["x-codeSamples"]!
    const sample = (label: string) => samples.find((s) => s.label === label)!.source
    const dir = await mkdtemp(path.join(tmpdir(), "lead-intake-samples-"))
    try {
      await writeFile(path.join(dir, "sample.mjs"), sample("Node (fetch)"))
      await writeFile(path.join(dir, "sample.py"), sample("Python"))
      const run = (command: string, file: string) =>
        promisify(execFile)(command, [path.join(dir, file)], {
          cwd: projectRoot,
          env: { ...process.env, LEAD_INTAKE_KEY: demo.key }
        })
      const node = await run(process.execPath, "sample.mjs")
      expect(node.stdout).toMatch(/^created [0-9a-f-]{36}\n$/)
      const python = await run("python3", "sample.py")
      expect(python.stdout, "the same Idempotency-Key and body replay the first answer").toBe(node.stdout)
      expect(sample("curl")).toContain(`${server.baseUrl}/v1/leads`)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it("looks right (screenshot in docs/api-docs.png)", async () => {
    await page.goto(`${server.baseUrl}/v1/docs`)
    await page.locator('[id$="/description/quick-start"]').first().waitFor()
    await page.screenshot({ path: path.join(projectRoot, "docs", "api-docs.png") })
  })
})
