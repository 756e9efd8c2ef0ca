// Capture: agents and the capture rules that assign new leads, shown in the order they apply.

import type { Agent, OriginItem, Property, Rule } from "../../../AdminApi/AdminApi.ts"
import { ApiError, call, canChange } from "../api.ts"
import { t } from "../i18n.ts"
import type { Page } from "../page.ts"
import {
  add,
  busy,
  type Column,
  checkedForm,
  confirmDialog,
  field,
  h,
  loading,
  nextId,
  pageHeader,
  requiredInput,
  section,
  selectOf,
  showError,
  showFormError,
  table,
  toast
} from "../ui.ts"

type AgentItem = typeof Agent.Type
type RuleItem = typeof Rule.Type & { readonly position: number }

const checkField = (message: string, field: string) => new ApiError(400, "validation_error", message, field)

export const renderCapture: Page = async (main, { signal }) => {
  const admin = canChange()
  const agentsSlot = h("div", {}, loading())
  const rulesSlot = h("div", {}, loading())
  const ruleFormSlot = h("div", {})
  add(
    main,
    pageHeader(t.capture.title, t.capture.lede),
    h(
      "div",
      { class: "capture-grid" },
      section(t.capture.agents, agentsSlot),
      section(t.capture.rulesSection, rulesSlot, ruleFormSlot)
    )
  )

  const load = async () => {
    try {
      const [agents, rules, origins, properties] = await Promise.all([
        call((api) => api.capture.agents({ query: {} }), { signal }),
        call((api) => api.capture.rules({ query: {} }), { signal }),
        call((api) => api.origins.origins({ query: {} }), { signal }),
        call((api) => api.catalog.properties({ query: {} }), { signal })
      ])
      drawAgents(agents.items)
      drawRules(rules.items.map((rule, index) => ({ ...rule, position: index + 1 })))
      if (admin)
        drawRuleForm(
          agents.items,
          origins.items,
          properties.items.filter((property) => !property.archived)
        )
    } catch (error) {
      showError(rulesSlot, error)
    }
  }

  const agentForm = () => {
    const name = requiredInput("name", { maxlength: "100" })
    const submit = h("button", { type: "submit", class: "primary" }, t.capture.addAgent)
    const form: HTMLFormElement = checkedForm(
      { class: "inline-form" },
      async () => {
        const value = name.value.trim()
        if (!value || value.length > 100) {
          showFormError(form, checkField(t.capture.agentNameRequired, "name"))
          return
        }
        try {
          await busy(submit, () =>
            call((api) => api.capture.createAgent({ payload: { name: value }, query: {} }))
          )
          toast(t.capture.agentAdded(value))
          await load()
          main.querySelector<HTMLInputElement>("input[name=name]")?.focus()
        } catch (error) {
          showFormError(form, error)
        }
      },
      h(
        "div",
        { class: "inline-fields" },
        field(t.capture.agentName, name),
        h("div", { class: "inline-submit" }, submit)
      ),
      h("div", { class: "form-error" })
    )
    return form
  }

  const drawAgents = (agents: ReadonlyArray<AgentItem>) => {
    const list =
      agents.length === 0
        ? h("p", { class: "muted" }, t.capture.noAgents)
        : h(
            "ul",
            { class: "plain-list" },
            agents.map((agent) => h("li", { "data-agent-id": agent.id }, agent.name))
          )
    agentsSlot.replaceChildren(list, admin ? agentForm() : "")
  }

  const deleteRule = async (rule: RuleItem, button: HTMLButtonElement) => {
    const ok = await confirmDialog({
      title: t.capture.deleteTitle,
      message: t.capture.deleteMessage,
      danger: true
    })
    if (!ok) return
    try {
      await busy(button, () => call((api) => api.capture.deleteRule({ params: { id: rule.id }, query: {} })))
      toast(t.capture.ruleDeleted)
      await load()
    } catch (error) {
      toast(error instanceof Error ? error.message : String(error), "error")
    }
  }

  const drawRules = (rules: ReadonlyArray<RuleItem>) => {
    const actions: ReadonlyArray<Column<RuleItem>> = admin
      ? [
          {
            label: t.capture.actions,
            className: "actions",
            cell: (rule) =>
              h(
                "button",
                {
                  type: "button",
                  class: "danger-outline small",
                  onClick: (event) => deleteRule(rule, event.currentTarget as HTMLButtonElement)
                },
                t.capture.deleteRule
              )
          }
        ]
      : []
    rulesSlot.replaceChildren(
      table({
        caption: t.capture.rulesCaption,
        empty: t.capture.noRules,
        columns: [
          { label: t.capture.order, className: "numeric", cell: (rule) => String(rule.position) },
          { label: t.capture.priority, className: "numeric", cell: (rule) => String(rule.priority) },
          {
            label: t.capture.origin,
            cell: (rule) => rule.origin?.label ?? h("span", { class: "muted" }, t.capture.anyOrigin)
          },
          {
            label: t.capture.property,
            cell: (rule) =>
              rule.property
                ? h("code", {}, rule.property.codigo)
                : h("span", { class: "muted" }, t.capture.anyProperty)
          },
          {
            label: t.capture.assignsTo,
            cell: (rule) =>
              rule.round_robin
                ? [
                    h("span", { class: "badge info" }, t.capture.roundRobin),
                    " ",
                    rule.agents.map((agent) => agent.name).join(", ")
                  ]
                : (rule.agents[0]?.name ?? t.common.none)
          },
          ...actions
        ],
        rows: rules,
        rowAttributes: (rule) => ({ "data-rule-id": rule.id })
      })
    )
  }

  const drawRuleForm = (
    agents: ReadonlyArray<AgentItem>,
    origins: ReadonlyArray<typeof OriginItem.Type>,
    properties: ReadonlyArray<typeof Property.Type>
  ) => {
    const origin = selectOf(
      { name: "origin_id" },
      [
        ["", t.capture.anyOrigin],
        ...origins.filter((item) => !item.revoked).map((item) => [item.id, item.label] as const)
      ],
      ""
    )
    const property = selectOf(
      { name: "property_id" },
      [["", t.capture.anyProperty], ...properties.map((item) => [item.id, item.codigo] as const)],
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
      [["", t.capture.chooseAgent], ...agents.map((item) => [item.id, item.name] as const)],
      ""
    )
    const agentField = field(t.capture.agent, agent)
    const boxes = agents.map((item) =>
      h("input", { type: "checkbox", id: nextId("agent"), value: item.id, name: "agent_ids_rr" })
    )
    const agentsLegendId = nextId("legend")
    const agentsGroup = h(
      "fieldset",
      { class: "checks", hidden: true, "aria-labelledby": agentsLegendId },
      h("legend", { id: agentsLegendId }, t.capture.rotation),
      boxes.length
        ? boxes.map((box, index) =>
            h("label", { class: "check", for: box.id }, box, agents[index]?.name ?? "")
          )
        : h("p", { class: "muted" }, t.capture.addAgentsFirst)
    )
    const syncMode = () => {
      agentField.hidden = roundRobin.checked
      agentsGroup.hidden = !roundRobin.checked
    }
    single.addEventListener("change", syncMode)
    roundRobin.addEventListener("change", syncMode)
    const priority = h("input", { name: "priority", type: "number", step: "1", inputmode: "numeric" })
    const submit = h("button", { type: "submit", class: "primary" }, t.capture.addRule)
    const form: HTMLFormElement = checkedForm(
      { class: "rule-form" },
      async () => {
        const agentIds = roundRobin.checked
          ? boxes.filter((box) => box.checked).map((box) => box.value)
          : agent.value
            ? [agent.value]
            : []
        if (agentIds.length === 0) {
          showFormError(
            form,
            roundRobin.checked
              ? checkField(t.capture.tickAgents, "agent_ids_rr")
              : checkField(t.capture.chooseTheAgent, "agent_ids")
          )
          return
        }
        const priorityText = priority.value.trim()
        if (priorityText !== "" && !Number.isInteger(Number(priorityText))) {
          showFormError(form, checkField(t.capture.priorityRule, "priority"))
          return
        }
        try {
          await busy(submit, () =>
            call((api) =>
              api.capture.createRule({
                payload: {
                  ...(origin.value ? { origin_id: origin.value } : {}),
                  ...(property.value ? { property_id: property.value } : {}),
                  agent_ids: agentIds,
                  round_robin: roundRobin.checked,
                  ...(priorityText === "" ? {} : { priority: Number(priorityText) })
                },
                query: {}
              })
            )
          )
          toast(t.capture.ruleAdded)
          await load()
        } catch (error) {
          showFormError(form, error)
        }
      },
      h("h3", {}, t.capture.addRuleHeading),
      h(
        "div",
        { class: "filter-grid" },
        field(t.capture.origin, origin),
        field(t.capture.property, property),
        field(t.capture.priority, priority, t.capture.priorityHint)
      ),
      h(
        "fieldset",
        { class: "radios" },
        h("legend", {}, t.capture.assignTo),
        h("label", { for: single.id, class: "check" }, single, t.capture.oneAgent),
        h("label", { for: roundRobin.id, class: "check" }, roundRobin, t.capture.roundRobinChoice)
      ),
      agentField,
      agentsGroup,
      h("div", { class: "form-error" }),
      h("div", { class: "form-actions" }, submit)
    )
    ruleFormSlot.replaceChildren(form)
  }

  await load()
}
