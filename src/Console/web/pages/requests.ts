// The request log: per origin or unattributed, filters, cursor pagination, live polling, detail dialog.
// Live requests by default; the Test data switch shows the test keys' requests instead.

import { type RequestFilters, type RequestItem, requestOutcomes } from "../../../AdminApi/AdminApi.ts"
import { decodeLeadBody } from "../../../AdminApi/LeadBody.ts"
import { apiUrl, call, canChange, errorText, isAbort, isPlatformAdmin } from "../api.ts"
import { formatClock, formatDateTime, formatNumber, fromZonedLocal, t, toZonedLocal } from "../i18n.ts"
import type { Page, PageContext } from "../page.ts"
import {
  add,
  type Child,
  type Column,
  downloadButton,
  duration,
  errorBox,
  field,
  focusTestSwitch,
  h,
  loading,
  loadMoreButton,
  messageOf,
  openDialog,
  outcomeBadge,
  pageHeader,
  replace,
  searchForm,
  selectOf,
  statusBadge,
  table,
  testBadge,
  testDataBanner,
  testDataSwitch,
  time,
  timeColumnLabel
} from "../ui.ts"

type Item = typeof RequestItem.Type
type Navigate = PageContext["navigate"]

/** The request log's filters as the URL and the API name them (`RequestFilters` in the contract). */
type Filters = { -readonly [K in keyof typeof RequestFilters]?: string }

const isTest = (item: Item) => item.livemode === false

const POLL_MS = 3000

/** `?a=1&b=2` from the filters that are set. */
const queryString = (params: Filters) => {
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) if (value) search.set(name, value)
  const text = search.toString()
  return text ? `?${text}` : ""
}

const detailRow = (label: string, value: Child) => [
  h("dt", {}, label),
  h("dd", {}, value ?? h("span", { class: "muted" }, t.common.none))
]

const leadHref = (id: string) => `/leads/${encodeURIComponent(id)}`

/** The corrected body checked as POST /v1/leads checks it, before it is sent: the first failing field, or nothing. */
const problemOf = (text: string): { readonly field: string; readonly message: string } | null => {
  const decoded = decodeLeadBody(text)
  return decoded._tag === "Invalid" ? decoded : null
}

const leadLink = (leadId: string, navigate: Navigate, label: Child = leadId) =>
  h(
    "a",
    {
      href: leadHref(leadId),
      onClick: (event) => {
        event.preventDefault()
        event.currentTarget.closest("dialog")?.close()
        navigate(leadHref(leadId))
      }
    },
    label
  )

/** The kept body (admins only) and the form that rescues it: checked with the contract's schema before it is sent. */
const rescuePanel = async (item: Item, navigate: Navigate): Promise<Child> => {
  if (item.rescued_lead_id !== null)
    return h("p", {}, `${t.rescue.rescuedAs} `, leadLink(item.rescued_lead_id, navigate))
  if (!item.kept) return null
  if (!canChange()) return h("p", { class: "muted" }, t.rescue.adminsOnly)
  const kept = await call((api) =>
    api.requests.keptBody({ params: { request_id: item.request_id }, query: {} })
  )
  if (kept.body === null) return h("p", { class: "muted" }, t.rescue.notKept)
  const original = h("pre", { class: "kept-body" }, kept.body)
  const editor = h("textarea", { name: "body", rows: 8, spellcheck: false, class: "mono" })
  editor.value = kept.body
  const status = h("div", { class: "form-error", role: "alert" })
  const submit = h("button", { type: "submit", class: "primary" }, t.rescue.rescue)
  const form = h(
    "form",
    {
      class: "rescue-form",
      onSubmit: async (event) => {
        event.preventDefault()
        editor.removeAttribute("aria-invalid")
        status.replaceChildren()
        const problem = problemOf(editor.value)
        if (problem !== null) {
          editor.setAttribute("aria-invalid", "true")
          status.replaceChildren(
            h("p", { class: "error" }, t.rescue.invalid(errorText("validation_error", problem.field)))
          )
          editor.focus()
          return
        }
        submit.disabled = true
        submit.textContent = t.rescue.rescuing
        try {
          const answer = await call((api) =>
            api.requests.rescue({
              params: { request_id: item.request_id },
              query: {},
              payload: { body: editor.value }
            })
          )
          form.replaceWith(
            h(
              "p",
              { class: "success" },
              `${answer.status === "created" ? t.rescue.created : t.rescue.enriched} `,
              leadLink(answer.lead_id, navigate, t.rescue.openLead)
            )
          )
        } catch (error) {
          status.replaceChildren(h("p", { class: "error" }, messageOf(error)))
          submit.disabled = false
          submit.textContent = t.rescue.rescue
        }
      }
    },
    field(t.rescue.correctedBody, editor, t.rescue.hint),
    status,
    h("div", { class: "form-actions" }, submit)
  )
  return [h("h3", {}, t.rescue.keptBody), original, form]
}

