import { errorCatalog, errorCodes } from "../Api.ts"
import { Limits } from "../Domain/LeadRequest.ts"

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!
  )

const code = (text: string) => escapeHtml(text).replace(/`([^`]+)`/g, "<code>$1</code>")

/** The human documentation: self-contained (no request to any other host), one anchor per error code. */
export const docsPage = (publicBaseUrl: string, endpoints: ReadonlyArray<string>) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Lead Intake API v1</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1d2330}
code,pre{font-family:ui-monospace,monospace;background:#f3f4f6;border-radius:4px}
code{padding:0 .25em}pre{padding:1rem;overflow:auto}
table{border-collapse:collapse;width:100%}td,th{border:1px solid #d6d9e0;padding:.35rem .5rem;text-align:left;vertical-align:top}
section:target{background:#fff8db}
</style>
</head>
<body>
<h1>Lead Intake API v1</h1>
<p>Server-to-server HTTP/JSON API that creates leads in your organization's CRM, or enriches the existing lead
with the same phone. Call it from your backend: the key must never reach a browser, and no CORS headers are sent.</p>
<p>Machine-readable contract: <a href="${escapeHtml(publicBaseUrl)}/v1/openapi.json"><code>GET /v1/openapi.json</code></a> (OpenAPI 3.1).</p>

<h2 id="endpoints">Endpoints</h2>
<ul>${endpoints.map((e) => `<li><code>${escapeHtml(e)}</code></li>`).join("")}</ul>

<h2 id="authentication">Authentication</h2>
<p>Send <code>Authorization: Bearer lk_live_…</code>. Each origin has one active key; it is shown once when generated,
and afterwards only its 16-character prefix. A revoked key answers <a href="#invalid_key"><code>invalid_key</code></a> from that instant.</p>

<h2 id="create">POST /v1/leads</h2>
<pre>curl -X POST ${escapeHtml(publicBaseUrl)}/v1/leads \\
  -H "Authorization: Bearer $LEAD_INTAKE_KEY" \\
  -H "Content-Type: application/json" \\
  -H "Idempotency-Key: form-4711" \\
  -d '{"nombre":"Ana López","telefono":"+52 55 1234 5678","email":"ana@example.com","mensaje":"Me interesa","propiedad":{"codigo":"ABC-1234"},"extras":{"presupuesto":2500000}}'</pre>
<p>201 <code>created</code> for a new lead, 200 <code>enriched</code> when a lead with the same phone exists (only its
empty fields are filled, it is not reassigned, and <code>mensaje</code> and <code>extras</code> become a new note).
<code>X-Service-Dry-Run: true</code> validates, resolves the property and looks for the match without writing anything.</p>
<table>
<tr><th>Field</th><th>Rules</th></tr>
<tr><td><code>nombre</code></td><td>Required string; trimmed and whitespace-collapsed, 1 to ${Limits.nombre} characters.</td></tr>
<tr><td><code>telefono</code></td><td>Optional; at least 10 digits, only digits, spaces, hyphens, dots, parentheses and a leading <code>+</code>. The match key for an existing lead.</td></tr>
<tr><td><code>email</code></td><td>Optional; <code>local@domain.tld</code>, stored lowercase.</td></tr>
<tr><td><code>mensaje</code></td><td>Optional; at most ${Limits.mensaje} characters (longer is rejected, never trimmed).</td></tr>
<tr><td><code>propiedad</code></td><td>Optional; exactly one of <code>codigo</code> (<code>ABC-1234</code>), <code>external_code</code>, <code>id</code> (UUID).</td></tr>
<tr><td><code>extras</code></td><td>Optional; up to ${Limits.extrasEntries} pairs, keys up to ${Limits.extrasKey} characters, values a string up to ${Limits.extrasValue} characters, a number, a boolean or null.</td></tr>
</table>
<p>Body at most ${Limits.bodyBytes} bytes. Unknown fields are rejected. Rate limit: 60 requests per minute per key
unless your origin has another limit; every response carries <code>X-RateLimit-Limit</code>, <code>X-RateLimit-Remaining</code>
and <code>X-RateLimit-Reset</code>. <code>Idempotency-Key</code> (1-200 printable ASCII) makes retries safe for 24 hours.</p>

<h2 id="errors">Errors</h2>
<p>Every error has the body <code>{"error":{"code","message","field"?,"docs_url"},"request_id"}</code>. Branch on <code>code</code>.</p>
${errorCodes
  .map((c) => {
    const entry = errorCatalog[c]
    return `<section id="${c}"><h3><code>${c}</code> (${entry.status})</h3><p>${code(entry.description)}</p><p><strong>Retry:</strong> ${code(entry.retry)}</p></section>`
  })
  .join("\n")}
</body>
</html>
`
