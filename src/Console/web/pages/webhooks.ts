// Webhooks: the organization's endpoints (secret shown once), a test event on demand, and each
// endpoint's deliveries with Resend.

import {
  NewWebhookEndpoint,
  type WebhookDelivery,
  type WebhookEndpointItem,
  WebhookEventType
} from "../../../AdminApi/AdminApi.ts"
import { call, canChange, validate } from "../api.ts"
import { t } from "../i18n.ts"
import type { Page } from "../page.ts"
import {
  act,
  add,
  busy,
  type Column,
  checkedForm,
  confirmThenAct,
  dialogFooter,
  field,
  h,
  listHeader,
  loading,
  messageOf,
  nextId,
  openDialog,
  section,
  showError,
  showFormError,
  showOnceDialog,
  table,
  time,
  timeColumnLabel,
  toast
} from "../ui.ts"

type Endpoint = typeof WebhookEndpointItem.Type
type Delivery = typeof WebhookDelivery.Type

/** The one time a signing secret is visible, like a new API key. */
const showSecretDialog = ({
  title,
  url,
  secret,
  rotated
}: {
  readonly title: string
  readonly url: string
  readonly secret: string
  readonly rotated: boolean
}) =>
  showOnceDialog({
    title,
    noun: t.webhooks.secretNoun,
    testId: "new-secret",
    ariaLabel: t.webhooks.secretLabel,
    intro: h(
      "p",
      {},
      t.webhooks.secretFor,
      h("strong", { class: "mono url" }, url),
      t.webhooks.secretForAfter
    ),
    value: secret,
    warning: [
      t.webhooks.secretWarningBefore,
      h("code", {}, "webhook-signature"),
      t.webhooks.secretWarningAfter,
      rotated ? t.webhooks.secretRotatedNote : t.webhooks.secretLostNote
    ]
  })

const newEndpointDialog = (refresh: () => Promise<void>) => {
  const url = h("input", {
    name: "url",
    type: "url",
    required: true,
    maxlength: "2048",
    autocomplete: "off",
    placeholder: t.webhooks.urlPlaceholder
  })
  const boxes = WebhookEventType.literals.map((type) =>
    h("input", { type: "checkbox", id: nextId("event"), name: "events", value: type, checked: true })
  )
  const legendId = nextId("legend")
  const events = h(
    "fieldset",
    { class: "checks", "aria-labelledby": legendId },
    h("legend", { id: legendId }, t.webhooks.events),
    boxes.map((box) => h("label", { class: "check", for: box.id }, box, h("code", {}, box.value)))
  )
  const testEvents = h("input", { type: "checkbox", id: nextId("test-events"), name: "test_events" })
  const testEventsChoice = h(
    "label",
    { class: "check", for: testEvents.id },
    testEvents,
    t.webhooks.testEventsBefore,
    h("code", {}, '"livemode": false'),
    t.webhooks.testEventsAfter
  )
  const create = h("button", { type: "submit", class: "primary" }, t.webhooks.addEndpoint)
  const form: HTMLFormElement = checkedForm(
    {},
    async () => {
      const checked = validate(
        NewWebhookEndpoint,
        {
          url: url.value.trim(),
          events: boxes.filter((box) => box.checked).map((box) => box.value),
          test_events: testEvents.checked
        },
        {
          url: url.value.trim() ? t.webhooks.urlInvalid : t.webhooks.urlRequired,
          events: t.webhooks.eventsRequired
        }
      )
      if (!checked.ok) {
        showFormError(form, checked.error)
        if (checked.error.field === "events") boxes[0]?.focus()
        return
      }
      try {
        const created = await busy(create, () =>
          call((api) => api.webhooks.createWebhook({ payload: checked.value, query: {} }))
        )
        dialog.close()
        await showSecretDialog({
          title: t.webhooks.endpointAdded,
          url: created.endpoint.url,
          secret: created.secret,
          rotated: false
        })
        await refresh()
      } catch (error) {
        showFormError(form, error)
      }
    },
    field(t.webhooks.url, url, t.webhooks.urlHint),
    events,
    testEventsChoice,
    dialogFooter(() => dialog.close(), create)
  )
  const dialog = openDialog({
    title: t.webhooks.newEndpointTitle,
    body: form,
    initialFocus: "input[name=url]"
  })
}

const byId = (endpoint: Endpoint) => ({ params: { id: endpoint.id }, query: {} })

