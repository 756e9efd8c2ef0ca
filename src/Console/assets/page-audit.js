// Audit: every operator action, newest first, with cursor pagination; then the lead erasures (CLI and console).

import { api, query } from "./api.js"
import { add, errorBox, h, loading, pageHeader, replace, section, table, time } from "./ui.js"

export const renderAudit = async (main, { signal }) => {
  const results = h("div", {}, loading())
  const more = h("div", { class: "load-more" })
  const erasures = h("div", {}, loading("Loading erasures…"))
  add(
    main,
    pageHeader("Audit", "Every operator action: who, what, when and from where. Entries are kept."),
    results,
    more,
    erasures
  )
  const loadErasures = async () => {
    try {
      const { items } = await api.get("/api/erasures", { signal })
      erasures.replaceChildren(
        section(
          "Erasures",
          h(
            "p",
            { class: "muted" },
            "Leads whose personal data was erased, from the console or ",
            h("code", {}, "lead-intake lead erase"),
            "; newest first."
          ),
          table({
            caption: "Erasures",
            empty: "No lead has been erased.",
            columns: [
              { label: "When", className: "nowrap", cell: (row) => time(row.erased_at, "short") },
              { label: "Lead", cell: (row) => h("code", { class: "small-text" }, row.lead_id) },
              { label: "By", cell: (row) => row.erased_by },
              { label: "Reason", cell: (row) => row.reason }
            ],
            rows: items,
            rowAttributes: (row) => ({ "data-erased-lead-id": row.lead_id })
          })
        )
      )
    } catch (error) {
      if (error?.name === "AbortError") return
      erasures.replaceChildren(errorBox(error))
    }
  }
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
  await Promise.all([load(null), loadErasures()])
}
