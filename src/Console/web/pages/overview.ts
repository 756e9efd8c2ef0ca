// Overview: traffic per origin, leads per day and error codes, so a broken integration shows at a glance.

import { call, isAbort } from "../api.ts"
import { leadsChart, requestsChart } from "../charts.ts"
import { formatNumber, formatPercent, t } from "../i18n.ts"
import type { Page } from "../page.ts"
import {
  add,
  type Child,
  errorBox,
  h,
  link,
  loading,
  outcomeLabel,
  pageHeader,
  section,
  table
} from "../ui.ts"
import { webhookAlerts } from "./webhooks.ts"

const stat = (label: string, value: Child, tone?: string) =>
  h(
    "div",
    { class: ["stat", tone] },
    h("span", { class: "stat-label" }, label),
    h("span", { class: "stat-value" }, value)
  )

export const renderOverview: Page = async (main, { signal, navigate }) => {
  const body = h("div", {}, loading())
  const alerts = h("div", { class: "webhook-alerts" })
  add(main, pageHeader(t.overview.title, t.overview.lede), alerts, body)
  void webhookAlerts(alerts, { signal, navigate })
  let data: Awaited<ReturnType<typeof load>>
  const load = () => call((api) => api.overview.overview({ query: {} }), { signal })
  try {
    data = await load()
  } catch (error) {
    if (isAbort(error)) return
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
    caption: t.overview.errorCodesCaption,
    empty: t.overview.noErrors,
    columns: [
      { label: t.overview.code, cell: (entry) => h("span", { title: entry.code }, outcomeLabel(entry.code)) },
      { label: t.overview.requests, className: "numeric", cell: (entry) => formatNumber(entry.count) },
      {
        label: t.overview.share,
        className: "bar-cell",
        cell: (entry) => {
          const bar = h("span", { class: "bar" })
          bar.style.width = `${Math.max(2, (entry.count / maxErrors) * 100)}%`
          return h("span", { class: "bar-track", "aria-hidden": "true" }, bar)
        }
      },
      {
        label: t.overview.details,
        className: "actions",
        // The link's name starts with its visible words (WCAG 2.5.3); the code follows for a screen reader.
        cell: (entry) =>
          link(
            `/requests?outcome=${encodeURIComponent(entry.code)}`,
            navigate,
            t.overview.viewRequests,
            h("span", { class: "visually-hidden" }, `: ${entry.code}`)
          )
      }
    ],
    rows: [...data.error_codes].sort((a, b) => b.count - a.count)
  })
  body.replaceChildren(
    h(
      "div",
      { class: "stats" },
      stat(t.overview.requests24h, formatNumber(requests)),
      stat(
        t.overview.errors24h,
        `${formatNumber(errors)}${requests ? ` (${formatPercent(errorRate)})` : ""}`,
        errorRate > 0.05 ? "bad" : ""
      ),
      stat(t.overview.created30d, formatNumber(created)),
      stat(t.overview.enriched30d, formatNumber(enriched)),
      stat(
        t.rescue.waiting,
        // The link's name starts with its visible number (WCAG 2.5.3); the words follow for a screen reader.
        link(
          "/requests?kept=true",
          navigate,
          formatNumber(data.waiting_for_rescue),
          h("span", { class: "visually-hidden" }, ` ${t.rescue.waitingHidden}`)
        ),
        data.waiting_for_rescue > 0 ? "bad" : ""
      )
    ),
    section(t.overview.requestsPerMinute, requestsChart(data.requests_per_minute)),
    h(
      "div",
      { class: "two-columns" },
      section(t.overview.leadsPerDay, leadsChart(data.leads_per_day)),
      section(t.overview.errorCodes, errorTable)
    )
  )
}
