import { Clock, Context, Effect, Exit, Layer, Option, Schema } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import type { CallerShape } from "./Api.ts"
import { hashApiKey } from "./Domain/ApiKey.ts"
import { type LeadInput, noteBody } from "./Domain/LeadRequest.ts"
import { phoneMatchKey } from "./Domain/Phone.ts"
import { windowStartOf } from "./Domain/RateWindow.ts"
import { IdempotencyStore, leaseMillis, memoryMillis } from "./IdempotencyStore.ts"
import {
  type Admitted,
  admissionOf,
  callerOf,
  KeyCheck,
  type KeyRejected,
  KeyRow,
  parseToken
} from "./KeyCheck.ts"
import { FilledField, firstContactMillis, LeadRepository } from "./LeadRepository.ts"
import { step } from "./Observability/Steps.ts"
import { PropertyCatalog } from "./PropertyCatalog.ts"
import { isOutage, type OutcomeUnknown, type StoreUnavailable, sqlStateOf, writeOrFail } from "./Sql.ts"

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

const matchKey = (country: string, input: LeadInput) =>
  input.telefono === null ? null : phoneMatchKey(input.telefono, country)

/** One `POST /v1/leads` past validation, as the write path takes it. */
export interface Submission {
  readonly caller: CallerShape
  readonly input: LeadInput
  readonly requestId: string
  readonly idempotency: Idempotency | null
}

/** A write as the key check takes it: its caller is whoever the key turns out to be. */
export type Draft = Omit<Submission, "caller">

export type AcceptError =
  | UnknownProperty
  | IdempotencyKeyReused
  | IdempotencyKeyBusy
  | StoreUnavailable
  | OutcomeUnknown

/**
 * A write's admission and, when the rate window let it through, what steps 9-11 answered: kept
 * as an `Exit` so that the request answers in the contract's order (401, then 429, then the rest).
 */
export interface AdmittedWrite extends Admitted {
  readonly accepted: Exit.Exit<Accepted, AcceptError> | undefined
}

type Step = Effect.Success<typeof step>

/** The key check alone, as an admission with nothing accepted (a dry run). */
export const admitOnly = (keys: KeyCheck["Service"], token: string) =>
  Effect.map(keys.admit(token), (admitted): AdmittedWrite => ({ ...admitted, accepted: undefined }))

/** Admits, then accepts when the window lets the request through: two calls, one per service (the fakes, a first write). */
export const admitThenAccept =
  (keys: KeyCheck["Service"], accept: (submission: Submission) => Effect.Effect<Accepted, AcceptError>) =>
  (
    token: string,
    draft: Draft
  ): Effect.Effect<AdmittedWrite, KeyRejected | StoreUnavailable | OutcomeUnknown> =>
    Effect.gen(function* () {
      const admitted = yield* keys.admit(token)
      if (!admitted.window.allowed) return { ...admitted, accepted: undefined }
      return { ...admitted, accepted: yield* Effect.exit(accept({ ...draft, caller: admitted.caller })) }
    })

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
      const phoneKey = matchKey(caller.country, input)
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

