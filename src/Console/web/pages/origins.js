// Origins (the API channel): list, create (key shown once), rotate, revoke, rate limit; each origin's test key.

import { api, canChange } from "../api.ts"
import {
  add,
  busy,
  clearFormError,
  confirmDialog,
  field,
  h,
  loading,
  number,
  openDialog,
  pageHeader,
  showFormError,
  showOnceDialog,
  table,
  time,
  toast
} from "../ui.ts"

/** The one time a key is visible: after closing the dialog only its prefix is ever shown. */
export const showKeyDialog = ({ title, label, key, prefix, test = false }) =>
  showOnceDialog({
    title,
    noun: test ? "test key" : "key",
    testId: "new-key",
    ariaLabel: test ? "New test API key" : "New API key",
    intro: test
      ? [
          h("p", {}, "The test key for ", h("strong", {}, label), ":"),
          h(
            "p",
            { class: "hint" },
            "Leads sent with it are test data: kept apart from live leads, never assigned, and shown only with the Test data switch on."
          )
        ]
      : h("p", {}, "The API key for ", h("strong", {}, label), ":"),
    value: key,
    warning: [
      `This is the only time the ${test ? "test key" : "key"} is shown. After you close this dialog only its prefix `,
      h("code", {}, prefix),
      ` remains visible. If it is lost, ${test ? "rotate the test key" : "rotate the key"}.`
    ]
  })

const rateLimitControl = (value) =>
  h("input", {
    name: "rate_limit",
    type: "number",
    min: "1",
    step: "1",
    inputmode: "numeric",
    value: value ?? ""
  })

const parseRateLimit = (input) => {
  const text = input.value.trim()
  if (text === "") return undefined
  const value = Number(text)
  return Number.isInteger(value) && value > 0 ? value : Number.NaN
}

const newOriginDialog = (refresh) => {
  const label = h("input", {
    name: "label",
    type: "text",
    required: true,
    maxlength: "200",
    autocomplete: "off"
  })
  const rateLimit = rateLimitControl()
  const create = h("button", { type: "submit", class: "primary" }, "Create")
  const form = h(
    "form",
    {
      novalidate: true,
      onSubmit: async (event) => {
        event.preventDefault()
        clearFormError(form)
        if (!label.value.trim()) {
          showFormError(form, {
            title: "Check this field:",
            message: "Give the origin a label.",
            field: "label"
          })
          return
        }
        const limit = parseRateLimit(rateLimit)
        if (Number.isNaN(limit)) {
          showFormError(form, {
            title: "Check this field:",
            message: "The rate limit is a whole number of requests per minute, at least 1.",
            field: "rate_limit"
          })
          return
        }
        try {
          const created = await busy(create, () =>
            api.post("/api/origins", {
              label: label.value.trim(),
              ...(limit === undefined ? {} : { rate_limit: limit })
            })
          )
          dialog.close()
          await showKeyDialog({
            title: "Origin created",
            label: created.label,
            key: created.key,
            prefix: created.prefix
          })
          refresh()
        } catch (error) {
          showFormError(form, error)
        }
      }
    },
    field("Label", label, "Where the leads come from, e.g. “Website contact form”."),
    field("Rate limit", rateLimit, "Requests per minute for this origin's key. Leave empty for the default."),
    h("div", { class: "form-error" }),
    h(
      "div",
      { class: "dialog-actions" },
      h("button", { type: "button", class: "secondary", onClick: () => dialog.close() }, "Cancel"),
      create
    )
  )
  const dialog = openDialog({ title: "New origin", body: form, initialFocus: "input[name=label]" })
}

