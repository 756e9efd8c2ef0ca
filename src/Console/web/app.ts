// The console shell: session bootstrap, language, sign-in, navigation, organization switcher and a
// History API router.

import type { SessionInfo } from "../../AdminApi/AdminApi.ts"
import { type ConsolePage, consolePages, pathPattern } from "../../AdminApi/Pages.ts"
import { ApiError, call, canChange, isPlatformAdmin, session, setUnauthenticatedHandler } from "./api.ts"
import {
  catalogs,
  chooseLocale,
  chosenLocale,
  type Locale,
  locale,
  locales,
  rememberChoice,
  setLocale,
  setTimeZone,
  t
} from "./i18n.ts"
import type { Page } from "./page.ts"
import { renderAudit } from "./pages/audit.ts"
import { renderCapture } from "./pages/capture.ts"
import { renderCatalog } from "./pages/catalog.ts"
import { renderLead, renderLeads } from "./pages/leads.ts"
import { renderOrigins } from "./pages/origins.ts"
import { renderOverview } from "./pages/overview.ts"
import { renderRequests } from "./pages/requests.ts"
import { renderWebhooks } from "./pages/webhooks.ts"
import { clear, errorBox, field, h, pageHeader, selectOf, toast } from "./ui.ts"

/** Each page's module, keyed by the registry's names (`AdminApi/Pages.ts`): a page without one does not compile. */
const modules: Record<ConsolePage["module"], Page> = {
  overview: renderOverview,
  origins: renderOrigins,
  requests: renderRequests,
  leads: renderLeads as Page,
  lead: renderLead as Page,
  catalog: renderCatalog as Page,
  capture: renderCapture as Page,
  webhooks: renderWebhooks as Page,
  audit: renderAudit
}

const navigation = consolePages.filter((page) => page.nav)

const routes = consolePages.map((page) => ({ pattern: pathPattern(page.path), page }))

const root = document.getElementById("app")!
let cleanup = () => {}
let main: HTMLElement | null = null
let navList: HTMLUListElement | null = null

const ORG_KEY = "lead-intake.org"

export const navigate = (path: string, { replace = false }: { readonly replace?: boolean } = {}) => {
  if (replace) history.replaceState(null, "", path)
  else history.pushState(null, "", path)
  route()
}

const signedOut = () => {
  session.operator = null
  session.csrfToken = null
  main = null
  const next = location.pathname === "/login" ? "" : location.pathname + location.search
  history.replaceState(null, "", next && next !== "/" ? `/login?next=${encodeURIComponent(next)}` : "/login")
  route()
}

setUnauthenticatedHandler(() => {
  if (session.operator !== null) toast(t.shell.sessionEnded, "warning")
  signedOut()
})

/** The console's words in `next`, and the page's `lang` with them (screen readers pronounce by it). */
const speak = (next: Locale) => {
  setLocale(next)
  document.documentElement.lang = next
}

/** Before anyone signed in: the language chosen in this browser, else the browser's own. */
const preSessionLocale = () => chooseLocale({ saved: chosenLocale(), languages: navigator.languages })

/** The operator's saved language, else the browser's, else the organization's country; its time zone. */
const applyLocale = () => {
  speak(
    chooseLocale({
      saved: session.operator?.language ?? chosenLocale(),
      languages: navigator.languages,
      country: session.settings?.country
    })
  )
  setTimeZone(session.settings?.time_zone)
}

/** A platform administrator's chosen organization's settings; everyone else's come with the session. */
const loadSettings = async () => {
  if (!isPlatformAdmin()) return
  session.settings =
    session.org === null ? null : await call((api) => api.settings.organization({ query: {} }))
}