const rotateSecret = async (endpoint: Endpoint, refresh: () => Promise<void>) => {
  await confirmThenAct(
    {
      title: t.webhooks.rotateTitle,
      message: t.webhooks.rotateMessage(endpoint.url)
    },
    async () => {
      const rotated = await call((api) => api.webhooks.rotateWebhookSecret(byId(endpoint)))
      await showSecretDialog({
        title: t.webhooks.secretRotated,
        url: endpoint.url,
        secret: rotated.secret,
        rotated: true
      })
    },
    refresh
  )
}

const remove = async (endpoint: Endpoint, refresh: () => Promise<void>) => {
  await confirmThenAct(
    {
      title: t.webhooks.removeTitle,
      message: t.webhooks.removeMessage(endpoint.url),
      danger: true
    },
    async () => {
      await call((api) => api.webhooks.deleteWebhook(byId(endpoint)))
      toast(t.webhooks.removed(endpoint.url))
    },
    refresh
  )
}

/** Queues a signed webhook.test event for this endpoint alone, then shows its deliveries. */
const sendTest = async (endpoint: Endpoint, button: HTMLButtonElement, showDeliveries: () => void) => {
  try {
    const queued = await busy(button, () => call((api) => api.webhooks.testWebhook(byId(endpoint))))
    toast(t.webhooks.testQueued(queued.event_id, endpoint.url))
  } catch (error) {
    toast(messageOf(error), "error")
    return
  }
  showDeliveries()
}

const enable = async (endpoint: Endpoint, refresh: () => Promise<void>) => {
  await act(async () => {
    await call((api) => api.webhooks.enableWebhook(byId(endpoint)))
    toast(t.webhooks.enabled(endpoint.url))
  }, refresh)
}

const stateBadge = (state: Delivery["state"]) =>
  h(
    "span",
    { class: ["badge", state === "delivered" ? "success" : state === "failed" ? "danger-soft" : "neutral"] },
    t.webhooks.deliveryState[state]
  )

/** One endpoint's deliveries, newest first, each with Resend for an admin. */
const renderDeliveries = async (
  container: HTMLElement,
  endpoint: Endpoint,
  { signal, admin }: { readonly signal: AbortSignal; readonly admin: boolean }
) => {
  container.replaceChildren(loading(t.webhooks.loadingDeliveries))
  const resend = async (delivery: Delivery, button: HTMLButtonElement) => {
    try {
      await busy(button, () =>
        call((api) =>
          api.webhooks.resendWebhookDelivery({
            params: { id: endpoint.id, event_id: delivery.event_id },
            query: {}
          })
        )
      )
      toast(t.webhooks.resent(delivery.event_id))
    } catch (error) {
      toast(messageOf(error), "error")
    }
    await draw()
  }
  const draw = async () => {
    try {
      const { items } = await call(
        (api) => api.webhooks.webhookDeliveries({ params: { id: endpoint.id }, query: { limit: 50 } }),
        { signal }
      )
      const columns: ReadonlyArray<Column<Delivery>> = [
        { label: t.webhooks.eventId, cell: (d) => h("code", { class: "small-text event-id" }, d.event_id) },
        { label: t.webhooks.type, cell: (d) => h("code", {}, d.type) },
        { label: t.webhooks.state, cell: (d) => stateBadge(d.state) },
        { label: t.webhooks.attempts, className: "numeric", cell: (d) => String(d.attempts) },
        {
          label: t.webhooks.lastStatus,
          className: "numeric",
          cell: (d) =>
            d.last_status !== null
              ? String(d.last_status)
              : h("span", { class: "muted" }, d.attempts === 0 ? t.common.none : t.webhooks.noAnswer)
        },
        {
          label: timeColumnLabel(t.webhooks.lastAttempt),
          cell: (d) => time(d.last_attempt_at, "short")
        },
        {
          label: timeColumnLabel(t.webhooks.nextAttempt),
          cell: (d) => time(d.next_attempt_at, "short")
        },
        {
          label: t.webhooks.actions,
          className: "actions",
          cell: (d) =>
            admin
              ? h(
                  "button",
                  {
                    type: "button",
                    class: "secondary small",
                    "aria-label": t.webhooks.resendNamed(d.event_id),
                    onClick: (event) => resend(d, event.currentTarget as HTMLButtonElement)
                  },
                  t.webhooks.resend
                )
              : h("span", { class: "muted" }, t.webhooks.viewOnly)
        }
      ]
      container.replaceChildren(
        section(
          h("span", { class: "url" }, t.webhooks.deliveriesTo(endpoint.url)),
          table({
            caption: t.webhooks.deliveriesTo(endpoint.url),
            empty: t.webhooks.noDeliveries,
            columns,
            rows: items,
            rowAttributes: (d) => ({ "data-event-id": d.event_id })
          })
        )
      )
    } catch (error) {
      showError(container, error)
    }
  }
  await draw()
}

