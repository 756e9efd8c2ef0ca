// The console shell: session bootstrap, sign-in, navigation, organization switcher and a History API router.

import { ApiError, api, isPlatformAdmin, session, setUnauthenticatedHandler } from "./api.js"
import { renderAudit } from "./page-audit.js"
import { renderCapture } from "./page-capture.js"
import { renderCatalog } from "./page-catalog.js"
import { renderLead, renderLeads } from "./page-leads.js"
import { renderOrigins } from "./page-origins.js"
import { renderOverview } from "./page-overview.js"
import { renderRequests } from "./page-requests.js"
import { renderWebhooks } from "./page-webhooks.js"
import { clear, errorBox, field, h, pageHeader, selectOf, toast } from "./ui.js"

const navigation = [
  ["/overview", "Overview"],
  ["/origins", "Origins"],
  ["/requests", "Requests"],
  ["/leads", "Leads"],
  ["/catalog", "Catalog"],
  ["/capture", "Capture"],
  ["/webhooks", "Webhooks"],
  ["/audit", "Audit"]
]

const routes = [
  [/^\/overview$/, renderOverview],
  [/^\/origins$/, renderOrigins],
  [/^\/requests$/, renderRequests],
  [/^\/leads$/, renderLeads],
  [/^\/leads\/([^/]+)$/, renderLead],
  [/^\/catalog$/, renderCatalog],
  [/^\/capture$/, renderCapture],
  [/^\/webhooks$/, renderWebhooks],
  [/^\/audit$/, renderAudit]
]

const root = document.getElementById("app")
let cleanup = () => {}
let main = null
let navList = null

const ORG_KEY = "lead-intake.org"

export const navigate = (path, { replace = false } = {}) => {
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
  if (session.operator !== null) toast("Your session ended. Please sign in again.", "warning")
  signedOut()
})

const renderLogin = () => {
  cleanup()
  cleanup = () => {}
  main = null
  document.title = "Sign in · Lead Intake console"
  const errorSlot = h("div", { class: "form-error" })
  const email = h("input", { name: "email", type: "email", autocomplete: "username", required: true })
  const password = h("input", {
    name: "password",
    type: "password",
    autocomplete: "current-password",
    required: true
  })
  const button = h("button", { type: "submit", class: "primary wide" }, "Sign in")
  const form = h(
    "form",
    {
      class: "login-form",
      novalidate: true,
      onSubmit: async (event) => {
        event.preventDefault()
        errorSlot.replaceChildren()
        if (!email.value.trim() || !password.value) {
          errorSlot.replaceChildren(
            errorBox({ title: "Missing details:", message: "Enter your e-mail and your password." })
          )
          ;(email.value.trim() ? password : email).focus()
          return
        }
        button.disabled = true
        button.textContent = "Signing in…"
        try {
          const answer = await api.post(
            "/api/session",
            { email: email.value.trim(), password: password.value },
            { scoped: false }
          )
          await startSession(answer)
          const next = new URLSearchParams(location.search).get("next")
          navigate(next?.startsWith("/") && !next.startsWith("//") ? next : "/overview", { replace: true })
        } catch (error) {
          password.value = ""
          errorSlot.replaceChildren(
            errorBox(
              error instanceof ApiError && error.status === 401
                ? { title: "Sign-in failed:", message: error.message || "Invalid email or password." }
                : error
            )
          )
          password.focus()
        } finally {
          button.disabled = false
          button.textContent = "Sign in"
        }
      }
    },
    field("Email", email),
    field("Password", password),
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
          "Lead Intake"
        ),
        h("h1", {}, "Sign in to the console"),
        h("p", { class: "lede" }, "Operators of an organization manage its origins, keys and leads here."),
        form
      )
    )
  )
  root.removeAttribute("aria-busy")
  email.focus()
}

const startSession = async (answer) => {
  session.operator = answer.operator
  session.csrfToken = answer.csrf_token
  session.organizations = []
  session.org = null
  if (isPlatformAdmin()) {
    session.organizations = await api.get("/api/organizations", { scoped: false })
    const remembered = sessionStorage.getItem(ORG_KEY)
    session.org = session.organizations.some((org) => org.id === remembered)
      ? remembered
      : (session.organizations[0]?.id ?? null)
  }
}

const signOut = async (everywhere) => {
  try {
    if (everywhere) await api.post("/api/session/revoke-all", {}, { scoped: false })
    else await api.delete("/api/session", { scoped: false })
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 401)) {
      toast(error.message, "error")
      return
    }
  }
  sessionStorage.removeItem(ORG_KEY)
  toast(everywhere ? "Signed out on every device." : "Signed out.")
  signedOut()
}

