import { randomBytes } from "node:crypto"
import { readFile } from "node:fs/promises"
import * as path from "node:path"
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { consolePages } from "../../AdminApi/Pages.ts"
import { htmlLang } from "../../Domain/Locale.ts"
import { consoleDirectory } from "../../Platform/PackageFiles.ts"
import { pathOf } from "../Http/RequestContext.ts"
import { Preferences } from "../Preferences.ts"
import { en } from "../web/messages/en.ts"
import { es } from "../web/messages/es.ts"
import { pageLanguage } from "./PageLanguage.ts"

/** Every path the console's client routes to (its pages and the shell's own sign-in): each answers the same shell. */
export const pagePaths = ["/", "/login", ...consolePages.map((page) => page.path)] as const

export const contentSecurityPolicy = (nonce: string) =>
  [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}'`,
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'"
  ].join("; ")

const contentTypes: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".json": "application/json",
  ".map": "application/json"
}

/** Flat names only: no separators, no dot files, so nothing outside the assets folder can be named. */
const assetName = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/

const notFound = HttpServerResponse.text("Not found", { status: 404 })

/**
 * The shell is read on each request (it is small, and a rebuilt console shows without a restart);
 * its `{{nonce}}` placeholders get a fresh nonce that the CSP names, its language and words the operator's (`pageLanguage`).
 */
const page = Effect.gen(function* () {
  const shell = yield* Effect.promise(() => readFile(path.join(consoleDirectory(), "index.html"), "utf8"))
  const nonce = randomBytes(16).toString("base64")
  const language = yield* pageLanguage
  const words = language === "en" ? en : es
  const filled = shell
    .replaceAll("{{nonce}}", nonce)
    .replace('<html lang="en">', `<html lang="${htmlLang(language)}">`)
    .replaceAll("{{title}}", words.meta.appTitle)
    .replaceAll("{{skipToContent}}", words.shell.skipToContent)
    .replaceAll("{{needsJavaScript}}", words.shell.needsJavaScript)
  return HttpServerResponse.text(filled, {
    contentType: "text/html; charset=utf-8",
    headers: { "content-security-policy": contentSecurityPolicy(nonce), "cache-control": "no-store" }
  })
})

const asset = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const name = decodeURIComponentSafe(pathOf(request).slice("/assets/".length))
  if (name === undefined || !assetName.test(name)) return notFound
  const extension = name.slice(name.lastIndexOf("."))
  const contentType = contentTypes[extension]
  if (contentType === undefined) return notFound
  const body = yield* Effect.promise(() =>
    readFile(path.join(consoleDirectory(), "assets", name)).then(
      (bytes) => bytes as Uint8Array | undefined,
      () => undefined
    )
  )
  if (body === undefined) return notFound
  return HttpServerResponse.uint8Array(body, {
    contentType,
    headers: { "cache-control": "public, max-age=300" }
  })
})

const decodeURIComponentSafe = (text: string) => {
  try {
    return decodeURIComponent(text)
  } catch {
    return undefined
  }
}

/** Needs `Preferences` when built: the shell reads the signed-in operator's language. */
export const layerPages = Layer.unwrap(
  Effect.map(Effect.service(Preferences), (preferences) =>
    Layer.mergeAll(
      HttpRouter.add("GET", "/assets/*", asset),
      ...pagePaths.map((route) =>
        HttpRouter.add("GET", route, Effect.provideService(page, Preferences, preferences))
      )
    )
  )
)
