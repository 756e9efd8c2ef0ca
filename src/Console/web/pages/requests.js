// The request log: per origin or unattributed, filters, cursor pagination, live polling, detail dialog.
// Live requests by default; the Test data switch shows the test keys' requests instead.

import { api, isPlatformAdmin, query } from "../api.ts"
import {
  add,
  duration,
  errorBox,
  field,
  focusTestSwitch,
  formatDateTime,
  h,
  loading,
  openDialog,
  outcomeBadge,
  pageHeader,
  replace,
  selectOf,
  statusBadge,
  table,
  testBadge,
  testDataBanner,
  testDataSwitch,
  time
} from "../ui.ts"

const isTest = (item) => item.livemode === false

const POLL_MS = 3000

const outcomes = [
  "created",
  "enriched",
  "replay",
  "dry_run",
  "invalid_key",
  "validation_error",
  "rate_limited",
  "idempotency_conflict",
  "idempotency_in_progress",
  "property_not_found",
  "payload_too_large",
  "unsupported_media_type",
  "temporarily_unavailable",
  "internal_error"
]

const toIso = (local) => (local ? new Date(local).toISOString() : "")
const toLocal = (iso) => {
  if (!iso) return ""
  const date = new Date(iso)
  if (Number.isNaN(date.getTime())) return ""
  const offset = date.getTimezoneOffset() * 60_000
  return new Date(date.getTime() - offset).toISOString().slice(0, 16)
}

const detailRow = (label, value) => [
  h("dt", {}, label),
  h("dd", {}, value ?? h("span", { class: "muted" }, "—"))
]

export const openRequestDetail = async (requestId, navigate) => {
  const body = h("div", {}, loading())
  openDialog({ title: "Request", body, className: "wide-dialog" })
  try {
    const item = await api.get(`/api/requests/${encodeURIComponent(requestId)}`)
    body.replaceChildren(
      h(
        "dl",
        { class: "details" },
        detailRow("Request id", h("code", {}, item.request_id)),
        detailRow("Received", formatDateTime(item.at)),
        detailRow("Status", statusBadge(item.status)),
        detailRow("Outcome", outcomeBadge(item.outcome)),
        detailRow("Mode", isTest(item) ? [testBadge(), " made with a test key"] : "Live"),
        detailRow(
          "Lead",
          item.lead_id
            ? h(
                "a",
                {
                  href: `/leads/${encodeURIComponent(item.lead_id)}`,
                  onClick: (event) => {
                    event.preventDefault()
                    event.currentTarget.closest("dialog")?.close()
                    navigate(`/leads/${encodeURIComponent(item.lead_id)}`)
                  }
                },
                item.lead_id
              )
            : null
        ),
        detailRow("Origin", item.origin_label ?? (item.origin_id ? item.origin_id : "Unattributed")),
        detailRow("Key prefix", item.key_prefix ? h("code", {}, item.key_prefix) : null),
        detailRow("Idempotency key", item.idempotency_key ? h("code", {}, item.idempotency_key) : null),
        detailRow("Duration", item.duration_ms == null ? null : duration(item.duration_ms))
      )
    )
  } catch (error) {
    body.replaceChildren(errorBox(error))
  }
}

/** Enough of an id to tell rows apart; the detail (and the button's name) carries the whole of it. */
const shortId = (id) => (id.length > 13 ? `${id.slice(0, 8)}…` : id)