export const openRequestDetail = async (requestId: string, navigate: Navigate) => {
  const body = h("div", {}, loading())
  openDialog({ title: t.requests.dialogTitle, body, className: "wide-dialog" })
  try {
    const item = await call((api) => api.requests.request({ params: { request_id: requestId }, query: {} }))
    const leadId = item.lead_id
    body.replaceChildren(
      h(
        "dl",
        { class: "details" },
        detailRow(t.requests.requestId, h("code", {}, item.request_id)),
        detailRow(t.requests.received, formatDateTime(item.at)),
        detailRow(t.requests.status, statusBadge(item.status)),
        detailRow(t.requests.outcome, outcomeBadge(item.outcome)),
        detailRow(
          t.requests.mode,
          isTest(item) ? [testBadge(), t.requests.madeWithTestKey] : t.requests.live
        ),
        detailRow(t.requests.lead, leadId ? leadLink(leadId, navigate) : null),
        detailRow(t.requests.origin, item.origin_label ?? item.origin_id ?? t.requests.unattributed),
        detailRow(t.requests.keyPrefix, item.key_prefix ? h("code", {}, item.key_prefix) : null),
        detailRow(
          t.requests.idempotencyKey,
          item.idempotency_key ? h("code", {}, item.idempotency_key) : null
        ),
        detailRow(t.requests.duration, duration(item.duration_ms))
      ),
      ...(item.kept || item.rescued_lead_id !== null
        ? [
            h(
              "section",
              { class: "rescue" },
              h("h2", {}, t.rescue.section),
              await rescuePanel(item, navigate)
            )
          ]
        : [])
    )
  } catch (error) {
    body.replaceChildren(errorBox(error))
  }
}

/** Enough of an id to tell rows apart; the detail (and the button's name) carries the whole of it. */
const shortId = (id: string) => (id.length > 13 ? `${id.slice(0, 8)}…` : id)

