import { readFile } from "node:fs/promises"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"

/**
 * `GET /v1/docs`: Scalar's API reference (`@scalar/api-reference`, its standalone browser bundle,
 * served from node_modules by this process) rendering `/v1/openapi.json`. The page is a shell with
 * no inline script: the configuration rides on a non-executable `<script type="application/json">`.
 */

/**
 * The renderer's script rides on the docs route itself (`?asset=scalar.js`), so the contract keeps
 * its four routes and the script stays out of the OpenAPI document and the index.
 */
export const docsScriptPath = "/v1/docs?asset=scalar.js"

export const docsAnchorsPath = "/v1/docs?asset=anchors.js"

/**
 * Runs before the renderer: a `docs_url` names its code (`#validation_error`) and the renderer
 * routes its guide's headings as `#description/<slug>`, so the short anchor is rewritten into that;
 * once the heading is rendered it is brought into view, should the renderer's own routing not have.
 */
const anchorsScript = `(() => {
  const hash = decodeURIComponent(location.hash.slice(1))
  if (!/^[a-z][a-z0-9_-]*$/.test(hash)) return
  const slug = hash.replaceAll("_", "-")
  history.replaceState(null, "", "#description/" + slug)
  const deadline = Date.now() + 10000
  const reveal = () => {
    const heading = document.querySelector('h1[id$="/description/' + slug + '"], h2[id$="/description/' + slug + '"], h3[id$="/description/' + slug + '"]')
    if (heading === null) {
      if (Date.now() < deadline) setTimeout(reveal, 100)
      return
    }
    setTimeout(() => {
      const top = heading.getBoundingClientRect().top
      if (top < 0 || top > innerHeight / 2) heading.scrollIntoView({ block: "start" })
    }, 600)
  }
  reveal()
})()
`

/** As tight as the renderer allows: its styles are injected at run time (`'unsafe-inline'`). */
export const docsContentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'"
].join("; ")

const escapeAttribute = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!
  )

/** Scalar's options: nothing fetched from another host, the samples partners asked for first. */
const configuration = {
  url: "/v1/openapi.json",
  withDefaultFonts: false,
  hideClientButton: true,
  hideDarkModeToggle: false,
  showDeveloperTools: "never",
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  defaultHttpClient: { targetKey: "shell", clientKey: "curl" },
  hiddenClients: {
    c: true,
    clojure: true,
    csharp: true,
    dart: true,
    fsharp: true,
    http: ["http1.1"],
    java: true,
    kotlin: true,
    objc: true,
    ocaml: true,
    powershell: true,
    r: true,
    ruby: true,
    rust: true,
    swift: true
  }
}

export const docsPage = (title: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeAttribute(title)}</title>
</head>
<body>
<script id="api-reference" type="application/json" data-url="/v1/openapi.json" data-configuration="${escapeAttribute(JSON.stringify(configuration))}"></script>
<script src="${docsAnchorsPath}"></script>
<script src="${docsScriptPath}"></script>
</body>
</html>
`

const scalarBundle = () =>
  path.join(
    path.dirname(fileURLToPath(import.meta.resolve("@scalar/api-reference"))),
    "browser",
    "standalone.js"
  )

/** The renderer's bundle (4 MB), read on its first request: it changes only with the installed package. */
const loadDocsScript = Effect.promise(() => readFile(scalarBundle())).pipe(
  Effect.map((bundle) =>
    HttpServerResponse.uint8Array(bundle, {
      contentType: "text/javascript; charset=utf-8",
      headers: { "cache-control": "public, max-age=3600", "x-content-type-options": "nosniff" }
    })
  )
)

/** `GET /v1/docs`: the page, or one of its two scripts when asked for it. */
export const docsResponse = (title: string) =>
  Effect.gen(function* () {
    const script = yield* Effect.cached(loadDocsScript)
    const page = HttpServerResponse.text(docsPage(title), {
      contentType: "text/html; charset=utf-8",
      headers: { "content-security-policy": docsContentSecurityPolicy, "x-content-type-options": "nosniff" }
    })
    const anchors = HttpServerResponse.uint8Array(new TextEncoder().encode(anchorsScript), {
      contentType: "text/javascript; charset=utf-8",
      headers: { "cache-control": "public, max-age=300", "x-content-type-options": "nosniff" }
    })
    return (url: string) => {
      const asset = new URL(url, "http://docs").searchParams.get("asset")
      return asset === "scalar.js" ? script : Effect.succeed(asset === "anchors.js" ? anchors : page)
    }
  })
