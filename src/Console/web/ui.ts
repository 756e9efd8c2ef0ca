// DOM helpers shared by every page: element builders, dialogs, formatting, notices. No words here:
// they come from the catalogs (`t`), or from the caller.

import type { Schema } from "effect"
import { ApiError, isAbort, validate } from "./api.ts"
import {
  formatDate,
  formatDateTime,
  formatDateTimeZoned,
  formatMilliseconds,
  formatNumber,
  formatRelative,
  formatShort,
  t,
  zoneLabel
} from "./i18n.ts"

const SVG_NS = "http://www.w3.org/2000/svg"

export type Child = Node | string | number | null | undefined | false | ReadonlyArray<Child>

type Handler<E extends Event> = (event: E & { readonly currentTarget: HTMLElement }) => unknown
type AttributeValue =
  | string
  | number
  | boolean
  | null
  | undefined
  | ReadonlyArray<string | false | null | undefined>

/** Attributes by their HTML names; `on*` are listeners, `class` may be a list, `dataset` fills data-*. */
export interface Attributes {
  readonly onClick?: Handler<MouseEvent> | undefined
  readonly onSubmit?: Handler<SubmitEvent> | undefined
  readonly onInput?: Handler<Event> | undefined
  readonly onChange?: Handler<Event> | undefined
  readonly onKeydown?: Handler<KeyboardEvent> | undefined
  readonly dataset?: Record<string, string> | undefined
  readonly [name: string]: AttributeValue | Handler<never> | Record<string, string> | undefined
}

const assign = (element: Element, attributes: Attributes | null | undefined) => {
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === undefined || value === null || value === false) continue
    if (name.startsWith("on") && typeof value === "function") {
      element.addEventListener(name.slice(2).toLowerCase(), value as EventListener)
    } else if (name === "class") {
      element.setAttribute(
        "class",
        Array.isArray(value) ? value.filter(Boolean).join(" ") : String(value as string)
      )
    } else if (name === "dataset" && element instanceof HTMLElement) {
      Object.assign(element.dataset, value)
    } else if (name === "value" && "value" in element) {
      ;(element as HTMLInputElement).value = String(value)
    } else {
      element.setAttribute(name, value === true ? "" : String(value))
    }
  }
}

const append = <E extends Element>(element: E, children: ReadonlyArray<Child>): E => {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue
    if (Array.isArray(child)) append(element, child)
    else element.append(child instanceof Node ? child : document.createTextNode(String(child)))
  }
  return element
}

/** Replaces an element's children, skipping null/false. */
export const replace = <E extends Element>(element: E, ...children: ReadonlyArray<Child>) =>
  append(clear(element), children)

/** Appends children to an existing element, skipping null/false (conditional parts). */
export const add = <E extends Element>(element: E, ...children: ReadonlyArray<Child>) =>
  append(element, children)

/** h("button", { class: "primary", onClick }, t.origins.save) */
export const h = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes?: Attributes | null,
  ...children: ReadonlyArray<Child>
): HTMLElementTagNameMap[K] => {
  const element = document.createElement(tag)
  assign(element, attributes)
  return append(element, children)
}

export const svg = <K extends keyof SVGElementTagNameMap>(
  tag: K,
  attributes?: Attributes | null,
  ...children: ReadonlyArray<Child>
): SVGElementTagNameMap[K] => {
  const element = document.createElementNS(SVG_NS, tag) as SVGElementTagNameMap[K]
  assign(element, attributes)
  return append(element, children)
}

export const clear = <E extends Element>(element: E) => {
  element.replaceChildren()
  return element
}

let uniqueId = 0
export const nextId = (prefix = "id") => `${prefix}-${++uniqueId}`

type Control = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement

/** A labelled form control: the label is a real <label for>, hints and errors are described-by. */
export const field = (label: Child, control: Control, hint?: Child) => {
  const id = control.id || nextId("field")
  control.id = id
  const parts: Array<Child> = [h("label", { for: id }, label), control]
  if (hint) {
    const hintId = `${id}-hint`
    control.setAttribute("aria-describedby", hintId)
    parts.push(h("p", { id: hintId, class: "hint" }, hint))
  }
  return h("div", { class: "field" }, parts)
}

/** A text box the form needs filled in, never autocompleted: a name, a code, a URL typed once. */
export const requiredInput = (name: string, attributes: Attributes = {}) =>
  h("input", { name, type: "text", required: true, autocomplete: "off", ...attributes })

export const selectOf = (
  attributes: Attributes,
  options: ReadonlyArray<readonly [value: string | number, text: string]>,
  selected?: string | number | null
) =>
  h(
    "select",
    attributes,
    options.map(([value, text]) => {
      const option = h("option", { value: String(value) }, text)
      if (String(value) === String(selected ?? "")) option.selected = true
      return option
    })
  )

export { formatDate, formatDateTime, formatShort }

export const relative = (iso: string | null | undefined, now = Date.now()) => formatRelative(iso, now)

export type TimeStyle = "datetime" | "relative" | "date" | "short"

/** A <time> element: readable text in the organization's zone, machine value, full time and zone on hover. */
export const time = (iso: string | null | undefined, style: TimeStyle = "datetime") =>
  iso
    ? h(
        "time",
        { datetime: iso, title: formatDateTimeZoned(iso) },
        style === "relative"
          ? formatRelative(iso)
          : style === "date"
            ? formatDate(iso)
            : style === "short"
              ? formatShort(iso)
              : formatDateTime(iso)
      )
    : h("span", { class: "muted" }, style === "relative" ? t.common.never : t.common.none)

/** The label of a column of times: names the organization's time zone they are shown in. */
export const timeColumnLabel = (label: string) => t.common.timeColumn(label, zoneLabel())

/**
 * A column's label as a stacked card shows it beside each value: a hyphen joins what it joins, so a
 * zone stays on one line ("RECEIVED (GMT-" above "6)" on a phone).
 */
const cardLabel = (label: string) => label.replaceAll("-", "\u2011")

export const duration = (ms: number | null | undefined) => formatMilliseconds(ms)

export const number = (value: number | null | undefined) => formatNumber(value)

export const statusBadge = (status: number) => {
  const kind = status >= 500 ? "danger" : status >= 400 ? "warning" : "success"
  return h("span", { class: ["badge", kind] }, String(status))
}

const goodOutcomes = new Set(["created", "enriched", "replay", "dry_run"])

/** The request log's outcome: the API's code, as it is. */
/** A request's outcome in the operator's words (its code as the tooltip); an outcome not in the catalog as code. */
export const outcomeLabel = (outcome: string): Child => {
  const label = t.requests.outcomes[outcome]
  return label === undefined ? h("code", {}, outcome) : label
}

export const outcomeBadge = (outcome: string | null | undefined) =>
  h(
    "span",
    {
      class: ["badge", outcome && goodOutcomes.has(outcome) ? "neutral" : "danger-soft"],
      ...(outcome ? { title: outcome } : {})
    },
    outcome ? outcomeLabel(outcome) : t.common.none
  )

/**
 * An attempt's one-line error as the worker writes it (docs/webhooks.md#when-an-endpoint-keeps-failing),
 * in the operator's words; the system's own code (ECONNREFUSED, a TLS code) stays beside it as code,
 * and a line of another shape is shown as it is, as code.
 */