export const requestColumns = (navigate, { showOrigin = true, originLabels = new Map() } = {}) => [
  {
    label: "Received",
    className: "nowrap",
    cell: (item) => time(item.at, "short")
  },
  {
    label: "Request id",
    cell: (item) =>
      h(
        "button",
        {
          type: "button",
          class: "link mono",
          "aria-label": `Request ${item.request_id}, details`,
          title: item.request_id,
          onClick: () => openRequestDetail(item.request_id, navigate)
        },
        shortId(item.request_id)
      )
  },
  { label: "Status", cell: (item) => statusBadge(item.status) },
  {
    label: "Outcome",
    cell: (item) =>
      isTest(item)
        ? h("span", { class: "with-action" }, outcomeBadge(item.outcome), testBadge("TEST"))
        : outcomeBadge(item.outcome)
  },
  {
    label: showOrigin ? "Origin and key" : "Key prefix",
    cell: (item) =>
      h(
        "span",
        { class: "stacked" },
        showOrigin
          ? h(
              "span",
              {},
              item.origin_label ??
                originLabels.get(item.origin_id) ??
                h("span", { class: "muted" }, "Unattributed")
            )
          : null,
        item.key_prefix ? h("code", {}, item.key_prefix) : h("span", { class: "muted" }, "no key")
      )
  },
  {
    label: "Lead",
    cell: (item) =>
      item.lead_id
        ? h(
            "a",
            {
              href: `/leads/${encodeURIComponent(item.lead_id)}`,
              onClick: (event) => {
                event.preventDefault()
                event.stopPropagation()
                navigate(`/leads/${encodeURIComponent(item.lead_id)}`)
              }
            },
            "Open"
          )
        : h("span", { class: "muted" }, "—")
  },
  {
    label: "Idempotency key",
    cell: (item) => (item.idempotency_key ? h("code", { class: "truncate" }, item.idempotency_key) : "—")
  },
  {
    label: "Duration",
    className: "numeric",
    cell: (item) => duration(item.duration_ms)
  }
]

