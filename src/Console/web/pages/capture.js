// Capture: agents and the capture rules that assign new leads, shown in the order they apply.

import { api, canChange } from "../api.ts"
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
  pageHeader,
  section,
  selectOf,
  showFormError,
  table,
  toast
} from "../ui.ts"

export const renderCapture = async (main, { signal }) => {
  const admin = canChange()
  const agentsSlot = h("div", {}, loading())
  const rulesSlot = h("div", {}, loading())
  const ruleFormSlot = h("div", {})
  add(
    main,
    pageHeader("Capture", "Who receives new leads: agents, and the rules that choose among them."),
    h(
      "div",
      { class: "capture-grid" },
      section("Agents", agentsSlot),
      section("Rules, in the order they apply", rulesSlot, ruleFormSlot)
    )
  )

  const load = async () => {
    try {
      const [agents, rules, origins, properties] = await Promise.all([
        api.get("/api/agents", { signal }),
        api.get("/api/rules", { signal }),
        api.get("/api/origins", { signal }),
        api.get("/api/properties", { signal })
      ])
      drawAgents(agents.items)
      drawRules(rules.items)
      if (admin)
        drawRuleForm(
          agents.items,
          origins.items,
          properties.items.filter((property) => !property.archived)
        )
    } catch (error) {
      if (error?.name === "AbortError") return
      rulesSlot.replaceChildren(errorBox(error))
    }
  }

  const drawAgents = (agents) => {
    const list =
      agents.length === 0
        ? h("p", { class: "muted" }, "No agents yet.")
        : h(
            "ul",
            { class: "plain-list" },
            agents.map((agent) => h("li", { "data-agent-id": agent.id }, agent.name))
          )
    let form = null
    if (admin) {
      const name = h("input", { name: "name", type: "text", required: true, autocomplete: "off" })
      const add = h("button", { type: "submit", class: "primary" }, "Add agent")
      form = h(
        "form",
        {
          class: "inline-form",
          novalidate: true,
          onSubmit: async (event) => {
            event.preventDefault()
            clearFormError(form)
            if (!name.value.trim()) {
              showFormError(form, {
                title: "Check this field:",
                message: "Enter the agent's name.",
                field: "name"
              })
              return
            }
            try {
              await busy(add, () => api.post("/api/agents", { name: name.value.trim() }))
              toast(`Agent ${name.value.trim()} added.`)
              await load()
              main.querySelector("input[name=name]")?.focus()
            } catch (error) {
              showFormError(form, error)
            }
          }
        },
        h(
          "div",
          { class: "inline-fields" },
          field("Agent name", name),
          h("div", { class: "inline-submit" }, add)
        ),
        h("div", { class: "form-error" })
      )
    }
    agentsSlot.replaceChildren(list, form ?? "")
  }

  const drawRules = (rules) => {
    rulesSlot.replaceChildren(
      table({
        caption: "Capture rules in the order they apply",
        empty: "No rules: new leads stay unassigned.",
        columns: [
          { label: "Order", className: "numeric", cell: (_rule) => "" },
          { label: "Priority", className: "numeric", cell: (rule) => String(rule.priority) },
          {
            label: "Origin",
            cell: (rule) => rule.origin?.label ?? h("span", { class: "muted" }, "Any origin")
          },
          {
            label: "Property",
            cell: (rule) =>
              rule.property
                ? h("code", {}, rule.property.codigo)
                : h("span", { class: "muted" }, "Any property")
          },
          {
            label: "Assigns to",
            cell: (rule) =>
              rule.round_robin
                ? [
                    h("span", { class: "badge info" }, "Round-robin"),
                    " ",
                    rule.agents.map((agent) => agent.name).join(", ")
                  ]
                : (rule.agents[0]?.name ?? "—")
          },
          ...(admin
            ? [
                {
                  label: "Actions",
                  className: "actions",
                  cell: (rule) =>
                    h(
                      "button",
                      {
                        type: "button",
                        class: "danger-outline small",
                        onClick: async (event) => {
                          const button = event.currentTarget
                          const ok = await confirmDialog({
                            title: "Delete this rule?",
                            message:
                              "New leads will no longer be assigned by it. Leads already assigned keep their agent.",
                            danger: true
                          })
                          if (!ok) return
                          try {
                            await busy(button, () => api.delete(`/api/rules/${encodeURIComponent(rule.id)}`))
                            toast("Rule deleted.")
                            await load()
                          } catch (error) {
                            toast(error.message, "error")
                          }
                        }
                      },
                      "Delete rule"
                    )
                }
              ]
            : [])
        ],
        rows: rules,
        rowAttributes: (rule) => ({ "data-rule-id": rule.id })
      })
    )
    rulesSlot.querySelectorAll("tbody tr:not(.empty-row)").forEach((row, index) => {
      row.firstElementChild.textContent = String(index + 1)
    })
  }

  const drawRuleForm = (agents, origins, properties) => {
    const origin = selectOf(
      { name: "origin_id" },
      [["", "Any origin"], ...origins.filter((item) => !item.revoked).map((item) => [item.id, item.label])],
      ""
    )
    const property = selectOf(
      { name: "property_id" },
      [["", "Any property"], ...properties.map((item) => [item.id, item.codigo])],
      ""
    )
    const modeName = nextId("mode")
    const single = h("input", {
      type: "radio",
      name: modeName,
      value: "single",
      id: `${modeName}-single`,
      checked: true
    })
    const roundRobin = h("input", {
      type: "radio",
      name: modeName,
      value: "round_robin",
      id: `${modeName}-rr`
    })
    const agent = selectOf(
      { name: "agent_ids" },
      [["", "Choose an agent"], ...agents.map((item) => [item.id, item.name])],
      ""
    )
    const agentField = field("Agent", agent)
    const checkboxes = agents.map((item) => {
      const id = nextId("agent")
      return h(
        "label",
        { class: "check", for: id },
        h("input", { type: "checkbox", id, value: item.id, name: "agent_ids_rr" }),
        item.name
      )
    })
    const agentsLegendId = nextId("legend")
    const agentsGroup = h(
      "fieldset",
      { class: "checks", hidden: true, "aria-labelledby": agentsLegendId },
      h("legend", { id: agentsLegendId }, "Agents in the rotation"),
      checkboxes.length ? checkboxes : h("p", { class: "muted" }, "Add agents first.")
    )
    const syncMode = () => {
      agentField.hidden = roundRobin.checked
      agentsGroup.hidden = !roundRobin.checked
    }
    single.addEventListener("change", syncMode)
    roundRobin.addEventListener("change", syncMode)
    const priority = h("input", { name: "priority", type: "number", step: "1", inputmode: "numeric" })
    const add = h("button", { type: "submit", class: "primary" }, "Add rule")
    const form = h(
      "form",
      {
        class: "rule-form",
        novalidate: true,
        onSubmit: async (event) => {
          event.preventDefault()
          clearFormError(form)
          const agentIds = roundRobin.checked
            ? checkboxes
                .map((label) => label.querySelector("input"))
                .filter((box) => box.checked)
                .map((box) => box.value)
            : agent.value
              ? [agent.value]
              : []
          if (agentIds.length === 0) {
            showFormError(form, {
              title: "Check this field:",
              message: roundRobin.checked
                ? "Tick at least one agent for the rotation."
                : "Choose the agent who receives the leads.",
              field: roundRobin.checked ? "agent_ids_rr" : "agent_ids"
            })
            return
          }
          const priorityText = priority.value.trim()
          if (priorityText !== "" && !Number.isInteger(Number(priorityText))) {
            showFormError(form, {
              title: "Check this field:",
              message: "Priority is a whole number.",
              field: "priority"
            })
            return
          }
          try {
            await busy(add, () =>
              api.post("/api/rules", {
                ...(origin.value ? { origin_id: origin.value } : {}),
                ...(property.value ? { property_id: property.value } : {}),
                agent_ids: agentIds,
                round_robin: roundRobin.checked,
                ...(priorityText === "" ? {} : { priority: Number(priorityText) })
              })
            )
            toast("Rule added.")
            await load()
          } catch (error) {
            showFormError(form, error)
          }
        }
      },
      h("h3", {}, "Add a rule"),
      h(
        "div",
        { class: "filter-grid" },
        field("Origin", origin),
        field("Property", property),
        field("Priority", priority, "Lower numbers apply first; equal ones, oldest first. Empty means 100.")
      ),
      h(
        "fieldset",
        { class: "radios" },
        h("legend", {}, "Assign to"),
        h("label", { for: single.id, class: "check" }, single, "One agent"),
        h("label", { for: roundRobin.id, class: "check" }, roundRobin, "Round-robin between agents")
      ),
      agentField,
      agentsGroup,
      h("div", { class: "form-error" }),
      h("div", { class: "form-actions" }, add)
    )
    ruleFormSlot.replaceChildren(form)
  }

  await load()
}
