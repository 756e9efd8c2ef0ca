import { Effect } from "effect"
import { CurrentOperator } from "../../AdminApi/AdminApi.ts"
import { Audit } from "../AuditLog.ts"
import { organizationGroup } from "../Http/Shared.ts"

export const layerAuditHandlers = organizationGroup(
  "audit",
  Effect.fn(function* (handlers, { organizationOf }) {
    const audit = yield* Audit

    return handlers.handle(
      "audit",
      Effect.fn("Admin.audit.list")(function* ({ query }) {
        const operator = yield* CurrentOperator
        const organization = yield* organizationOf(query.org)
        const page = yield* audit.list(
          { organizationId: organization.id, includePlatform: operator.organizationId === null },
          { ...(query.cursor === undefined ? {} : { cursor: query.cursor }), limit: 50 }
        )
        return {
          items: page.items.map((entry) => ({
            id: entry.id,
            at: entry.at.toISOString(),
            operator_email: entry.operatorEmail,
            action: entry.action,
            target: entry.target,
            ip: entry.ip
          })),
          next_cursor: page.nextCursor
        }
      })
    )
  })
)
