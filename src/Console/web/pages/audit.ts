// Audit: every operator action, newest first, with cursor pagination; then the lead erasures (CLI and console).

import type { AuditEntry } from "../../../AdminApi/AdminApi.ts"
import { call } from "../api.ts"
import { t } from "../i18n.ts"
import type { Page } from "../page.ts"
import {
  add,
  h,
  loading,
  loadMoreButton,
  pageHeader,
  replace,
  section,
  showError,
  table,
  time,
  timeColumnLabel
} from "../ui.ts"

export const renderAudit: Page = async (main, { signal }) => {
  const results = h("div", {}, loading())
  const more = h("div", { class: "load-more" })
  const erasures = h("div", {}, loading(t.audit.loadingErasures))
  add(main, pageHeader(t.audit.title, t.audit.lede), results, more, erasures)
  const loadErasures = async () => {
    try {
      const { items } = await call((api) => api.leads.erasures({ query: {} }), { signal })
      erasures.replaceChildren(
        section(
          t.audit.erasures,
          h(
            "p",
            { class: "muted" },
            t.audit.erasuresIntroBefore,
            h("code", {}, "lead-intake lead erase"),
            t.audit.erasuresIntroAfter
          ),
          table({
            caption: t.audit.erasures,
            empty: t.audit.noErasures,
            columns: [
              {
                label: timeColumnLabel(t.audit.when),
                className: "nowrap",
                cell: (row) => time(row.erased_at, "short")
              },
              { label: t.audit.lead, cell: (row) => h("code", { class: "small-text" }, row.lead_id) },
              { label: t.audit.by, cell: (row) => row.erased_by },
              { label: t.audit.reason, cell: (row) => row.reason }
            ],
            rows: items,
            rowAttributes: (row) => ({ "data-erased-lead-id": row.lead_id })
          })
        )
      )
    } catch (error) {
      showError(erasures, error)
    }
  }
  const items: Array<typeof AuditEntry.Type> = []
  let cursor: string | null = null
  const draw = () => {
    results.replaceChildren(
      table({
        caption: t.audit.caption,
        empty: t.audit.empty,
        columns: [
          {
            label: timeColumnLabel(t.audit.when),
            className: "nowrap",
            cell: (entry) => time(entry.at, "short")
          },
          {
            label: t.audit.who,
            // The service's own actions (an endpoint paused automatically) are recorded as by `system`.
            cell: (entry) =>
              entry.operator_email === "" || entry.operator_email === "system"
                ? h("span", { class: "muted" }, t.common.system)
                : entry.operator_email
          },
          {
            label: t.audit.action,
            cell: (entry) => {
              const label = t.audit.actions[entry.action]
              return label === undefined
                ? h("code", {}, entry.action)
                : h("span", { title: entry.action, "data-action": entry.action }, label)
            }
          },
          {
            label: t.audit.target,
            cell: (entry) =>
              entry.target ? h("span", { class: "mono small-text" }, entry.target) : t.common.none
          },
          {
            label: t.audit.from,
            cell: (entry) => (entry.ip ? h("span", { class: "mono" }, entry.ip) : t.common.none)
          }
        ],
        rows: items,
        rowAttributes: (entry) => ({ "data-audit-id": entry.id })
      })
    )
    replace(more, loadMoreButton(cursor, t.common.loadMore, load))
  }
  const load = async (after: string | undefined) => {
    try {
      const page = await call(
        (api) => api.audit.audit({ query: after === undefined ? {} : { cursor: after } }),
        {
          signal
        }
      )
      items.push(...page.items)
      cursor = page.next_cursor
      draw()
    } catch (error) {
      showError(results, error)
    }
  }
  await Promise.all([load(undefined), loadErasures()])
}
