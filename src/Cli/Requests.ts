import { readFile } from "node:fs/promises"
import { Effect, Option } from "effect"
import { Flag } from "effect/cli"
import { decodeLeadBody } from "../Api/LeadBody.ts"
import { Audit } from "../Console/AuditLog.ts"
import { type LoggedRequest, RequestLog } from "../Intake/RequestLog.ts"
import { type RescueFailure, Rescues } from "../Intake/Rescue.ts"
import { csvFlag, requestsCsv } from "./Csv.ts"
import * as Input from "./Input.ts"
import { emit, emitTable, orDash } from "./Output.ts"
import { withOperator } from "./Services.ts"

const view = (row: LoggedRequest) => ({
  request_id: row.requestId,
  at: new Date(row.at).toISOString(),
  status: row.status,
  outcome: row.outcome,
  lead_id: row.leadId,
  key_prefix: row.keyPrefix,
  idempotency_key: row.idempotencyKey,
  duration_ms: row.durationMs,
  livemode: row.livemode,
  kept: row.kept,
  rescued_lead_id: row.rescuedLeadId
})

export const requests = Input.command(
  "requests",
  "The request log, newest first",
  {
    origin: Input.optional(
      Input.id("origin", "origin"),
      "Requests made with this origin's keys (revoked ones included)"
    ),
    unattributed: Input.toggle("unattributed", "Requests whose key prefix matches no origin"),
    rejected: Input.toggle(
      "rejected",
      "Only the origin's requests whose body is kept for rescue (with --origin)"
    ),
    limit: Input.limit,
    csv: csvFlag
  },
  Effect.fn("Cli.requests")(function* ({ origin, unattributed, rejected, limit, csv }) {
    const scope = yield* Input.exactlyOne(
      ["origin", origin],
      ["unattributed", unattributed ? Option.some(true) : Option.none()]
    )
    if (rejected && scope._tag !== "first")
      return yield* new Input.UsageError({ message: "--rejected lists an origin's requests: pass --origin" })
    if (csv)
      return yield* requestsCsv(
        scope._tag === "first" ? { _tag: "origin", originId: scope.value } : { _tag: "unattributed" },
        rejected
      ).pipe(Effect.provide(Audit.layer), withOperator)
    const rows = yield* RequestLog.use((log) =>
      log.list(scope._tag === "first" ? { originId: scope.value } : { unattributed: true }, limit, {
        keptOnly: rejected
      })
    ).pipe(withOperator)
    yield* emitTable(
      rows.map(view),
      [
        ["AT", (r) => r.at],
        ["STATUS", (r) => String(r.status)],
        ["OUTCOME", (r) => r.outcome],
        ["MODE", (r) => (r.livemode ? "live" : "test")],
        ["LEAD", (r) => orDash(r.lead_id ?? r.rescued_lead_id)],
        ["KEPT", (r) => (r.kept ? "kept" : r.rescued_lead_id === null ? "-" : "rescued")],
        ["KEY PREFIX", (r) => orDash(r.key_prefix)],
        ["IDEMPOTENCY KEY", (r) => orDash(r.idempotency_key)],
        ["MS", (r) => r.duration_ms.toFixed(1)],
        ["REQUEST", (r) => r.request_id]
      ],
      rejected ? "No requests kept for rescue." : "No requests."
    )
  })
)

const withRescues = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.provide(Rescues.layer), Effect.provide(Audit.layer), withOperator)

const requestShow = Input.command(
  "show",
  "A request-log row with the body kept for rescue, if any (admins' data)",
  { id: Input.id("id", "request").pipe(Flag.withDescription("The request (its X-Request-Id)")) },
  Effect.fn("Cli.requestShow")(function* ({ id }) {
    const shown = yield* Rescues.use((rescues) => rescues.show(id)).pipe(withRescues)
    const document = {
      request_id: shown.request_id,
      at: shown.at.toISOString(),
      status: shown.status,
      outcome: shown.outcome,
      origin_id: shown.origin_id,
      key_prefix: shown.key_prefix,
      livemode: shown.livemode,
      body: shown.body,
      rescued_lead_id: shown.rescued_lead_id
    }
    yield* emit(document, (d) =>
      [
        `Request ${d.request_id} at ${d.at}: ${d.status} ${d.outcome} (${d.livemode ? "live" : "test"})`,
        `Origin ${orDash(d.origin_id)}, key ${orDash(d.key_prefix)}`,
        d.rescued_lead_id === null ? "Not rescued." : `Rescued as lead ${d.rescued_lead_id}.`,
        d.body === null ? "No body kept." : `Kept body:\n${d.body}`
      ].join("\n")
    )
  })
)

/** The corrected body from a file, or from stdin for `-`. */
const readBody = (source: string) =>
  Effect.tryPromise({
    try: async () => {
      if (source !== "-") return await readFile(source, "utf8")
      const chunks: Array<Buffer> = []
      for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk))
      return Buffer.concat(chunks).toString("utf8")
    },
    catch: (error) =>
      new Input.UsageError({
        message: `cannot read ${source === "-" ? "stdin" : source}: ${error instanceof Error ? error.message : String(error)}`
      })
  })

/** A rescue that did not write, as the one line an operator reads: the code first, then the field. */
const refusalLine = (failure: RescueFailure) => {
  switch (failure._tag) {
    case "UnknownProperty":
      return `property_not_found (${failure.field}): ${failure.message}`
    case "NotRescuable":
      return `${failure.reason}: ${failure.message}`
    case "UnknownEntity":
      return failure.message
    case "StoreUnavailable":
      return "temporarily_unavailable: the database could not be reached; nothing was written"
    case "OutcomeUnknown":
      return "internal_error: the database stopped answering after the write was sent; see request show"
  }
}

const requestRescue = Input.command(
  "rescue",
  "Create or enrich the lead from a corrected body of a rejected request, as POST /v1/leads would (once)",
  {
    id: Input.id("id", "request").pipe(Flag.withDescription("The rejected request whose body is kept")),
    body: Flag.String("body").pipe(
      Flag.withMetavar("FILE"),
      Flag.withDescription("The corrected body, as JSON: a file, or - for stdin")
    ),
    by: Input.by("rescues")
  },
  Effect.fn("Cli.requestRescue")(function* ({ id, body, by }) {
    const actor = yield* Input.actor(by, "rescuing")
    const decoded = decodeLeadBody(yield* readBody(body))
    if (decoded._tag === "Invalid")
      return yield* new Input.UsageError({
        message: `validation_error (${decoded.field}): ${decoded.message}`
      })
    const rescued = yield* Effect.gen(function* () {
      const rescues = yield* Rescues
      const audit = yield* Audit
      const done = yield* rescues.rescue(id, decoded.lead)
      yield* audit.record({
        organizationId: done.organizationId,
        operatorId: null,
        operatorEmail: `cli:${actor}`,
        action: "request.rescue",
        target: id,
        ip: null
      })
      return done
    }).pipe(
      withRescues,
      Effect.catchTags({
        UnknownProperty: (failure) => new Input.UsageError({ message: refusalLine(failure) }),
        NotRescuable: (failure) => new Input.UsageError({ message: refusalLine(failure) }),
        StoreUnavailable: (failure) => new Input.UsageError({ message: refusalLine(failure) }),
        OutcomeUnknown: (failure) => new Input.UsageError({ message: refusalLine(failure) })
      })
    )
    yield* emit(rescued.answer, (answer) => JSON.stringify(answer))
  })
)

export const request = Input.group(
  "request",
  "One request of the request log: its kept body, and its rescue",
  [requestShow, requestRescue]
)
