// Overview: traffic per origin, leads per day and error codes, so a broken integration shows at a glance.

import { api } from "./api.js"
import { leadsChart, requestsChart } from "./charts.js"
import { add, errorBox, h, loading, number, pageHeader, section, table } from "./ui.js"

const stat = (label, value, tone) =>
  h(
    "div",
    { class: ["stat", tone] },
    h("span", { class: "stat-label" }, label),
    h("span", { class: "stat-value" }, value)
  )

export const renderOverview = async (main, { signal, navigate }) => {
  const body = h("div", {}, loading())
  add(
    main,
    pageHeader(
      "Overview",
      "The last 24 hours of traffic and the last 30 days of leads. Live data only: what test keys send is not counted."
    ),
    body
  )
  let data
  try {
    data = await api.get("/api/overview", { signal })
  } catch (error) {
    if (error?.name === "AbortError") return
    body.replaceChildren(errorBox(error))
    return
  }
  const requests = data.requests_per_minute.reduce((sum, point) => sum + point.count, 0)
  const errors = data.error_codes.reduce((sum, entry) => sum + entry.count, 0)
  const created = data.leads_per_day.reduce((sum, entry) => sum + entry.created, 0)
  const enriched = data.leads_per_day.reduce((sum, entry) => sum + entry.enriched, 0)
  const errorRate = requests === 0 ? 0 : errors / requests
  const maxErrors = Math.max(1, ...data.error_codes.map((entry) => entry.count))
  const errorTable = table({
    caption: "Error codes in the last 24 hours",
    empty: "No errors in the last 24 hours.",
    columns: [
      { label: "Code", cell: (entry) => h("code", {}, entry.code) },
      { label: "Requests", className: "numeric", cell: (entry) => number(entry.count) },
      {
        label: "Share",
        className: "bar-cell",
        cell: (entry) => {
          const bar = h("span", { class: "bar" })
          bar.style.width = `${Math.max(2, (entry.count / maxErrors) * 100)}%`
          return h("span", { class: "bar-track", "aria-hidden": "true" }, bar)
        }
      },
      {
        label: "Details",
        className: "actions",
        cell: (entry) =>
          h(
            "a",
            {
              href: `/requests?outcome=${encodeURIComponent(entry.code)}`,
              "aria-label": `View ${entry.code} requests`,
              onClick: (event) => {
                event.preventDefault()
                navigate(`/requests?outcome=${encodeURIComponent(entry.code)}`)
              }
            },
            "View requests"
          )
      }
    ],
    rows: [...data.error_codes].sort((a, b) => b.count - a.count)
  })
  body.replaceChildren(
    h(
      "div",
      { class: "stats" },
      stat("Requests, 24 h", number(requests)),
      stat(
        "Errors, 24 h",
        `${number(errors)}${requests ? ` (${(errorRate * 100).toFixed(1)}%)` : ""}`,
        errorRate > 0.05 ? "bad" : ""
      ),
      stat("Leads created, 30 days", number(created)),
      stat("Leads enriched, 30 days", number(enriched))
    ),
    section("Requests per minute, by origin (24 h)", requestsChart(data.requests_per_minute)),
    h(
      "div",
      { class: "two-columns" },
      section("Leads per day (30 days)", leadsChart(data.leads_per_day)),
      section("Error codes (24 h)", errorTable)
    )
  )
}