export const renderRequests = async (main, { signal, navigate, search }) => {
  const filters = {
    origin: search.get("origin") ?? "",
    unattributed: search.get("unattributed") === "true",
    status_class: search.get("status_class") ?? "",
    outcome: search.get("outcome") ?? "",
    from: search.get("from") ?? "",
    to: search.get("to") ?? "",
    request_id: search.get("request_id") ?? "",
    idempotency_key: search.get("idempotency_key") ?? ""
  }
  const testMode = search.get("test") === "true"
  const test = testMode ? "true" : ""
  const liveStatus = h("span", { class: "live", role: "status" }, "Live: new requests appear every 3 seconds")
  const testSwitch = testDataSwitch({
    on: testMode,
    onToggle: (on) => {
      navigate(
        `/requests${query({ ...filters, unattributed: filters.unattributed ? "true" : "", test: on ? "true" : "" })}`,
        {
          replace: true
        }
      )
      focusTestSwitch()
    }
  })
  add(
    main,
    pageHeader(
      "Requests",
      testMode
        ? "Every POST /v1/leads made with a test key, newest first."
        : "Every POST /v1/leads, newest first.",
      liveStatus,
      testSwitch
    ),
    testMode
      ? testDataBanner(
          "Test requests only: made with the origins' test keys (lk_test_…). They count in no figure of the overview, and stay here when the test data is purged."
        )
      : null
  )

  let origins = []
  try {
    origins = (await api.get("/api/origins", { signal })).items
  } catch (error) {
    if (error?.name === "AbortError") return
    add(main, errorBox(error))
  }
  const originLabels = new Map(origins.map((origin) => [origin.id, origin.label]))

  const source = selectOf(
    { name: "source" },
    [
      ["", "All origins"],
      ...origins.map((origin) => [origin.id, `${origin.label}${origin.revoked ? " (revoked)" : ""}`]),
      ...(isPlatformAdmin() ? [["unattributed", "Unattributed prefixes"]] : [])
    ],
    filters.unattributed ? "unattributed" : filters.origin
  )
  if (filters.origin && !originLabels.has(filters.origin)) {
    source.append(h("option", { value: filters.origin, selected: true }, "Unknown origin"))
    source.value = filters.origin
  }
  const statusClass = selectOf(
    { name: "status_class" },
    [
      ["", "Any status"],
      ["2xx", "2xx success"],
      ["4xx", "4xx client error"],
      ["5xx", "5xx server error"]
    ],
    filters.status_class
  )
  const outcome = selectOf(
    { name: "outcome" },
    [["", "Any outcome"], ...outcomes.map((value) => [value, value])],
    filters.outcome
  )
  const from = h("input", { name: "from", type: "datetime-local", value: toLocal(filters.from) })
  const to = h("input", { name: "to", type: "datetime-local", value: toLocal(filters.to) })
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
  const form = h(
    "form",
    {
      class: "filters",
      role: "search",
      "aria-label": "Filter requests",
      onSubmit: (event) => {
        event.preventDefault()
        const next = {
          origin: source.value && source.value !== "unattributed" ? source.value : "",
          unattributed: source.value === "unattributed" ? "true" : "",
          status_class: statusClass.value,
          outcome: outcome.value,
          from: toIso(from.value),
          to: toIso(to.value),
          request_id: requestId.value.trim(),
          idempotency_key: idempotencyKey.value.trim(),
          test
        }
        navigate(`/requests${query(next)}`, { replace: true })
      }
    },
    h(
      "div",
      { class: "filter-grid" },
      field("Origin", source),
      field("Status class", statusClass),
      field("Outcome", outcome),
      field("From", from),
      field("To", to),
      field("Request id", requestId),
      field("Idempotency key", idempotencyKey)
    ),
    h(
      "div",
      { class: "filter-actions" },
      h("button", { type: "submit", class: "primary" }, "Apply filters"),
      h(
        "button",
        {
          type: "button",
          class: "secondary",
          onClick: () => navigate(`/requests${query({ test })}`, { replace: true })
        },
        "Clear"
      )
    )
  )
  const results = h("div", { class: ["results", testMode ? "test-mode" : ""] }, loading())
  const more = h("div", { class: "load-more" })
  const activeFilters = Object.entries(filters).filter(([, value]) => value !== "" && value !== false).length
  const details = h(
    "details",
    { class: "filters-toggle", open: activeFilters > 0 || matchMedia("(min-width: 821px)").matches },
    h("summary", {}, activeFilters > 0 ? `Filters (${activeFilters} active)` : "Filters"),
    form
  )
  add(main, details, results, more)

  const params = {
    origin: filters.unattributed ? "" : filters.origin,
    unattributed: filters.unattributed ? "true" : "",
    status_class: filters.status_class,
    outcome: filters.outcome,
    from: filters.from,
    to: filters.to,
    request_id: filters.request_id,
    idempotency_key: filters.idempotency_key,
    test
  }
  const items = []
  const seen = new Set()
  let cursor = null
  const columns = requestColumns(navigate, { showOrigin: !filters.origin, originLabels })

  const draw = (fresh = new Set()) => {
    results.replaceChildren(
      table({
        caption: "Requests",
        empty: testMode
          ? "No test requests match. Requests made with a test key appear here as soon as they are received."
          : "No requests match. Requests appear here as soon as they are received.",
        columns,
        rows: items,
        rowAttributes: (item) => ({
          "data-request-id": item.request_id,
          class: ["clickable", fresh.has(item.request_id) ? "fresh" : "", isTest(item) ? "test-row" : ""],
          onClick: (event) => {
            if (event.target.closest("a, button")) return
            openRequestDetail(item.request_id, navigate)
          }
        })
      })
    )
    replace(
      more,
      cursor
        ? h(
            "button",
            {
              type: "button",
              class: "secondary",
              onClick: async (event) => {
                const button = event.currentTarget
                button.disabled = true
                button.textContent = "Loading…"
                await loadPage(cursor)
              }
            },
            "Load more"
          )
        : items.length > 0
          ? h("p", { class: "muted" }, `${items.length} request${items.length === 1 ? "" : "s"}, all shown.`)
          : null
    )
  }

  const loadPage = async (after) => {
    try {
      const page = await api.get(`/api/requests${query({ ...params, cursor: after, limit: 50 })}`, { signal })
      for (const item of page.items) {
        if (seen.has(item.request_id)) continue
        seen.add(item.request_id)
        items.push(item)
      }
      cursor = page.next_cursor
      draw()
    } catch (error) {
      if (error?.name === "AbortError") return
      results.replaceChildren(errorBox(error))
      replace(more)
    }
  }

  await loadPage(null)

  let timer = null
  let stopped = false
  const poll = async () => {
    if (stopped) return
    if (!document.hidden) {
      try {
        const page = await api.get(`/api/requests${query({ ...params, limit: 50 })}`, { signal })
        const fresh = page.items.filter((item) => !seen.has(item.request_id))
        if (fresh.length > 0) {
          for (const item of fresh) seen.add(item.request_id)
          items.unshift(...fresh)
          items.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0))
          draw(new Set(fresh.map((item) => item.request_id)))
          liveStatus.textContent = `Live: ${fresh.length} new request${fresh.length === 1 ? "" : "s"} at ${new Date().toLocaleTimeString("en-GB")}`
        }
      } catch (error) {
        if (error?.name === "AbortError") return
        liveStatus.textContent = `Live updates paused: ${error.message}`
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
