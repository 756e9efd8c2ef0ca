import { readFileSync } from "node:fs"
import { errorCatalog, errorCodes } from "../../Api/Api.ts"
import { requestExamples } from "../../Api/Documentation.ts"
import { Limits } from "../../Api/LeadRequest.ts"
import { openApiDocument } from "../../Api/OpenApiDocument.ts"
import { webhooksGuide } from "../../Platform/PackageFiles.ts"

/**
 * The human documentation, rendered from the OpenAPI document the server serves: every operation,
 * parameter, header and example comes from it. Self-contained: no request to any other host.
 */

type Json = Record<string, unknown>

interface Media {
  readonly schema?: Json
  readonly examples?: Record<string, { summary?: string; description?: string; value: unknown }>
}

interface Response {
  readonly description?: string
  readonly headers?: Record<string, { description?: string; required?: boolean; schema?: Json }>
  readonly content?: Record<string, Media>
}

interface Operation {
  readonly operationId?: string
  readonly summary?: string
  readonly description?: string
  readonly tags?: ReadonlyArray<string>
  readonly security?: ReadonlyArray<Json>
  readonly parameters?: ReadonlyArray<{
    name: string
    in: string
    required?: boolean
    description?: string
    schema?: Json
    example?: unknown
  }>
  readonly requestBody?: { content?: Record<string, Media>; required?: boolean }
  readonly responses?: Record<string, Response>
}

interface Document {
  readonly info: { title: string; version: string; description?: string; license?: { name: string } }
  readonly servers?: ReadonlyArray<{ url: string }>
  readonly paths: Record<string, Record<string, Operation>>
  readonly components?: { schemas?: Record<string, Json> }
  readonly security?: ReadonlyArray<Json>
}

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!
  )