const renderLogin = () => {
  cleanup()
  cleanup = () => {}
  main = null
  document.title = t.meta.pageTitle(t.login.documentTitle)
  const errorSlot = h("div", { class: "form-error" })
  const email = h("input", { name: "email", type: "email", autocomplete: "username", required: true })
  const password = h("input", {
    name: "password",
    type: "password",
    autocomplete: "current-password",
    required: true
  })
  const button = h("button", { type: "submit", class: "primary wide" }, t.login.submit)
  const form = h(
    "form",
    {
      class: "login-form",
      novalidate: true,
      onSubmit: async (event) => {
        event.preventDefault()
        errorSlot.replaceChildren()
        if (!email.value.trim() || !password.value) {
          errorSlot.replaceChildren(errorBox({ title: t.login.missingTitle, message: t.login.missingText }))
          ;(email.value.trim() ? password : email).focus()
          return
        }
        button.disabled = true
        button.textContent = t.login.submitting
        try {
          const answer = await call(
            (api) => api.session.login({ payload: { email: email.value.trim(), password: password.value } }),
            { expectUnauthenticated: true }
          )
          await startSession(answer)
          const next = new URLSearchParams(location.search).get("next")
          navigate(next?.startsWith("/") && !next.startsWith("//") ? next : "/overview", { replace: true })
        } catch (error) {
          password.value = ""
          errorSlot.replaceChildren(
            errorBox(
              error instanceof ApiError && error.status === 401
                ? { title: t.login.failedTitle, message: t.login.failedText }
                : error
            )
          )
          password.focus()
        } finally {
          button.disabled = false
          button.textContent = t.login.submit
        }
      }
    },
    field(t.login.email, email),
    field(t.login.password, password),
    errorSlot,
    button
  )
  clear(root).append(
    h(
      "main",
      { id: "main", class: "login-page" },
      h(
        "div",
        { class: "login-card" },
        h(
          "div",
          { class: "brand login-brand" },
          h("span", { class: "brand-mark", "aria-hidden": "true" }),
          t.shell.brand
        ),
        h("h1", {}, t.login.heading),
        h("p", { class: "lede" }, t.login.lede),
        form,
        languageSwitcher(() => renderLogin())
      )
    )
  )
  root.removeAttribute("aria-busy")
  email.focus()
}

const startSession = async (answer: typeof SessionInfo.Type) => {
  session.operator = answer.operator
  session.csrfToken = answer.csrf_token
  session.settings = answer.organization
  session.organizations = []
  session.org = null
  if (isPlatformAdmin()) {
    session.organizations = await call((api) => api.overview.organizations({}))
    const remembered = sessionStorage.getItem(ORG_KEY)
    session.org = session.organizations.some((org) => org.id === remembered)
      ? remembered
      : (session.organizations[0]?.id ?? null)
    await loadSettings()
  }
  applyLocale()
}

const signOut = async (everywhere: boolean) => {
  try {
    if (everywhere) await call((api) => api.session.revokeAll({}), { expectUnauthenticated: true })
    else await call((api) => api.session.logout({}), { expectUnauthenticated: true })
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 401)) {
      toast(error instanceof Error ? error.message : String(error), "error")
      return
    }
  }
  sessionStorage.removeItem(ORG_KEY)
  toast(everywhere ? t.shell.signedOutEverywhere : t.shell.signedOut)
  signedOut()
}

const apiLanguage = (choice: Locale) => (choice === "es-MX" ? "es" : "en")

/** Keeps the choice with the operator's account (signed in) or in this browser (the sign-in page). */
const chooseLanguage = async (choice: Locale) => {
  rememberChoice(choice)
  speak(choice)
  if (session.operator === null) return
  try {
    const answer = await call((api) =>
      api.session.setLanguage({ payload: { language: apiLanguage(choice) } })
    )
    session.operator = answer.operator
  } catch (error) {
    if (error instanceof ApiError && error.status !== 401) toast(`${error.title} ${error.message}`, "error")
  }
}

/** The language control: each language named in itself. */
const languageSwitcher = (redraw: () => void) => {
  const select = selectOf(
    { id: "language-switcher", name: "language" },
    locales.map((code) => [code, catalogs[code].meta.languageName] as const),
    locale
  )
  // Each language's name is in that language (a screen reader says "English" in English).
  for (const option of select.options) option.lang = option.value
  select.addEventListener("change", async () => {
    const choice = locales.find((code) => code === select.value) ?? locale
    await chooseLanguage(choice)
    redraw()
    document.getElementById("language-switcher")?.focus()
  })
  return h(
    "div",
    { class: "language-switcher" },
    h("label", { for: "language-switcher" }, t.shell.language),
    select
  )
}

/** Mexico's zones first (the product's organizations), then every other zone this browser knows. */
const mexicanZones = [
  "America/Mexico_City",
  "America/Cancun",
  "America/Merida",
  "America/Monterrey",
  "America/Matamoros",
  "America/Chihuahua",
  "America/Ciudad_Juarez",
  "America/Ojinaga",
  "America/Mazatlan",
  "America/Bahia_Banderas",
  "America/Hermosillo",
  "America/Tijuana"
]

