// DOM helpers shared by every page: element builders, dialogs, formatting, notices.

const SVG_NS = "http://www.w3.org/2000/svg"

const assign = (element, attributes) => {
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === undefined || value === null || value === false) continue
    if (name.startsWith("on") && typeof value === "function") {
      element.addEventListener(name.slice(2).toLowerCase(), value)
    } else if (name === "class") {
      element.setAttribute("class", Array.isArray(value) ? value.filter(Boolean).join(" ") : value)
    } else if (name === "dataset") {
      Object.assign(element.dataset, value)
    } else if (name === "value" && "value" in element) {
      element.value = value
    } else {
      element.setAttribute(name, value === true ? "" : String(value))
    }
  }
}

const append = (element, children) => {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue
    element.append(child instanceof Node ? child : document.createTextNode(String(child)))
  }
  return element
}

/** Replaces an element's children, skipping null/false. */
export const replace = (element, ...children) => append(clear(element), children)

/** Appends children to an existing element, skipping null/false (conditional parts). */
export const add = (element, ...children) => append(element, children)

/** h("button", { class: "primary", onClick }, "Save") */
export const h = (tag, attributes, ...children) => {
  const element = document.createElement(tag)
  assign(element, attributes)
  return append(element, children)
}

export const svg = (tag, attributes, ...children) => {
  const element = document.createElementNS(SVG_NS, tag)
  assign(element, attributes)
  return append(element, children)
}

export const clear = (element) => {
  element.replaceChildren()
  return element
}

let uniqueId = 0
export const nextId = (prefix = "id") => `${prefix}-${++uniqueId}`

/** A labelled form control: the label is a real <label for>, hints and errors are described-by. */
export const field = (label, control, hint) => {
  const id = control.id || nextId("field")
  control.id = id
  const parts = [h("label", { for: id }, label), control]
  if (hint) {
    const hintId = `${id}-hint`
    control.setAttribute("aria-describedby", hintId)
    parts.push(h("p", { id: hintId, class: "hint" }, hint))
  }
  return h("div", { class: "field" }, parts)
}

export const selectOf = (attributes, options, selected) =>
  h(
    "select",
    attributes,
    options.map(([value, text]) => {
      const option = h("option", { value }, text)
      if (String(value) === String(selected ?? "")) option.selected = true
      return option
    })
  )

const dateTime = new Intl.DateTimeFormat("en-GB", {
  year: "numeric",
  month: "short",
  day: "2-digit",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  hour12: false
})
const dateOnly = new Intl.DateTimeFormat("en-GB", { year: "numeric", month: "short", day: "2-digit" })

const shortDateTime = new Intl.DateTimeFormat("en-GB", {
  month: "short",
  day: "2-digit",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  hour12: false
})

export const formatDateTime = (iso) => (iso ? dateTime.format(new Date(iso)) : "—")
/** Within the current year the year is noise in a table. */
export const formatShort = (iso) => {
  if (!iso) return "—"
  const date = new Date(iso)
  return date.getFullYear() === new Date().getFullYear() ? shortDateTime.format(date) : dateTime.format(date)
}
const dayMonth = new Intl.DateTimeFormat("en-GB", { month: "short", day: "2-digit" })
export const formatDate = (iso) => {
  if (!iso) return "—"
  const date = new Date(iso)
  return date.getFullYear() === new Date().getFullYear() ? dayMonth.format(date) : dateOnly.format(date)
}

export const relative = (iso, now = Date.now()) => {
  if (!iso) return "never"
  const seconds = Math.round((now - new Date(iso).getTime()) / 1000)
  if (seconds < 45) return "just now"
  const minutes = Math.round(seconds / 60)
  if (minutes < 60) return `${minutes} min ago`
  const hours = Math.round(minutes / 60)
  if (hours < 36) return `${hours} h ago`
  return formatDate(iso)
}

/** A <time> element: readable text, machine value, absolute time on hover. */
export const time = (iso, style = "datetime") =>
  iso
    ? h(
        "time",
        { datetime: iso, title: formatDateTime(iso) },
        style === "relative"
          ? relative(iso)
          : style === "date"
            ? formatDate(iso)
            : style === "short"
              ? formatShort(iso)
              : formatDateTime(iso)
      )
    : h("span", { class: "muted" }, style === "relative" ? "never" : "—")

export const duration = (ms) => (ms == null ? "—" : `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`)

export const number = (value) => new Intl.NumberFormat("en-US").format(value ?? 0)

export const statusBadge = (status) => {
  const kind = status >= 500 ? "danger" : status >= 400 ? "warning" : "success"
  return h("span", { class: ["badge", kind] }, String(status))
}

export const outcomeBadge = (outcome) => {
  const good = ["created", "enriched", "replay", "dry_run"].includes(outcome)
  return h("span", { class: ["badge", good ? "neutral" : "danger-soft"] }, outcome ?? "—")
}

