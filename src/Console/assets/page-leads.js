// Leads: search by phone (any format), name or e-mail; a lead's page with everything that happened to it.

import { ApiError, api, query } from "./api.js"
import { requestColumns } from "./page-requests.js"
import { add, errorBox, field, h, loading, pageHeader, replace, section, table, time } from "./ui.js"

const leadLink = (lead, navigate) =>
  h(
    "a",
    {
      href: `/leads/${encodeURIComponent(lead.id)}`,
      onClick: (event) => {
        event.preventDefault()
        navigate(`/leads/${encodeURIComponent(lead.id)}`)
      }
    },
    lead.nombre || "(no name)"
  )

export const renderLeads = async (main, { signal, navigate, search }) => {
  const q = search.get("q") ?? ""
  const input = h("input", {
    name: "q",
    type: "search",
    value: q,
    autocomplete: "off",
    placeholder: "+52 55 1234 5678, Ana López or ana@example.com"
  })
  const form = h(
    "form",
    {
      class: "search-form",
      role: "search",
      "aria-label": "Search leads",
      onSubmit: (event) => {
        event.preventDefault()
        navigate(`/leads${query({ q: input.value.trim() })}`, { replace: true })
      }
    },
    field(
      "Phone, name or e-mail",
      input,
      "A phone matches in any format: spaces, dashes, with or without the country code."
    ),
    h("button", { type: "submit", class: "primary" }, "Search")
  )
  const results = h("div", {}, loading())
  const more = h("div", { class: "load-more" })
  add(
    main,
    pageHeader("Leads", q ? `Leads matching “${q}”.` : "The newest leads first."),
    form,
    results,
    more
  )

  const items = []
  let cursor = null
  const draw = () => {
    results.replaceChildren(
      table({
        caption: "Leads",
        empty: q ? "No lead matches this search." : "No leads yet.",
        columns: [
          { label: "Name", cell: (lead) => leadLink(lead, navigate) },
          { label: "Phone", cell: (lead) => h("span", { class: "mono" }, lead.telefono) },
          { label: "E-mail", cell: (lead) => lead.email ?? h("span", { class: "muted" }, "—") },
          {
            label: "Origin",
            cell: (lead) =>
              (typeof lead.origin === "object" ? lead.origin?.label : lead.origin) ??
              h("span", { class: "muted" }, "—")
          },
          { label: "Created", cell: (lead) => time(lead.created_at) }
        ],
        rows: items,
        rowAttributes: (lead) => ({ "data-lead-id": lead.id })
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
      const page = await api.get(`/api/leads${query({ q, cursor: after })}`, { signal })
      items.push(...page.items)
      cursor = page.next_cursor
      draw()
    } catch (error) {
      if (error?.name === "AbortError") return
      results.replaceChildren(errorBox(error))
    }
  }
  await load(null)
  if (q) input.select()
}

const fieldRow = (label, value) => [
  h("dt", {}, label),
  h("dd", {}, value ?? h("span", { class: "muted" }, "—"))
]

export const renderLead = async (main, { params, signal, navigate }) => {
  const [id] = params
  const header = pageHeader("Lead", null)
  const back = h(
    "a",
    {
      href: "/leads",
      class: "back-link",
      onClick: (event) => {
        event.preventDefault()
        history.length > 1 ? history.back() : navigate("/leads")
      }
    },
    "← Leads"
  )
  const body = h("div", {}, loading())
  add(main, back, header, body)
  let lead
  try {
    lead = await api.get(`/api/leads/${encodeURIComponent(id)}`, { signal })
  } catch (error) {
    if (error?.name === "AbortError") return
    if (error instanceof ApiError && error.status === 404) {
      header.querySelector("h1").textContent = "Lead not found"
      body.replaceChildren(
        h(
          "p",
          { class: "notice" },
          "There is no lead with this id in your organization. It may belong to another organization or have been erased."
        )
      )
      return
    }
    body.replaceChildren(errorBox(error))
    return
  }
  header.querySelector("h1").textContent = lead.nombre || "(no name)"
  document.title = `${lead.nombre || "Lead"} · Lead Intake console`
  body.replaceChildren(
    h(
      "div",
      { class: "lead-grid" },
      section(
        "Details",
        h(
          "dl",
          { class: "details" },
          fieldRow("Name", lead.nombre),
          fieldRow("Phone", lead.telefono ? h("span", { class: "mono" }, lead.telefono) : null),
          fieldRow("E-mail", lead.email),
          fieldRow("Origin", lead.origin?.label),
          fieldRow("Property", lead.property ? h("code", {}, lead.property.codigo) : null),
          fieldRow("Assignee", lead.assignee?.name),
          fieldRow("Created", time(lead.created_at)),
          fieldRow("Updated", time(lead.updated_at)),
          fieldRow("Lead id", h("code", {}, lead.id))
        )
      ),
      section(
        "Notes",
        lead.notes.length === 0
          ? h("p", { class: "muted" }, "No notes.")
          : h(
              "ol",
              { class: "timeline" },
              lead.notes.map((note) =>
                h("li", {}, time(note.created_at), h("p", { class: "note-body" }, note.body))
              )
            )
      ),
      section(
        "Tasks",
        table({
          caption: "Tasks",
          empty: "No tasks.",
          columns: [
            { label: "Kind", cell: (task) => task.kind },
            {
              label: "Assignee",
              cell: (task) =>
                (typeof task.assignee === "object" ? task.assignee?.name : task.assignee) ??
                h("span", { class: "muted" }, "—")
            },
            { label: "Due", cell: (task) => time(task.due_at) }
          ],
          rows: lead.tasks
        })
      ),
      section(
        "Events",
        lead.events.length === 0
          ? h("p", { class: "muted" }, "No events.")
          : h(
              "ol",
              { class: "timeline" },
              lead.events.map((event) => h("li", {}, time(event.created_at), " ", h("code", {}, event.type)))
            )
      )
    ),
    section(
      "Requests that created or enriched this lead",
      table({
        caption: "Requests for this lead",
        empty: "No logged request points at this lead.",
        columns: requestColumns(navigate).filter((column) => column.label !== "Lead"),
        rows: lead.requests,
        rowAttributes: (item) => ({ "data-request-id": item.request_id })
      })
    )
  )
}
