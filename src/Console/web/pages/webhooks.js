// Webhooks: the organization's endpoints (secret shown once), a test event on demand, and each
// endpoint's deliveries with Resend.

import { api, canChange, query } from "../api.ts"
import {
  add,
  busy,
  clearFormError,
  confirmDialog,
  errorBox,
  field,
  h,
  loading,
  nextId,
  openDialog,
  pageHeader,
  section,
  showFormError,
  showOnceDialog,
  table,
  time,
  toast
} from "../ui.ts"

const eventTypes = ["lead.created", "lead.enriched", "lead.erased"]

/** The one time a signing secret is visible, like a new API key. */
const showSecretDialog = ({ title, url, secret, rotated }) =>
  showOnceDialog({
    title,
    noun: "secret",
    testId: "new-secret",
    ariaLabel: "New signing secret",
    intro: h("p", {}, "The signing secret for ", h("strong", { class: "mono" }, url), ":"),
    value: secret,
    warning: [
      "This is the only time the secret is shown; the receiver verifies every delivery's ",
      h("code", {}, "webhook-signature"),
      " with it. ",
      rotated
        ? "The previous secret keeps signing beside it for 24 hours, so the receiver can switch without a gap."
        : "If it is lost, rotate the secret."
    ]
  })

const newEndpointDialog = (refresh) => {
  const url = h("input", {
    name: "url",
    type: "url",
    required: true,
    maxlength: "2048",
    autocomplete: "off",
    placeholder: "https://crm.example.com/hooks/leads"
  })
  const boxes = eventTypes.map((type) =>
    h("input", { type: "checkbox", id: nextId("event"), name: "events", value: type, checked: true })
  )
  const legendId = nextId("legend")
  const events = h(
    "fieldset",
    { class: "checks", "aria-labelledby": legendId },
    h("legend", { id: legendId }, "Events"),
    boxes.map((box) => h("label", { class: "check", for: box.id }, box, box.value))
  )
  const testEvents = h("input", { type: "checkbox", id: nextId("test-events"), name: "test_events" })
  const testEventsChoice = h(
    "label",
    { class: "check", for: testEvents.id },
    testEvents,
    "Also send the events of test leads (",
    h("code", {}, '"livemode": false'),
    ")"
  )
  const create = h("button", { type: "submit", class: "primary" }, "Add endpoint")
  const form = h(
    "form",
    {
      novalidate: true,
      onSubmit: async (event) => {
        event.preventDefault()
        clearFormError(form)
        if (!url.value.trim()) {
          showFormError(form, {
            title: "Check this field:",
            message: "Enter the URL to POST events to.",
            field: "url"
          })
          return
        }
        const chosen = boxes.filter((box) => box.checked).map((box) => box.value)
        if (chosen.length === 0) {
          showFormError(form, {
            title: "Check this field:",
            message: "Choose at least one event type.",
            field: "events"
          })
          return
        }
        try {
          const created = await busy(create, () =>
            api.post("/api/webhooks", {
              url: url.value.trim(),
              events: chosen,
              test_events: testEvents.checked
            })
          )
          dialog.close()
          await showSecretDialog({
            title: "Endpoint added",
            url: created.endpoint.url,
            secret: created.secret,
            rotated: false
          })
          refresh()
        } catch (error) {
          showFormError(form, error)
        }
      }
    },
    field(
      "URL",
      url,
      "An https:// address on the public internet; private, loopback and link-local addresses are refused."
    ),
    events,
    testEventsChoice,
    h("div", { class: "form-error" }),
    h(
      "div",
      { class: "dialog-actions" },
      h("button", { type: "button", class: "secondary", onClick: () => dialog.close() }, "Cancel"),
      create
    )
  )
  const dialog = openDialog({ title: "New webhook endpoint", body: form, initialFocus: "input[name=url]" })
}

const path = (endpoint, suffix = "") => `/api/webhooks/${encodeURIComponent(endpoint.id)}${suffix}`

