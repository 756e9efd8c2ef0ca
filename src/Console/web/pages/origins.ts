// Origins (the API channel): list, create (key shown once), rotate, revoke, rate limit; each origin's test key.

import { NewOrigin, type OriginItem, RateLimitChange } from "../../../AdminApi/AdminApi.ts"
import { ApiError, call, canChange, isAbort } from "../api.ts"
import { formatNumber, t } from "../i18n.ts"
import type { Page, PageContext } from "../page.ts"
import {
  act,
  add,
  confirmThenAct,
  dialogFooter,
  field,
  h,
  listHeader,
  loading,
  openDialog,
  requiredInput,
  schemaForm,
  showOnceDialog,
  table,
  time,
  timeColumnLabel,
  toast
} from "../ui.ts"

type Origin = typeof OriginItem.Type

/** The rate limit's rule is the contract's (`NewOrigin.rate_limit`, the same value `PATCH` takes). */

const failed = (error: unknown) =>
  toast(error instanceof ApiError ? `${error.title} ${error.message}` : String(error), "error")

/** The one time a key is visible: after closing the dialog only its prefix is ever shown. */
const showKeyDialog = ({
  title,
  label,
  key,
  prefix,
  test = false
}: {
  readonly title: string
  readonly label: string
  readonly key: string
  readonly prefix: string
  readonly test?: boolean
}) =>
  showOnceDialog({
    title,
    noun: test ? t.origins.testKeyNoun : t.origins.keyNoun,
    testId: "new-key",
    ariaLabel: test ? t.origins.newTestKeyLabel : t.origins.newKeyLabel,
    intro: test
      ? [
          h("p", {}, t.origins.testKeyFor, h("strong", {}, label), ":"),
          h("p", { class: "hint" }, t.origins.testKeyHint)
        ]
      : h("p", {}, t.origins.keyFor, h("strong", {}, label), ":"),
    value: key,
    warning: [t.origins.onlyTimeBefore(test), h("code", {}, prefix), t.origins.onlyTimeAfter(test)]
  })

const rateLimitControl = (value?: number) =>
  h("input", {
    name: "rate_limit",
    type: "number",
    min: "1",
    step: "1",
    inputmode: "numeric",
    value: value === undefined ? "" : String(value)
  })

/** The field as typed: empty is "not given"; anything else a number for the schema to judge. */
const rateLimitOf = (input: HTMLInputElement) => {
  const text = input.value.trim()
  return text === "" ? undefined : Number(text)
}

const newOriginDialog = (refresh: () => Promise<void>) => {
  const label = requiredInput("label", { maxlength: "200" })
  const rateLimit = rateLimitControl()
  const create = h("button", { type: "submit", class: "primary" }, t.origins.create)
  const form = schemaForm(
    {
      schema: NewOrigin,
      input: () => {
        const limit = rateLimitOf(rateLimit)
        return { label: label.value.trim(), ...(limit === undefined ? {} : { rate_limit: limit }) }
      },
      messages: { label: t.origins.labelRule, rate_limit: t.origins.rateLimitRule },
      submit: create,
      send: (payload) => call((api) => api.origins.createOrigin({ payload, query: {} })),
      done: async (created) => {
        dialog.close()
        await showKeyDialog({
          title: t.origins.originCreated,
          label: created.label,
          key: created.key,
          prefix: created.prefix
        })
        await refresh()
      }
    },
    field(t.origins.label, label, t.origins.labelHint),
    field(t.origins.rateLimit, rateLimit, t.origins.rateLimitHintNew),
    dialogFooter(() => dialog.close(), create)
  )
  const dialog = openDialog({ title: t.origins.newOrigin, body: form, initialFocus: "input[name=label]" })
}

const rateLimitDialog = (origin: Origin, refresh: () => Promise<void>) => {
  const rateLimit = rateLimitControl(origin.rate_limit)
  const save = h("button", { type: "submit", class: "primary" }, t.origins.save)
  const form = schemaForm(
    {
      schema: RateLimitChange,
      input: () => ({ rate_limit: rateLimitOf(rateLimit) }),
      messages: { rate_limit: t.origins.rateLimitRule },
      submit: save,
      send: (payload) =>
        call((api) => api.origins.setRateLimit({ params: { id: origin.id }, payload, query: {} })),
      done: async ({ rate_limit }) => {
        dialog.close()
        toast(t.origins.rateLimitSaved(origin.label, formatNumber(rate_limit)))
        await refresh()
      }
    },
    field(t.origins.rateLimit, rateLimit, t.origins.rateLimitHint),
    dialogFooter(() => dialog.close(), save)
  )
  const dialog = openDialog({
    title: t.origins.rateLimitOf(origin.label),
    body: form,
    initialFocus: "input[name=rate_limit]"
  })
}

/**
 * Issues the origin's live or test key anew (the active one of that mode stops working at once),
 * after a confirmation when there is one to replace. A test key may not exist yet: then it is created.
 */
const rotate = async (origin: Origin, test: boolean, refresh: () => Promise<void>) => {
  const byId = { params: { id: origin.id }, query: {} }
  const work = async () => {
    const issued = await call((api) => (test ? api.origins.rotateTestKey(byId) : api.origins.rotateKey(byId)))
    await showKeyDialog({
      title: !test
        ? t.origins.keyRotated
        : origin.test_prefix
          ? t.origins.testKeyRotated
          : t.origins.testKeyCreated,
      label: origin.label,
      key: issued.key,
      prefix: issued.prefix,
      test
    })
  }
  if (!test) {
    await confirmThenAct(
      { title: t.origins.rotateTitle(origin.label), message: t.origins.rotateText(origin.prefix ?? "") },
      work,
      refresh,
      failed
    )
  } else if (origin.test_prefix) {
    await confirmThenAct(
      {
        title: t.origins.rotateTestTitle(origin.label),
        message: t.origins.rotateTestText(origin.test_prefix)
      },
      work,
      refresh,
      failed
    )
  } else {
    await act(work, refresh, failed)
  }
}

