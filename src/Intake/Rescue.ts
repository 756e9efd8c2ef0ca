import { Context, Data, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { UnknownEntity } from "../Domain/Errors.ts"
import type { LeadInput } from "../Domain/LeadInput.ts"
import { AppConfig } from "../Platform/Config.ts"
import { decodeFirst } from "../Platform/Sql/Decode.ts"
import type { OutcomeUnknown, StoreUnavailable } from "../Platform/Sql/Sql.ts"
import { answerBody, LeadIntake } from "./LeadIntake.ts"
import type { UnknownProperty } from "./PropertyCatalog.ts"

/** A request-log row with the body kept for rescue, if any (admins' data). */
export const KeptRequest = Schema.Struct({
  request_id: Schema.String,
  at: Schema.Date,
  status: Schema.Number,
  outcome: Schema.String,
  origin_id: Schema.NullOr(Schema.String),
  key_prefix: Schema.NullOr(Schema.String),
  livemode: Schema.Boolean,
  body: Schema.NullOr(Schema.String),
  rescued_lead_id: Schema.NullOr(Schema.String)
})
export type KeptRequest = typeof KeptRequest.Type

const RescueRow = Schema.Struct({
  id: Schema.String,
  request_id: Schema.String,
  origin_id: Schema.NullOr(Schema.String),
  organization_id: Schema.NullOr(Schema.String),
  country: Schema.NullOr(Schema.String),
  livemode: Schema.Boolean,
  kept: Schema.Boolean,
  rescued_lead_id: Schema.NullOr(Schema.String)
})

/** A request that cannot be rescued: nothing is kept for it, or it was rescued already. */
export class NotRescuable extends Data.TaggedError("NotRescuable")<{
  readonly reason: "nothing_kept" | "already_rescued"
  readonly requestId: string
  readonly leadId: string | null
}> {
  override get message() {
    return this.reason === "already_rescued"
      ? `request ${this.requestId} was already rescued as lead ${this.leadId}`
      : `request ${this.requestId} keeps no body to rescue`
  }
}

export type RescueFailure = UnknownProperty | NotRescuable | UnknownEntity | StoreUnavailable | OutcomeUnknown

/** What a rescue answers: the API's own `LeadCreated` or `LeadEnriched`, plus the rescued request's organization. */
export interface Rescued {
  readonly organizationId: string
  readonly answer: ReturnType<typeof answerBody>
}

/**
 * Rejected leads kept for rescue (docs/contract.md#11-rejected-leads-are-kept-for-rescue): a
 * request's kept body, and its rescue. The caller decodes the corrected body as the endpoint does
 * (`decodeLeadBody` in src/Api/LeadBody.ts: its schema, its first failing field, its normalisation);
 * the lead is written by `LeadIntake`, the endpoint's own write, attributed to the request's origin
 * and mode, with no rate limit and no Idempotency-Key. `rescue_lead` makes it at most once; the
 * caller records who did it in the audit trail.
 */
export class Rescues extends Context.Service<
  Rescues,
  {
    /** The newest request-log row with this request id, with its kept body. */
    show(
      requestId: string
    ): Effect.Effect<KeptRequest & { readonly organization_id: string | null }, UnknownEntity>
    rescue(requestId: string, corrected: LeadInput): Effect.Effect<Rescued, RescueFailure>
  }
>()("lead-intake/Rescues") {
  /** Needs `SqlClient`, `AppConfig`, `PropertyCatalog`, `LeadRepository` and `IdempotencyStore`. */
  static readonly layer = Layer.effect(
    Rescues,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const config = yield* AppConfig
      const intake = yield* LeadIntake

      const findRow = (requestId: string) =>
        sql`
          SELECT r.id::text AS id, r.request_id, r.origin_id, o.organization_id, g.country::text AS country,
                 r.livemode, r.kept_body IS NOT NULL AS kept, r.rescued_lead_id
          FROM logged_requests r
          LEFT JOIN origins o ON o.id = r.origin_id AND o.organization_id = r.organization_id
          LEFT JOIN organizations g ON g.id = o.organization_id
          WHERE r.request_id = ${requestId}
          ORDER BY r.id DESC LIMIT 1`.pipe(decodeFirst(RescueRow))

      const notRescuable = (row: typeof RescueRow.Type) =>
        new NotRescuable({
          reason: row.rescued_lead_id === null ? "nothing_kept" : "already_rescued",
          requestId: row.request_id,
          leadId: row.rescued_lead_id
        })

      return Rescues.of({
        show: Effect.fn("Rescues.show")(function* (requestId) {
          const found = yield* sql`
            SELECT r.request_id, r.at, r.status, r.outcome, r.origin_id, r.key_prefix, r.livemode,
                   r.kept_body AS body, r.rescued_lead_id, o.organization_id
            FROM logged_requests r LEFT JOIN origins o ON o.id = r.origin_id AND o.organization_id = r.organization_id
            WHERE r.request_id = ${requestId}
            ORDER BY r.id DESC LIMIT 1`.pipe(
            decodeFirst(
              Schema.Struct({ ...KeptRequest.fields, organization_id: Schema.NullOr(Schema.String) })
            )
          )
          if (Option.isNone(found)) return yield* new UnknownEntity({ entity: "request", id: requestId })
          return found.value
        }),

        rescue: Effect.fn("Rescues.rescue")(function* (requestId, corrected) {
          const found = yield* findRow(requestId)
          if (Option.isNone(found)) return yield* new UnknownEntity({ entity: "request", id: requestId })
          const row = found.value
          if (!row.kept || row.origin_id === null || row.organization_id === null || row.country === null)
            return yield* notRescuable(row)
          const writer = {
            organizationId: row.organization_id,
            originId: row.origin_id,
            country: row.country,
            livemode: row.livemode
          }
          const written = yield* intake.rescue(writer, corrected, row.request_id, row.id)
          if (Option.isNone(written)) {
            const now = yield* findRow(requestId)
            return yield* notRescuable(Option.getOrElse(now, () => row))
          }
          const leadId = written.value.leadId
          return {
            organizationId: row.organization_id,
            answer: answerBody(written.value, `${config.dashboardUrl}/leads/${leadId}`, row.request_id, false)
          }
        })
      })
    })
  ).pipe(Layer.provide(LeadIntake.layer))
}