export const attemptError = (error: string): Child => {
  const words = t.webhooks.attemptErrors
  // a system code breaks after an underscore before anywhere else ("ERR_HTTP2_STREAM_CANCE" above "L")
  const code = (text: string) =>
    h(
      "code",
      { class: "error-text" },
      text.split(/(?<=_)/).flatMap((part, index) => (index === 0 ? [part] : [h("wbr"), part]))
    )
  let match = /^HTTP (\d{3})$/.exec(error)
  if (match) return h("span", { class: "error-text", title: error }, words.http(match[1] ?? ""))
  match = /^redirect: HTTP (\d{3}) \(not followed\)$/.exec(error)
  if (match) return h("span", { class: "error-text", title: error }, words.redirect(match[1] ?? ""))
  match = /^timeout: no answer within (\d+) ms$/.exec(error)
  if (match) return h("span", { class: "error-text", title: error }, words.timeout(match[1] ?? ""))
  if (error.startsWith("address not allowed: "))
    return h("span", { class: "error-text", title: error }, words.notAllowed)
  match = /^TLS: (\S+)$/.exec(error)
  if (match) return h("span", { class: "error-text" }, `${words.tls} `, code(match[1] ?? ""))
  match = /^(.+) \(([A-Z_]+)\)$/.exec(error) ?? /^(connection error): (\S+)$/.exec(error)
  const lead = match === null ? undefined : words.connection[match[1] ?? ""]
  if (match && lead !== undefined) return h("span", { class: "error-text" }, `${lead} `, code(match[2] ?? ""))
  return code(error)
}

/** A notice that announces itself to screen readers (role=status), gone after a few seconds. */
export const toast = (message: string, kind: "success" | "warning" | "error" = "success") => {
  const region = document.getElementById("toasts")
  if (!region) return
  const item = h("div", { class: ["toast", kind] }, message)
  region.append(item)
  setTimeout(() => item.remove(), 5000)
}

/**
 * A button that has the browser save the file at `url()` (read when clicked, so it carries the
 * filters in effect then): a plain download, which the browser writes to disk as it arrives.
 */
export const downloadButton = (label: string, url: () => string) =>
  h(
    "button",
    {
      type: "button",
      class: "secondary",
      onClick: () => {
        const link = h("a", { href: url(), download: "", hidden: true })
        document.body.append(link)
        link.click()
        link.remove()
      }
    },
    label
  )

/** What an error box shows: an `ApiError`, or a title and a message of the page's own. */
export interface Shown {
  readonly title: string
  readonly message: string
  readonly requestId?: string | undefined
  readonly field?: string | undefined
}

const shown = (error: unknown): Shown =>
  error instanceof ApiError
    ? error
    : typeof error === "object" && error !== null && "title" in error && "message" in error
      ? (error as Shown)
      : { title: t.errors.unknown, message: error instanceof Error ? error.message : String(error) }

/** An error box for a form or a page; role=alert so it is read out when it appears. */
export const errorBox = (error: unknown) => {
  const { title, message, requestId } = shown(error)
  return h(
    "div",
    { class: "error-box", role: "alert" },
    h("strong", {}, title),
    h("span", {}, ` ${message}`),
    requestId ? h("span", { class: "muted request-ref" }, ` ${t.errorMessages.requestRef(requestId)}`) : null
  )
}

/** Shows an error next to the field it names (aria-invalid) or in the form's error slot. */
/** Shows a failure in place of what the container held, unless the request was abandoned (the page was left). */
export const showError = (container: Element, error: unknown) => {
  if (!isAbort(error)) container.replaceChildren(errorBox(error))
}

export const showFormError = (form: HTMLFormElement, error: unknown) => {
  for (const invalid of form.querySelectorAll("[aria-invalid]")) invalid.removeAttribute("aria-invalid")
  const slot = form.querySelector(".form-error")
  if (slot) slot.replaceChildren(errorBox(error))
  const fieldName = shown(error).field
  if (fieldName) {
    const control = form.querySelector<HTMLElement>(`[name="${CSS.escape(fieldName)}"]`)
    if (control) {
      control.setAttribute("aria-invalid", "true")
      control.focus()
      return
    }
  }
  slot?.querySelector("[role=alert]")?.setAttribute("tabindex", "-1")
}

export const clearFormError = (form: HTMLFormElement) => {
  for (const invalid of form.querySelectorAll("[aria-invalid]")) invalid.removeAttribute("aria-invalid")
  form.querySelector(".form-error")?.replaceChildren()
}

