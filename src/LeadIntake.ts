import { Context, Effect, Exit, Layer, Option, Schema } from "effect"
import type { CallerShape } from "./Api.ts"
import type { LeadInput } from "./Domain/LeadRequest.ts"
import { phoneMatchKey } from "./Domain/Phone.ts"
import { IdempotencyStore } from "./IdempotencyStore.ts"
import { type FilledField, LeadRepository } from "./LeadRepository.ts"
import { step } from "./Observability/Steps.ts"
import { PropertyCatalog } from "./PropertyCatalog.ts"
import type { StoreUnavailable } from "./Sql.ts"

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

export interface Reservation {
  readonly key: string
  readonly token: string
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

/**
 * The mechanics of `POST /v1/leads` after validation: what a dry run finds, an Idempotency-Key's
 * reservation (replay, conflict, in progress; released when the request fails), the property
 * and the write.
 */
export class LeadIntake extends Context.Service<
  LeadIntake,
  {
    preview(caller: CallerShape, input: LeadInput): Effect.Effect<Preview, UnknownProperty | StoreUnavailable>
    /** Runs `write` once per key: a repeat of a completed request gets its answer back instead. */
    once<E, R>(
      caller: CallerShape,
      idempotency: Idempotency | null,
      write: (reservation: Reservation | null) => Effect.Effect<Accepted, E, R>
    ): Effect.Effect<Accepted, E | IdempotencyKeyReused | IdempotencyKeyBusy | StoreUnavailable, R>
    resolveProperty(
      caller: CallerShape,
      input: LeadInput
    ): Effect.Effect<string | null, UnknownProperty | StoreUnavailable>
    write(lead: {
      readonly caller: CallerShape
      readonly input: LeadInput
      readonly propertyId: string | null
      readonly requestId: string
      readonly reservation: Reservation | null
    }): Effect.Effect<Accepted, StoreUnavailable>
  }
>()("lead-intake/LeadIntake") {
  static readonly make = Effect.gen(function* () {
    const catalog = yield* PropertyCatalog
    const leads = yield* LeadRepository
    const idempotency = yield* IdempotencyStore
    const fn = yield* step

    const resolveProperty = fn("LeadIntake.resolveProperty")(function* (
      caller: CallerShape,
      input: LeadInput
    ) {
      if (input.propiedad === null) return null
      const found = yield* catalog.resolve(caller.organizationId, input.propiedad)
      if (Option.isNone(found)) return yield* new UnknownProperty()
      return found.value
    })

    return LeadIntake.of({
      resolveProperty,

      preview: fn("LeadIntake.preview")(function* (caller, input) {
        const propertyId = yield* resolveProperty(caller, input)
        const phoneKey = matchKey(caller, input)
        const match =
          phoneKey === null ? Option.none<string>() : yield* leads.findMatch(caller.organizationId, phoneKey)
        return { propertyId, match }
      }),

      once: <E, R>(
        caller: CallerShape,
        request: Idempotency | null,
        write: (reservation: Reservation | null) => Effect.Effect<Accepted, E, R>
      ) =>
        Effect.gen(function* () {
          if (request === null) return yield* write(null)
          const slot = { originId: caller.originId, key: request.key }
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
              return yield* write({ key: request.key, token: reservation.token }).pipe(
                Effect.onExit((exit) =>
                  Exit.isSuccess(exit) ? Effect.void : idempotency.release(slot, reservation.token)
                )
              )
          }
        }).pipe(Effect.withSpan("LeadIntake.once")),

      write: fn("LeadIntake.write")(function* ({ caller, input, propertyId, requestId, reservation }) {
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
        return { ...written, replay: false }
      })
    })
  })

  /** Over whichever store the other services in context use: how the request path builds it. */
  static readonly layerFromServices = Layer.effect(LeadIntake, LeadIntake.make)

  /** On the PostgreSQL services; needs a `SqlClient`. */
  static readonly layer = LeadIntake.layerFromServices.pipe(
    Layer.provide(Layer.mergeAll(IdempotencyStore.layer, PropertyCatalog.layer, LeadRepository.layer))
  )

  /** On the in-memory fakes; needs a `MemoryStore`. */
  static readonly layerMemory = LeadIntake.layerFromServices.pipe(
    Layer.provide(
      Layer.mergeAll(IdempotencyStore.layerMemory, PropertyCatalog.layerMemory, LeadRepository.layerMemory)
    )
  )
}
