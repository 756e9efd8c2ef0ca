import { Effect, Option } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api, Caller, type CallerShape } from "../../Api/Api.ts"
import { normalisedLead } from "../../Api/LeadBody.ts"
import { requestFingerprint } from "../../Domain/Fingerprint.ts"
import type { LeadInput } from "../../Domain/LeadInput.ts"
import { AppConfig } from "../../Platform/Config.ts"
import { type Answer, answerBody, type DryRun, LeadIntake } from "../LeadIntake.ts"
import { answered, CurrentRequest } from "./Outcome.ts"

const replayedHeaders = { "idempotent-replayed": "true" }

export const layerLeadHandlers = HttpApiBuilder.group(
  Api,
  "leads",
  Effect.fn(function* (handlers) {
    const config = yield* AppConfig
    const intake = yield* LeadIntake

    /** 8. What a dry run found, as the API answers it. */
    const previewed = Effect.fnUntraced(function* (caller: CallerShape, input: LeadInput, found: DryRun) {
      const request = yield* CurrentRequest
      yield* request.settle({ outcome: "dry_run", leadId: Option.getOrNull(found.match), headers: {} })
      return {
        status: "dry_run" as const,
        would: Option.isSome(found.match) ? ("enrich" as const) : ("create" as const),
        would_match: Option.match(found.match, {
          onNone: () => null,
          onSome: (leadId) => ({ lead_id: leadId, matched_on: "telefono" as const })
        }),
        resolved: {
          organizacion: caller.organizationId,
          origen: caller.originLabel,
          development_id: found.propertyId,
          nombre: input.nombre,
          telefono: input.telefono,
          email: input.email,
          extras: Object.fromEntries(input.extras)
        },
        request_id: request.requestId
      }
    })

    /** 11. What the write did to its lead, as the API answers it, replays included. */
    const replied = Effect.fnUntraced(function* (answer: Answer) {
      const request = yield* CurrentRequest
      yield* request.settle({
        outcome: answer.replay ? "replay" : answer.outcome,
        leadId: answer.leadId,
        headers: answer.replay ? replayedHeaders : {}
      })
      return answerBody(
        answer,
        `${config.dashboardUrl}/leads/${answer.leadId}`,
        request.requestId,
        answer.replay
      )
    })

    /** docs/contract.md#3-order-of-checks from step 8 on (2-7 answered by the admission and the endpoint's schemas). */
    return handlers.handle("createOrEnrich", ({ payload, headers }) =>
      Effect.gen(function* () {
        const caller = yield* Caller
        const input = normalisedLead(payload)
        if (headers["x-service-dry-run"] === "true") {
          return yield* previewed(caller, input, yield* intake.dryRun(caller, input))
        }
        const { requestId } = yield* CurrentRequest
        const key = headers["idempotency-key"]
        const keyed = key === undefined ? undefined : { key, fingerprint: requestFingerprint(payload) }
        return yield* replied(yield* intake.accept(caller, input, requestId, keyed))
      }).pipe(answered)
    )
  })
)