/** A notice that announces itself to screen readers (role=status), gone after a few seconds. */
export const toast = (message, kind = "success") => {
  const region = document.getElementById("toasts")
  if (!region) return
  const item = h("div", { class: ["toast", kind] }, message)
  region.append(item)
  setTimeout(() => item.remove(), 5000)
}

/** An error box for a form or a page; role=alert so it is read out when it appears. */
export const errorBox = (error) =>
  h(
    "div",
    { class: "error-box", role: "alert" },
    h("strong", {}, error?.title ?? "Something went wrong"),
    h("span", {}, ` ${error?.message ?? String(error)}`),
    error?.requestId ? h("span", { class: "muted request-ref" }, ` (request ${error.requestId})`) : null
  )

/** Shows an API error next to the field it names (aria-invalid) or in the form's error slot. */
export const showFormError = (form, error) => {
  for (const invalid of form.querySelectorAll("[aria-invalid]")) invalid.removeAttribute("aria-invalid")
  const slot = form.querySelector(".form-error")
  if (slot) slot.replaceChildren(errorBox(error))
  const fieldName = error?.field
  if (fieldName) {
    const control = form.querySelector(`[name="${CSS.escape(fieldName)}"]`)
    if (control) {
      control.setAttribute("aria-invalid", "true")
      control.focus()
      return
    }
  }
  slot?.querySelector("[role=alert]")?.setAttribute("tabindex", "-1")
}

export const clearFormError = (form) => {
  for (const invalid of form.querySelectorAll("[aria-invalid]")) invalid.removeAttribute("aria-invalid")
  form.querySelector(".form-error")?.replaceChildren()
}

const focusable =
  'a[href], button:not([disabled]), input:not([disabled]):not([type="hidden"]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])'

/**
 * A modal native <dialog>: showModal makes the page behind inert, Escape closes it (native "cancel"),
 * Tab wraps inside it, and focus returns to what opened it.
 */
export const openDialog = ({ title, body, actions = [], onClose, className, initialFocus }) => {
  const titleId = nextId("dialog-title")
  const dialog = h(
    "dialog",
    { class: ["dialog", className], "aria-labelledby": titleId },
    h(
      "div",
      { class: "dialog-header" },
      h("h2", { id: titleId }, title),
      h(
        "button",
        { type: "button", class: "icon-button", "aria-label": "Close", onClick: () => dialog.close() },
        "×"
      )
    ),
    h("div", { class: "dialog-body" }, body),
    actions.length ? h("div", { class: "dialog-actions" }, actions) : null
  )
  const opener = document.activeElement
  dialog.addEventListener("keydown", (event) => {
    if (event.key !== "Tab") return
    const items = [...dialog.querySelectorAll(focusable)].filter((item) => item.offsetParent !== null)
    if (items.length === 0) return
    const first = items[0]
    const last = items[items.length - 1]
    if (event.shiftKey && document.activeElement === first) {
      event.preventDefault()
      last.focus()
    } else if (!event.shiftKey && document.activeElement === last) {
      event.preventDefault()
      first.focus()
    }
  })
  dialog.addEventListener("close", () => {
    onClose?.(dialog.returnValue)
    dialog.remove()
    if (opener instanceof HTMLElement && opener.isConnected) opener.focus()
  })
  document.body.append(dialog)
  dialog.showModal()
  const target = initialFocus ? dialog.querySelector(initialFocus) : null
  if (target) target.focus()
  return dialog
}

/** Asks to confirm a consequential action; resolves true only on "Confirm". */
export const confirmDialog = ({ title, message, confirmLabel = "Confirm", danger = false }) =>
  new Promise((resolve) => {
    let confirmed = false
    const dialog = openDialog({
      title,
      body: h("p", {}, message),
      actions: [
        h("button", { type: "button", class: "secondary", onClick: () => dialog.close() }, "Cancel"),
        h(
          "button",
          {
            type: "button",
            class: danger ? "danger" : "primary",
            onClick: () => {
              confirmed = true
              dialog.close()
            }
          },
          confirmLabel
        )
      ],
      onClose: () => resolve(confirmed),
      initialFocus: "button.secondary"
    })
  })

/** Disables a button while the work runs, so a double click sends one request. */
export const busy = async (button, work) => {
  if (button) {
    button.disabled = true
    button.setAttribute("aria-busy", "true")
  }
  try {
    return await work()
  } finally {
    if (button) {
      button.disabled = false
      button.removeAttribute("aria-busy")
    }
  }
}

/** One node per cell, so the stacked (narrow) layout has exactly a label and a value. */
const cellContent = (content) => (Array.isArray(content) ? h("span", {}, content) : content)

