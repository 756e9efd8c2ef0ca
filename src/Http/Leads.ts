import { Effect, type Exit, Option } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api, Caller, type CallerShape, ValidLead } from "../Api.ts"
import { AppConfig } from "../Config.ts"
import type { LeadInput } from "../Domain/LeadRequest.ts"
import { type AcceptError, type Accepted, LeadIntake, type Preview } from "../LeadIntake.ts"
import type { OutcomeUnknown } from "../Sql.ts"
import { Written } from "./Middleware.ts"
import { fail, RequestContext, setResponseHeaders, settle } from "./RequestContext.ts"

const unavailable = () =>
  fail("temporarily_unavailable", "The database could not be reached; nothing was written")

/** 500, as the contract says: the write may have been saved, a retry with the same Idempotency-Key tells. */
const outcomeUnknown = (error: OutcomeUnknown) => Effect.die(error)

const propertyNotFound = () =>
  fail("property_not_found", "No active property of your organization matches propiedad", "propiedad")

/**
 * The body of a written lead's answer (201 created, 200 enriched, replays included), fields in the
 * order the contract's schemas list them: the router encodes it, the direct create sends it as is.
 */
export const leadAnswer = (accepted: Accepted, requestId: string, dashboardUrl: string) => {
  const leadUrl = `${dashboardUrl}/leads/${accepted.leadId}`
  const replay = accepted.replay ? { replay: true as const } : {}
  return accepted.outcome === "created"
    ? {
        lead_id: accepted.leadId,
        status: "created" as const,
        lead_url: leadUrl,
        request_id: requestId,
        ...replay
      }
    : {
        lead_id: accepted.leadId,
        status: "enriched" as const,
        matched_on: "telefono" as const,
        lead_url: leadUrl,
        request_id: requestId,
        ...replay
      }
}

/** The body of a dry run's 200: what the write would do, nothing written. */
export const dryRunAnswer = (caller: CallerShape, input: LeadInput, preview: Preview, requestId: string) => ({
  status: "dry_run" as const,
  would: Option.isSome(preview.match) ? ("enrich" as const) : ("create" as const),
  would_match: Option.match(preview.match, {
    onNone: () => null,
    onSome: (leadId) => ({ lead_id: leadId, matched_on: "telefono" as const })
  }),
  resolved: {
    organizacion: caller.organizationId,
    origen: caller.originLabel,
    development_id: preview.propertyId,
    nombre: input.nombre,
    telefono: input.telefono,
    email: input.email,
    extras: Object.fromEntries(input.extras)
  },
  request_id: requestId
})

export const layerLeadHandlers = HttpApiBuilder.group(
  Api,
  "leads",
  Effect.fn(function* (handlers) {
    const config = yield* AppConfig
    const intake = yield* LeadIntake

    /** The one place a lead response body is built, replays included. */
    const reply = Effect.fnUntraced(function* (accepted: Accepted) {
      const { requestId } = yield* RequestContext
      yield* settle(accepted.replay ? "replay" : accepted.outcome, accepted.leadId)
      if (accepted.replay) yield* setResponseHeaders({ "idempotent-replayed": "true" })
      return leadAnswer(accepted, requestId, config.dashboardUrl)
    })

    const describeDryRun = Effect.fnUntraced(function* (
      caller: CallerShape,
      input: LeadInput,
      preview: Preview
    ) {
      const { requestId } = yield* RequestContext
      yield* settle("dry_run", Option.getOrNull(preview.match))
      return dryRunAnswer(caller, input, preview, requestId)
    })

    /** Contract order 8: resolve the property and look for a match, write nothing. */
    const dryRun = Effect.fnUntraced(function* (caller: CallerShape, input: LeadInput) {
      const preview = yield* intake
        .preview(caller, input)
        .pipe(Effect.catchTags({ UnknownProperty: propertyNotFound, StoreUnavailable: unavailable }))
      return yield* describeDryRun(caller, input, preview)
    })

    /** Contract order 9-11, as the admission's round trip answered them: replay, 409, 422, or the write. */
    const accepted = (written: Exit.Exit<Accepted, AcceptError> | undefined) =>
      written === undefined
        ? Effect.die(new Error("a write reached its handler without being admitted"))
        : written.pipe(
            Effect.catchTags({
              IdempotencyKeyReused: () =>
                fail(
                  "idempotency_conflict",
                  "This Idempotency-Key was used in the last 24 hours with another body"
                ),
              IdempotencyKeyBusy: () =>
                fail(
                  "idempotency_in_progress",
                  "The original request with this Idempotency-Key is still running"
                ),
              UnknownProperty: propertyNotFound,
              StoreUnavailable: unavailable,
              OutcomeUnknown: outcomeUnknown
            })
          )

    return handlers.handleRaw("createOrEnrich", ({ headers }) =>
      Effect.gen(function* () {
        const caller = yield* Caller
        const input = yield* ValidLead
        if (headers["x-service-dry-run"] === "true") return yield* dryRun(caller, input)
        return yield* reply(yield* accepted(yield* Written))
      })
    )
  })
)
