// Catalog: the organization's properties; add, archive, restore; search by codigo or external code.

import { api, canChange, query } from "../api.ts"
import {
  add,
  busy,
  clearFormError,
  errorBox,
  field,
  h,
  loading,
  pageHeader,
  section,
  showFormError,
  table,
  time,
  toast
} from "../ui.ts"

export const renderCatalog = async (main, { signal, navigate, search }) => {
  const admin = canChange()
  const q = search.get("q") ?? ""
  const input = h("input", { name: "q", type: "search", value: q, autocomplete: "off" })
  const searchForm = h(
    "form",
    {
      class: "search-form",
      role: "search",
      "aria-label": "Search properties",
      onSubmit: (event) => {
        event.preventDefault()
        navigate(`/catalog${query({ q: input.value.trim() })}`, { replace: true })
      }
    },
    field("Codigo or external code", input),
    h("button", { type: "submit", class: "primary" }, "Search")
  )
  const results = h("div", {}, loading())

  let addForm = null
  if (admin) {
    const codigo = h("input", {
      name: "codigo",
      type: "text",
      required: true,
      autocomplete: "off",
      placeholder: "ABC-1234"
    })
    const external = h("input", { name: "external_code", type: "text", autocomplete: "off" })
    const add = h("button", { type: "submit", class: "primary" }, "Add property")
    addForm = h(
      "form",
      {
        class: "inline-form",
        novalidate: true,
        onSubmit: async (event) => {
          event.preventDefault()
          clearFormError(addForm)
          if (!codigo.value.trim()) {
            showFormError(addForm, {
              title: "Check this field:",
              message: "Enter the property's codigo.",
              field: "codigo"
            })
            return
          }
          try {
            const created = await busy(add, () =>
              api.post("/api/properties", {
                codigo: codigo.value.trim(),
                ...(external.value.trim() ? { external_code: external.value.trim() } : {})
              })
            )
            toast(`Property ${created?.codigo ?? codigo.value.trim()} added.`)
            codigo.value = ""
            external.value = ""
            codigo.focus()
            await refresh()
          } catch (error) {
            showFormError(addForm, error)
          }
        }
      },
      h(
        "div",
        { class: "inline-fields" },
        field("Codigo", codigo),
        field("External code (optional)", external),
        h("div", { class: "inline-submit" }, add)
      ),
      h("div", { class: "form-error" })
    )
  }

  add(
    main,
    pageHeader("Catalog", "Properties that leads can refer to by codigo."),
    addForm ? section("Add a property", addForm) : null,
    searchForm,
    results
  )

  const setArchived = async (property, archived, button) => {
    try {
      await busy(button, () =>
        api.post(`/api/properties/${encodeURIComponent(property.id)}/${archived ? "archive" : "restore"}`, {})
      )
      toast(`Property ${property.codigo} ${archived ? "archived" : "restored"}.`)
      await refresh()
    } catch (error) {
      toast(error.message, "error")
    }
  }

  const refresh = async () => {
    try {
      const { items } = await api.get(`/api/properties${query({ q })}`, { signal })
      results.replaceChildren(
        table({
          caption: "Properties",
          empty: q ? "No property matches this search." : "No properties yet.",
          columns: [
            { label: "Codigo", cell: (property) => h("code", {}, property.codigo) },
            {
              label: "External code",
              cell: (property) => property.external_code ?? h("span", { class: "muted" }, "—")
            },
            {
              label: "State",
              cell: (property) =>
                property.archived
                  ? h("span", { class: "badge neutral" }, "Archived")
                  : h("span", { class: "badge success" }, "Active")
            },
            { label: "Created", cell: (property) => time(property.created_at, "date") },
            ...(admin
              ? [
                  {
                    label: "Actions",
                    className: "actions",
                    cell: (property) =>
                      h(
                        "button",
                        {
                          type: "button",
                          class: "secondary small",
                          "aria-label": `${property.archived ? "Restore" : "Archive"} ${property.codigo}`,
                          onClick: (event) => setArchived(property, !property.archived, event.currentTarget)
                        },
                        property.archived ? "Restore" : "Archive"
                      )
                  }
                ]
              : [])
          ],
          rows: items,
          rowAttributes: (property) => ({ "data-property-id": property.id, "data-codigo": property.codigo })
        })
      )
    } catch (error) {
      if (error?.name === "AbortError") return
      results.replaceChildren(errorBox(error))
    }
  }
  await refresh()
}