/** Escapes text and turns `backticks` into <code>. */
const prose = (text: string) => escapeHtml(text).replace(/`([^`]+)`/g, "<code>$1</code>")

const pre = (text: string, label?: string) =>
  `<pre${label === undefined ? "" : ` data-sample="${escapeHtml(label)}"`}><code>${escapeHtml(text)}</code></pre>`

const json = (value: unknown) => JSON.stringify(value, null, 2)

const deref = (document: Document, schema: Json | undefined): Json => {
  const ref = schema?.$ref
  if (typeof ref !== "string") return schema ?? {}
  const name = ref.replace("#/components/schemas/", "")
  return deref(document, document.components?.schemas?.[name])
}

const typeOf = (document: Document, raw: Json | undefined): string => {
  const schema = deref(document, raw)
  const members = (schema.anyOf ?? schema.oneOf) as ReadonlyArray<Json> | undefined
  if (members !== undefined)
    return [...new Set(members.map((member) => typeOf(document, member)))].join(" or ")
  if (schema.enum !== undefined)
    return (schema.enum as ReadonlyArray<unknown>).map((v) => JSON.stringify(v)).join(" | ")
  if (schema.const !== undefined) return JSON.stringify(schema.const)
  return String(schema.type ?? "any")
}

/** The description of a schema, looking through `anyOf` with `null` (optional, nullable fields). */
const descriptionOf = (document: Document, raw: Json | undefined): string => {
  const schema = deref(document, raw)
  if (typeof schema.description === "string") return schema.description
  const members = (schema.anyOf ?? schema.oneOf) as ReadonlyArray<Json> | undefined
  return (members ?? []).map((member) => descriptionOf(document, member)).find((text) => text !== "") ?? ""
}

const anchor = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "")

const operations = (document: Document) =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({
      method: method.toUpperCase(),
      path,
      operation,
      id: `op-${anchor(operation.operationId ?? `${method} ${path}`)}`
    }))
  )

const examplesHtml = (media: Media | undefined) =>
  Object.entries(media?.examples ?? {})
    .map(
      ([name, example]) =>
        `<figure class="example" id="example-${anchor(name)}"><figcaption>${prose(example.summary ?? name)}${
          example.description === undefined ? "" : ` <span class="muted">${prose(example.description)}</span>`
        }</figcaption>${pre(typeof example.value === "string" ? example.value : json(example.value))}</figure>`
    )
    .join("")

const table = (head: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) =>
  rows.length === 0
    ? ""
    : `<table><thead><tr>${head.map((h) => `<th>${h}</th>`).join("")}</tr></thead><tbody>${rows
        .map((row) => `<tr>${row.map((cell) => `<td>${cell}</td>`).join("")}</tr>`)
        .join("")}</tbody></table>`

const schemaFields = (document: Document, raw: Json | undefined) => {
  const schema = deref(document, raw)
  const required = new Set((schema.required ?? []) as ReadonlyArray<string>)
  return table(
    ["Field", "Type", "Description"],
    Object.entries((schema.properties ?? {}) as Record<string, Json>).map(([name, field]) => [
      `<code>${escapeHtml(name)}</code>${required.has(name) ? ' <span class="req">required</span>' : ""}`,
      `<code>${escapeHtml(typeOf(document, field))}</code>`,
      prose(descriptionOf(document, field))
    ])
  )
}

const statusClass = (status: string) =>
  status.startsWith("2") ? "ok" : status.startsWith("4") ? "warn" : "bad"

const operationHtml = (document: Document, entry: ReturnType<typeof operations>[number]) => {
  const { operation, method, path, id } = entry
  const parameters = table(
    ["Name", "In", "Description"],
    (operation.parameters ?? []).map((parameter) => [
      `<code>${escapeHtml(parameter.name)}</code>${parameter.required ? ' <span class="req">required</span>' : ""}`,
      escapeHtml(parameter.in),
      `${prose(parameter.description ?? "")}${
        parameter.example === undefined
          ? ""
          : ` <span class="muted">Example: <code>${escapeHtml(String(parameter.example))}</code></span>`
      }`
    ])
  )
  const secured = (operation.security ?? document.security ?? []).some((s) => Object.keys(s).length > 0)
  const body = operation.requestBody?.content?.["application/json"]
  const responses = Object.entries(operation.responses ?? {})
    .map(([status, response]) => {
      const headers = table(
        ["Header", "Description"],
        Object.entries(response.headers ?? {}).map(([name, header]) => [
          `<code>${escapeHtml(name)}</code>${header.required ? ' <span class="req">always</span>' : ""}`,
          prose(header.description ?? "")
        ])
      )
      const media = Object.values(response.content ?? {})
      return `<div class="response" id="${id}-${status}"><h4><span class="status ${statusClass(status)}">${escapeHtml(
        status
      )}</span> ${prose(response.description ?? "")}</h4>${headers}${media.map(examplesHtml).join("")}</div>`
    })
    .join("")
  return `<section class="operation" id="${id}">
<h3><span class="method">${method}</span> <code>${escapeHtml(path)}</code></h3>
<p class="summary">${prose(operation.summary ?? "")}${secured ? ' · <a href="#authentication">API key required</a>' : " · no key needed"}</p>
${operation.description === undefined ? "" : `<p>${prose(operation.description)}</p>`}
${parameters === "" ? "" : `<h4>Headers</h4>${parameters}`}
${body === undefined ? "" : `<h4>Request body <span class="muted">application/json</span></h4>${schemaFields(document, body.schema)}${examplesHtml(body)}`}
<h4>Responses</h4>${responses}
</section>`
}

/** Every example of a code's responses in the document (the first is shown with the code). */
const errorExampleOf = (document: Document, code: string) => {
  for (const { operation } of operations(document)) {
    for (const response of Object.values(operation.responses ?? {})) {
      const example = response.content?.["application/json"]?.examples?.[code]
      if (example !== undefined) return example.value
    }
  }
  return undefined
}

/** A JSON value written as a Python literal. */
const python = (value: unknown, indent = ""): string => {
  const inner = `${indent}    `
  if (value === null) return "None"
  if (value === true) return "True"
  if (value === false) return "False"
  if (Array.isArray(value)) return `[${value.map((item) => python(item, indent)).join(", ")}]`
  if (typeof value === "object") {
    const entries = Object.entries(value).map(
      ([key, item]) => `${inner}${JSON.stringify(key)}: ${python(item, inner)},`
    )
    return entries.length === 0 ? "{}" : `{\n${entries.join("\n")}\n${indent}}`
  }
  return JSON.stringify(value)
}

const samples = (baseUrl: string) => {
  const body = requestExamples.full!.value
  const curl = [
    `curl -sS -X POST ${baseUrl}/v1/leads \\`,
    `  -H "Authorization: Bearer $LEAD_INTAKE_KEY" \\`,
    `  -H "Content-Type: application/json" \\`,
    `  -H "Idempotency-Key: form-4711" \\`,
    `  -d '${JSON.stringify({ nombre: "Ana López", telefono: "+52 55 1234 5678", propiedad: { codigo: "ABC-1234" } })}'`
  ].join("\n")
  const node = `// Node 18+ (fetch is built in); the key comes from your secrets, never a browser.