const focusable =
  'a[href], button:not([disabled]), input:not([disabled]):not([type="hidden"]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])'

export interface DialogOptions {
  readonly title: Child
  readonly body: Child
  readonly actions?: ReadonlyArray<Child>
  readonly onClose?: (returnValue: string) => void
  readonly className?: string
  readonly initialFocus?: string
}

/**
 * A modal native <dialog>: showModal makes the page behind inert, Escape closes it (native "cancel"),
 * Tab wraps inside it, and focus returns to what opened it.
 */
export const openDialog = ({
  title,
  body,
  actions = [],
  onClose,
  className,
  initialFocus
}: DialogOptions) => {
  const titleId = nextId("dialog-title")
  const dialog: HTMLDialogElement = h(
    "dialog",
    { class: ["dialog", className], "aria-labelledby": titleId },
    h(
      "div",
      { class: "dialog-header" },
      h("h2", { id: titleId }, title),
      h(
        "button",
        { type: "button", class: "icon-button", "aria-label": t.common.close, onClick: () => dialog.close() },
        "×"
      )
    ),
    h("div", { class: "dialog-body" }, body),
    actions.length ? h("div", { class: "dialog-actions" }, actions) : null
  )
  const opener = document.activeElement
  dialog.addEventListener("keydown", (event) => {
    if (event.key !== "Tab") return
    const items = [...dialog.querySelectorAll<HTMLElement>(focusable)].filter(
      (item) => item.offsetParent !== null
    )
    const first = items[0]
    const last = items[items.length - 1]
    if (first === undefined || last === undefined) return
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
  const target = initialFocus ? dialog.querySelector<HTMLElement>(initialFocus) : null
  if (target) target.focus()
  return dialog
}

/** Asks to confirm a consequential action; resolves true only on the confirming button. */
export const confirmDialog = ({
  title,
  message,
  confirmLabel = t.common.confirm,
  danger = false
}: {
  readonly title: Child
  readonly message: Child
  readonly confirmLabel?: string
  readonly danger?: boolean
}) =>
  new Promise<boolean>((resolve) => {
    let confirmed = false
    const dialog = openDialog({
      title,
      body: h("p", {}, message),
      actions: [
        h("button", { type: "button", class: "secondary", onClick: () => dialog.close() }, t.common.cancel),
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
export const busy = async <A>(button: HTMLButtonElement | null | undefined, work: () => Promise<A>) => {
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

export interface Column<Row> {
  readonly label: string
  readonly className?: string
  readonly cell: (row: Row) => Child
}

/** One node per cell, so the stacked (narrow) layout has exactly a label and a value. */
const cellContent = (content: Child): Child => (Array.isArray(content) ? h("span", {}, content) : content)

/** A table that becomes stacked cards on narrow screens (each cell carries its column label). */
export const table = <Row>({
  caption,
  columns,
  rows,
  empty = t.common.nothingYet,
  rowAttributes
}: {
  readonly caption?: string
  readonly columns: ReadonlyArray<Column<Row>>
  readonly rows: ReadonlyArray<Row>
  readonly empty?: Child
  readonly rowAttributes?: (row: Row) => Attributes
}) => {
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
              h(
                "td",
                { "data-label": cardLabel(column.label), class: column.className },
                cellContent(column.cell(row))
              )
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

/** What a failure says, for a toast. */
export const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

/**
 * Runs an operator's action (which toasts its own success), toasts its failure with `failed`, and
 * refreshes the view whatever happened.
 */
export const act = async (
  work: () => Promise<unknown>,
  refresh: () => Promise<void>,
  failed: (error: unknown) => void = (error) => toast(messageOf(error), "error")
) => {
  try {
    await work()
  } catch (error) {
    failed(error)
  }
  await refresh()
}

/** Asks the operator first; once confirmed, runs the action as `act` does. */
export const confirmThenAct = async (
  question: Parameters<typeof confirmDialog>[0],
  work: () => Promise<unknown>,
  refresh: () => Promise<void>,
  failed?: (error: unknown) => void
) => {
  if (await confirmDialog(question)) await act(work, refresh, failed)
}

/** A form the page validates itself: no browser bubbles, the last error cleared before `submit` runs. */
export const checkedForm = (
  attributes: Attributes,
  submit: () => Promise<void> | void,
  ...children: ReadonlyArray<Child>
) => {
  const form: HTMLFormElement = h(
    "form",
    {
      ...attributes,
      novalidate: true,
      onSubmit: async (event) => {
        event.preventDefault()
        clearFormError(form)
        await submit()
      }
    },
    children
  )
  return form
}

/**
 * A form whose input the contract's schema checks before anything is sent: a field that fails is
 * shown on the form (`onInvalid` may then move the focus); otherwise `send` runs with `submit` busy
 * and `done` gets its answer. A refusal from either is shown on the form.
 */
export const schemaForm = <S extends Schema.Decoder<unknown>, A>(
  options: {
    readonly attributes?: Attributes
    readonly schema: S
    readonly input: () => unknown
    /** The page's words for a field that fails (the rule is the schema's), read when it is submitted. */
    readonly messages: Readonly<Record<string, string>> | (() => Readonly<Record<string, string>>)
    readonly submit: HTMLButtonElement
    readonly send: (value: S["Type"]) => Promise<A>
    readonly done: (answer: A) => Promise<void> | void
    readonly onInvalid?: (error: ApiError) => void
  },
  ...children: ReadonlyArray<Child>
) => {
  const form: HTMLFormElement = checkedForm(
    options.attributes ?? {},
    async () => {
      const { messages } = options
      const checked = validate(
        options.schema,
        options.input(),
        typeof messages === "function" ? messages() : messages
      )
      if (!checked.ok) {
        showFormError(form, checked.error)
        options.onInvalid?.(checked.error)
        return
      }
      try {
        await options.done(await busy(options.submit, () => options.send(checked.value)))
      } catch (error) {
        showFormError(form, error)
      }
    },
    ...children
  )
  return form
}

/** A search or filter form: submitting it runs `search` (which navigates) instead of loading a page. */
export const searchForm = (
  className: string,
  label: string,
  search: () => void,
  ...children: ReadonlyArray<Child>
) =>
  h(
    "form",
    {
      class: className,
      role: "search",
      "aria-label": label,
      onSubmit: (event) => {
        event.preventDefault()
        search()
      }
    },
    children
  )

/** The end of a dialog's form: where its error shows, then Cancel (which closes) and the form's own button. */
export const dialogFooter = (close: () => void, confirm: Child): Child => [
  h("div", { class: "form-error" }),
  h(
    "div",
    { class: "dialog-actions" },
    h("button", { type: "button", class: "secondary", onClick: close }, t.common.cancel),
    confirm
  )
]

/** "Load more" under a paged list, when there is a next page: disabled once pressed, then loads it. */
export const loadMoreButton = (
  cursor: string | null | undefined,
  label: string,
  load: (cursor: string) => Promise<void>,
  busyLabel?: string
) =>
  cursor
    ? h(
        "button",
        {
          type: "button",
          class: "secondary",
          onClick: async (event) => {
            const button = event.currentTarget as HTMLButtonElement
            button.disabled = true
            if (busyLabel !== undefined) button.textContent = busyLabel
            await load(cursor)
          }
        },
        label
      )
    : null

/** A list of dated entries, or a muted line when there is none. */
export const timeline = <A>(entries: ReadonlyArray<A>, empty: string, entry: (a: A) => Child) =>
  entries.length === 0
    ? h("p", { class: "muted" }, empty)
    : h(
        "ol",
        { class: "timeline" },
        entries.map((a) => h("li", {}, entry(a)))
      )

/** A list page's header: a "new" button for operators who may change things, a read-only notice for the rest. */
export const listHeader = ({
  admin,
  title,
  lede,
  readOnly,
  newLabel,
  onNew
}: {
  readonly admin: boolean
  readonly title: string
  readonly lede: string
  readonly readOnly: string
  readonly newLabel: string
  readonly onNew: () => void
}): Child => [
  pageHeader(
    title,
    lede,
    admin ? h("button", { type: "button", class: "primary", onClick: onNew }, newLabel) : null
  ),
  admin ? null : h("p", { class: "notice" }, readOnly)
]

export const pageHeader = (title: Child, description?: Child, ...actions: ReadonlyArray<Child>) =>
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

export const loading = (label: string = t.common.loading) =>
  h("p", { class: "loading", role: "status" }, label)

export const section = (title: Child, ...children: ReadonlyArray<Child>) => {
  const id = nextId("section")
  return h("section", { class: "panel", "aria-labelledby": id }, h("h2", { id }, title), children)
}

export const copyText = async (text: string) => {
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
 * Closing it forgets the value. `noun` names it in the buttons (from the catalog: "key", "la clave").
 */
export const showOnceDialog = ({
  title,
  noun,
  testId,
  ariaLabel,
  intro,
  value,
  warning
}: {
  readonly title: Child
  readonly noun: string
  readonly testId: string
  readonly ariaLabel: string
  readonly intro: Child
  readonly value: string
  readonly warning: ReadonlyArray<Child>
}) =>
  new Promise<void>((resolve) => {
    const valueId = nextId(testId)
    const copyButton: HTMLButtonElement = h(
      "button",
      {
        type: "button",
        class: "primary",
        "aria-describedby": valueId,
        onClick: async () => {
          const ok = await copyText(value)
          copyButton.textContent = ok ? t.common.copied : t.common.copyFailed(noun)
          if (ok) toast(t.common.copiedToast(noun))
        }
      },
      t.common.copyNoun(noun)
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
        h("div", { class: "warning-box", role: "note" }, h("strong", {}, t.common.copyNow), ...warning)
      ],
      actions: [
        copyButton,
        h(
          "button",
          {
            type: "button",
            class: "secondary",
            onClick: (event) => event.currentTarget.closest("dialog")?.close()
          },
          t.common.done
        )
      ],
      initialFocus: "button.primary",
      onClose: () => resolve()
    })
  })

/** The marker of test data (docs/contract.md), the same wherever it shows. */
export const testBadge = (text: string = t.common.testDataBadge) => h("span", { class: "badge test" }, text)

/**
 * The "Test data" switch of the pages that list leads or requests: a real switch (a button with
 * role=switch, its label a <label>), off by default; its state lives in the URL (`?test=true`).
 */
export const testDataSwitch = ({
  on,
  onToggle
}: {
  readonly on: boolean
  readonly onToggle: (on: boolean) => void
}) => {
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
    h("label", { for: id }, t.common.testData),
    control,
    h("span", { class: "switch-state", "aria-hidden": "true" }, on ? t.common.on : t.common.off)
  )
}

/** Moves focus back to the switch after the page re-rendered for its new state. */
export const focusTestSwitch = () =>
  document.querySelector<HTMLElement>(".test-switch [role=switch]")?.focus()

/** Above every list of test data: what the operator is looking at, in the test colour. */
export const testDataBanner = (text: Child, ...extra: ReadonlyArray<Child>) =>
  h(
    "div",
    { class: "test-banner", role: "note", "aria-label": t.common.testData },
    h("div", { class: "test-banner-text" }, testBadge(), h("span", {}, text)),
    extra.length ? h("div", { class: "test-banner-actions" }, extra) : null
  )

/** A link the router follows without reloading; a modified click opens as the browser would. */
export const link = (href: string, navigate: (path: string) => void, ...children: ReadonlyArray<Child>) =>
  h(
    "a",
    {
      href,
      onClick: (event) => {
        if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return
        event.preventDefault()
        navigate(href)
      }
    },
    children
  )