/** What steps 9-11 decided, read from `intake_lead`'s row. */
const answerOf = Effect.fnUntraced(function* (
  row: typeof IntakeRow.Type,
  { input, idempotency }: Draft
): Effect.fn.Return<Accepted, UnknownProperty | IdempotencyKeyReused | IdempotencyKeyBusy> {
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

/** What `admit_and_intake` (migration 0008) answers: the key's row, its count, then `intake_lead`'s. */
const AdmitRow = Schema.Struct({
  ...KeyRow.fields,
  outcome: Schema.Literals([
    ...IntakeRow.fields.outcome.literals,
    "refused",
    "country_changed",
    "rate_limited"
  ]),
  lead_id: IntakeRow.fields.lead_id,
  created: IntakeRow.fields.created,
  assignee_id: IntakeRow.fields.assignee_id,
  filled: IntakeRow.fields.filled
})
const decodeAdmitRows = Schema.decodeUnknownEffect(Schema.Array(AdmitRow))

/** A statement that failed for another reason than an outage: the write itself went wrong. */
const isWriteFailure = (error: SqlError.SqlError | Schema.SchemaError): error is SqlError.SqlError =>
  error._tag === "SqlError" && !isOutage(error)

/** `admit_and_intake` found the window full when it came to count the request, and rolled back. */
const windowFilled = (error: SqlError.SqlError) => sqlStateOf(error.reason.cause) === "LI429"

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
    accept(submission: Submission): Effect.Effect<Accepted, AcceptError>
    /**
     * Contract order 2-3 and 9-11 for a write that passed every check that needs no database: the
     * key and its rate window, then `accept` when the window lets it through.
     */
    admitAndAccept(
      token: string,
      draft: Draft
    ): Effect.Effect<AdmittedWrite, KeyRejected | StoreUnavailable | OutcomeUnknown>
  }
>()("lead-intake/LeadIntake") {
  /**
   * One round trip and one commit per write: `admit_and_intake` once the key's country is known
   * (its first write takes a key check and `intake_lead`). Needs a `SqlClient`.
   */
  static readonly layer = Layer.effect(
    LeadIntake,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const keys = yield* KeyCheck
      const fn = yield* step
      const { preview } = makePreview(yield* PropertyCatalog, yield* LeadRepository, fn)
      const remember = `${memoryMillis} milliseconds`
      const lease = `${leaseMillis} milliseconds`
      /** The country of each key's organization, which its phone match keys need; it never changes. */
      const countries = new Map<string, string>()
      const maxCountries = 100_000

      /**
       * The arguments `intake_lead` and `admit_and_intake` end with (the lead, the key, the clock),
       * after `leading` others: their placeholders and casts, written once, and their values per request.
       * Both statements are text built when the layer is, so a request compiles no SQL fragments
       * (building and compiling them was ~8 % of a replay's allocations).
       */
      const writePlaceholders = (leading: number) =>
        [
          "",
          "",
          "",
          "",
          "::text",
          "::text",
          "::text",
          "",
          "",
          "",
          "::text",
          "::text",
          "::interval",
          "::interval"
        ]
          .map((cast, index) => `$${leading + index + 1}${cast}`)
          .join(", ")
      const writeValues = (country: string, { input, requestId, idempotency }: Draft, now: number) => [
        input.nombre,
        input.telefono,
        matchKey(country, input),
        input.email,
        input.propiedad?.by ?? null,
        input.propiedad?.value ?? null,
        noteBody(input),
        requestId,
        new Date(now),
        new Date(now + firstContactMillis),
        idempotency?.key ?? null,
        idempotency?.fingerprint ?? null,
        remember,
        lease
      ]
      const intakeText = `SELECT outcome, lead_id, created, assignee_id, filled FROM intake_lead($1, $2, ${writePlaceholders(2)})`
      const admitText = `SELECT * FROM admit_and_intake($1, $2, $3, $4, ${writePlaceholders(4)})`

      const accept = fn("LeadIntake.accept")(function* (submission: Submission) {
        const { caller } = submission
        const now = yield* Clock.currentTimeMillis
        const [row] = yield* sql
          .unsafe(intakeText, [
            caller.organizationId,
            caller.originId,
            ...writeValues(caller.country, submission, now)
          ])
          .pipe(Effect.flatMap(decodeIntakeRows), writeOrFail(sql, "LeadIntake.accept"))
        return yield* answerOf(row, submission)
      })

      const learnCountry = (token: string, draft: Draft, publicId: string) =>
        Effect.map(admitThenAccept(keys, accept)(token, draft), (admission) => {
          if (countries.size >= maxCountries) countries.clear()
          countries.set(publicId, admission.caller.country)
          return admission
        })

      const admitAndIntake = (token: string, publicId: string, country: string, draft: Draft, now: number) =>
        sql
          .unsafe(admitText, [
            publicId,
            hashApiKey(token),
            country,
            windowStartOf(now),
            ...writeValues(country, draft, now)
          ])
          .pipe(
            Effect.flatMap(decodeAdmitRows),
            Effect.map((rows) => ({ row: rows[0] })),
            Effect.catchIf(isWriteFailure, (failure) => Effect.succeed({ failure })),
            writeOrFail(sql, "LeadIntake.admitAndAccept")
          )

      return LeadIntake.of({
        preview,
        accept,
        admitAndAccept: fn("LeadIntake.admitAndAccept")(function* (token, draft) {
          const { publicId, prefix } = yield* parseToken(token)
          yield* Effect.annotateCurrentSpan({ "key.prefix": prefix })
          const country = countries.get(publicId)
          if (country === undefined) return yield* learnCountry(token, draft, publicId)
          const now = yield* Clock.currentTimeMillis
          const answer = yield* admitAndIntake(token, publicId, country, draft, now)
          if ("failure" in answer) {
            if (windowFilled(answer.failure)) return yield* admitThenAccept(keys, accept)(token, draft)
            // The write failed and rolled back; the request still takes its unit of the window.
            const admitted = yield* keys.admit(token)
            return { ...admitted, accepted: admitted.window.allowed ? Exit.die(answer.failure) : undefined }
          }
          const { row } = answer
          const caller = yield* callerOf(token, prefix, row)
          switch (row?.outcome) {
            case "refused":
              return yield* Effect.die(new Error("admit_and_intake refused a key the service accepts"))
            case "country_changed":
              countries.delete(publicId)
              return yield* learnCountry(token, draft, publicId)
          }
          const admitted = yield* admissionOf(caller, row?.count ?? null, now)
          if (row === undefined || row.outcome === "rate_limited") return { ...admitted, accepted: undefined }
          return {
            ...admitted,
            accepted: yield* Effect.exit(answerOf({ ...row, outcome: row.outcome }, draft))
          }
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
      const keys = yield* KeyCheck
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
          phoneKey: matchKey(caller.country, input),
          propertyId,
          idempotency: reservation
        })
        yield* Effect.annotateCurrentSpan({
          "lead.outcome": written.outcome,
          "capture.assignee_id": written.assigneeId ?? "unassigned"
        })
        return { ...written, replay: false } satisfies Accepted
      })

      const accept = fn("LeadIntake.accept")(function* (submission: Submission) {
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

      return LeadIntake.of({
        preview,
        accept,
        admitAndAccept: fn("LeadIntake.admitAndAccept")(function* (token, draft) {
          return yield* admitThenAccept(keys, accept)(token, draft)
        })
      })
    })
  )
}