const rateLimitDialog = (origin, refresh) => {
  const rateLimit = rateLimitControl(origin.rate_limit)
  const save = h("button", { type: "submit", class: "primary" }, "Save")
  const form = h(
    "form",
    {
      novalidate: true,
      onSubmit: async (event) => {
        event.preventDefault()
        clearFormError(form)
        const limit = parseRateLimit(rateLimit)
        if (limit === undefined || Number.isNaN(limit)) {
          showFormError(form, {
            title: "Check this field:",
            message: "The rate limit is a whole number of requests per minute, at least 1.",
            field: "rate_limit"
          })
          return
        }
        try {
          await busy(save, () =>
            api.patch(`/api/origins/${encodeURIComponent(origin.id)}`, { rate_limit: limit })
          )
          dialog.close()
          toast(`Rate limit of ${origin.label} is now ${limit} per minute.`)
          refresh()
        } catch (error) {
          showFormError(form, error)
        }
      }
    },
    field("Rate limit", rateLimit, "Requests per minute. The new limit applies from the next request."),
    h("div", { class: "form-error" }),
    h(
      "div",
      { class: "dialog-actions" },
      h("button", { type: "button", class: "secondary", onClick: () => dialog.close() }, "Cancel"),
      save
    )
  )
  const dialog = openDialog({
    title: `Rate limit of ${origin.label}`,
    body: form,
    initialFocus: "input[name=rate_limit]"
  })
}

const rotate = async (origin, refresh) => {
  const ok = await confirmDialog({
    title: `Rotate the key of ${origin.label}?`,
    message: `A new key replaces ${origin.prefix}…; the current key stops working at once. Integrations using it must be updated.`
  })
  if (!ok) return
  try {
    const rotated = await api.post(`/api/origins/${encodeURIComponent(origin.id)}/rotate`, {})
    await showKeyDialog({
      title: "Key rotated",
      label: origin.label,
      key: rotated.key,
      prefix: rotated.prefix
    })
  } catch (error) {
    toast(error.message, "error")
  }
  refresh()
}

const revoke = async (origin, refresh) => {
  const ok = await confirmDialog({
    title: `Revoke the key of ${origin.label}?`,
    message: `Requests with ${origin.prefix}… will be refused as invalid_key from now on. This cannot be undone; rotate to issue a new key.`,
    danger: true
  })
  if (!ok) return
  try {
    await api.post(`/api/origins/${encodeURIComponent(origin.id)}/revoke`, {})
    toast(`The key of ${origin.label} is revoked.`)
  } catch (error) {
    toast(error.message, "error")
  }
  refresh()
}

/** Creates the origin's test key, or replaces the active one (which stops working at once). */
const rotateTest = async (origin, refresh) => {
  if (origin.test_prefix) {
    const ok = await confirmDialog({
      title: `Rotate the test key of ${origin.label}?`,
      message: `A new test key replaces ${origin.test_prefix}…; the current test key stops working at once. The live key is not affected.`
    })
    if (!ok) return
  }
  try {
    const issued = await api.post(`/api/origins/${encodeURIComponent(origin.id)}/test-key/rotate`, {})
    await showKeyDialog({
      title: origin.test_prefix ? "Test key rotated" : "Test key created",
      label: origin.label,
      key: issued.key,
      prefix: issued.prefix,
      test: true
    })
  } catch (error) {
    toast(error.message, "error")
  }
  refresh()
}

const revokeTest = async (origin, refresh) => {
  const ok = await confirmDialog({
    title: `Revoke the test key of ${origin.label}?`,
    message: `Requests with ${origin.test_prefix}… will be refused as invalid_key from now on. The live key and the test data already sent stay; create a new test key at any time.`,
    confirmLabel: "Revoke test key",
    danger: true
  })
  if (!ok) return
  try {
    await api.post(`/api/origins/${encodeURIComponent(origin.id)}/test-key/revoke`, {})
    toast(`The test key of ${origin.label} is revoked.`)
  } catch (error) {
    toast(error.message, "error")
  }
  refresh()
}

/** The test key's actions, a row of their own under the live key's. */
const testKeyActions = (origin, refresh) =>
  h(
    "div",
    { class: "row-actions" },
    h(
      "button",
      {
        type: "button",
        class: "secondary small",
        "aria-describedby": `origin-${origin.id}`,
        onClick: () => rotateTest(origin, refresh)
      },
      origin.test_prefix ? "Rotate test key" : "Create test key"
    ),
    origin.test_prefix
      ? h(
          "button",
          {
            type: "button",
            class: "danger-outline small",
            "aria-describedby": `origin-${origin.id}`,
            onClick: () => revokeTest(origin, refresh)
          },
          "Revoke test key"
        )
      : null
  )

