// Leads: search by phone (any format), name or e-mail; a lead's page with everything that happened to it.
// Live leads by default; the Test data switch shows the test leads instead, and lets an admin purge them.

import { ApiError, api, canChange, query } from "../api.ts"
import {
  add,
  busy,
  clearFormError,
  errorBox,
  field,
  focusTestSwitch,
  h,
  loading,
  openDialog,
  pageHeader,
  replace,
  section,
  showFormError,
  table,
  testBadge,
  testDataBanner,
  testDataSwitch,
  time,
  toast
} from "../ui.ts"
import { requestColumns } from "./requests.ts"

/** Purges the organization's test data in one action, after a confirmation naming what goes. */
const purgeDialog = (done) => {
  const errorSlot = h("div", { class: "form-error" })
  const confirm = h(
    "button",
    {
      type: "button",
      class: "danger",
      onClick: async () => {
        errorSlot.replaceChildren()
        try {
          const result = await busy(confirm, () => api.post("/api/test-data/purge", {}))
          dialog.close()
          done(result.purged)
        } catch (error) {
          errorSlot.replaceChildren(errorBox(error))
        }
      }
    },
    "Purge test data"
  )
  const dialog = openDialog({
    title: "Purge this organization's test data?",
    body: [
      h("p", {}, "Everything the origins' test keys (lk_test_…) created goes, at once:"),
      h(
        "ul",
        { class: "purge-list" },
        h("li", {}, "every test lead"),
        h("li", {}, "their notes, tasks and events"),
        h("li", {}, "their webhook deliveries"),
        h("li", {}, "the test keys' idempotency records")
      ),
      h(
        "p",
        {},
        "The request log keeps its rows, marked as test requests. Live leads and every key, test keys included, stay as they are. This cannot be undone."
      ),
      errorSlot
    ],
    actions: [
      h("button", { type: "button", class: "secondary", onClick: () => dialog.close() }, "Cancel"),
      confirm
    ],
    initialFocus: "button.secondary"
  })
}

/** Downloads everything held about the lead (the document `lead-intake lead export` prints) as JSON. */
const exportLead = async (lead, button) => {
  try {
    const document_ = await busy(button, () =>
      api.post(`/api/leads/${encodeURIComponent(lead.id)}/export`, {})
    )
    const blob = new Blob([`${JSON.stringify(document_, null, 2)}\n`], { type: "application/json" })
    const link = h("a", { href: URL.createObjectURL(blob), download: `lead-${lead.id}.json`, hidden: true })
    document.body.append(link)
    link.click()
    link.remove()
    setTimeout(() => URL.revokeObjectURL(link.href), 10_000)
    toast(`Exported lead-${lead.id}.json (the export is recorded in the audit log).`)
  } catch (error) {
    toast(error.message, "error")
  }
}