const rotateSecret = async (endpoint, refresh) => {
  const ok = await confirmDialog({
    title: "Rotate the signing secret?",
    message: `A new secret signs deliveries to ${endpoint.url}; the current one keeps signing beside it for 24 hours.`
  })
  if (!ok) return
  try {
    const rotated = await api.post(path(endpoint, "/rotate-secret"), {})
    await showSecretDialog({
      title: "Secret rotated",
      url: endpoint.url,
      secret: rotated.secret,
      rotated: true
    })
  } catch (error) {
    toast(error.message, "error")
  }
  refresh()
}

const remove = async (endpoint, refresh) => {
  const ok = await confirmDialog({
    title: "Remove this endpoint?",
    message: `Events stop going to ${endpoint.url} at once, and its pending deliveries and history are dropped. This cannot be undone.`,
    danger: true
  })
  if (!ok) return
  try {
    await api.delete(path(endpoint))
    toast(`Removed ${endpoint.url}.`)
  } catch (error) {
    toast(error.message, "error")
  }
  refresh()
}

/** Queues a signed webhook.test event for this endpoint alone, then shows its deliveries. */
const sendTest = async (endpoint, button, showDeliveries) => {
  try {
    const queued = await busy(button, () => api.post(path(endpoint, "/test"), {}))
    toast(`Test event ${queued.event_id} queued for ${endpoint.url}.`)
  } catch (error) {
    toast(error.message, "error")
    return
  }
  showDeliveries()
}

const enable = async (endpoint, refresh) => {
  try {
    await api.post(path(endpoint, "/enable"), {})
    toast(`${endpoint.url} is enabled; its waiting deliveries resume.`)
  } catch (error) {
    toast(error.message, "error")
  }
  refresh()
}

const stateBadge = (state) =>
  h(
    "span",
    { class: ["badge", state === "delivered" ? "success" : state === "failed" ? "danger-soft" : "neutral"] },
    state
  )

/** One endpoint's deliveries, newest first, each with Resend for an admin. */
const renderDeliveries = async (container, endpoint, { signal, admin }) => {
  container.replaceChildren(loading("Loading deliveries…"))
  const draw = async () => {
    try {
      const { items } = await api.get(path(endpoint, `/deliveries${query({ limit: 50 })}`), { signal })
      container.replaceChildren(
        section(
          `Deliveries to ${endpoint.url}`,
          table({
            caption: `Deliveries to ${endpoint.url}`,
            empty: "No deliveries yet: events committed after the endpoint was added appear here.",
            columns: [
              { label: "Event id", cell: (d) => h("code", { class: "small-text event-id" }, d.event_id) },
              { label: "Type", cell: (d) => h("code", {}, d.type) },
              { label: "State", cell: (d) => stateBadge(d.state) },
              { label: "Attempts", className: "numeric", cell: (d) => String(d.attempts) },
              {
                label: "Last status",
                className: "numeric",
                cell: (d) =>
                  d.last_status !== null
                    ? String(d.last_status)
                    : h("span", { class: "muted" }, d.attempts === 0 ? "—" : "no answer")
              },
              { label: "Last attempt", className: "nowrap", cell: (d) => time(d.last_attempt_at, "short") },
              { label: "Next attempt", className: "nowrap", cell: (d) => time(d.next_attempt_at, "short") },
              {
                label: "Actions",
                className: "actions",
                cell: (d) =>
                  admin
                    ? h(
                        "button",
                        {
                          type: "button",
                          class: "secondary small",
                          "aria-label": `Resend ${d.event_id}`,
                          onClick: async (event) => {
                            try {
                              await busy(event.currentTarget, () =>
                                api.post(
                                  path(endpoint, `/deliveries/${encodeURIComponent(d.event_id)}/resend`),
                                  {}
                                )
                              )
                              toast(`Event ${d.event_id} queued again (same webhook-id).`)
                            } catch (error) {
                              toast(error.message, "error")
                            }
                            await draw()
                          }
                        },
                        "Resend"
                      )
                    : h("span", { class: "muted" }, "View only")
              }
            ],
            rows: items,
            rowAttributes: (d) => ({ "data-event-id": d.event_id })
          })
        )
      )
    } catch (error) {
      if (error?.name === "AbortError") return
      container.replaceChildren(errorBox(error))
    }
  }
  await draw()
}

