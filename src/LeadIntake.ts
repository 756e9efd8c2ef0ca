import { Clock, Context, Effect, Exit, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { CallerShape } from "./Api.ts"
import { type LeadInput, noteBody } from "./Domain/LeadRequest.ts"
import { phoneMatchKey } from "./Domain/Phone.ts"
import { IdempotencyStore, leaseMillis, memoryMillis } from "./IdempotencyStore.ts"
import { FilledField, firstContactMillis, LeadRepository } from "./LeadRepository.ts"
import { step } from "./Observability/Steps.ts"
import { PropertyCatalog } from "./PropertyCatalog.ts"
import { type StoreUnavailable, writeOrFail } from "./Sql.ts"

/** `propiedad` names no active property of the caller's organization. */
export class UnknownProperty extends Schema.TaggedError<UnknownProperty>()("UnknownProperty", {}) {}

/** The Idempotency-Key was used in the last 24 hours with another body. */
export class IdempotencyKeyReused extends Schema.TaggedError<IdempotencyKeyReused>()(
  "IdempotencyKeyReused",
  {}
) {}

/** The request that first used the Idempotency-Key is still running. */
export class IdempotencyKeyBusy extends Schema.TaggedError<IdempotencyKeyBusy>()("IdempotencyKeyBusy", {}) {}

/** What a request did to the lead, or, when `replay`, what the first request with its key did. */
export interface Accepted {
  readonly leadId: string
  readonly outcome: "created" | "enriched"
  readonly replay: boolean
  readonly assigneeId: string | null
  readonly filled: ReadonlyArray<FilledField>
}

/** What a dry run found: the property the request names and the lead it would enrich. */
export interface Preview {
  readonly propertyId: string | null
  readonly match: Option.Option<string>
}

export interface Idempotency {
  readonly key: string
  readonly fingerprint: string
}

const idempotencyResults = {
  Reserved: "new",
  Replay: "replay",
  Conflict: "conflict",
  InProgress: "in_progress"
} as const

const matchKey = (caller: CallerShape, input: LeadInput) =>
  input.telefono === null ? null : phoneMatchKey(input.telefono, caller.country)

/** One `POST /v1/leads` past validation, as the write path takes it. */
export interface Submission {
  readonly caller: CallerShape
  readonly input: LeadInput
  readonly requestId: string
  readonly idempotency: Idempotency | null
}

type Step = Effect.Success<typeof step>

/** Contract order 8 (a dry run), the same on every store: the property and the lead a write would touch. */
const makePreview = (catalog: PropertyCatalog["Service"], leads: LeadRepository["Service"], fn: Step) => {
  const resolveProperty = fn("LeadIntake.resolveProperty")(function* (caller: CallerShape, input: LeadInput) {
    if (input.propiedad === null) return null
    const found = yield* catalog.resolve(caller.organizationId, input.propiedad)
    if (Option.isNone(found)) return yield* new UnknownProperty()
    return found.value
  })
  return {
    resolveProperty,
    preview: fn("LeadIntake.preview")(function* (caller: CallerShape, input: LeadInput) {
      const propertyId = yield* resolveProperty(caller, input)
      const phoneKey = matchKey(caller, input)
      const match =
        phoneKey === null ? Option.none<string>() : yield* leads.findMatch(caller.organizationId, phoneKey)
      return { propertyId, match } satisfies Preview
    })
  }
}

/** What `intake_lead` (migration 0007) answers: the step that decided, and the write's result. */
const IntakeRow = Schema.Struct({
  outcome: Schema.Literals(["written", "replay", "conflict", "in_progress", "property_not_found"]),
  lead_id: Schema.NullOr(Schema.String),
  created: Schema.NullOr(Schema.Boolean),
  assignee_id: Schema.NullOr(Schema.String),
  filled: Schema.NullOr(Schema.Array(FilledField))
})
const decodeIntakeRows = Schema.decodeUnknownEffect(Schema.NonEmptyArray(IntakeRow))

const idempotencyResultOf = {
  written: "new",
  replay: "replay",
  conflict: "conflict",
  in_progress: "in_progress",
  property_not_found: "new"
} as const

/**
 * The mechanics of `POST /v1/leads` after validation: what a dry run finds, and the write with its
 * Idempotency-Key (replay, conflict, in progress; the key stays free when the request fails) and
 * property. On PostgreSQL `accept` is one statement; the in-memory fake composes the other fakes.
 */
export class LeadIntake extends Context.Service<
  LeadIntake,
  {
    preview(caller: CallerShape, input: LeadInput): Effect.Effect<Preview, UnknownProperty | StoreUnavailable>
    /** Contract order 9-11: the key, the property, then the lead and everything it sets off. */
    accept(
      submission: Submission
    ): Effect.Effect<Accepted, UnknownProperty | IdempotencyKeyReused | IdempotencyKeyBusy | StoreUnavailable>
  }
>()("lead-intake/LeadIntake") {
  /** One round trip and one commit per request: `intake_lead`. Needs a `SqlClient`. */
  static readonly layer = Layer.effect(
    LeadIntake,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const fn = yield* step
      const { preview } = makePreview(yield* PropertyCatalog, yield* LeadRepository, fn)
      const remember = `${memoryMillis} milliseconds`
      const lease = `${leaseMillis} milliseconds`

      return LeadIntake.of({
        preview,
        accept: fn("LeadIntake.accept")(function* ({ caller, input, requestId, idempotency }) {
          const now = yield* Clock.currentTimeMillis
          const [row] = yield* sql`
            SELECT outcome, lead_id, created, assignee_id, filled FROM intake_lead(
              ${caller.organizationId}, ${caller.originId}, ${input.nombre}, ${input.telefono}, ${matchKey(caller, input)},
              ${input.email}, ${input.propiedad?.by ?? null}::text, ${input.propiedad?.value ?? null}::text,
              ${noteBody(input)}::text, ${requestId}, ${new Date(now)}, ${new Date(now + firstContactMillis)},
              ${idempotency?.key ?? null}::text, ${idempotency?.fingerprint ?? null}::text,
              ${remember}::interval, ${lease}::interval
            )`.pipe(Effect.flatMap(decodeIntakeRows), writeOrFail(sql, "LeadIntake.accept"))
          yield* Effect.annotateCurrentSpan({
            "idempotency.result": idempotency === null ? "none" : idempotencyResultOf[row.outcome],
            ...(input.propiedad === null ? {} : { "property.by": input.propiedad.by })
          })
          switch (row.outcome) {
            case "in_progress":
              return yield* new IdempotencyKeyBusy()
            case "conflict":
              return yield* new IdempotencyKeyReused()
            case "property_not_found":
              return yield* new UnknownProperty()
          }
          if (row.lead_id === null || row.created === null) {
            return yield* Effect.die(new Error(`intake_lead answered ${row.outcome} without a lead`))
          }
          const accepted: Accepted = {
            leadId: row.lead_id,
            outcome: row.created ? "created" : "enriched",
            replay: row.outcome === "replay",
            assigneeId: row.assignee_id,
            filled: row.filled ?? []
          }
          yield* Effect.annotateCurrentSpan({
            "lead.id": accepted.leadId,
            "lead.outcome": accepted.outcome,
            ...(accepted.replay ? {} : { "capture.assignee_id": accepted.assigneeId ?? "unassigned" })
          })
          return accepted
        })
      })
    })
  )

  /** The in-memory fakes in context, composed: key, property, write, and the key released on failure. */
  static readonly layerMemory = Layer.effect(
    LeadIntake,
    Effect.gen(function* () {
      const catalog = yield* PropertyCatalog
      const leads = yield* LeadRepository
      const idempotency = yield* IdempotencyStore
      const fn = yield* step
      const { preview, resolveProperty } = makePreview(catalog, leads, fn)

      const write = fn("LeadIntake.write")(function* (
        { caller, input, requestId }: Submission,
        reservation: { readonly key: string; readonly token: string } | null
      ) {
        const propertyId = yield* resolveProperty(caller, input)
        const written = yield* leads.createOrEnrich({
          requestId,
          organizationId: caller.organizationId,
          originId: caller.originId,
          input,
          phoneKey: matchKey(caller, input),
          propertyId,
          idempotency: reservation
        })
        yield* Effect.annotateCurrentSpan({
          "lead.outcome": written.outcome,
          "capture.assignee_id": written.assigneeId ?? "unassigned"
        })
        return { ...written, replay: false } satisfies Accepted
      })

      return LeadIntake.of({
        preview,
        accept: fn("LeadIntake.accept")(function* (submission) {
          const request = submission.idempotency
          if (request === null) return yield* write(submission, null)
          const slot = { originId: submission.caller.originId, key: request.key }
          const reservation = yield* idempotency.reserve(slot, request.fingerprint)
          yield* Effect.annotateCurrentSpan("idempotency.result", idempotencyResults[reservation._tag])
          switch (reservation._tag) {
            case "Replay":
              return {
                leadId: reservation.response.lead_id,
                outcome: reservation.response.status,
                replay: true,
                assigneeId: null,
                filled: []
              } satisfies Accepted
            case "Conflict":
              return yield* new IdempotencyKeyReused()
            case "InProgress":
              return yield* new IdempotencyKeyBusy()
            case "Reserved":
              return yield* write(submission, { key: request.key, token: reservation.token }).pipe(
                Effect.onExit((exit) =>
                  Exit.isSuccess(exit) ? Effect.void : idempotency.release(slot, reservation.token)
                )
              )
          }
        })
      })
    })
  )
}
