// Webhooks: the organization's endpoints (secret shown once) and their state (failing, paused), a
// test event on demand, each endpoint's deliveries with their errors and attempts, Resend, and
// "Resend failed since …".

import {
  NewWebhookEndpoint,
  type WebhookAttempt,
  type WebhookDelivery,
  type WebhookEndpointItem,
  WebhookEventType
} from "../../../AdminApi/AdminApi.ts"
import { call, canChange } from "../api.ts"
import { formatDateTime, fromZonedLocal, t, toZonedLocal, zoneLabel } from "../i18n.ts"
import type { Page } from "../page.ts"
import {
  add,
  attemptError,
  busy,
  type Column,
  checkedForm,
  confirmThenAct,
  dialogFooter,
  duration,
  field,
  h,
  link,
  listHeader,
  loading,
  messageOf,
  nextId,
  openDialog,
  requiredInput,
  schemaForm,
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
type Attempt = typeof WebhookAttempt.Type

/** Paused by the service (a 410, or failing for WEBHOOK_DISABLE_AFTER), as opposed to by an operator. */
const pausedAutomatically = (endpoint: Endpoint) =>
  endpoint.disabled && (endpoint.disabled_reason === "failing" || endpoint.disabled_reason === "gone")

const lastErrorLine = (error: string | null) =>
  error === null
    ? null
    : h("span", { class: "state-detail" }, `${t.webhooks.lastErrorIs} `, attemptError(error))

/** Active, failing since …, paused automatically (why, when, the last error), or disabled by an operator. */
const endpointState = (endpoint: Endpoint) => {
  if (pausedAutomatically(endpoint))
    return h(
      "div",
      { class: "endpoint-state" },
      h("span", { class: "badge danger" }, t.webhooks.statePaused),
      endpoint.disabled_at === null
        ? null
        : h("span", { class: "state-detail" }, t.webhooks.pausedAt(formatDateTime(endpoint.disabled_at))),
      h(
        "span",
        { class: "state-detail" },
        endpoint.disabled_reason === "failing" && endpoint.failing_since !== null
          ? t.webhooks.pausedFailing(formatDateTime(endpoint.failing_since))
          : t.webhooks.pausedReason[endpoint.disabled_reason === "gone" ? "gone" : "failing"]
      ),
      lastErrorLine(endpoint.last_error)
    )
  if (endpoint.disabled) return h("span", { class: "badge danger-soft" }, t.webhooks.stateDisabled)
  if (endpoint.failing_since !== null)
    return h(
      "div",
      { class: "endpoint-state" },
      h("span", { class: "badge warning" }, t.webhooks.stateFailing),
      h("span", { class: "state-detail" }, t.webhooks.failingSince(formatDateTime(endpoint.failing_since))),
      lastErrorLine(endpoint.last_error)
    )
  return h("span", { class: "badge success" }, t.webhooks.stateActive)
}

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
  const url = requiredInput("url", { type: "url", maxlength: "2048", placeholder: t.webhooks.urlPlaceholder })
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
    // One run of text beside the box: as flex items of the label, its pieces broke apart on a phone.
    h("span", {}, t.webhooks.testEventsBefore, h("code", {}, '"livemode": false'), t.webhooks.testEventsAfter)
  )
  const create = h("button", { type: "submit", class: "primary" }, t.webhooks.addEndpoint)
  const form = schemaForm(
    {
      schema: NewWebhookEndpoint,
      input: () => ({
        url: url.value.trim(),
        events: boxes.filter((box) => box.checked).map((box) => box.value),
        test_events: testEvents.checked
      }),
      messages: () => ({
        url: url.value.trim() ? t.webhooks.urlInvalid : t.webhooks.urlRequired,
        events: t.webhooks.eventsRequired
      }),
      onInvalid: (error) => {
        if (error.field === "events") boxes[0]?.focus()
      },
      submit: create,
      send: (payload) => call((api) => api.webhooks.createWebhook({ payload, query: {} })),
      done: async (created) => {
        dialog.close()
        await showSecretDialog({
          title: t.webhooks.endpointAdded,
          url: created.endpoint.url,
          secret: created.secret,
          rotated: false
        })
        await refresh()
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

/** An operator stops deliveries to the endpoint; they wait (and events keep queuing) until Enable. */
const disable = async (endpoint: Endpoint, refresh: () => Promise<void>) => {
  await confirmThenAct(
    {
      title: t.webhooks.disableTitle,
      message: t.webhooks.disableMessage(endpoint.url),
      confirmLabel: t.webhooks.disable,
      danger: true
    },
    async () => {
      await call((api) => api.webhooks.disableWebhook(byId(endpoint)))
      toast(t.webhooks.disabledToast(endpoint.url))
    },
    refresh
  )
}

/** Enable, or Resume for an endpoint the service paused: its waiting deliveries are sent again. */
const enable = async (endpoint: Endpoint, refresh: () => Promise<void>) => {
  const resume = pausedAutomatically(endpoint)
  await confirmThenAct(
    {
      title: resume ? t.webhooks.resumeTitle : t.webhooks.enableTitle,
      message: t.webhooks.enableMessage(endpoint.url),
      confirmLabel: resume ? t.webhooks.resume : t.webhooks.enable
    },
    async () => {
      await call((api) => api.webhooks.enableWebhook(byId(endpoint)))
      toast(resume ? t.webhooks.resumed(endpoint.url) : t.webhooks.enabled(endpoint.url))
    },
    refresh
  )
}

const day = 24 * 60 * 60 * 1000

/** Queues again every failed delivery created since a time the operator picks in the organization's zone. */
const resendFailedDialog = (endpoint: Endpoint, done: () => Promise<void>) => {
  const since = h("input", {
    name: "since",
    type: "datetime-local",
    required: true,
    value: toZonedLocal(new Date(Date.now() - day).toISOString())
  })
  const confirm = h("button", { type: "submit", class: "primary" }, t.webhooks.resendFailedConfirm)
  const form: HTMLFormElement = checkedForm(
    {},
    async () => {
      const instant = fromZonedLocal(since.value)
      if (instant === "") {
        showFormError(form, {
          title: t.errors.validation_error,
          message: t.webhooks.sinceRequired,
          field: "since"
        })
        return
      }
      try {
        const { queued } = await busy(confirm, () =>
          call((api) =>
            api.webhooks.resendFailedWebhookDeliveries({
              params: { id: endpoint.id },
              payload: { since: instant },
              query: {}
            })
          )
        )
        dialog.close()
        toast(t.webhooks.queuedFailed(queued, endpoint.url))
        await done()
      } catch (error) {
        showFormError(form, error)
      }
    },
    h("p", {}, t.webhooks.resendFailedIntro(endpoint.url)),
    field(t.webhooks.since, since, t.webhooks.sinceHint(zoneLabel())),
    dialogFooter(() => dialog.close(), confirm)
  )
  const dialog = openDialog({
    title: t.webhooks.resendFailedTitle,
    body: form,
    initialFocus: "input[name=since]"
  })
}

/** Every attempt of one delivery, oldest first: time, HTTP status or none, the error, duration. */
const attemptsDialog = async (endpoint: Endpoint, delivery: Delivery, button: HTMLButtonElement) => {
  let items: ReadonlyArray<Attempt>
  try {
    items = (
      await busy(button, () =>
        call((api) =>
          api.webhooks.webhookAttempts({
            params: { id: endpoint.id, event_id: delivery.event_id },
            query: {}
          })
        )
      )
    ).items
  } catch (error) {
    toast(messageOf(error), "error")
    return
  }
  const columns: ReadonlyArray<Column<Attempt>> = [
    { label: timeColumnLabel(t.webhooks.attemptAt), className: "nowrap", cell: (a) => time(a.at) },
    {
      label: t.webhooks.httpStatus,
      className: "numeric",
      cell: (a) => (a.status === null ? h("span", { class: "muted" }, t.webhooks.noAnswer) : String(a.status))
    },
    {
      label: t.webhooks.error,
      cell: (a) => (a.error === null ? h("span", { class: "muted" }, t.common.none) : attemptError(a.error))
    },
    { label: t.webhooks.duration, className: "numeric", cell: (a) => duration(a.duration_ms) }
  ]
  openDialog({
    title: t.webhooks.attemptsTitle,
    className: "wide-dialog",
    body: [
      h("p", {}, t.webhooks.attemptsOf(delivery.event_id)),
      table({ caption: t.webhooks.attemptsTitle, empty: t.webhooks.noAttempts, columns, rows: items })
    ],
    initialFocus: "button.icon-button"
  })
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
          label: t.webhooks.lastError,
          cell: (d) =>
            d.last_error === null ? h("span", { class: "muted" }, t.common.none) : attemptError(d.last_error)
        },
        {
          label: timeColumnLabel(t.webhooks.lastAttempt),
          cell: (d) => time(d.last_attempt_at, "short")
        },
        {
          label: timeColumnLabel(t.webhooks.nextAttempt),
          // A disabled endpoint's pending deliveries wait for Resume (Enable), whatever their due time.
          cell: (d) =>
            d.state === "pending" && endpoint.disabled
              ? h(
                  "span",
                  { class: "muted" },
                  t.webhooks.waitsFor(pausedAutomatically(endpoint) ? t.webhooks.resume : t.webhooks.enable)
                )
              : time(d.next_attempt_at, "short")
        },
        {
          label: t.webhooks.actions,
          className: "actions",
          cell: (d) =>
            h(
              "div",
              { class: "row-actions" },
              h(
                "button",
                {
                  type: "button",
                  class: "secondary small",
                  "aria-label": t.webhooks.showAttemptsNamed(d.event_id),
                  disabled: d.attempts === 0,
                  onClick: (event) => attemptsDialog(endpoint, d, event.currentTarget as HTMLButtonElement)
                },
                t.webhooks.showAttempts
              ),
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
                : null
            )
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

export const renderWebhooks: Page = async (main, { signal, search }) => {
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

  const redrawDeliveries = async () => {
    await refresh()
    const endpoint = endpoints.find((item) => item.id === shown)
    if (endpoint !== undefined) await renderDeliveries(deliveries, endpoint, { signal, admin })
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
    { label: t.webhooks.state, cell: endpointState },
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
            ? rowAction(endpoint, pausedAutomatically(endpoint) ? t.webhooks.resume : t.webhooks.enable, () =>
                enable(endpoint, redrawDeliveries)
              )
            : null,
          admin && !endpoint.disabled
            ? rowAction(endpoint, t.webhooks.disable, () => disable(endpoint, redrawDeliveries))
            : null,
          admin
            ? rowAction(endpoint, t.webhooks.resendFailed, () =>
                resendFailedDialog(endpoint, redrawDeliveries)
              )
            : null,
          admin ? rowAction(endpoint, t.webhooks.rotateSecret, () => rotateSecret(endpoint, refresh)) : null,
          admin ? rowAction(endpoint, t.webhooks.remove, () => remove(endpoint, refresh), true) : null
        )
    }
  ]

  let endpoints: ReadonlyArray<Endpoint> = []
  const refresh = async () => {
    try {
      const { items } = await call((api) => api.webhooks.webhooks({ query: {} }), { signal })
      endpoints = items
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
            class: [endpoint.disabled ? "revoked" : undefined, endpoint.id === shown ? "selected" : undefined]
          })
        })
      )
    } catch (error) {
      showError(list, error)
    }
  }
  // `/webhooks?endpoint=ID` (the overview's links): that endpoint's deliveries, opened.
  const linked = search.get("endpoint")
  if (linked !== null) shown = linked
  await refresh()
  const target = endpoints.find((endpoint) => endpoint.id === linked)
  if (target !== undefined) {
    showDeliveries(target)
    list
      .querySelector<HTMLElement>(`tr[data-webhook-id="${CSS.escape(target.id)}"]`)
      ?.scrollIntoView({ block: "center" })
  } else shown = null
}

