import { Effect, Option } from "effect"
import { Audit } from "../Console/AuditLog.ts"
import { leadFieldNames } from "../Domain/LeadInput.ts"
import { type LeadDetail, LeadRepository, type LeadSummary } from "../Intake/LeadRepository.ts"
import { PersonalData } from "../PersonalData/PersonalData.ts"
import { csvFlag, leadsCsv } from "./Csv.ts"
import * as Input from "./Input.ts"
import { emit, emitTable, orDash } from "./Output.ts"
import { personalDataCommands } from "./PersonalData.ts"
import { withOperator } from "./Services.ts"

const indent = (text: string) => text.replaceAll("\n", "\n    ")

/** A name with its id in parentheses, or only the id (a name may be missing), or a dash. */
const beside = (name: string | null, id: string | null) =>
  id === null ? orDash(null) : name === null ? id : `${name} (${id})`

const iso = (date: Date) => date.toISOString()

/** What `lead show` prints (and `--json` writes): the lead's timestamps as ISO 8601 text. */
const detailView = (lead: LeadDetail, erasedAt: string | null) => ({
  ...lead,
  created_at: iso(lead.created_at),
  notes: lead.notes.map((note) => ({ ...note, created_at: iso(note.created_at) })),
  tasks: lead.tasks.map((task) => ({ ...task, due_at: iso(task.due_at) })),
  events: lead.events.map((event) => ({ ...event, created_at: iso(event.created_at) })),
  erased_at: erasedAt
})

const summaryView = (lead: LeadSummary) => ({ ...lead, created_at: iso(lead.created_at) })

const describeLead = (lead: ReturnType<typeof detailView>) =>
  [
    (lead.erased_at === null
      ? `Lead ${lead.id}`
      : `Lead ${lead.id}: ERASED at ${lead.erased_at} (a tombstone; no personal data is kept)`) +
      (lead.livemode ? "" : " [TEST DATA]"),
    ...leadFieldNames.map((name) => {
      const value = lead[name]
      return `  ${`${name}:`.padEnd(14)}${orDash(value === null ? null : String(value))}`
    }),
    `  origin:       ${lead.origin}`,
    `  property:     ${beside(lead.property_codigo, lead.property_id)}`,
    `  assignee:     ${beside(lead.assignee_name, lead.assignee_id)}`,
    `  organization: ${lead.organization_id}`,
    `  created:      ${lead.created_at}`,
    "Notes:",
    ...(lead.notes.length === 0
      ? ["  (none)"]
      : lead.notes.map((note) => `  ${note.created_at}\n    ${indent(note.body)}`)),
    "Tasks:",
    ...(lead.tasks.length === 0
      ? ["  (none)"]
      : lead.tasks.map(
          (task) => `  ${task.kind} for ${beside(task.assignee_name, task.assignee_id)}, due ${task.due_at}`
        )),
    "Events:",
    ...(lead.events.length === 0
      ? ["  (none)"]
      : lead.events.map((event) => `  ${event.type} at ${event.created_at}`))
  ].join("\n")

const leadShow = Input.command(
  "show",
  "A lead with its notes, tasks and events",
  { id: Input.id("id", "lead") },
  Effect.fn("Cli.leadShow")(
    function* ({ id }) {
      const leads = yield* LeadRepository
      const personalData = yield* PersonalData
      const lead = yield* leads.show(id)
      const erasure = yield* personalData.erasure(id)
      yield* emit(
        detailView(lead, Option.match(erasure, { onNone: () => null, onSome: (e) => e.erased_at })),
        describeLead
      )
    },
    Effect.provide(PersonalData.layer),
    withOperator
  )
)

const leadList = Input.command(
  "list",
  "The organization's leads, newest first (--test: its test leads)",
  {
    org: Input.org,
    limit: Input.limit,
    test: Input.toggle("test", "The test leads (written with test keys) instead of the live ones"),
    csv: csvFlag
  },
  Effect.fn("Cli.leadList")(function* ({ org, limit, test, csv }) {
    if (csv) return yield* leadsCsv(org, !test).pipe(Effect.provide(Audit.layer), withOperator)
    const rows = yield* LeadRepository.use((leads) => leads.list(org, limit, !test))
    yield* emitTable(
      rows.map(summaryView),
      [
        ["ID", (l) => l.id],
        ["NOMBRE", (l) => orDash(l.nombre)],
        ["TELEFONO", (l) => orDash(l.telefono)],
        ["EMAIL", (l) => orDash(l.email)],
        ["ORIGIN", (l) => l.origin],
        ["CREATED", (l) => l.created_at]
      ],
      test ? "No test leads." : "No leads."
    )
  }, withOperator)
)

const leadPurgeTest = Input.command(
  "purge-test",
  "Remove the organization's test data: test leads with everything hanging on them (docs/contract.md#10-test-mode)",
  { org: Input.org },
  Effect.fn("Cli.leadPurgeTest")(function* ({ org }) {
    const purged = yield* LeadRepository.use((leads) => leads.purgeTest(org))
    yield* emit(
      { purged },
      (p) =>
        `Purged ${p.purged} test lead${p.purged === 1 ? "" : "s"} with their notes, tasks, events, deliveries and idempotency records (the request log keeps its rows).`
    )
  }, withOperator)
)

export const lead = Input.group("lead", "Leads", [leadShow, leadList, leadPurgeTest, ...personalDataCommands])