/** A table that becomes stacked cards on narrow screens (each cell carries its column label). */
export const table = ({ caption, columns, rows, empty = "Nothing here yet.", rowAttributes }) => {
  const head = h(
    "thead",
    {},
    h(
      "tr",
      {},
      columns.map((column) => h("th", { scope: "col", class: column.className }, column.label))
    )
  )
  const body = h(
    "tbody",
    {},
    rows.length === 0
      ? h("tr", { class: "empty-row" }, h("td", { colspan: columns.length }, empty))
      : rows.map((row) =>
          h(
            "tr",
            rowAttributes?.(row) ?? {},
            columns.map((column) =>
              h("td", { "data-label": column.label, class: column.className }, cellContent(column.cell(row)))
            )
          )
        )
  )
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      { class: "data" },
      caption ? h("caption", { class: "visually-hidden" }, caption) : null,
      head,
      body
    )
  )
}

export const pageHeader = (title, description, ...actions) =>
  h(
    "header",
    { class: "page-header" },
    h(
      "div",
      {},
      h("h1", { tabindex: "-1" }, title),
      description ? h("p", { class: "lede" }, description) : null
    ),
    actions.length ? h("div", { class: "page-actions" }, actions) : null
  )

export const loading = (label = "Loading…") => h("p", { class: "loading", role: "status" }, label)

export const section = (title, ...children) => {
  const id = nextId("section")
  return h("section", { class: "panel", "aria-labelledby": id }, h("h2", { id }, title), children)
}

export const copyText = async (text) => {
  try {
    await navigator.clipboard.writeText(text)
    return true
  } catch {
    const area = h("textarea", { class: "visually-hidden", readonly: true })
    area.value = text
    document.body.append(area)
    area.select()
    const ok = document.execCommand("copy")
    area.remove()
    return ok
  }
}

/**
 * The one time a secret is visible: a dialog with the value, a copy button and a warning.
 * Closing it forgets the value. `noun` names it in the buttons ("key", "secret").
 */
export const showOnceDialog = ({ title, noun, testId, ariaLabel, intro, value, warning }) =>
  new Promise((resolve) => {
    const valueId = nextId(testId)
    const copyButton = h(
      "button",
      {
        type: "button",
        class: "primary",
        "aria-describedby": valueId,
        onClick: async () => {
          const ok = await copyText(value)
          copyButton.textContent = ok ? "Copied" : `Copy failed — select the ${noun} and copy it`
          if (ok) toast(`${noun[0].toUpperCase()}${noun.slice(1)} copied to the clipboard.`)
        }
      },
      `Copy ${noun}`
    )
    openDialog({
      title,
      className: "key-dialog",
      body: [
        intro,
        h(
          "div",
          { class: "key-box" },
          h("code", { id: valueId, class: "secret", "data-testid": testId, "aria-label": ariaLabel }, value)
        ),
        h("div", { class: "warning-box", role: "note" }, h("strong", {}, "Copy it now. "), ...warning)
      ],
      actions: [
        copyButton,
        h(
          "button",
          {
            type: "button",
            class: "secondary",
            onClick: (event) => event.currentTarget.closest("dialog").close()
          },
          "Done"
        )
      ],
      initialFocus: "button.primary",
      onClose: () => resolve()
    })
  })

/** The marker of test data (docs/contract.md#10-test-mode), the same wherever it shows. */
export const testBadge = (text = "TEST DATA") => h("span", { class: "badge test" }, text)

/**
 * The "Test data" switch of the pages that list leads or requests: a real switch (a button with
 * role=switch, its label a <label>), off by default; its state lives in the URL (`?test=true`).
 */
export const testDataSwitch = ({ on, onToggle }) => {
  const id = nextId("test-switch")
  const control = h(
    "button",
    {
      id,
      type: "button",
      role: "switch",
      class: "switch",
      "aria-checked": String(on),
      onClick: () => onToggle(!on)
    },
    h("span", { class: "switch-thumb", "aria-hidden": "true" })
  )
  return h(
    "div",
    { class: ["test-switch", on ? "on" : ""] },
    h("label", { for: id }, "Test data"),
    control,
    h("span", { class: "switch-state", "aria-hidden": "true" }, on ? "On" : "Off")
  )
}

/** Moves focus back to the switch after the page re-rendered for its new state. */
export const focusTestSwitch = () => document.querySelector(".test-switch [role=switch]")?.focus()

/** Above every list of test data: what the operator is looking at, in the test colour. */
export const testDataBanner = (text, ...extra) =>
  h(
    "div",
    { class: "test-banner", role: "note", "aria-label": "Test data" },
    h("div", { class: "test-banner-text" }, testBadge(), h("span", {}, text)),
    extra.length ? h("div", { class: "test-banner-actions" }, extra) : null
  )