export const renderWebhooks: Page = async (main, { signal }) => {
  const admin = canChange()
  const list = h("div", {}, loading())
  const deliveries = h("div", { class: "deliveries" })
  let shown: string | null = null
  add(
    main,
    listHeader({
      admin,
      title: t.webhooks.title,
      lede: t.webhooks.lede,
      readOnly: t.webhooks.readOnly,
      newLabel: t.webhooks.newEndpoint,
      onNew: () => newEndpointDialog(refresh)
    }),
    list,
    deliveries
  )

  const showDeliveries = (endpoint: Endpoint) => {
    shown = endpoint.id
    renderDeliveries(deliveries, endpoint, { signal, admin }).then(() =>
      deliveries.querySelector("h2")?.scrollIntoView({ block: "nearest" })
    )
  }

  const rowAction = (
    endpoint: Endpoint,
    label: string,
    onClick: (button: HTMLButtonElement) => void,
    danger = false
  ) =>
    h(
      "button",
      {
        type: "button",
        class: danger ? "danger-outline small" : "secondary small",
        "aria-describedby": `webhook-${endpoint.id}`,
        onClick: (event) => onClick(event.currentTarget as HTMLButtonElement)
      },
      label
    )

  const columns: ReadonlyArray<Column<Endpoint>> = [
    {
      label: t.webhooks.url,
      cell: (endpoint) => h("span", { id: `webhook-${endpoint.id}`, class: "mono url" }, endpoint.url)
    },
    {
      label: t.webhooks.events,
      cell: (endpoint) =>
        h(
          "span",
          { class: "tags" },
          endpoint.events.flatMap((type) => [h("code", {}, type), " "])
        )
    },
    {
      label: t.webhooks.testEvents,
      cell: (endpoint) =>
        endpoint.test_events
          ? h("span", { class: "badge neutral" }, t.webhooks.included)
          : h("span", { class: "muted" }, t.webhooks.no)
    },
    {
      label: t.webhooks.state,
      cell: (endpoint) =>
        endpoint.disabled
          ? h("span", { class: "badge danger-soft" }, t.webhooks.disabled)
          : h("span", { class: "badge success" }, t.webhooks.active)
    },
    { label: t.webhooks.created, className: "nowrap", cell: (endpoint) => time(endpoint.created_at, "date") },
    {
      label: t.webhooks.actions,
      className: "actions",
      cell: (endpoint) =>
        h(
          "div",
          { class: "row-actions" },
          rowAction(endpoint, t.webhooks.deliveries, () => showDeliveries(endpoint)),
          admin
            ? rowAction(endpoint, t.webhooks.sendTest, (button) =>
                sendTest(endpoint, button, () => showDeliveries(endpoint))
              )
            : null,
          admin && endpoint.disabled
            ? rowAction(endpoint, t.webhooks.enable, () => enable(endpoint, refresh))
            : null,
          admin ? rowAction(endpoint, t.webhooks.rotateSecret, () => rotateSecret(endpoint, refresh)) : null,
          admin ? rowAction(endpoint, t.webhooks.remove, () => remove(endpoint, refresh), true) : null
        )
    }
  ]

  const refresh = async () => {
    try {
      const { items } = await call((api) => api.webhooks.webhooks({ query: {} }), { signal })
      if (shown !== null && !items.some((endpoint) => endpoint.id === shown)) {
        shown = null
        deliveries.replaceChildren()
      }
      list.replaceChildren(
        table({
          caption: t.webhooks.endpoints,
          empty: admin ? t.webhooks.noEndpointsAdmin : t.webhooks.noEndpoints,
          columns,
          rows: items,
          rowAttributes: (endpoint) => ({
            "data-webhook-id": endpoint.id,
            class: endpoint.disabled ? "revoked" : undefined
          })
        })
      )
    } catch (error) {
      showError(list, error)
    }
  }
  await refresh()
}