/** The request log's columns; the lead's page shows its requests with them too. */
export const requestColumns = (
  navigate: Navigate,
  {
    showOrigin = true,
    originLabels = new Map<string, string>()
  }: { readonly showOrigin?: boolean; readonly originLabels?: ReadonlyMap<string, string> } = {}
): ReadonlyArray<Column<Item>> => [
  {
    label: timeColumnLabel(t.requests.received),
    className: "nowrap",
    cell: (item) => time(item.at, "short")
  },
  {
    label: t.requests.requestId,
    cell: (item) =>
      h(
        "button",
        {
          type: "button",
          class: "link mono",
          "aria-label": t.requests.detailsOf(item.request_id),
          title: item.request_id,
          onClick: () => openRequestDetail(item.request_id, navigate)
        },
        shortId(item.request_id)
      )
  },
  { label: t.requests.status, cell: (item) => statusBadge(item.status) },
  {
    label: t.requests.outcome,
    cell: (item) => {
      const marks = [
        isTest(item) ? testBadge(t.requests.testShort) : null,
        item.kept ? h("span", { class: "badge warning" }, t.rescue.keptBadge) : null,
        item.rescued_lead_id !== null ? h("span", { class: "badge success" }, t.rescue.rescuedBadge) : null
      ].filter((mark) => mark !== null)
      return marks.length === 0
        ? outcomeBadge(item.outcome)
        : h("span", { class: "badges" }, outcomeBadge(item.outcome), ...marks)
    }
  },
  {
    label: showOrigin ? t.requests.originAndKey : t.requests.keyPrefix,
    cell: (item) =>
      h(
        "span",
        { class: "stacked" },
        showOrigin
          ? h(
              "span",
              {},
              item.origin_label ??
                (item.origin_id === null ? undefined : originLabels.get(item.origin_id)) ??
                h("span", { class: "muted" }, t.requests.unattributed)
            )
          : null,
        item.key_prefix ? h("code", {}, item.key_prefix) : h("span", { class: "muted" }, t.requests.noKey)
      )
  },
  {
    label: t.requests.lead,
    cell: (item) => {
      const leadId = item.lead_id
      return leadId
        ? h(
            "a",
            {
              href: leadHref(leadId),
              onClick: (event) => {
                event.preventDefault()
                event.stopPropagation()
                navigate(leadHref(leadId))
              }
            },
            t.requests.open
          )
        : h("span", { class: "muted" }, t.common.none)
    }
  },
  {
    label: t.requests.idempotencyKey,
    cell: (item) =>
      item.idempotency_key ? h("code", { class: "truncate" }, item.idempotency_key) : t.common.none
  },
  {
    label: t.requests.duration,
    className: "numeric",
    cell: (item) => duration(item.duration_ms)
  }
]

const statusClasses = ["2xx", "4xx", "5xx"] as const
const statusClassOf = (value: string | undefined) => {
  const found = statusClasses.find((known) => known === value)
  return found === undefined ? {} : { status_class: found }
}

/** The API's query for the filters: only those set (the list's and its CSV export's). */
const filterQuery = (params: Filters) => ({
  ...(params.origin ? { origin: params.origin } : {}),
  ...(params.unattributed === "true" ? { unattributed: "true" as const } : {}),
  ...statusClassOf(params.status_class),
  ...(params.outcome ? { outcome: params.outcome } : {}),
  ...(params.from ? { from: params.from } : {}),
  ...(params.to ? { to: params.to } : {}),
  ...(params.request_id ? { request_id: params.request_id } : {}),
  ...(params.idempotency_key ? { idempotency_key: params.idempotency_key } : {}),
  ...(params.kept === "true" ? { kept: "true" as const } : {}),
  ...(params.test === "true" ? { test: "true" as const } : {})
})

/** The list's query: the filters, the page's size and the cursor. */
const apiQuery = (params: Filters, extra: { readonly cursor?: string | null; readonly limit: number }) => ({
  ...filterQuery(params),
  ...(extra.cursor ? { cursor: extra.cursor } : {}),
  limit: extra.limit
})

