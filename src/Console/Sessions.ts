import { createHash } from "node:crypto"
import { Clock, Context, Duration, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { generateToken } from "../Domain/Password.ts"
import { availableOrFail, decodeSingle, IdRow, type StoreUnavailable } from "../Platform/Sql/Sql.ts"
import type { Operator } from "./Operators.ts"

export interface SessionPolicy {
  /** A session unused this long ends (each use slides it). */
  readonly idle: Duration.Duration
  /** A session ends this long after sign-in, however much it is used. */
  readonly absolute: Duration.Duration
}

export const defaultSessionPolicy: SessionPolicy = {
  idle: Duration.minutes(30),
  absolute: Duration.hours(12)
}

export interface NewSession {
  readonly id: string
  /** The cookie value: returned once, stored only as its SHA-256. */
  readonly token: string
  readonly csrfToken: string
}

export interface ActiveSession {
  readonly id: string
  readonly csrfToken: string
  readonly operator: Operator
}

const SessionRecord = Schema.Struct({
  id: Schema.String,
  csrf_token: Schema.String,
  operator_id: Schema.String,
  email: Schema.String,
  role: Schema.Literals(["admin", "viewer"]),
  organization_id: Schema.NullOr(Schema.String)
})

/** How a session cookie is stored: its SHA-256, never the token. */
export const hashToken = (token: string) => createHash("sha256").update(token, "utf8").digest("hex")

/** Server-side sessions in PostgreSQL, so every instance sees a sign-in and a sign-out at once. */
export class Sessions extends Context.Service<
  Sessions,
  {
    create(input: { readonly operatorId: string; readonly ip: string | null }): Effect.Effect<NewSession>
    /** The live session this token names, its idle expiry pushed back; none when expired or revoked. */
    resolve(token: string): Effect.Effect<Option.Option<ActiveSession>, StoreUnavailable>
    revoke(sessionId: string): Effect.Effect<void>
    /** Ends every session of the operator ("sign out everywhere"). */
    revokeAll(operatorId: string): Effect.Effect<void>
    /** Deletes the sessions that can no longer be used (revoked or expired); returns how many. */
    purge(): Effect.Effect<number>
  }
>()("lead-intake/Sessions") {
  static readonly layerWith = (policy: SessionPolicy) =>
    Layer.effect(
      Sessions,
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const idleMillis = Duration.toMillis(policy.idle)
        const absoluteMillis = Duration.toMillis(policy.absolute)
        const touch = SqlSchema.findOneOption({
          Request: Schema.Struct({ tokenHash: Schema.String, now: Schema.Number }),
          Result: SessionRecord,
          execute: ({ tokenHash, now }) => sql`
            UPDATE operator_sessions s SET last_seen_at = ${new Date(now)}
            FROM operators o
            WHERE s.token_hash = ${tokenHash} AND o.id = s.operator_id AND s.revoked_at IS NULL
              AND s.last_seen_at > ${new Date(now - idleMillis)} AND s.created_at > ${new Date(now - absoluteMillis)}
            RETURNING s.id, s.csrf_token, o.id AS operator_id, o.email, o.role, o.organization_id`
        })
        return Sessions.of({
          create: Effect.fn("Sessions.create")(function* (input) {
            const now = new Date(yield* Clock.currentTimeMillis)
            const token = generateToken()
            const csrfToken = generateToken()
            const row = yield* sql`
              INSERT INTO operator_sessions (operator_id, token_hash, csrf_token, ip, created_at, last_seen_at)
              VALUES (${input.operatorId}, ${hashToken(token)}, ${csrfToken}, ${input.ip}, ${now}, ${now})
              RETURNING id`.pipe(decodeSingle(IdRow))
            return { id: row.id, token, csrfToken }
          }),
          resolve: Effect.fn("Sessions.resolve")(function* (token) {
            const now = yield* Clock.currentTimeMillis
            const found = yield* touch({ tokenHash: hashToken(token), now }).pipe(
              availableOrFail("Sessions.resolve")
            )
            return Option.map(found, (row) => ({
              id: row.id,
              csrfToken: row.csrf_token,
              operator: {
                id: row.operator_id,
                email: row.email,
                role: row.role,
                organizationId: row.organization_id
              }
            }))
          }),
          revoke: Effect.fn("Sessions.revoke")(function* (sessionId) {
            const now = new Date(yield* Clock.currentTimeMillis)
            yield* sql`UPDATE operator_sessions SET revoked_at = ${now} WHERE id = ${sessionId} AND revoked_at IS NULL`.pipe(
              Effect.orDie
            )
          }),
          revokeAll: Effect.fn("Sessions.revokeAll")(function* (operatorId) {
            const now = new Date(yield* Clock.currentTimeMillis)
            yield* sql`UPDATE operator_sessions SET revoked_at = ${now} WHERE operator_id = ${operatorId} AND revoked_at IS NULL`.pipe(
              Effect.orDie
            )
          }),
          purge: Effect.fn("Sessions.purge")(function* () {
            const now = yield* Clock.currentTimeMillis
            const rows = yield* sql`
              DELETE FROM operator_sessions
              WHERE revoked_at IS NOT NULL OR last_seen_at <= ${new Date(now - idleMillis)}
                 OR created_at <= ${new Date(now - absoluteMillis)}
              RETURNING id`.pipe(Effect.orDie)
            return rows.length
          })
        })
      })
    )

  static readonly layer = Sessions.layerWith(defaultSessionPolicy)
}