/** The organization's time zone: an administrator sets it; everyone sees which zone times are in. */
const timeZoneSetting = () => {
  const settings = session.settings
  if (settings === null) return null
  const id = "time-zone-setting"
  const hintId = `${id}-hint`
  if (!canChange())
    return h(
      "div",
      { class: "sidebar-setting" },
      h("span", { class: "setting-label" }, t.shell.timeZone),
      h("span", { class: "setting-value" }, settings.time_zone)
    )
  const known = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : []
  const others = [...new Set([...known, "UTC", settings.time_zone])]
    .filter((zone) => !mexicanZones.includes(zone))
    .sort()
  const select = h(
    "select",
    { id, name: "time_zone", "aria-describedby": hintId },
    h(
      "optgroup",
      { label: t.shell.zonesOfMexico },
      mexicanZones.map((zone) => h("option", { value: zone, selected: zone === settings.time_zone }, zone))
    ),
    h(
      "optgroup",
      { label: t.shell.otherZones },
      others.map((zone) => h("option", { value: zone, selected: zone === settings.time_zone }, zone))
    )
  )
  select.addEventListener("change", async () => {
    try {
      session.settings = await call((api) =>
        api.settings.setTimeZone({ payload: { time_zone: select.value }, query: {} })
      )
      setTimeZone(session.settings.time_zone)
      toast(t.shell.timeZoneSaved(session.settings.time_zone))
      main = null
      route()
      document.getElementById(id)?.focus()
    } catch (error) {
      select.value = settings.time_zone
      if (error instanceof ApiError && error.status !== 401) toast(`${error.title} ${error.message}`, "error")
    }
  })
  return h(
    "div",
    { class: "sidebar-setting" },
    h("label", { for: id }, t.shell.timeZone),
    select,
    h("p", { id: hintId, class: "hint" }, t.shell.timeZoneHint)
  )
}

const orgSwitcher = () => {
  if (!isPlatformAdmin()) return null
  const select = selectOf(
    { id: "org-switcher", name: "org" },
    session.organizations.map((org) => [org.id, org.name] as const),
    session.org
  )
  select.addEventListener("change", async () => {
    session.org = select.value
    sessionStorage.setItem(ORG_KEY, select.value)
    const name = session.organizations.find((org) => org.id === select.value)?.name ?? ""
    try {
      await loadSettings()
    } catch {}
    const before = locale
    applyLocale()
    toast(t.shell.nowShowing(name))
    if (locale !== before) main = null
    if (/^\/leads\/./.test(location.pathname)) navigate("/leads")
    else route()
    if (locale !== before) document.getElementById("org-switcher")?.focus()
  })
  return h(
    "div",
    { class: "org-switcher" },
    h("label", { for: "org-switcher" }, t.shell.organization),
    select,
    h("p", { class: "hint" }, t.shell.platformAdministrator)
  )
}

const renderShell = () => {
  const operator = session.operator
  if (operator === null) return
  const menuButton = h(
    "button",
    {
      type: "button",
      class: "menu-button",
      "aria-expanded": "false",
      "aria-controls": "primary-nav",
      onClick: () => toggleMenu()
    },
    h("span", { class: "menu-icon", "aria-hidden": "true" }),
    t.shell.menu
  )
  const list = h(
    "ul",
    {},
    navigation.map(({ path, title }) =>
      h(
        "li",
        {},
        h(
          "a",
          {
            href: path,
            onClick: (event) => {
              if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return
              event.preventDefault()
              closeMenu()
              navigate(path)
            }
          },
          t.shell.nav[title]
        )
      )
    )
  )
  navList = list
  const sidebar = h(
    "aside",
    { class: "sidebar" },
    h(
      "div",
      { class: "sidebar-top" },
      h("a", { class: "brand", href: "/overview", "aria-label": t.shell.brandLink }, [
        h("span", { class: "brand-mark", "aria-hidden": "true" }),
        t.shell.brand
      ]),
      menuButton
    ),
    h(
      "div",
      { id: "primary-nav", class: "sidebar-body" },
      h("nav", { "aria-label": t.shell.primaryNavigation }, list),
      h(
        "div",
        { class: "sidebar-footer" },
        orgSwitcher(),
        languageSwitcher(() => {
          main = null
          route()
        }),
        timeZoneSetting(),
        h(
          "div",
          { class: "who" },
          h("span", { class: "who-email" }, operator.email),
          h(
            "span",
            { class: ["badge", operator.role === "admin" ? "neutral" : "info"] },
            t.shell.roles[operator.role]
          )
        ),
        h(
          "button",
          { type: "button", class: "secondary small", onClick: () => signOut(false) },
          t.shell.signOut
        ),
        h(
          "button",
          { type: "button", class: "link small", onClick: () => signOut(true) },
          t.shell.signOutEverywhere
        )
      )
    )
  )
  const content = h("main", { id: "main", class: "content", tabindex: "-1" })
  main = content
  clear(root).append(h("div", { class: "layout" }, sidebar, content))
  root.removeAttribute("aria-busy")
}

