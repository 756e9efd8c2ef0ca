import { Clock, Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { AuditAction } from "../AdminApi/Audit.ts"
import { decodeRows } from "../Platform/Sql/Sql.ts"

export interface AuditEvent {
  readonly organizationId: string | null
  readonly operatorId: string | null
  readonly operatorEmail: string
  readonly action: AuditAction
  /** What it was done to (an id, a label); never a key or a password. */
  readonly target: string | null
  readonly ip: string | null
}

/** An entry as read back: its action as it was written, whichever release wrote it. */
export interface AuditEntry extends Omit<AuditEvent, "action"> {
  readonly action: string
  readonly id: string
  readonly at: Date
}

export interface AuditPage {
  readonly items: ReadonlyArray<AuditEntry>
  readonly nextCursor: string | null
}

export interface AuditScope {
  readonly organizationId: string
  /** Platform administrators also see what was done outside any organization (their own sign-ins). */
  readonly includePlatform: boolean
}

const AuditRecord = Schema.Struct({
  id: Schema.String,
  at: Schema.Date,
  organization_id: Schema.NullOr(Schema.String),
  operator_id: Schema.NullOr(Schema.String),
  operator_email: Schema.String,
  action: Schema.String,
  target: Schema.NullOr(Schema.String),
  ip: Schema.NullOr(Schema.String)
})

const cursorOf = (cursor: string | undefined) =>
  cursor !== undefined && /^[1-9][0-9]{0,17}$/.test(cursor) ? cursor : null

/** Every operator action, newest first; entries are kept (nothing here deletes them). */
export class Audit extends Context.Service<
  Audit,
  {
    record(event: AuditEvent): Effect.Effect<void>
    list(
      scope: AuditScope,
      options: { readonly cursor?: string; readonly limit: number }
    ): Effect.Effect<AuditPage>
  }
>()("lead-intake/Audit") {
  static readonly layer = Layer.effect(
    Audit,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      return Audit.of({
        record: Effect.fn("Audit.record")(function* (event) {
          const now = new Date(yield* Clock.currentTimeMillis)
          // An action of no organization (a platform administrator's) has a table of its own (migration 0022).
          yield* (
            event.organizationId === null
              ? sql`
                INSERT INTO platform_audit_log (at, operator_id, operator_email, action, target, ip)
                VALUES (${now}, ${event.operatorId}, ${event.operatorEmail}, ${event.action}, ${event.target},
                        ${event.ip})`
              : sql`
                INSERT INTO audit_log (at, organization_id, operator_id, operator_email, action, target, ip)
                VALUES (${now}, ${event.organizationId}, ${event.operatorId}, ${event.operatorEmail},
                        ${event.action}, ${event.target}, ${event.ip})`
          ).pipe(Effect.orDie)
        }),
        list: Effect.fn("Audit.list")(function* (scope, options) {
          const before = cursorOf(options.cursor)
          const rows = yield* sql`
            SELECT id::text, at, organization_id, operator_id, operator_email, action, target, ip FROM (
              (SELECT id, at, organization_id, operator_id, operator_email, action, target, ip FROM audit_log
               WHERE organization_id = ${scope.organizationId}
                 ${before === null ? sql`` : sql`AND id < ${before}::bigint`}
               ORDER BY id DESC LIMIT ${options.limit + 1})
              UNION ALL
              (SELECT id, at, NULL::uuid, operator_id, operator_email, action, target, ip FROM platform_audit_log
               WHERE ${scope.includePlatform ? sql`true` : sql`false`}
                 ${before === null ? sql`` : sql`AND id < ${before}::bigint`}
               ORDER BY id DESC LIMIT ${options.limit + 1})
            ) entries
            ORDER BY entries.id DESC
            LIMIT ${options.limit + 1}`.pipe(decodeRows(AuditRecord))
          const items = rows.slice(0, options.limit).map((row) => ({
            id: row.id,
            at: row.at,
            organizationId: row.organization_id,
            operatorId: row.operator_id,
            operatorEmail: row.operator_email,
            action: row.action,
            target: row.target,
            ip: row.ip
          }))
          return { items, nextCursor: rows.length > options.limit ? (items.at(-1)?.id ?? null) : null }
        })
      })
    })
  )
}
