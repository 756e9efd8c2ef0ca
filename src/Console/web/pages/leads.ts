// Leads: search by phone (any format), name or e-mail; a lead's page with everything that happened to it.
// Live leads by default; the Test data switch shows the test leads instead, and lets an admin purge them.

import { type LeadDetail, LeadErasure, type LeadItem } from "../../../AdminApi/AdminApi.ts"
import { ApiError, apiUrl, call, canChange, isAbort } from "../api.ts"
import { formatNumber, t } from "../i18n.ts"
import type { Page, PageContext } from "../page.ts"
import {
  add,
  busy,
  type Child,
  dialogFooter,
  downloadButton,
  errorBox,
  field,
  focusTestSwitch,
  h,
  loading,
  loadMoreButton,
  messageOf,
  openDialog,
  pageHeader,
  replace,
  schemaForm,
  searchForm,
  section,
  showError,
  table,
  testBadge,
  testDataBanner,
  testDataSwitch,
  time,
  timeColumnLabel,
  timeline,
  toast
} from "../ui.ts"
import { requestColumns } from "./requests.ts"

type Lead = typeof LeadDetail.Type
type Summary = typeof LeadItem.Type

/** Purges the organization's test data in one action, after a confirmation naming what goes. */
const purgeDialog = (done: (purged: number) => void) => {
  const errorSlot = h("div", { class: "form-error" })
  const confirm: HTMLButtonElement = h(
    "button",
    {
      type: "button",
      class: "danger",
      onClick: async () => {
        errorSlot.replaceChildren()
        try {
          const result = await busy(confirm, () => call((api) => api.leads.purgeTestData({ query: {} })))
          dialog.close()
          done(result.purged)
        } catch (error) {
          errorSlot.replaceChildren(errorBox(error))
        }
      }
    },
    t.leads.purge
  )
  const dialog = openDialog({
    title: t.leads.purgeTitle,
    body: [
      h("p", {}, t.leads.purgeIntro),
      h(
        "ul",
        { class: "purge-list" },
        t.leads.purgeItems.map((item) => h("li", {}, item))
      ),
      h("p", {}, t.leads.purgeKeeps),
      errorSlot
    ],
    actions: [
      h("button", { type: "button", class: "secondary", onClick: () => dialog.close() }, t.common.cancel),
      confirm
    ],
    initialFocus: "button.secondary"
  })
}

/** Downloads everything held about the lead (the document `lead-intake lead export` prints) as JSON. */
const exportLead = async (lead: Lead, button: HTMLButtonElement) => {
  try {
    const exported = await busy(button, () =>
      call((api) => api.leads.exportLead({ params: { id: lead.id }, query: {} }))
    )
    const file = `lead-${lead.id}.json`
    const blob = new Blob([`${JSON.stringify(exported, null, 2)}\n`], { type: "application/json" })
    const link = h("a", { href: URL.createObjectURL(blob), download: file, hidden: true })
    document.body.append(link)
    link.click()
    link.remove()
    setTimeout(() => URL.revokeObjectURL(link.href), 10_000)
    toast(t.leads.exported(file))
  } catch (error) {
    toast(messageOf(error), "error")
  }
}

/** Erasure asks why; the reason is kept in the audit trail, so it must not repeat the person's data. */
const eraseDialog = (lead: Lead, done: () => void) => {
  const reason = h("textarea", { name: "reason", rows: "3", maxlength: "500", required: true })
  const confirm = h("button", { type: "submit", class: "danger" }, t.common.confirm)
  const form = schemaForm(
    {
      schema: LeadErasure,
      input: () => ({ reason: reason.value }),
      messages: { reason: t.leads.reasonRequired },
      submit: confirm,
      send: (checked) =>
        call((api) =>
          api.leads.eraseLead({
            params: { id: lead.id },
            query: {},
            payload: { reason: checked.reason.trim() }
          })
        ),
      done: () => {
        dialog.close()
        toast(t.leads.erasedToast)
        done()
      }
    },
    h("p", {}, t.leads.eraseText),
    field(t.leads.reason, reason, t.leads.reasonHint),
    dialogFooter(() => dialog.close(), confirm)
  )
  const dialog = openDialog({ title: t.leads.eraseTitle, body: form, initialFocus: "textarea" })
}

const leadHref = (id: string) => `/leads/${encodeURIComponent(id)}`

const leadLink = (lead: Summary, navigate: PageContext["navigate"]) =>
  h(
    "a",
    {
      href: leadHref(lead.id),
      onClick: (event) => {
        event.preventDefault()
        navigate(leadHref(lead.id))
      }
    },
    lead.nombre || t.leads.noName
  )

