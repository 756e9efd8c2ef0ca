import { Clock, Context, Data, Effect, Layer, Option } from "effect"
import type { CallerShape } from "../Domain/Caller.ts"
import type { LeadInput } from "../Domain/LeadInput.ts"
import { phoneMatchKey } from "../Domain/Phone.ts"
import { type OutcomeUnknown, StoreUnavailable } from "../Platform/Sql/Sql.ts"
import { type IdempotencySlot, IdempotencyStore } from "./IdempotencyStore.ts"
import { type KeyedWritten, LeadRepository, type LeadWrite, type LeadWritten } from "./LeadRepository.ts"
import { PropertyCatalog, UnknownProperty } from "./PropertyCatalog.ts"

/** Who a lead is written for: an API key's caller, or the origin and mode of a rescued request. */
export type Writer = Pick<CallerShape, "organizationId" | "originId" | "country" | "livemode">

export const matchKeyOf = (writer: Writer, input: LeadInput) =>
  input.telefono === null ? null : phoneMatchKey(input.telefono, writer.country)

/** What a write did to its lead, as the API answers it (`LeadCreated` or `LeadEnriched`). */
export const answerBody = (
  written: Pick<LeadWritten, "leadId" | "outcome">,
  leadUrl: string,
  requestId: string,
  replay: boolean
) => {
  const replayed = replay ? { replay: true as const } : {}
  return written.outcome === "created"
    ? {
        lead_id: written.leadId,
        status: "created" as const,
        lead_url: leadUrl,
        request_id: requestId,
        ...replayed
      }
    : {
        lead_id: written.leadId,
        status: "enriched" as const,
        matched_on: "telefono" as const,
        lead_url: leadUrl,
        request_id: requestId,
        ...replayed
      }
}

/** What a request did to its lead, or, for a replay, what the first request with its key did. */
export interface Answer {
  readonly leadId: string
  readonly outcome: "created" | "enriched"
  readonly replay: boolean
}

/** What a dry run found: the property the body names, and the lead a write would enrich. */
export interface DryRun {
  readonly propertyId: string | null
  readonly match: Option.Option<string>
}

/** The request's Idempotency-Key and the fingerprint of its body (docs/contract.md#5-idempotency). */
export interface Keyed {
  readonly key: string
  readonly fingerprint: string
}

/** The key was used before with another body (docs/contract.md#5-idempotency): nothing is written. */
export class IdempotencyConflict extends Data.TaggedError("IdempotencyConflict") {}

/** The key's first request is still running: nothing is written, the caller retries later. */
export class IdempotencyInProgress extends Data.TaggedError("IdempotencyInProgress") {}

type IntakeFailure = UnknownProperty | StoreUnavailable | OutcomeUnknown

export type AcceptFailure = IntakeFailure | IdempotencyConflict | IdempotencyInProgress

const answerOf = (written: Pick<LeadWritten, "leadId" | "outcome">, replay: boolean): Answer => ({
  leadId: written.leadId,
  outcome: written.outcome,
  replay
})

/**
 * `POST /v1/leads` from the decoded body on (docs/contract.md#3-order-of-checks 8-11): a dry run, or
 * the property the body names in the writer's catalog, then the lead and everything a write sets off
 * (a write resolves the property in its own statement; a dry run asks the catalog), behind the
 * request's Idempotency-Key if it sent one. The endpoint and a rescue
 * (docs/contract.md#11-rejected-leads-are-kept-for-rescue) both write through here; they differ only
 * in what the one write statement also records (the idempotency key's answer, or the rescued
 * request-log row).
 */
export class LeadIntake extends Context.Service<
  LeadIntake,
  {
    /** 8. A dry run: the property (unknown or archived is 422) and the lead it would enrich; nothing written. */
    dryRun(writer: Writer, input: LeadInput): Effect.Effect<DryRun, UnknownProperty | StoreUnavailable>
    /**
     * 9-11, run to the end once begun, whether or not the caller is still there: a request that hangs
     * up leaves all of its lead or none of it, and never its key held without a lead. Behind a key, a
     * first use reserves it and writes in one round trip; a spent one replays or conflicts; a running
     * one is in progress. A write that fails leaves its key free (the write frees it); one whose answer
     * was lost is settled (docs/contract.md#5-idempotency): committed, it answers with its lead;
     * released, nothing was written (`StoreUnavailable`); still unknown when the request must answer,
     * the key stays held while the store keeps asking in the background (`OutcomeUnknown`).
     */
    accept(
      writer: Writer,
      input: LeadInput,
      requestId: string,
      keyed: Keyed | undefined
    ): Effect.Effect<Answer, AcceptFailure>
    /** The same write for a rescue of the request-log row; none when it was rescued already or keeps nothing. */
    rescue(
      writer: Writer,
      input: LeadInput,
      requestId: string,
      requestLogId: string
    ): Effect.Effect<Option.Option<LeadWritten>, IntakeFailure>
  }