/** Erasure asks why; the reason is kept in the audit trail, so it must not repeat the person's data. */
const eraseDialog = (lead, done) => {
  const reason = h("textarea", { name: "reason", rows: "3", maxlength: "500", required: true })
  const confirm = h("button", { type: "submit", class: "danger" }, "Confirm")
  const form = h(
    "form",
    {
      novalidate: true,
      onSubmit: async (event) => {
        event.preventDefault()
        clearFormError(form)
        if (!reason.value.trim()) {
          showFormError(form, {
            title: "Check this field:",
            message: "Say why the data is erased.",
            field: "reason"
          })
          return
        }
        try {
          await busy(confirm, () =>
            api.post(`/api/leads/${encodeURIComponent(lead.id)}/erase`, { reason: reason.value.trim() })
          )
          dialog.close()
          toast("The lead's personal data is erased.")
          done()
        } catch (error) {
          showFormError(form, error)
        }
      }
    },
    h(
      "p",
      {},
      "Name, phone, e-mail, property, assignee and notes are removed everywhere, and the copies in events and stored replies are scrubbed. Only a tombstone is left. This cannot be undone."
    ),
    field(
      "Reason",
      reason,
      "Kept in the audit trail, e.g. “Data subject request #41”. Do not include the person's name, phone or e-mail."
    ),
    h("div", { class: "form-error" }),
    h(
      "div",
      { class: "dialog-actions" },
      h("button", { type: "button", class: "secondary", onClick: () => dialog.close() }, "Cancel"),
      confirm
    )
  )
  const dialog = openDialog({
    title: "Erase this lead's personal data?",
    body: form,
    initialFocus: "textarea"
  })
}

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
  const testMode = search.get("test") === "true"
  const leadsPath = (params) => `/leads${query({ q, test: testMode ? "true" : "", ...params })}`
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
        navigate(leadsPath({ q: input.value.trim() }), { replace: true })
      }
    },
    field(
      "Phone, name or e-mail",
      input,
      "A phone matches in any format: spaces, dashes, with or without the country code."
    ),
    h("button", { type: "submit", class: "primary" }, "Search")
  )
  const results = h("div", { class: testMode ? "test-mode" : "" }, loading())
  const more = h("div", { class: "load-more" })
  const testSwitch = testDataSwitch({
    on: testMode,
    onToggle: (on) => {
      navigate(leadsPath({ test: on ? "true" : "" }), { replace: true })
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
              const text = `Purged ${purged} test lead${purged === 1 ? " with its" : "s with their"} notes, tasks, events, deliveries and idempotency records.`
              purgeStatus.textContent = text
              toast(text)
              items.length = 0
              cursor = null
              load(null)
            })
        },
        "Purge test data"
      )
    : null
  const kind = testMode ? "test leads" : "leads"
  add(
    main,
    pageHeader(
      "Leads",
      q ? `${testMode ? "Test leads" : "Leads"} matching “${q}”.` : `The newest ${kind} first.`,
      testSwitch
    ),
    testMode
      ? testDataBanner(
          "Test leads only: sent with the origins' test keys (lk_test_…). They are never assigned, get no task, and count in no figure of the overview.",
          purgeStatus,
          purgeButton
        )
      : null,
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
        empty: q
          ? `No ${testMode ? "test lead" : "lead"} matches this search.`
          : testMode
            ? "No test leads. Leads sent with a test key appear here."
            : "No leads yet.",
        columns: [
          {
            label: "Name",
            cell: (lead) =>
              testMode
                ? h("span", { class: "with-action" }, leadLink(lead, navigate), testBadge("TEST"))
                : leadLink(lead, navigate)
          },
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
        rowAttributes: (lead) => ({ "data-lead-id": lead.id, class: testMode ? "test-row" : undefined })
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
      const page = await api.get(`/api/leads${query({ q, test: testMode ? "true" : "", cursor: after })}`, {
        signal
      })
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
        const target = event.currentTarget.getAttribute("href")
        history.length > 1 ? history.back() : navigate(target)
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
  const erased = lead.erased_at != null
  const test = lead.livemode === false
  header.querySelector("h1").textContent = erased ? "Erased lead" : lead.nombre || "(no name)"
  if (test) {
    header.querySelector("h1").append(" ", testBadge())
    back.setAttribute("href", "/leads?test=true")
    back.textContent = "← Test leads"
  }
  document.title = `${erased ? "Erased lead" : lead.nombre || "Lead"} · Lead Intake console`
  if (canChange()) {
    const exportButton = h(
      "button",
      { type: "button", class: "secondary", onClick: () => exportLead(lead, exportButton) },
      "Export"
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
                renderLead(main, { params, signal, navigate })
              })
          },
          "Erase personal data"
        )
    header.append(h("div", { class: "page-actions" }, exportButton, eraseButton))
  }
  replace(
    body,
    test
      ? testDataBanner(
          "A test lead, sent with a test key (lk_test_…): never assigned, no first-contact task, left out of the overview. Purging the test data (Leads, Test data on) removes it."
        )
      : null,
    erased
      ? h(
          "p",
          { class: "notice", role: "status" },
          "This lead's personal data was erased on ",
          time(lead.erased_at),
          ". Only a tombstone is left: its id, origin, dates, events and requests."
        )
      : null,
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
        rowAttributes: (item) => ({
          "data-request-id": item.request_id,
          class: item.livemode === false ? "test-row" : undefined
        })
      })
    )
  )
}