const muted = (text: string) => h("span", { class: "muted" }, text)

export const renderLeads: Page = async (main, { signal, navigate, search }) => {
  const q = search.get("q") ?? ""
  const testMode = search.get("test") === "true"
  const leadsPath = (params: { readonly q?: string; readonly test?: boolean }) => {
    const next = new URLSearchParams()
    const text = params.q ?? q
    if (text) next.set("q", text)
    if (params.test ?? testMode) next.set("test", "true")
    const query = next.toString()
    return query ? `/leads?${query}` : "/leads"
  }
  const input = h("input", {
    name: "q",
    type: "search",
    value: q,
    autocomplete: "off",
    placeholder: t.leads.searchPlaceholder
  })
  const form = searchForm(
    "search-form",
    t.leads.searchLabel,
    () => {
      navigate(leadsPath({ q: input.value.trim() }), { replace: true })
    },
    field(t.leads.searchField, input, t.leads.searchHint),
    h("button", { type: "submit", class: "primary" }, t.leads.search)
  )
  const results = h("div", { class: testMode ? "test-mode" : "" }, loading())
  const more = h("div", { class: "load-more" })
  const testSwitch = testDataSwitch({
    on: testMode,
    onToggle: (on) => {
      navigate(leadsPath({ test: on }), { replace: true })
      focusTestSwitch()
    }
  })
  const purgeStatus = h("span", { class: "purge-status", role: "status" })
  const purgeButton = canChange()
    ? h(
        "button",
        {
          type: "button",
          class: "danger-outline small",
          onClick: () =>
            purgeDialog((purged) => {
              const text = t.leads.purged(purged, formatNumber(purged))
              purgeStatus.textContent = text
              toast(text)
              items.length = 0
              cursor = null
              load(null)
            })
        },
        t.leads.purge
      )
    : null
  const lede = q
    ? testMode
      ? t.leads.testMatching(q)
      : t.leads.matching(q)
    : testMode
      ? t.leads.testNewestFirst
      : t.leads.newestFirst
  /** The list's filters: what it shows, what its CSV export holds. */
  const filters = { ...(q ? { q } : {}), ...(testMode ? { test: "true" as const } : {}) }
  const exportButton = downloadButton(t.common.exportCsv, () =>
    apiUrl((urls) => urls.leads.exportLeads({ query: filters }))
  )
  add(
    main,
    pageHeader(t.leads.title, lede, testSwitch, exportButton),
    testMode ? testDataBanner(t.leads.testBanner, purgeStatus, purgeButton) : null,
    form,
    results,
    more
  )

  const items: Array<Summary> = []
  let cursor: string | null = null
  const draw = () => {
    results.replaceChildren(
      table({
        caption: t.leads.caption,
        empty: q
          ? testMode
            ? t.leads.noTestMatch
            : t.leads.noMatch
          : testMode
            ? t.leads.noTestLeads
            : t.leads.none,
        columns: [
          {
            label: t.leads.name,
            cell: (lead) =>
              testMode
                ? h("span", { class: "with-action" }, leadLink(lead, navigate), testBadge(t.leads.testBadge))
                : leadLink(lead, navigate)
          },
          {
            label: t.leads.phone,
            cell: (lead) =>
              lead.telefono ? h("span", { class: "mono" }, lead.telefono) : muted(t.common.none)
          },
          { label: t.leads.email, cell: (lead) => lead.email ?? muted(t.common.none) },
          { label: t.leads.origin, cell: (lead) => lead.origin.label },
          { label: timeColumnLabel(t.leads.created), cell: (lead) => time(lead.created_at) }
        ],
        rows: items,
        rowAttributes: (lead) => ({ "data-lead-id": lead.id, class: testMode ? "test-row" : undefined })
      })
    )
    replace(more, loadMoreButton(cursor, t.leads.loadMore, load))
  }
  const load = async (after: string | null) => {
    try {
      const page = await call(
        (api) =>
          api.leads.leads({
            query: { ...filters, ...(after === null ? {} : { cursor: after }) }
          }),
        { signal }
      )
      items.push(...page.items)
      cursor = page.next_cursor
      draw()
    } catch (error) {
      showError(results, error)
    }
  }
  await load(null)
  if (q) input.select()
}

const fieldRow = (label: string, value: Child) => [
  h("dt", {}, label),
  h("dd", {}, value ?? muted(t.common.none))
]

