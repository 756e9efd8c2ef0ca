/**
 * The console's pages, each registered here once. The server answers every `path` with the console's
 * shell (`Console/Server/Pages.ts`); the browser routes it to the page's `module` (`Console/web/app.ts`,
 * whose table of modules is keyed by this list, so a page without a module fails `npm run check`) and
 * titles it with `title`, the key of its name in the message catalogs (`shell.nav`). Pages with `nav`
 * are listed in the navigation, in this order.
 */
export const consolePages = [
  { path: "/overview", title: "overview", module: "overview", nav: true },
  { path: "/origins", title: "origins", module: "origins", nav: true },
  { path: "/requests", title: "requests", module: "requests", nav: true },
  { path: "/leads", title: "leads", module: "leads", nav: true },
  { path: "/leads/:id", title: "leads", module: "lead", nav: false },
  { path: "/catalog", title: "catalog", module: "catalog", nav: true },
  { path: "/capture", title: "capture", module: "capture", nav: true },
  { path: "/webhooks", title: "webhooks", module: "webhooks", nav: true },
  { path: "/audit", title: "audit", module: "audit", nav: true }
] as const

export type ConsolePage = (typeof consolePages)[number]

/** A page's path as a pattern: each `:name` segment matches one segment and is captured. */
export const pathPattern = (path: string) =>
  new RegExp(`^${path.replaceAll(/:[^/]+/g, "([^/]+)").replaceAll("/", "\\/")}$`)
