import { Effect, Exit, Option } from "effect"
import { Flag } from "effect/cli"
import { type KeptBody, type LeadExport, PersonalData } from "../PersonalData/PersonalData.ts"
import * as Input from "./Input.ts"
import { emit, emitTable, orDash } from "./Output.ts"
import { withOperator } from "./Services.ts"

const withPersonalData = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.provide(PersonalData.layer), withOperator)

const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`

const indent = (text: string) => text.replaceAll("\n", "\n    ")

/** `lead export --org --phone`: the lead with that phone, if any, and the bodies kept for rescue that name it. */
type PhoneExport = (LeadExport | { readonly lead: null }) & { readonly kept_bodies: ReadonlyArray<KeptBody> }

const describeKept = (kept: ReadonlyArray<KeptBody>) => [
  `Bodies kept for rescue with this phone (${kept.length}):`,
  ...kept.map((body) => `  ${body.at} request ${body.request_id}\n    ${indent(body.body)}`)
]

const describePhoneExport = (document: PhoneExport) =>
  document.lead === null
    ? ["No lead has this phone.", ...describeKept(document.kept_bodies)].join("\n")
    : [describeExport(document as LeadExport), ...describeKept(document.kept_bodies)].join("\n")

const describeExport = (document: LeadExport) => {
  const { lead } = document
  return [
    `Lead ${lead.id}${lead.erased_at === null ? "" : ` (erased at ${lead.erased_at})`}`,
    `  nombre:       ${orDash(lead.nombre)}`,
    `  telefono:     ${orDash(lead.telefono)}`,
    `  email:        ${orDash(lead.email)}`,
    `  property:     ${lead.property === null ? "-" : `${lead.property.codigo} (${lead.property.id})`}`,
    `  origin:       ${lead.origin} (${lead.origin_id})`,
    `  assignee:     ${orDash(lead.assignee_id)}`,
    `  organization: ${lead.organization_id}`,
    `  created:      ${lead.created_at}`,
    ...(document.erasure === null
      ? []
      : [
          `  erased:       ${document.erasure.erased_at} by ${document.erasure.erased_by}: ${document.erasure.reason}`
        ]),
    `Notes (${document.notes.length}):`,
    ...document.notes.map((note) => `  ${note.created_at}\n    ${indent(note.body)}`),
    `Held: ${[
      count(document.tasks.length, "task"),
      count(document.events.length, "event"),
      count(document.requests.length, "logged request"),
      count(document.idempotent_replies.length, "stored idempotent reply"),
      `${document.webhook_deliveries.length} webhook ${document.webhook_deliveries.length === 1 ? "delivery" : "deliveries"}`
    ].join(", ")}`,
    "The whole document: add --json."
  ].join("\n")
}

const leadExport = Input.command(
  "export",
  "Everything held about a lead (its fields, notes, tasks, events, requests, replies); by phone, also the bodies kept for rescue that name it",
  {
    id: Input.optional(Input.id("id", "lead"), "The lead to export"),
    org: Input.optional(Input.org, "With --phone: the organization whose lead has that phone"),
    phone: Input.optional(
      Input.text("phone"),
      "With --org: the lead's phone, in any spelling the API accepts"
    )
  },
  Effect.fn("Cli.leadExport")(function* ({ id, org, phone }) {
    const target = yield* Input.exactlyOne(["id", id], ["phone", phone])
    if (target._tag === "first" && Option.isSome(org)) {
      return yield* new Input.UsageError({ message: "--org goes with --phone, not with --id" })
    }
    if (target._tag === "first") {
      const leadId = target.value
      const document = yield* PersonalData.use((personalData) => personalData.export(leadId)).pipe(
        withPersonalData
      )
      return yield* emit(document, describeExport)
    }
    if (Option.isNone(org)) return yield* new Input.UsageError({ message: "--phone needs --org" })
    const document: PhoneExport = yield* Effect.gen(function* () {
      const personalData = yield* PersonalData
      const kept = yield* personalData.keptBodies(org.value, target.value)
      const found = yield* Effect.exit(personalData.findByPhone(org.value, target.value))
      // No lead with the phone: the kept bodies that name it are still the person's data.
      if (Exit.isFailure(found)) {
        if (kept.length === 0) return yield* Effect.failCause(found.cause)
        return { lead: null, kept_bodies: kept }
      }
      return { ...(yield* personalData.export(found.value)), kept_bodies: kept }
    }).pipe(withPersonalData)
    yield* emit(document, describePhoneExport)
  })
)

const leadErase = Input.command(
  "erase",
  "Erase a lead's personal data everywhere, leaving a tombstone and an audit row",
  {
    id: Input.id("id", "lead").pipe(Flag.withDescription("The lead to erase")),
    reason: Input.text("reason").pipe(
      Flag.withDescription("Why (kept in the audit trail; must not contain the person's data)")
    ),
    by: Input.by("erases")
  },
  Effect.fn("Cli.leadErase")(function* ({ id, reason, by }) {
    const actor = yield* Input.actor(by, "erasing")
    const erased = yield* PersonalData.use((personalData) =>
      personalData.erase({ leadId: id, reason, actor })
    ).pipe(withPersonalData)
    yield* emit(erased, (erased) =>
      erased.already_erased
        ? `Lead ${erased.id} was already erased at ${erased.erased_at}; nothing changed.`
        : `Lead ${erased.id} erased at ${erased.erased_at}: only a tombstone without personal data is left.`
    )
  })
)

const leadErasures = Input.command(
  "erasures",
  "The erasure audit trail of an organization, newest first",
  { org: Input.org, limit: Input.limit },
  Effect.fn("Cli.leadErasures")(function* ({ org, limit }) {
    const rows = yield* PersonalData.use((personalData) => personalData.erasures(org, limit)).pipe(
      withPersonalData
    )
    yield* emitTable(
      rows,
      [
        ["ERASED AT", (row) => row.erased_at],
        ["LEAD", (row) => row.lead_id],
        ["BY", (row) => row.erased_by],
        ["REASON", (row) => row.reason]
      ],
      "No erasures."
    )
  })
)

export const personalDataCommands = [leadExport, leadErase, leadErasures] as const