const toggleMenu = () => {
  const sidebar = root.querySelector(".sidebar")
  if (sidebar === null) return
  const open = !sidebar.classList.contains("open")
  sidebar.classList.toggle("open", open)
  root.querySelector(".menu-button")?.setAttribute("aria-expanded", String(open))
}

const closeMenu = () => {
  root.querySelector(".sidebar")?.classList.remove("open")
  root.querySelector(".menu-button")?.setAttribute("aria-expanded", "false")
}

const notFound = (target: HTMLElement) => {
  target.append(
    pageHeader(t.shell.notFoundTitle, t.shell.notFoundText),
    h("p", {}, h("a", { href: "/overview" }, t.shell.goToOverview))
  )
}

let firstRoute = true

const route = () => {
  const path = location.pathname.replace(/\/+$/, "") || "/"
  if (session.operator === null) {
    renderLogin()
    return
  }
  if (path === "/" || path === "/login") {
    history.replaceState(null, "", "/overview")
    route()
    return
  }
  if (main === null || !main.isConnected) renderShell()
  const target = main
  if (target === null) return
  cleanup()
  cleanup = () => {}
  for (const anchor of navList?.querySelectorAll("a") ?? []) {
    const href = anchor.getAttribute("href") ?? ""
    if (path === href || path.startsWith(`${href}/`)) anchor.setAttribute("aria-current", "page")
    else anchor.removeAttribute("aria-current")
  }
  clear(target)
  const controller = new AbortController()
  const match = routes.find(({ pattern }) => pattern.test(path))
  if (!match) {
    document.title = t.meta.pageTitle(t.shell.notFoundTitle)
    notFound(target)
  } else {
    const { pattern, page } = match
    const params = (path.match(pattern) ?? []).slice(1).map(decodeURIComponent)
    document.title = t.meta.pageTitle(t.shell.nav[page.title])
    const result = modules[page.module](target, {
      params,
      signal: controller.signal,
      navigate,
      search: new URLSearchParams(location.search)
    })
    Promise.resolve(result)
      .then((stop) => {
        if (typeof stop === "function") {
          if (controller.signal.aborted) stop()
          else cleanup = chain(cleanup, stop as () => void)
        }
      })
      .catch((error: unknown) => {
        if ((error instanceof Error && error.name === "AbortError") || controller.signal.aborted) return
        if (error instanceof ApiError && error.status === 401) return
        target.append(errorBox(error))
      })
  }
  cleanup = chain(cleanup, () => controller.abort())
  if (!firstRoute) {
    const heading = target.querySelector("h1")
    ;(heading ?? target).focus({ preventScroll: false })
  }
  firstRoute = false
}

const chain = (first: () => void, second: () => void) => () => {
  first()
  second()
}

window.addEventListener("popstate", () => route())

document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape" || document.querySelector("dialog[open]")) return
  if (!root.querySelector(".sidebar.open")) return
  closeMenu()
  root.querySelector<HTMLElement>(".menu-button")?.focus()
})

const boot = async () => {
  speak(preSessionLocale())
  try {
    const answer = await call((api) => api.session.current({}), { expectUnauthenticated: true })
    await startSession(answer)
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 401)) {
      clear(root).append(
        h("main", { id: "main", class: "login-page" }, h("div", { class: "login-card" }, errorBox(error)))
      )
      root.removeAttribute("aria-busy")
      return
    }
  }
  if (session.operator === null && location.pathname !== "/login") {
    signedOut()
    return
  }
  route()
}

boot()
