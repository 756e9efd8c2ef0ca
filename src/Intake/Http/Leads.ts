import { Cause, Clock, Effect, Exit, Option } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Admission, Api, Caller, type CallerShape, Decoding } from "../../Api/Api.ts"
import { fixedMessages } from "../../Api/Errors.ts"
import { normalisedLead } from "../../Api/LeadBody.ts"
import type { LeadRequest } from "../../Api/LeadRequest.ts"
import { requestFingerprint } from "../../Domain/Fingerprint.ts"
import type { LeadInput } from "../../Domain/LeadInput.ts"
import { AppConfig } from "../../Platform/Config.ts"
import { builtWith } from "../../Platform/HttpServe.ts"
import { type OutcomeUnknown, StoreUnavailable } from "../../Platform/Sql.ts"
import {
  type IdempotencySlot,
  IdempotencyStore,
  type Reservation,
  type StoredResponse
} from "../IdempotencyStore.ts"
import { answerBody, LeadIntake, matchKeyOf } from "../LeadIntake.ts"
import { type KeyedWritten, LeadRepository, type LeadWritten } from "../LeadRepository.ts"
import { answered, CurrentRequest, refuse } from "./Outcome.ts"

/** What the request did to its lead, or, for a replay, what the first request with its key did. */
interface Answer {
  readonly leadId: string
  readonly outcome: "created" | "enriched"
  readonly replay: boolean
}

const replayedHeaders = { "idempotent-replayed": "true" }

export const layerLeadHandlers = HttpApiBuilder.group(
  Api,
  "leads",
  Effect.fn(function* (handlers) {
    const config = yield* AppConfig
    const intake = yield* LeadIntake
    const idempotency = yield* IdempotencyStore
    const leads = yield* LeadRepository

    /** 8. A dry run: resolve the property and look for the lead it would enrich; write nothing. */
    const dryRun = Effect.fnUntraced(function* (caller: CallerShape, input: LeadInput) {
      const request = yield* CurrentRequest
      const propertyId = yield* intake.resolveProperty(caller, input)
      const phoneKey = matchKeyOf(caller, input)
      const match =
        phoneKey === null
          ? Option.none<string>()
          : yield* leads.findMatch(caller.organizationId, caller.livemode, phoneKey)
      yield* request.settle({ outcome: "dry_run", leadId: Option.getOrNull(match), headers: {} })
      return {
        status: "dry_run" as const,
        would: Option.isSome(match) ? ("enrich" as const) : ("create" as const),
        would_match: Option.match(match, {
          onNone: () => null,
          onSome: (leadId) => ({ lead_id: leadId, matched_on: "telefono" as const })
        }),
        resolved: {
          organizacion: caller.organizationId,
          origen: caller.originLabel,
          development_id: propertyId,
          nombre: input.nombre,
          telefono: input.telefono,
          email: input.email,
          extras: Object.fromEntries(input.extras)
        },
        request_id: request.requestId
      }
    })

    /** 10-11 without an Idempotency-Key: the property, then the lead and everything it sets off, in one transaction. */
    const write = Effect.fnUntraced(function* (caller: CallerShape, input: LeadInput) {
      const { requestId } = yield* CurrentRequest
      return yield* intake.write(caller, input, requestId, null)
    })

    /** The one place a lead's answer is built, replays included. */
    const reply = Effect.fnUntraced(function* (answer: Answer) {
      const request = yield* CurrentRequest
      const leadUrl = `${config.dashboardUrl}/leads/${answer.leadId}`
      yield* request.settle({
        outcome: answer.replay ? "replay" : answer.outcome,
        leadId: answer.leadId,
        headers: answer.replay ? replayedHeaders : {}
      })
      return answerBody(answer, leadUrl, request.requestId, answer.replay)
    })

    /**
     * 9-11 behind an Idempotency-Key: a first use reserves it and writes; a spent one replays or
     * conflicts; a running one waits (409).
     */
    const keyedAnswer = (keyed: KeyedWritten) => {
      switch (keyed._tag) {
        case "Written":
          return Effect.succeed(written(keyed.written))
        case "Replay":
          return Effect.succeed(replayed(keyed))
        case "Conflict":
          return refuse("idempotency_conflict", fixedMessages.idempotency_conflict)
        case "InProgress":
          return refuse("idempotency_in_progress", fixedMessages.idempotency_in_progress)
      }
    }

    const written = (lead: LeadWritten): Answer => ({
      leadId: lead.leadId,
      outcome: lead.outcome,
      replay: false
    })

    const replayed = (reservation: Extract<Reservation, { _tag: "Replay" }>): Answer => ({
      leadId: reservation.response.lead_id,
      outcome: reservation.response.status,
      replay: true
    })

    /**
     * A write whose answer was lost, settled (docs/contract.md#5-idempotency): committed, it answers
     * with its lead; released, nothing was written (503); still unknown when the request must answer,
     * the key stays held while the store keeps asking in the background, and the answer is 500.
     */
    const settleLost = Effect.fnUntraced(function* (
      slot: IdempotencySlot,
      token: string,
      reservedAt: number,
      lost: OutcomeUnknown
    ) {
      const settled = yield* idempotency.settle(slot, token, reservedAt)
      const answer = (response: StoredResponse): Answer => ({
        leadId: response.lead_id,
        outcome: response.status,
        replay: false
      })
      switch (settled._tag) {
        case "Committed":
          return answer(settled.response)
        case "Released":
          return yield* new StoreUnavailable({ operation: lost.operation })
        case "Kept":
          return yield* lost
      }
    })

    /**
     * 9-11, run to the end once begun, whether or not the caller is still there: a request that hangs
     * up leaves all of its lead or none of it, and never its key held without a lead. A request whose
     * write fails leaves its key free (the write frees it); one whose write's answer was lost settles it.
     */
    const accept = (caller: CallerShape, input: LeadInput, body: LeadRequest, key: string | undefined) =>
      Effect.uninterruptible(
        Effect.gen(function* () {
          if (key === undefined) {
            return written(yield* write(caller, input))
          }
          const { requestId } = yield* CurrentRequest
          const token = crypto.randomUUID()
          const reservedAt = yield* Clock.currentTimeMillis
          const exit = yield* Effect.exit(
            intake.writeKeyed(caller, input, requestId, { key, token }, requestFingerprint(body))
          )
          if (Exit.isSuccess(exit)) return yield* keyedAnswer(exit.value)
          // A write that failed freed its key itself; one whose answer was lost is settled.
          const failure = Cause.findErrorOption(exit.cause)
          if (Option.isSome(failure) && failure.value._tag === "OutcomeUnknown") {
            const slot = { originId: caller.originId, livemode: caller.livemode, key }
            return yield* settleLost(slot, token, reservedAt, failure.value)
          }
          return yield* Effect.failCause(exit.cause)
        })
      )

    /** docs/contract.md#3-order-of-checks from step 8 on (2-7 answered by the admission and the endpoint's schemas). */
    return handlers.handle("createOrEnrich", ({ payload, headers }) =>
      Effect.gen(function* () {
        const caller = yield* Caller
        const input = normalisedLead(payload)
        if (headers["x-service-dry-run"] === "true") return yield* dryRun(caller, input)
        return yield* reply(yield* accept(caller, input, payload, headers["idempotency-key"]))
      }).pipe(answered)
    )
  })
).pipe(builtWith(AppConfig, LeadIntake, IdempotencyStore, LeadRepository, Admission, Decoding))