export const renderRequests: Page = async (main, { signal, navigate, search }) => {
  const filters = {
    origin: search.get("origin") ?? "",
    unattributed: search.get("unattributed") === "true",
    status_class: search.get("status_class") ?? "",
    outcome: search.get("outcome") ?? "",
    from: search.get("from") ?? "",
    to: search.get("to") ?? "",
    request_id: search.get("request_id") ?? "",
    idempotency_key: search.get("idempotency_key") ?? "",
    kept: search.get("kept") === "true"
  }
  const testMode = search.get("test") === "true"
  const test = testMode ? "true" : ""
  const params: Filters = {
    origin: filters.unattributed ? "" : filters.origin,
    unattributed: filters.unattributed ? "true" : "",
    status_class: filters.status_class,
    outcome: filters.outcome,
    from: filters.from,
    to: filters.to,
    request_id: filters.request_id,
    idempotency_key: filters.idempotency_key,
    kept: filters.kept ? "true" : "",
    test
  }
  const liveStatus = h("span", { class: "live", role: "status" }, t.requests.liveEvery)
  const testSwitch = testDataSwitch({
    on: testMode,
    onToggle: (on) => {
      navigate(
        `/requests${queryString({ ...filters, unattributed: filters.unattributed ? "true" : "", kept: filters.kept ? "true" : "", test: on ? "true" : "" })}`,
        { replace: true }
      )
      focusTestSwitch()
    }
  })
  add(
    main,
    pageHeader(
      t.requests.title,
      testMode ? t.requests.ledeTest : t.requests.lede,
      liveStatus,
      testSwitch,
      downloadButton(t.common.exportCsv, () =>
        apiUrl((urls) => urls.requests.exportRequests({ query: filterQuery(params) }))
      )
    ),
    testMode ? testDataBanner(t.requests.testBanner) : null
  )

  let origins: ReadonlyArray<{ readonly id: string; readonly label: string; readonly revoked: boolean }> = []
  try {
    origins = (await call((api) => api.origins.origins({ query: {} }), { signal })).items
  } catch (error) {
    if (isAbort(error)) return
    add(main, errorBox(error))
  }
  const originLabels = new Map(origins.map((origin) => [origin.id, origin.label]))

  const source = selectOf(
    { name: "source" },
    [
      ["", t.requests.allOrigins],
      ...origins.map(
        (origin) =>
          [origin.id, origin.revoked ? t.requests.revokedSuffix(origin.label) : origin.label] as const
      ),
      ...(isPlatformAdmin() ? [["unattributed", t.requests.unattributedPrefixes] as const] : [])
    ],
    filters.unattributed ? "unattributed" : filters.origin
  )
  if (filters.origin && !originLabels.has(filters.origin)) {
    source.append(h("option", { value: filters.origin, selected: true }, t.requests.unknownOrigin))
    source.value = filters.origin
  }
  const statusClass = selectOf(
    { name: "status_class" },
    [
      ["", t.requests.anyStatus],
      ["2xx", t.requests.status2xx],
      ["4xx", t.requests.status4xx],
      ["5xx", t.requests.status5xx]
    ],
    filters.status_class
  )
  const outcome = selectOf(
    { name: "outcome" },
    [
      ["", t.requests.anyOutcome],
      ...requestOutcomes.map((value) => [value, t.requests.outcomes[value] ?? value] as const)
    ],
    filters.outcome
  )
  const from = h("input", { name: "from", type: "datetime-local", value: toZonedLocal(filters.from) })
  const to = h("input", { name: "to", type: "datetime-local", value: toZonedLocal(filters.to) })
  const requestId = h("input", {
    name: "request_id",
    type: "search",
    value: filters.request_id,
    autocomplete: "off"
  })
  const idempotencyKey = h("input", {
    name: "idempotency_key",
    type: "search",
    value: filters.idempotency_key,
    autocomplete: "off"
  })
  const kept = h("input", { name: "kept", type: "checkbox", checked: filters.kept })
  const form = searchForm(
    "filters",
    t.requests.filterRequests,
    () => {
      const next: Filters = {
        origin: source.value && source.value !== "unattributed" ? source.value : "",
        unattributed: source.value === "unattributed" ? "true" : "",
        status_class: statusClass.value,
        outcome: outcome.value,
        from: fromZonedLocal(from.value),
        to: fromZonedLocal(to.value),
        request_id: requestId.value.trim(),
        idempotency_key: idempotencyKey.value.trim(),
        kept: kept.checked ? "true" : "",
        test
      }
      navigate(`/requests${queryString(next)}`, { replace: true })
    },
    h(
      "div",
      { class: "filter-grid" },
      field(t.requests.origin, source),
      field(t.requests.statusClass, statusClass),
      field(t.requests.outcome, outcome),
      field(timeColumnLabel(t.requests.from), from),
      field(timeColumnLabel(t.requests.to), to),
      field(t.requests.requestId, requestId),
      field(t.requests.idempotencyKey, idempotencyKey),
      h("div", { class: "field checkbox" }, h("label", {}, kept, ` ${t.rescue.keptFilter}`))
    ),
    h(
      "div",
      { class: "filter-actions" },
      h("button", { type: "submit", class: "primary" }, t.requests.applyFilters),
      h(
        "button",
        {
          type: "button",
          class: "secondary",
          onClick: () => navigate(`/requests${queryString({ test })}`, { replace: true })
        },
        t.requests.clear
      )
    )
  )
  const results = h("div", { class: ["results", testMode ? "test-mode" : ""] }, loading())
  const more = h("div", { class: "load-more" })
  const activeFilters = Object.values(filters).filter((value) => value !== "" && value !== false).length
  const details = h(
    "details",
    { class: "filters-toggle", open: activeFilters > 0 || matchMedia("(min-width: 821px)").matches },
    h("summary", {}, activeFilters > 0 ? t.requests.filtersActive(activeFilters) : t.requests.filters),
    form
  )
  add(main, details, results, more)

  const items: Array<Item> = []
  const seen = new Set<string>()
  let cursor: string | null = null
  const columns = requestColumns(navigate, { showOrigin: !filters.origin, originLabels })

  const draw = (fresh = new Set<string>()) => {
    results.replaceChildren(
      table({
        caption: t.requests.caption,
        empty: testMode ? t.requests.emptyTest : t.requests.empty,
        columns,
        rows: items,
        rowAttributes: (item) => ({
          "data-request-id": item.request_id,
          class: ["clickable", fresh.has(item.request_id) ? "fresh" : "", isTest(item) ? "test-row" : ""],
          onClick: (event) => {
            if (event.target instanceof Element && event.target.closest("a, button")) return
            openRequestDetail(item.request_id, navigate)
          }
        })
      })
    )
    replace(
      more,
      loadMoreButton(cursor, t.common.loadMore, loadPage, t.common.loading) ??
        (items.length > 0
          ? h("p", { class: "muted" }, t.requests.allShown(formatNumber(items.length), items.length === 1))
          : null)
    )
  }

  const loadPage = async (after: string | null) => {
    try {
      const page = await call(
        (api) => api.requests.requests({ query: apiQuery(params, { cursor: after, limit: 50 }) }),
        { signal }
      )
      for (const item of page.items) {
        if (seen.has(item.request_id)) continue
        seen.add(item.request_id)
        items.push(item)
      }
      cursor = page.next_cursor
      draw()
    } catch (error) {
      if (isAbort(error)) return
      results.replaceChildren(errorBox(error))
      replace(more)
    }
  }

  await loadPage(null)

  let timer: ReturnType<typeof setTimeout> | undefined
  let stopped = false
  const poll = async () => {
    if (stopped) return
    if (!document.hidden) {
      try {
        const page = await call((api) => api.requests.requests({ query: apiQuery(params, { limit: 50 }) }), {
          signal
        })
        const fresh = page.items.filter((item) => !seen.has(item.request_id))
        if (fresh.length > 0) {
          for (const item of fresh) seen.add(item.request_id)
          items.unshift(...fresh)
          items.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0))
          draw(new Set(fresh.map((item) => item.request_id)))
          liveStatus.textContent = t.requests.liveNew(fresh.length, formatClock(new Date()))
        }
      } catch (error) {
        if (isAbort(error)) return
        liveStatus.textContent = t.requests.livePaused(error instanceof Error ? error.message : String(error))
      }
    }
    if (!stopped) timer = setTimeout(poll, POLL_MS)
  }
  timer = setTimeout(poll, POLL_MS)
  return () => {
    stopped = true
    clearTimeout(timer)
  }
}
