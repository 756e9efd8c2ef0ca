import { describe, expect, it } from "vitest"
import { errorCodes } from "../../src/Api/Api.ts"
import { openApiDocument } from "../../src/Api/OpenApiDocument.ts"
import { markdown, renderDocs } from "../../src/Intake/Http/Docs.ts"

const document = openApiDocument("https://leads.example.test")
type Rendered = Parameters<typeof renderDocs>[0]

describe("the docs page renderer", () => {
  const page = renderDocs(document as unknown as Rendered)

  it("has a section per guide, operation and error code, each linked from the navigation", () => {
    const nav = page.slice(page.indexOf("<nav"), page.indexOf("</nav>"))
    const ids = [
      "quick-start",
      "authentication",
      "idempotency",
      "dry-run",
      "rate-limits",
      "request-ids",
      "errors",
      "reference",
      "license",
      ...errorCodes,
      ...Object.values(document.paths).flatMap((item) =>
        Object.values(item as Record<string, { operationId: string }>).map(
          (operation) => `op-${operation.operationId.replace(/[^a-z0-9]+/gi, "-").toLowerCase()}`
        )
      )
    ]
    for (const id of ids) {
      expect(page, id).toContain(`id="${id}"`)
      expect(nav, id).toContain(`href="#${id}"`)
    }
    expect(page).not.toContain('id="webhooks"')
  })

  it("uses the document's server in its samples", () => {
    const text = page.replaceAll("&quot;", '"').replaceAll("&#39;", "'").replaceAll("&amp;", "&")
    expect(text).toContain("curl -sS -X POST https://leads.example.test/v1/leads")
    expect(text).toContain('fetch("https://leads.example.test/v1/leads"')
    expect(text).toContain('    "https://leads.example.test/v1/leads",')
  })

  it("adds the webhooks chapter from Markdown when there is one", () => {
    const withWebhooks = renderDocs(document as unknown as Rendered, {
      webhooks:
        "# Webhooks\n\nSigned with **HMAC**.\n\n## Retries\n\n- up to `8` tries\n\n```\nX-Signature: t=1,v1=abc\n```\n"
    })
    expect(withWebhooks).toContain('<h2 id="webhooks">Webhooks</h2>')
    expect(withWebhooks).toContain('<a href="#webhooks">Webhooks</a>')
    expect(withWebhooks).toContain("<p>Signed with <strong>HMAC</strong>.</p>")
    expect(withWebhooks).toContain('<h3 id="webhooks-retries">Retries</h3>')
    expect(withWebhooks).toContain("<li>up to <code>8</code> tries</li>")
    expect(withWebhooks).toContain("X-Signature: t=1,v1=abc")
  })

  it("escapes Markdown's HTML and drops links that are not http(s), anchors or paths", () => {
    const html = markdown("A <script>alert(1)</script> and [x](javascript:alert(1)) and [y](#errors)")
    expect(html).not.toContain("<script>")
    expect(html).not.toContain("javascript:")
    expect(html).toContain('<a href="#errors">y</a>')
  })
})
