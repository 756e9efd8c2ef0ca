import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { RequestLog, type RequestLogRow } from "../Intake/RequestLog.ts"
import * as Input from "./Input.ts"
import { emit, orDash, table } from "./Output.ts"
import { withOperator } from "./Services.ts"

const view = (row: RequestLogRow) => ({
  request_id: row.requestId,
  at: new Date(row.at).toISOString(),
  status: row.status,
  outcome: row.outcome,
  lead_id: row.leadId,
  key_prefix: row.keyPrefix,
  idempotency_key: row.idempotencyKey,
  duration_ms: row.durationMs,
  livemode: row.livemode
})

export const requests = Command.make(
  "requests",
  {
    origin: Input.id("origin", "origin").pipe(
      Flag.withDescription("Requests made with this origin's keys (revoked ones included)"),
      Flag.optional
    ),
    unattributed: Flag.Boolean("unattributed").pipe(
      Flag.withDescription("Requests whose key prefix matches no origin"),
      Flag.withDefault(false)
    ),
    limit: Input.limit
  },
  Effect.fn("Cli.requests")(function* ({ origin, unattributed, limit }) {
    const scope = yield* Input.exactlyOne(
      ["origin", origin],
      ["unattributed", unattributed ? Option.some(true) : Option.none()]
    )
    const rows = yield* Effect.gen(function* () {
      const log = yield* RequestLog
      return yield* log.list(
        scope._tag === "first" ? { originId: scope.value } : { unattributed: true },
        limit
      )
    }).pipe(withOperator)
    yield* emit(rows.map(view), (rows) =>
      table(
        ["AT", "STATUS", "OUTCOME", "MODE", "LEAD", "KEY PREFIX", "IDEMPOTENCY KEY", "MS", "REQUEST"],
        rows.map((r) => [
          r.at,
          String(r.status),
          r.outcome,
          r.livemode ? "live" : "test",
          orDash(r.lead_id),
          orDash(r.key_prefix),
          orDash(r.idempotency_key),
          r.duration_ms.toFixed(1),
          r.request_id
        ]),
        "No requests."
      )
    )
  })
).pipe(Command.withDescription("The request log, newest first"))