export const renderOrigins = async (main, { signal, navigate }) => {
  const admin = canChange()
  const list = h("div", {}, loading())
  const newButton = admin
    ? h("button", { type: "button", class: "primary", onClick: () => newOriginDialog(refresh) }, "New origin")
    : null
  add(
    main,
    pageHeader(
      "Origins",
      "Each origin is a system that sends leads (a web form, a chatbot, a call centre) with its own API key.",
      newButton
    ),
    admin
      ? null
      : h("p", { class: "notice" }, "You have read-only access: changes are made by an administrator."),
    list
  )

  const refresh = async () => {
    try {
      const { items } = await api.get("/api/origins", { signal })
      list.replaceChildren(
        table({
          caption: "Origins",
          empty: admin ? "No origins yet. Create one to get an API key." : "No origins yet.",
          columns: [
            {
              label: "Label",
              cell: (origin) =>
                h(
                  "a",
                  {
                    id: `origin-${origin.id}`,
                    href: `/requests?origin=${encodeURIComponent(origin.id)}`,
                    onClick: (event) => {
                      event.preventDefault()
                      navigate(`/requests?origin=${encodeURIComponent(origin.id)}`)
                    }
                  },
                  origin.label
                )
            },
            {
              label: "Key prefixes",
              cell: (origin) =>
                h(
                  "span",
                  { class: "stacked" },
                  origin.prefix ? h("code", {}, origin.prefix) : h("span", { class: "muted" }, "no key"),
                  origin.test_prefix
                    ? h("code", { class: "test-prefix", title: "Test key" }, origin.test_prefix)
                    : h("span", { class: "muted small-text" }, "no test key")
                )
            },
            { label: "Created", className: "nowrap", cell: (origin) => time(origin.created_at, "date") },
            {
              label: "Last live use",
              className: "nowrap",
              cell: (origin) => time(origin.last_used_at, "relative")
            },
            {
              label: "Live requests 24 h",
              className: "numeric",
              cell: (origin) => number(origin.requests_24h)
            },
            {
              label: "Rate limit",
              className: "numeric",
              cell: (origin) =>
                h(
                  "span",
                  { class: "with-action" },
                  origin.rate_limit == null ? "default" : `${number(origin.rate_limit)}/min`,
                  admin
                    ? h(
                        "button",
                        {
                          type: "button",
                          class: "link small",
                          "aria-label": "Change rate limit",
                          "aria-describedby": `origin-${origin.id}`,
                          onClick: () => rateLimitDialog(origin, refresh)
                        },
                        "Change"
                      )
                    : null
                )
            },
            {
              label: "State",
              cell: (origin) =>
                origin.revoked
                  ? h("span", { class: "badge danger-soft" }, "Revoked")
                  : h("span", { class: "badge success" }, "Active")
            },
            {
              label: "Actions",
              className: "actions",
              cell: (origin) =>
                admin
                  ? h(
                      "div",
                      { class: "key-actions" },
                      h(
                        "div",
                        { class: "row-actions" },
                        h(
                          "button",
                          {
                            type: "button",
                            class: "secondary small",
                            "aria-describedby": `origin-${origin.id}`,
                            onClick: () => rotate(origin, refresh)
                          },
                          "Rotate key"
                        ),
                        h(
                          "button",
                          {
                            type: "button",
                            class: "danger-outline small",
                            "aria-describedby": `origin-${origin.id}`,
                            disabled: origin.revoked,
                            onClick: () => revoke(origin, refresh)
                          },
                          "Revoke key"
                        )
                      ),
                      testKeyActions(origin, refresh)
                    )
                  : h("span", { class: "muted" }, "View only")
            }
          ],
          rows: items,
          rowAttributes: (origin) => ({
            "data-origin-id": origin.id,
            class: origin.revoked ? "revoked" : undefined
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