>()("lead-intake/LeadIntake") {
  /** Needs `PropertyCatalog`, `LeadRepository` and `IdempotencyStore`. */
  static readonly layer = Layer.effect(
    LeadIntake,
    Effect.gen(function* () {
      const catalog = yield* PropertyCatalog
      const leads = yield* LeadRepository
      const idempotency = yield* IdempotencyStore

      const resolveProperty = Effect.fnUntraced(function* (writer: Writer, input: LeadInput) {
        if (input.propiedad === null) return null
        const found = yield* catalog.resolve(writer.organizationId, input.propiedad)
        if (Option.isNone(found)) return yield* new UnknownProperty()
        return found.value
      })

      const writeOf = (
        writer: Writer,
        input: LeadInput,
        requestId: string,
        idempotency: LeadWrite["idempotency"]
      ): LeadWrite => ({
        requestId,
        organizationId: writer.organizationId,
        originId: writer.originId,
        livemode: writer.livemode,
        input,
        phoneKey: matchKeyOf(writer, input),
        idempotency
      })

      const dryRun = Effect.fnUntraced(function* (writer: Writer, input: LeadInput) {
        const propertyId = yield* resolveProperty(writer, input)
        const phoneKey = matchKeyOf(writer, input)
        const match =
          phoneKey === null
            ? Option.none<string>()
            : yield* leads.findMatch(writer.organizationId, writer.livemode, phoneKey)
        return { propertyId, match }
      })

      const keyedAnswer = (
        keyed: KeyedWritten
      ): Effect.Effect<Answer, IdempotencyConflict | IdempotencyInProgress> => {
        switch (keyed._tag) {
          case "Written":
            return Effect.succeed(answerOf(keyed.written, false))
          case "Replay":
            return Effect.succeed(
              answerOf({ leadId: keyed.response.lead_id, outcome: keyed.response.status }, true)
            )
          case "Conflict":
            return Effect.fail(new IdempotencyConflict())
          case "InProgress":
            return Effect.fail(new IdempotencyInProgress())
        }
      }

      const settleLost = Effect.fnUntraced(function* (
        slot: IdempotencySlot,
        token: string,
        reservedAt: number,
        lost: OutcomeUnknown
      ) {
        const settled = yield* idempotency.settle(slot, token, reservedAt)
        switch (settled._tag) {
          case "Committed":
            return answerOf({ leadId: settled.response.lead_id, outcome: settled.response.status }, false)
          case "Released":
            return yield* new StoreUnavailable({ operation: lost.operation })
          case "Kept":
            return yield* lost
        }
      })

      const writeKeyed = Effect.fnUntraced(function* (
        writer: Writer,
        input: LeadInput,
        requestId: string,
        { key, fingerprint }: Keyed
      ) {
        const token = crypto.randomUUID()
        const reservedAt = yield* Clock.currentTimeMillis
        const reservation = { key, token }
        const slot = {
          organizationId: writer.organizationId,
          originId: writer.originId,
          livemode: writer.livemode,
          key
        }
        return yield* leads
          .createOrEnrichKeyed({
            ...writeOf(writer, input, requestId, reservation),
            idempotency: reservation,
            fingerprint
          })
          .pipe(
            Effect.flatMap(keyedAnswer),
            Effect.catchTag("OutcomeUnknown", (lost) => settleLost(slot, token, reservedAt, lost))
          )
      })

      return LeadIntake.of({
        dryRun,
        accept: (writer, input, requestId, keyed) =>
          Effect.uninterruptible(
            keyed === undefined
              ? Effect.map(leads.createOrEnrich(writeOf(writer, input, requestId, null)), (written) =>
                  answerOf(written, false)
                )
              : writeKeyed(writer, input, requestId, keyed)
          ),
        rescue: (writer, input, requestId, requestLogId) =>
          leads.rescue(writeOf(writer, input, requestId, null), requestLogId)
      })
    })
  )
}