export const renderLead: Page = async (main, context) => {
  const { params, signal, navigate } = context
  const [id = ""] = params
  const header = pageHeader(t.leads.lead)
  const heading = header.querySelector("h1")!
  const back = h(
    "a",
    {
      href: "/leads",
      class: "back-link",
      onClick: (event) => {
        event.preventDefault()
        const target = (event.currentTarget as HTMLAnchorElement).getAttribute("href") ?? "/leads"
        history.length > 1 ? history.back() : navigate(target)
      }
    },
    t.leads.back
  )
  const body = h("div", {}, loading())
  add(main, back, header, body)
  let lead: Lead
  try {
    lead = await call((api) => api.leads.lead({ params: { id }, query: {} }), { signal })
  } catch (error) {
    if (isAbort(error)) return
    if (error instanceof ApiError && error.status === 404) {
      heading.textContent = t.leads.notFound
      body.replaceChildren(h("p", { class: "notice" }, t.leads.notFoundText))
      return
    }
    body.replaceChildren(errorBox(error))
    return
  }
  const erased = lead.erased_at !== null
  const test = !lead.livemode
  heading.textContent = erased ? t.leads.erasedLead : lead.nombre || t.leads.noName
  if (test) {
    heading.append(" ", testBadge())
    back.setAttribute("href", "/leads?test=true")
    back.textContent = t.leads.backTest
  }
  document.title = t.meta.pageTitle(erased ? t.leads.erasedLead : lead.nombre || t.leads.lead)
  if (canChange()) {
    const exportButton: HTMLButtonElement = h(
      "button",
      { type: "button", class: "secondary", onClick: () => exportLead(lead, exportButton) },
      t.leads.export
    )
    const eraseButton = erased
      ? null
      : h(
          "button",
          {
            type: "button",
            class: "danger-outline",
            onClick: () =>
              eraseDialog(lead, () => {
                main.replaceChildren()
                renderLead(main, context)
              })
          },
          t.leads.erase
        )
    header.append(h("div", { class: "page-actions" }, exportButton, eraseButton))
  }
  const erasedAt = lead.erased_at
  replace(
    body,
    test ? testDataBanner(t.leads.testLeadBanner) : null,
    erasedAt !== null
      ? h(
          "p",
          { class: "notice", role: "status" },
          t.leads.erasedOnBefore,
          time(erasedAt),
          t.leads.erasedOnAfter
        )
      : null,
    h(
      "div",
      { class: "lead-grid" },
      section(
        t.leads.details,
        h(
          "dl",
          { class: "details" },
          fieldRow(t.leads.name, lead.nombre),
          fieldRow(t.leads.phone, lead.telefono ? h("span", { class: "mono" }, lead.telefono) : null),
          fieldRow(t.leads.email, lead.email),
          fieldRow(t.leads.origin, lead.origin.label),
          fieldRow(t.leads.property, lead.property ? h("code", {}, lead.property.codigo) : null),
          fieldRow(t.leads.assignee, lead.assignee?.name ?? null),
          fieldRow(timeColumnLabel(t.leads.created), time(lead.created_at)),
          fieldRow(timeColumnLabel(t.leads.updated), time(lead.updated_at)),
          fieldRow(t.leads.leadId, h("code", {}, lead.id))
        )
      ),
      section(
        t.leads.notes,
        timeline(lead.notes, t.leads.noNotes, (note) => [
          time(note.created_at),
          h("p", { class: "note-body" }, note.body)
        ])
      ),
      section(
        t.leads.tasks,
        table({
          caption: t.leads.tasks,
          empty: t.leads.noTasks,
          columns: [
            { label: t.leads.kind, cell: (task) => t.leads.taskKinds[task.kind] ?? h("code", {}, task.kind) },
            { label: t.leads.assignee, cell: (task) => task.assignee ?? muted(t.common.none) },
            { label: timeColumnLabel(t.leads.due), cell: (task) => time(task.due_at) }
          ],
          rows: lead.tasks
        })
      ),
      section(
        t.leads.events,
        timeline(lead.events, t.leads.noEvents, (event) => [
          time(event.created_at),
          " ",
          h("code", {}, event.type)
        ])
      )
    ),
    section(
      t.leads.requests,
      table({
        caption: t.leads.requestsCaption,
        empty: t.leads.noRequests,
        columns: requestColumns(navigate).filter((column) => column.label !== t.requests.lead),
        rows: lead.requests,
        rowAttributes: (item) => ({
          "data-request-id": item.request_id,
          class: item.livemode === false ? "test-row" : undefined
        })
      })
    )
  )
}