/**
 * The overview's list of endpoints that are failing or paused, each a link to it on this page;
 * nothing when every endpoint delivers.
 */
export const webhookAlerts = async (
  container: HTMLElement,
  { signal, navigate }: { readonly signal: AbortSignal; readonly navigate: (path: string) => void }
) => {
  try {
    const { items } = await call((api) => api.overview.webhookAlerts({ query: {} }), { signal })
    if (items.length === 0) return
    container.replaceChildren(
      section(
        t.webhooks.alertsTitle,
        table({
          caption: t.webhooks.alertsCaption,
          columns: [
            {
              label: t.webhooks.alertEndpoint,
              cell: (alert) =>
                link(
                  `/webhooks?endpoint=${encodeURIComponent(alert.id)}`,
                  navigate,
                  h("span", { class: "mono url" }, alert.url)
                )
            },
            {
              label: t.webhooks.alertState,
              cell: (alert) =>
                h(
                  "div",
                  { class: "endpoint-state" },
                  h(
                    "span",
                    { class: ["badge", alert.state === "paused" ? "danger" : "warning"] },
                    alert.state === "paused" ? t.webhooks.statePaused : t.webhooks.stateFailing
                  ),
                  h(
                    "span",
                    { class: "state-detail" },
                    alert.state === "paused"
                      ? t.webhooks.pausedAt(formatDateTime(alert.since))
                      : t.webhooks.failingSince(formatDateTime(alert.since))
                  ),
                  // A 410 says why by itself; "failing" is the badge and the last error beside it.
                  alert.disabled_reason === "gone"
                    ? h("span", { class: "state-detail" }, t.webhooks.pausedReason.gone)
                    : null
                )
            },
            {
              label: t.webhooks.lastError,
              cell: (alert) =>
                alert.last_error === null
                  ? h("span", { class: "muted" }, t.common.none)
                  : attemptError(alert.last_error)
            }
          ],
          rows: items,
          rowAttributes: (alert) => ({ "data-webhook-id": alert.id })
        })
      )
    )
  } catch (error) {
    showError(container, error)
  }
}