export const renderWebhooks = async (main, { signal }) => {
  const admin = canChange()
  const list = h("div", {}, loading())
  const deliveries = h("div", { class: "deliveries" })
  let shown = null
  const newButton = admin
    ? h(
        "button",
        { type: "button", class: "primary", onClick: () => newEndpointDialog(refresh) },
        "New endpoint"
      )
    : null
  add(
    main,
    pageHeader(
      "Webhooks",
      "Lead events (lead.created, lead.enriched, lead.erased) are POSTed to these endpoints, signed as Standard Webhooks.",
      newButton
    ),
    admin
      ? null
      : h("p", { class: "notice" }, "You have read-only access: changes are made by an administrator."),
    list,
    deliveries
  )

  const showDeliveries = (endpoint) => {
    shown = endpoint.id
    renderDeliveries(deliveries, endpoint, { signal, admin }).then(() =>
      deliveries.querySelector("h2")?.scrollIntoView({ block: "nearest" })
    )
  }

  const refresh = async () => {
    try {
      const { items } = await api.get("/api/webhooks", { signal })
      if (shown !== null && !items.some((endpoint) => endpoint.id === shown)) {
        shown = null
        deliveries.replaceChildren()
      }
      list.replaceChildren(
        table({
          caption: "Webhook endpoints",
          empty: admin ? "No endpoints yet. Add one to receive lead events." : "No endpoints yet.",
          columns: [
            {
              label: "URL",
              cell: (endpoint) => h("span", { id: `webhook-${endpoint.id}`, class: "mono url" }, endpoint.url)
            },
            {
              label: "Events",
              cell: (endpoint) =>
                h(
                  "span",
                  { class: "tags" },
                  endpoint.events.map((type) => h("code", {}, type))
                )
            },
            {
              label: "Test events",
              cell: (endpoint) =>
                endpoint.test_events
                  ? h("span", { class: "badge neutral" }, "Included")
                  : h("span", { class: "muted" }, "No")
            },
            {
              label: "State",
              cell: (endpoint) =>
                endpoint.disabled
                  ? h("span", { class: "badge danger-soft" }, "Disabled")
                  : h("span", { class: "badge success" }, "Active")
            },
            { label: "Created", className: "nowrap", cell: (endpoint) => time(endpoint.created_at, "date") },
            {
              label: "Actions",
              className: "actions",
              cell: (endpoint) =>
                h(
                  "div",
                  { class: "row-actions" },
                  h(
                    "button",
                    {
                      type: "button",
                      class: "secondary small",
                      "aria-describedby": `webhook-${endpoint.id}`,
                      onClick: () => showDeliveries(endpoint)
                    },
                    "Deliveries"
                  ),
                  admin
                    ? h(
                        "button",
                        {
                          type: "button",
                          class: "secondary small",
                          "aria-describedby": `webhook-${endpoint.id}`,
                          onClick: (event) =>
                            sendTest(endpoint, event.currentTarget, () => showDeliveries(endpoint))
                        },
                        "Send test event"
                      )
                    : null,
                  admin && endpoint.disabled
                    ? h(
                        "button",
                        {
                          type: "button",
                          class: "secondary small",
                          "aria-describedby": `webhook-${endpoint.id}`,
                          onClick: () => enable(endpoint, refresh)
                        },
                        "Enable"
                      )
                    : null,
                  admin
                    ? h(
                        "button",
                        {
                          type: "button",
                          class: "secondary small",
                          "aria-describedby": `webhook-${endpoint.id}`,
                          onClick: () => rotateSecret(endpoint, refresh)
                        },
                        "Rotate secret"
                      )
                    : null,
                  admin
                    ? h(
                        "button",
                        {
                          type: "button",
                          class: "danger-outline small",
                          "aria-describedby": `webhook-${endpoint.id}`,
                          onClick: () => remove(endpoint, refresh)
                        },
                        "Remove"
                      )
                    : null
                )
            }
          ],
          rows: items,
          rowAttributes: (endpoint) => ({
            "data-webhook-id": endpoint.id,
            class: endpoint.disabled ? "revoked" : undefined
          })
        })
      )
    } catch (error) {
      if (error?.name === "AbortError") return
      throw error
    }
  }
  await refresh()
}
