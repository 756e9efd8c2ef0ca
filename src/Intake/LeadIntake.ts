import { Context, Effect, Layer, Option } from "effect"
import type { CallerShape } from "../Domain/Caller.ts"
import type { LeadInput } from "../Domain/LeadInput.ts"
import { phoneMatchKey } from "../Domain/Phone.ts"
import type { OutcomeUnknown, StoreUnavailable } from "../Platform/Sql.ts"
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

type IntakeFailure = UnknownProperty | StoreUnavailable | OutcomeUnknown

/**
 * `POST /v1/leads` from the decoded body on (docs/contract.md#3-order-of-checks 8, 10-11): the
 * property the body names in the writer's catalog, then the lead and everything a write sets off
 * (a write resolves the property in its own statement; a dry run asks the catalog).
 * The endpoint and a rescue (docs/contract.md#11-rejected-leads-are-kept-for-rescue) both write
 * through here; they differ only in what the one write statement also records (the idempotency
 * key's answer, or the rescued request-log row).
 */
export class LeadIntake extends Context.Service<
  LeadIntake,
  {
    /** 8, 10. The property the request names, for a dry run: unknown or archived is 422. */
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
    /**
     * 9-11 for a request with an Idempotency-Key: the key reserved for `idempotency.token`, then the
     * write, in one round trip; a key that is not free answers what it holds, and nothing is written.
     */
    writeKeyed(
      writer: Writer,
      input: LeadInput,
      requestId: string,
      idempotency: { readonly key: string; readonly token: string },
      fingerprint: string
    ): Effect.Effect<KeyedWritten, IntakeFailure>
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

      return LeadIntake.of({
        resolveProperty,
        write: (writer, input, requestId, idempotency) =>
          leads.createOrEnrich(writeOf(writer, input, requestId, idempotency)),
        writeKeyed: (writer, input, requestId, idempotency, fingerprint) =>
          leads.createOrEnrichKeyed({
            ...writeOf(writer, input, requestId, idempotency),
            idempotency,
            fingerprint
          }),
        rescue: (writer, input, requestId, requestLogId) =>
          leads.rescue(writeOf(writer, input, requestId, null), requestLogId)
      })
    })
  )
}