const response = await fetch("${baseUrl}/v1/leads", {
  method: "POST",
  headers: {
    authorization: \`Bearer \${process.env.LEAD_INTAKE_KEY}\`,
    "content-type": "application/json",
    "idempotency-key": "form-4711" // your own id for this lead: retries are safe
  },
  body: JSON.stringify(${json(body).replaceAll("\n", "\n  ")})
})
const result = await response.json()
if (!response.ok) {
  // Branch on result.error.code; result.error.docs_url explains it.
  throw new Error(\`\${result.error.code}: \${result.error.message}\`)
}
console.log(result.status, result.lead_id) // "created" 201 or "enriched" 200`
  const pythonSample = `# Python 3, standard library only.
import json, os, urllib.request, urllib.error

request = urllib.request.Request(
    "${baseUrl}/v1/leads",
    method="POST",
    headers={
        "Authorization": "Bearer " + os.environ["LEAD_INTAKE_KEY"],
        "Content-Type": "application/json",
        "Idempotency-Key": "form-4711",
    },
    data=json.dumps(${python(body, "    ")}).encode("utf-8"),
)
try:
    with urllib.request.urlopen(request, timeout=10) as response:
        result = json.load(response)
        print(result["status"], result["lead_id"])
except urllib.error.HTTPError as failure:
    error = json.load(failure)["error"]
    print(failure.code, error["code"], error["message"], error["docs_url"])`
  return { curl, node, python: pythonSample }
}

/** A small Markdown subset (headings, paragraphs, lists, fenced code, tables) for docs/*.md sections. */
export const markdown = (text: string, headingShift = 1): string => {
  const lines = text.replaceAll("\r\n", "\n").split("\n")
  const out: Array<string> = []
  const inline = (line: string) =>
    prose(line)
      .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
      .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_, label: string, href: string) =>
        /^(https?:|#|\/)/.test(href) ? `<a href="${href}">${label}</a>` : label
      )
  let i = 0
  while (i < lines.length) {
    const line = lines[i]!
    if (line.startsWith("```")) {
      const code: Array<string> = []
      i++
      while (i < lines.length && !lines[i]!.startsWith("```")) code.push(lines[i++]!)
      i++
      out.push(pre(code.join("\n")))
      continue
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line)
    if (heading !== null) {
      const level = Math.min(6, heading[1]!.length + headingShift)
      out.push(`<h${level} id="webhooks-${anchor(heading[2]!)}">${inline(heading[2]!)}</h${level}>`)
      i++
      continue
    }
    if (/^\s*[-*]\s+/.test(line)) {
      const items: Array<string> = []
      while (i < lines.length && /^\s*[-*]\s+/.test(lines[i]!))
        items.push(lines[i++]!.replace(/^\s*[-*]\s+/, ""))
      out.push(`<ul>${items.map((item) => `<li>${inline(item)}</li>`).join("")}</ul>`)
      continue
    }
    if (line.startsWith("|")) {
      const rows: Array<ReadonlyArray<string>> = []
      while (i < lines.length && lines[i]!.startsWith("|")) {
        const cells = lines[i++]!.replace(/^\||\|$/g, "")
          .split("|")
          .map((cell) => cell.trim())
        if (!cells.every((cell) => /^:?-+:?$/.test(cell))) rows.push(cells)
      }
      out.push(
        table(
          (rows[0] ?? []).map(inline),
          rows.slice(1).map((row) => row.map(inline))
        )
      )
      continue
    }
    if (line.trim() === "") {
      i++
      continue
    }
    const paragraph: Array<string> = []
    while (i < lines.length && lines[i]!.trim() !== "" && !/^(#|```|\||\s*[-*]\s)/.test(lines[i]!)) {
      paragraph.push(lines[i++]!)
    }
    out.push(`<p>${inline(paragraph.join(" "))}</p>`)
  }
  return out.join("\n")
}

/** The webhooks chapter, when `docs/webhooks.md` exists in the package. */
const webhooksMarkdown = (): string | undefined => {
  try {
    return readFileSync(webhooksGuide(), "utf8")
  } catch {
    return undefined
  }
}

const style = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.55 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d2330;background:#fff}
a{color:#1f5fbf}
nav{position:fixed;top:0;left:0;bottom:0;width:17rem;overflow-y:auto;padding:1.25rem 1rem;background:#f6f7f9;border-right:1px solid #e2e5ea;font-size:.92rem}
nav .brand{font-weight:700;font-size:1.05rem;margin:0 0 .75rem;display:block;color:#1d2330;text-decoration:none}
nav ul{list-style:none;margin:0;padding:0}nav li{margin:.1rem 0}
nav ul ul{margin:.15rem 0 .4rem .9rem;font-size:.88rem}
nav a{color:#334155;text-decoration:none;display:block;padding:.1rem .35rem;border-radius:4px}
nav a:hover{background:#e6eaf0}
nav code{background:none;padding:0;font-size:.95em}
main{margin-left:17rem;padding:1.5rem 2.5rem 4rem;max-width:60rem}
h1{margin:.2rem 0 .5rem;font-size:2rem}
h2{margin:2.5rem 0 .75rem;padding-top:.5rem;border-top:1px solid #e2e5ea;font-size:1.5rem}
h3{margin:1.75rem 0 .5rem;font-size:1.2rem}h4{margin:1.25rem 0 .4rem;font-size:1rem}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.88em}
code{background:#f1f3f6;border-radius:4px;padding:0 .25em}
pre{background:#0f172a;color:#e2e8f0;padding:.9rem 1rem;border-radius:6px;white-space:pre-wrap;overflow-wrap:anywhere;margin:.5rem 0 1rem}
pre code{background:none;padding:0;color:inherit;font-size:1em}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1rem;font-size:.93rem}
td,th{border:1px solid #e2e5ea;padding:.4rem .55rem;text-align:left;vertical-align:top;overflow-wrap:anywhere}
td:not(:last-child){white-space:nowrap;overflow-wrap:normal}
th{background:#f6f7f9}
figure.example{margin:.5rem 0}figure.example figcaption{font-size:.9rem;font-weight:600}
.muted{color:#64748b;font-weight:400}
.req{font-size:.75rem;color:#9a3412;background:#ffedd5;border-radius:3px;padding:0 .3em}
.method{display:inline-block;font-size:.8rem;font-weight:700;color:#fff;background:#1f5fbf;border-radius:4px;padding:.05rem .45rem;vertical-align:middle}
.status{display:inline-block;min-width:2.6rem;text-align:center;font-size:.8rem;font-weight:700;border-radius:4px;padding:.05rem .35rem;color:#fff}
.status.ok{background:#15803d}.status.warn{background:#b45309}.status.bad{background:#b91c1c}
.operation{border:1px solid #e2e5ea;border-radius:8px;padding:.25rem 1.25rem 1rem;margin:1rem 0}
.response{border-left:3px solid #e2e5ea;padding-left:.9rem;margin:.75rem 0}
section.error{border:1px solid #e2e5ea;border-radius:8px;padding:.1rem 1.1rem .5rem;margin:.9rem 0}
section.error:target{background:#fffbea;border-color:#e5c452}
.operation:target{border-color:#1f5fbf}
@media (max-width:60rem){nav{position:static;width:auto;border-right:none;border-bottom:1px solid #e2e5ea}main{margin-left:0;padding:1rem}td:not(:last-child){white-space:normal;overflow-wrap:anywhere}}
`

/** Renders the page for an OpenAPI document produced by `openApiDocument`. */
export const renderDocs = (document: Document, options: { readonly webhooks?: string | undefined } = {}) => {
  const baseUrl = document.servers?.[0]?.url ?? ""
  const ops = operations(document)
  const sample = samples(baseUrl)
  const leads = ops.find((op) => op.method === "POST" && op.path === "/v1/leads")
  const leadHeaders = leads?.operation.responses?.["201"]?.headers ?? {}
  const headerRow = (name: string) => {
    const header = leadHeaders[name]
    return header === undefined ? [] : [[`<code>${escapeHtml(name)}</code>`, prose(header.description ?? "")]]
  }
  const dryRunExamples = leads?.operation.responses?.["200"]?.content?.["application/json"]?.examples ?? {}
  const dryRun = Object.entries(dryRunExamples).filter(([name]) => name.startsWith("dry_run"))
  const guides: ReadonlyArray<readonly [string, string]> = [
    ["quick-start", "Quick start"],
    ["authentication", "Authentication"],
    ["idempotency", "Idempotency"],
    ["dry-run", "Dry-run"],
    ["rate-limits", "Rate limits"],
    ["request-ids", "Request ids"],
    ["errors", "Errors"],
    ...(options.webhooks === undefined ? [] : [["webhooks", "Webhooks"] as const])
  ]
  const nav = `<nav aria-label="Contents"><a class="brand" href="#top">${escapeHtml(document.info.title)}</a><ul>
${guides
  .map(
    ([id, title]) =>
      `<li><a href="#${id}">${title}</a>${
        id === "errors"
          ? `<ul>${errorCodes.map((code) => `<li><a href="#${code}"><code>${code}</code></a></li>`).join("")}</ul>`
          : ""
      }</li>`
  )
  .join("\n")}
<li><a href="#reference">Reference</a><ul>${ops
    .map((op) => `<li><a href="#${op.id}">${op.method} ${escapeHtml(op.path)}</a></li>`)
    .join("")}</ul></li>
<li><a href="#license">License</a></li>
</ul></nav>`
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(document.info.title)} v${escapeHtml(document.info.version)}</title>
<style>${style}</style>
</head>
<body>
${nav}
<main id="top">
<h1>${escapeHtml(document.info.title)} <span class="muted">v${escapeHtml(document.info.version)}</span></h1>
<p>${prose(document.info.description ?? "")}</p>
<p>Base URL: <code>${escapeHtml(baseUrl)}</code>. Machine-readable contract:
<a href="${escapeHtml(baseUrl)}/v1/openapi.json"><code>GET /v1/openapi.json</code></a> (OpenAPI 3.1), from which this page is made.</p>

<h2 id="quick-start">Quick start</h2>
<p>Create or enrich a lead with your origin's API key in <code>LEAD_INTAKE_KEY</code>. A new phone answers
<span class="status ok">201</span> <code>created</code>; a phone your organization already has answers
<span class="status ok">200</span> <code>enriched</code>.</p>
<h3 id="sample-curl">curl</h3>${pre(sample.curl, "curl")}
<h3 id="sample-node">Node (fetch)</h3>${pre(sample.node, "node")}
<h3 id="sample-python">Python</h3>${pre(sample.python, "python")}

<h2 id="authentication">Authentication</h2>
<p>Every <code>POST /v1/leads</code> sends <code>Authorization: Bearer lk_live_…</code>. Each origin (a web form, a chatbot,
a call centre) has one active key; it is shown once when generated, and afterwards only its 16-character prefix
(<code>lk_live_xxxxxxxx</code>). Rotating or revoking a key takes effect on the next request. A missing, malformed,
unknown or revoked key answers <a href="#invalid_key"><code>invalid_key</code></a> (401). Keep the key on your server:
no CORS headers are ever sent, so a browser cannot call the API.</p>

<h2 id="idempotency">Idempotency</h2>
<p>Send an <code>Idempotency-Key</code> (1 to ${Limits.idempotencyKey} printable ASCII characters, your own id for the lead
such as a form submission id) to make retries safe. Within 24 hours the same key with the same body answers the
original status and <code>lead_id</code> again, with <code>replay: true</code> in the body, the header
<code>Idempotent-Replayed: true</code> and a new <code>request_id</code>; nothing is written twice. Keys are per origin.</p>
<ul>
<li>The same key with another body: <a href="#idempotency_conflict"><code>idempotency_conflict</code></a> (409).</li>
<li>The first request with the key still running: <a href="#idempotency_in_progress"><code>idempotency_in_progress</code></a> (409, <code>Retry-After: 1</code>).</li>
<li>Any 4xx or 5xx answer releases the key: retrying with it after <code>internal_error</code> or
<code>temporarily_unavailable</code> creates the lead at most once.</li>
</ul>

<h2 id="dry-run">Dry-run</h2>
<p>With <code>X-Service-Dry-Run: true</code> the request is authenticated, counted, validated, its property resolved and the
matching lead looked up, and nothing is written: the answer (200) says what would happen. <code>Idempotency-Key</code> is
ignored in dry-run. Use it to check a form mapping before going live.</p>
${dryRun.map(([name, example]) => `<figure class="example" id="dry-run-${anchor(name)}"><figcaption>${prose(example.summary ?? name)}</figcaption>${pre(json(example.value))}</figure>`).join("")}

<h2 id="rate-limits">Rate limits</h2>
<p>Each key may send 60 requests per minute unless its origin has another limit. Windows are fixed Unix minutes and
shared by every instance of the service; every authenticated request counts, dry-runs and replays included. Over the
limit the answer is <a href="#rate_limited"><code>rate_limited</code></a> (429) with <code>Retry-After</code>.
Every authenticated response says where you stand:</p>
${table(
  ["Header", "Description"],
  [
    "X-RateLimit-Limit",
    "X-RateLimit-Remaining",
    "X-RateLimit-Reset",
    "RateLimit-Policy",
    "RateLimit"
  ].flatMap(headerRow)
)}

<h2 id="request-ids">Request ids</h2>
<p>Every response, errors and 404s included, has an <code>X-Request-Id</code> header, and JSON bodies repeat it as
<code>request_id</code>. It is generated by the service (an id you send is ignored). Log it, and quote it when you ask
about a request: it finds the request's log line, its trace and its row in the request log.</p>

<h2 id="errors">Errors</h2>
<p>Every error has the same body; branch on <code>error.code</code> (the message may change).
<code>field</code> is present when one field or header is at fault, and <code>docs_url</code> links to the code's
explanation below.</p>
${pre(json({ error: { code: "validation_error", message: "telefono must have at least 10 digits", field: "telefono", docs_url: `${baseUrl}/v1/docs#validation_error` }, request_id: "80ae270d-4a4e-47d4-9e65-65bc350c5e6d" }))}
${errorCodes
  .map((code) => {
    const entry = errorCatalog[code]
    const example = errorExampleOf(document, code)
    return `<section class="error" id="${code}"><h3><code>${code}</code> <span class="status ${statusClass(String(entry.status))}">${entry.status}</span> ${escapeHtml(entry.title)}</h3>
<p>${prose(entry.description)}</p><p><strong>Retry:</strong> ${prose(entry.retry)}</p>${example === undefined ? "" : pre(json(example))}</section>`
  })
  .join("\n")}
${options.webhooks === undefined ? "" : `<h2 id="webhooks">Webhooks</h2>\n${markdown(options.webhooks.replace(/^#\s+.*\n/, ""), 1)}`}

<h2 id="reference">Reference</h2>
${ops.map((op) => operationHtml(document, op)).join("\n")}

<h2 id="license">License</h2>
<p>${escapeHtml(document.info.license?.name ?? "Proprietary")}: this API and its documentation are for the partners of the
organization that issued your key.</p>
</main>
</body>
</html>
`
}

/** The page a server at `publicBaseUrl` serves at `/v1/docs`. */
export const docsPage = (publicBaseUrl: string) =>
  renderDocs(openApiDocument(publicBaseUrl) as unknown as Document, { webhooks: webhooksMarkdown() })
