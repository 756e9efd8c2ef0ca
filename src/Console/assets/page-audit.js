// Audit: every operator action, newest first, with cursor pagination.

import { api, query } from "./api.js"
import { add, errorBox, h, loading, pageHeader, replace, table, time } from "./ui.js"

export const renderAudit = async (main, { signal }) => {
  const results = h("div", {}, loading())
  const more = h("div", { class: "load-more" })
  add(
    main,
    pageHeader("Audit", "Every operator action: who, what, when and from where. Entries are kept."),
    results,
    more
  )
  const items = []
  let cursor = null
  const draw = () => {
    results.replaceChildren(
      table({
        caption: "Audit log",
        empty: "No operator actions recorded yet.",
        columns: [
          { label: "When", className: "nowrap", cell: (entry) => time(entry.at, "short") },
          { label: "Who", cell: (entry) => entry.operator_email ?? h("span", { class: "muted" }, "system") },
          { label: "Action", cell: (entry) => h("code", {}, entry.action) },
          {
            label: "Target",
            cell: (entry) => (entry.target ? h("span", { class: "mono small-text" }, entry.target) : "—")
          },
          { label: "From", cell: (entry) => (entry.ip ? h("span", { class: "mono" }, entry.ip) : "—") }
        ],
        rows: items,
        rowAttributes: (entry) => ({ "data-audit-id": entry.id })
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
                event.currentTarget.disabled = true
                await load(cursor)
              }
            },
            "Load more"
          )
        : null
    )
  }
  const load = async (after) => {
    try {
      const page = await api.get(`/api/audit${query({ cursor: after })}`, { signal })
      items.push(...page.items)
      cursor = page.next_cursor
      draw()
    } catch (error) {
      if (error?.name === "AbortError") return
      results.replaceChildren(errorBox(error))
    }
  }
  await load(null)
}
