// Catalog: the organization's properties; add, archive, restore; search by codigo or external code.

import { NewProperty, type Property } from "../../../AdminApi/AdminApi.ts"
import { call, canChange } from "../api.ts"
import { t } from "../i18n.ts"
import type { Page } from "../page.ts"
import {
  add,
  busy,
  type Column,
  field,
  h,
  loading,
  pageHeader,
  requiredInput,
  schemaForm,
  searchForm,
  section,
  showError,
  table,
  time,
  toast
} from "../ui.ts"

type Item = typeof Property.Type

export const renderCatalog: Page = async (main, { signal, navigate, search }) => {
  const admin = canChange()
  const q = search.get("q") ?? ""
  const input = h("input", { name: "q", type: "search", value: q, autocomplete: "off" })
  const filterForm = searchForm(
    "search-form",
    t.catalog.searchLabel,
    () => {
      const next = input.value.trim()
      navigate(next ? `/catalog?${new URLSearchParams({ q: next })}` : "/catalog", { replace: true })
    },
    field(t.catalog.searchField, input),
    h("button", { type: "submit", class: "primary" }, t.catalog.search)
  )
  const results = h("div", {}, loading())

  const addForm = admin ? propertyForm(() => refresh()) : null

  add(
    main,
    pageHeader(t.catalog.title, t.catalog.lede),
    addForm ? section(t.catalog.addSection, addForm) : null,
    filterForm,
    results
  )

  const setArchived = async (property: Item, archived: boolean, button: HTMLButtonElement) => {
    try {
      await busy(button, () =>
        archived
          ? call((api) => api.catalog.archiveProperty({ params: { id: property.id }, query: {} }))
          : call((api) => api.catalog.restoreProperty({ params: { id: property.id }, query: {} }))
      )
      toast(archived ? t.catalog.archived(property.codigo) : t.catalog.restored(property.codigo))
      await refresh()
    } catch (error) {
      toast(error instanceof Error ? error.message : String(error), "error")
    }
  }

  const actions: ReadonlyArray<Column<Item>> = admin
    ? [
        {
          label: t.catalog.actions,
          className: "actions",
          cell: (property) =>
            h(
              "button",
              {
                type: "button",
                class: "secondary small",
                "aria-label": property.archived
                  ? t.catalog.restoreNamed(property.codigo)
                  : t.catalog.archiveNamed(property.codigo),
                onClick: (event) =>
                  setArchived(property, !property.archived, event.currentTarget as HTMLButtonElement)
              },
              property.archived ? t.catalog.restore : t.catalog.archive
            )
        }
      ]
    : []

  const refresh = async () => {
    try {
      const { items } = await call((api) => api.catalog.properties({ query: q ? { q } : {} }), { signal })
      results.replaceChildren(
        table({
          caption: t.catalog.properties,
          empty: q ? t.catalog.noMatch : t.catalog.none,
          columns: [
            { label: t.catalog.columnCodigo, cell: (property) => h("code", {}, property.codigo) },
            {
              label: t.catalog.columnExternal,
              cell: (property) => property.external_code ?? h("span", { class: "muted" }, t.common.none)
            },
            {
              label: t.catalog.state,
              cell: (property) =>
                property.archived
                  ? h("span", { class: "badge neutral" }, t.catalog.stateArchived)
                  : h("span", { class: "badge success" }, t.catalog.stateActive)
            },
            { label: t.catalog.created, cell: (property) => time(property.created_at, "date") },
            ...actions
          ],
          rows: items,
          rowAttributes: (property) => ({ "data-property-id": property.id, "data-codigo": property.codigo })
        })
      )
    } catch (error) {
      showError(results, error)
    }
  }
  await refresh()
}

/** Adding a property: the contract's `NewProperty` decides what may be sent. */
const propertyForm = (refresh: () => Promise<void>) => {
  const codigo = requiredInput("codigo", { placeholder: t.catalog.codigoPlaceholder })
  const external = h("input", { name: "external_code", type: "text", autocomplete: "off" })
  const submit = h("button", { type: "submit", class: "primary" }, t.catalog.add)
  return schemaForm(
    {
      attributes: { class: "inline-form" },
      schema: NewProperty,
      input: () => ({
        codigo: codigo.value.trim(),
        ...(external.value.trim() ? { external_code: external.value.trim() } : {})
      }),
      messages: { codigo: t.catalog.codigoRule, external_code: t.catalog.externalCodeRule },
      submit,
      send: (payload) => call((api) => api.catalog.createProperty({ payload, query: {} })),
      done: async (created) => {
        toast(t.catalog.added(created.codigo))
        codigo.value = ""
        external.value = ""
        codigo.focus()
        await refresh()
      }
    },
    h(
      "div",
      { class: "inline-fields" },
      field(t.catalog.codigo, codigo),
      field(t.catalog.externalCode, external),
      h("div", { class: "inline-submit" }, submit)
    ),
    h("div", { class: "form-error" })
  )
}