/** Revokes the origin's live or test key after a confirmation naming it. */
const revoke = async (origin: Origin, test: boolean, refresh: () => Promise<void>) => {
  const byId = { params: { id: origin.id }, query: {} }
  await confirmThenAct(
    test
      ? {
          title: t.origins.revokeTestTitle(origin.label),
          message: t.origins.revokeTestText(origin.test_prefix ?? ""),
          confirmLabel: t.origins.revokeTestKey,
          danger: true
        }
      : {
          title: t.origins.revokeTitle(origin.label),
          message: t.origins.revokeText(origin.prefix ?? ""),
          danger: true
        },
    async () => {
      await call((api) => (test ? api.origins.revokeTestKey(byId) : api.origins.revokeKey(byId)))
      toast((test ? t.origins.testRevoked : t.origins.keyRevoked)(origin.label))
    },
    refresh,
    failed
  )
}

/** A key's actions, rotate and revoke: the live key's, or in a row of its own under them the test key's. */
const keyActions = (origin: Origin, test: boolean, refresh: () => Promise<void>) => {
  const button = (className: string, label: string, onClick: () => void, disabled = false) =>
    h(
      "button",
      { type: "button", class: className, "aria-describedby": `origin-${origin.id}`, disabled, onClick },
      label
    )
  const rotateLabel = !test
    ? t.origins.rotateKey
    : origin.test_prefix
      ? t.origins.rotateTestKey
      : t.origins.createTestKey
  return h(
    "div",
    { class: "row-actions" },
    button("secondary small", rotateLabel, () => rotate(origin, test, refresh)),
    !test || origin.test_prefix
      ? button(
          "danger-outline small",
          test ? t.origins.revokeTestKey : t.origins.revokeKey,
          () => revoke(origin, test, refresh),
          !test && origin.revoked
        )
      : null
  )
}

const columns = (admin: boolean, navigate: PageContext["navigate"], refresh: () => Promise<void>) => [
  {
    label: t.origins.label,
    cell: (origin: Origin) =>
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
    label: t.origins.keyPrefixes,
    cell: (origin: Origin) =>
      h(
        "span",
        { class: "stacked" },
        origin.prefix ? h("code", {}, origin.prefix) : h("span", { class: "muted" }, t.origins.noKey),
        origin.test_prefix
          ? h("code", { class: "test-prefix", title: t.origins.testKey }, origin.test_prefix)
          : h("span", { class: "muted small-text" }, t.origins.noTestKey)
      )
  },
  {
    label: timeColumnLabel(t.origins.created),
    className: "nowrap",
    cell: (origin: Origin) => time(origin.created_at, "date")
  },
  {
    label: t.origins.lastLiveUse,
    className: "nowrap",
    cell: (origin: Origin) => time(origin.last_used_at, "relative")
  },
  {
    label: t.origins.liveRequests24h,
    className: "numeric",
    cell: (origin: Origin) => formatNumber(origin.requests_24h)
  },
  {
    label: t.origins.rateLimit,
    className: "numeric",
    cell: (origin: Origin) =>
      h(
        "span",
        { class: "with-action" },
        t.origins.perMinute(formatNumber(origin.rate_limit)),
        admin
          ? h(
              "button",
              {
                type: "button",
                class: "link small",
                "aria-label": t.origins.changeRateLimit,
                "aria-describedby": `origin-${origin.id}`,
                onClick: () => rateLimitDialog(origin, refresh)
              },
              t.origins.change
            )
          : null
      )
  },
  {
    label: t.origins.state,
    cell: (origin: Origin) =>
      origin.revoked
        ? h("span", { class: "badge danger-soft" }, t.origins.revoked)
        : h("span", { class: "badge success" }, t.origins.active)
  },
  {
    label: t.origins.actions,
    className: "actions",
    cell: (origin: Origin) =>
      admin
        ? h(
            "div",
            { class: "key-actions" },
            keyActions(origin, false, refresh),
            keyActions(origin, true, refresh)
          )
        : h("span", { class: "muted" }, t.origins.viewOnly)
  }
]

export const renderOrigins: Page = async (main, { signal, navigate }) => {
  const admin = canChange()
  const list = h("div", {}, loading())
  add(
    main,
    listHeader({
      admin,
      title: t.origins.title,
      lede: t.origins.lede,
      readOnly: t.origins.readOnly,
      newLabel: t.origins.newOrigin,
      onNew: () => newOriginDialog(refresh)
    }),
    list
  )

  const refresh = async () => {
    try {
      const { items } = await call((api) => api.origins.origins({ query: {} }), { signal })
      list.replaceChildren(
        table({
          caption: t.origins.caption,
          empty: admin ? t.origins.emptyAdmin : t.origins.empty,
          columns: columns(admin, navigate, refresh),
          rows: items,
          rowAttributes: (origin) => ({
            "data-origin-id": origin.id,
            class: origin.revoked ? "revoked" : undefined
          })
        })
      )
    } catch (error) {
      if (isAbort(error)) return
      throw error
    }
  }
  await refresh()
}
