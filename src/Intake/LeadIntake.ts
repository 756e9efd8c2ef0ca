import { Context, Data, Effect, Layer, Option } from "effect"
import type { CallerShape } from "../Domain/Caller.ts"
import { phoneMatchKey } from "../Domain/Phone.ts"
import type { OutcomeUnknown, StoreUnavailable } from "../Platform/Sql.ts"
import type { LeadInput } from "./LeadInput.ts"
import { LeadRepository, type LeadWrite, type LeadWritten } from "./LeadRepository.ts"
import { PropertyCatalog } from "./PropertyCatalog.ts"

/** Who a lead is written for: an API key's caller, or the origin and mode of a rescued request. */
export type Writer = Pick<CallerShape, "organizationId" | "originId" | "country" | "livemode">

export const matchKeyOf = (writer: Writer, input: LeadInput) =>
  input.telefono === null ? null : phoneMatchKey(input.telefono, writer.country)

/** 10. The property the request names is unknown or archived in the writer's catalog: 422 `property_not_found`. */
export class UnknownProperty extends Data.TaggedError("UnknownProperty")<{}> {
  override readonly message = "No active property of your organization matches propiedad"
  readonly field = "propiedad"
}

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

type IntakeFailure = UnknownProperty | StoreUnavailable | OutcomeUnknown

/**
 * `POST /v1/leads` from the decoded body on (docs/contract.md#3-order-of-checks 8, 10-11): the
 * property the body names in the writer's catalog, then the lead and everything a write sets off.
 * The endpoint and a rescue (docs/contract.md#11-rejected-leads-are-kept-for-rescue) both write
 * through here; they differ only in what the one write statement also records (the idempotency
 * key's answer, or the rescued request-log row).
 */
export class LeadIntake extends Context.Service<
  LeadIntake,
  {
    /** 8, 10. The property the request names: unknown or archived is 422. */
    resolveProperty(
      writer: Writer,
      input: LeadInput
    ): Effect.Effect<string | null, UnknownProperty | StoreUnavailable>
    write(
      writer: Writer,
      input: LeadInput,
      requestId: string,
      idempotency: LeadWrite["idempotency"]
    ): Effect.Effect<LeadWritten, IntakeFailure>
    /** The same write for a rescue of the request-log row; none when it was rescued already or keeps nothing. */
    rescue(
      writer: Writer,
      input: LeadInput,
      requestId: string,
      requestLogId: string
    ): Effect.Effect<Option.Option<LeadWritten>, IntakeFailure>
  }
>()("lead-intake/LeadIntake") {
  static readonly layer = Layer.effect(
    LeadIntake,
    Effect.gen(function* () {
      const catalog = yield* PropertyCatalog
      const leads = yield* LeadRepository

      const resolveProperty = Effect.fnUntraced(function* (writer: Writer, input: LeadInput) {
        if (input.propiedad === null) return null
        const found = yield* catalog.resolve(writer.organizationId, input.propiedad)
        if (Option.isNone(found)) return yield* new UnknownProperty()
        return found.value
      })

      const intake = <A, E>(
        writer: Writer,
        input: LeadInput,
        requestId: string,
        idempotency: LeadWrite["idempotency"],
        commit: (write: LeadWrite) => Effect.Effect<A, E>
      ) =>
        Effect.flatMap(resolveProperty(writer, input), (propertyId) =>
          commit({
            requestId,
            organizationId: writer.organizationId,
            originId: writer.originId,
            livemode: writer.livemode,
            input,
            phoneKey: matchKeyOf(writer, input),
            propertyId,
            idempotency
          })
        )

      return LeadIntake.of({
        resolveProperty,
        write: (writer, input, requestId, idempotency) =>
          intake(writer, input, requestId, idempotency, leads.createOrEnrich),
        rescue: (writer, input, requestId, requestLogId) =>
          intake(writer, input, requestId, null, (write) => leads.rescue(write, requestLogId))
      })
    })
  )
}