const orgSwitcher = () => {
  if (!isPlatformAdmin()) return null
  const select = selectOf(
    { id: "org-switcher", name: "org" },
    session.organizations.map((org) => [org.id, org.name]),
    session.org
  )
  select.addEventListener("change", () => {
    session.org = select.value
    sessionStorage.setItem(ORG_KEY, select.value)
    const name = session.organizations.find((org) => org.id === select.value)?.name
    toast(`Now showing ${name}.`)
    if (/^\/leads\/./.test(location.pathname)) navigate("/leads")
    else route()
  })
  return h(
    "div",
    { class: "org-switcher" },
    h("label", { for: "org-switcher" }, "Organization"),
    select,
    h("p", { class: "hint" }, "Platform administrator")
  )
}

const renderShell = () => {
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
    "Menu"
  )
  navList = h(
    "ul",
    {},
    navigation.map(([path, label]) =>
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
          label
        )
      )
    )
  )
  const operator = session.operator
  const sidebar = h(
    "aside",
    { class: "sidebar" },
    h(
      "div",
      { class: "sidebar-top" },
      h("a", { class: "brand", href: "/overview", "aria-label": "Lead Intake console, overview" }, [
        h("span", { class: "brand-mark", "aria-hidden": "true" }),
        "Lead Intake"
      ]),
      menuButton
    ),
    h(
      "div",
      { id: "primary-nav", class: "sidebar-body" },
      h("nav", { "aria-label": "Primary" }, navList),
      h(
        "div",
        { class: "sidebar-footer" },
        orgSwitcher(),
        h(
          "div",
          { class: "who" },
          h("span", { class: "who-email" }, operator.email),
          h("span", { class: ["badge", operator.role === "admin" ? "neutral" : "info"] }, operator.role)
        ),
        h("button", { type: "button", class: "secondary small", onClick: () => signOut(false) }, "Sign out"),
        h(
          "button",
          { type: "button", class: "link small", onClick: () => signOut(true) },
          "Sign out everywhere"
        )
      )
    )
  )
  main = h("main", { id: "main", class: "content", tabindex: "-1" })
  clear(root).append(h("div", { class: "layout" }, sidebar, main))
  root.removeAttribute("aria-busy")
}

const toggleMenu = () => {
  const sidebar = root.querySelector(".sidebar")
  const open = !sidebar.classList.contains("open")
  sidebar.classList.toggle("open", open)
  root.querySelector(".menu-button")?.setAttribute("aria-expanded", String(open))
}

const closeMenu = () => {
  root.querySelector(".sidebar")?.classList.remove("open")
  root.querySelector(".menu-button")?.setAttribute("aria-expanded", "false")
}

const notFound = (target) => {
  target.append(
    pageHeader("Page not found", "There is no console page at this address."),
    h("p", {}, h("a", { href: "/overview" }, "Go to the overview"))
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
  cleanup()
  cleanup = () => {}
  for (const link of navList.querySelectorAll("a")) {
    const href = link.getAttribute("href")
    if (path === href || path.startsWith(`${href}/`)) link.setAttribute("aria-current", "page")
    else link.removeAttribute("aria-current")
  }
  clear(main)
  const controller = new AbortController()
  const match = routes.find(([pattern]) => pattern.test(path))
  if (!match) {
    notFound(main)
  } else {
    const [pattern, render] = match
    const params = path.match(pattern).slice(1).map(decodeURIComponent)
    const label = navigation.find(([href]) => path === href || path.startsWith(`${href}/`))?.[1] ?? "Console"
    document.title = `${label} · Lead Intake console`
    const result = render(main, {
      params,
      signal: controller.signal,
      navigate,
      search: new URLSearchParams(location.search)
    })
    Promise.resolve(result)
      .then((stop) => {
        if (typeof stop === "function") {
          if (controller.signal.aborted) stop()
          else cleanup = chain(cleanup, stop)
        }
      })
      .catch((error) => {
        if (error?.name === "AbortError" || controller.signal.aborted) return
        if (error instanceof ApiError && error.status === 401) return
        main.append(errorBox(error))
      })
  }
  cleanup = chain(cleanup, () => controller.abort())
  if (!firstRoute) {
    const heading = main.querySelector("h1")
    ;(heading ?? main).focus({ preventScroll: false })
  }
  firstRoute = false
}

const chain = (first, second) => () => {
  first()
  second()
}

window.addEventListener("popstate", () => route())

document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape" || document.querySelector("dialog[open]")) return
  if (!root.querySelector(".sidebar.open")) return
  closeMenu()
  root.querySelector(".menu-button")?.focus()
})

const boot = async () => {
  try {
    const answer = await api.get("/api/session", { scoped: false })
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
