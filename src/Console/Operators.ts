import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { Rejected, UnknownEntity } from "../Domain/Errors.ts"
import { decoyHash, generatePassword, hashPassword, needsRehash, verifyPassword } from "../Domain/Password.ts"
import { decodeFirst, requireExisting } from "../Platform/Sql/Sql.ts"

export type Role = "admin" | "viewer"

export interface Operator {
  readonly id: string
  readonly email: string
  readonly role: Role
  /** Null for a platform administrator (every organization). */
  readonly organizationId: string | null
}

export interface OperatorWithPassword extends Operator {
  /** Generated, returned this once; only its scrypt hash is stored. */
  readonly password: string
}

export const normalizeEmail = (email: string) => email.trim().toLowerCase()

const OperatorRecord = Schema.Struct({
  id: Schema.String,
  email: Schema.String,
  role: Schema.Literals(["admin", "viewer"]),
  organization_id: Schema.NullOr(Schema.String)
})

const CredentialRecord = Schema.Struct({ ...OperatorRecord.fields, password_hash: Schema.String })

const decodeOperator = Schema.decodeUnknownEffect(OperatorRecord)

const emailPattern = /^[^\s@]+@[^\s@]+$/

const checkEmail = (email: string) =>
  emailPattern.test(email) && email.length <= 254
    ? Effect.void
    : Effect.fail(new Rejected({ reason: `"${email}" is not an e-mail address` }))

const hash = (password: string) => Effect.promise(() => hashPassword(password))

/**
 * Checks the password against the stored hash, or against a decoy when there is no such
 * operator, so an unknown e-mail answers in the same time as a wrong password.
 */
const verify = (password: string, stored: string | undefined) =>
  Effect.promise(async () => {
    const matches = await verifyPassword(password, stored ?? (await decoyHash()))
    return stored !== undefined && matches
  })

export class Operators extends Context.Service<
  Operators,
  {
    add(input: {
      readonly organizationId: string | null
      readonly email: string
      readonly role: Role
    }): Effect.Effect<OperatorWithPassword, UnknownEntity | Rejected>
    resetPassword(email: string): Effect.Effect<OperatorWithPassword, UnknownEntity>
    /** Removes the account and ends its sessions. */
    remove(email: string): Effect.Effect<Operator, UnknownEntity>
    /** The operator with this e-mail, if any (no password check: for the audit trail, never for signing in). */
    find(email: string): Effect.Effect<Option.Option<Operator>>
    /** The operator whose e-mail and password these are; takes as long whether or not the e-mail exists. */
    authenticate(email: string, password: string): Effect.Effect<Option.Option<Operator>>
  }
>()("lead-intake/Operators") {
  static readonly layer = Layer.effect(
    Operators,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* Effect.promise(decoyHash)
      const view = (row: typeof OperatorRecord.Type): Operator => ({
        id: row.id,
        email: row.email,
        role: row.role,
        organizationId: row.organization_id
      })
      return Operators.of({
        add: Effect.fn("Operators.add")(function* (input) {
          const email = normalizeEmail(input.email)
          yield* checkEmail(email)
          if (input.organizationId !== null) yield* requireExisting(sql, "organization", input.organizationId)
          const password = generatePassword()
          const passwordHash = yield* hash(password)
          const row = yield* sql`
            INSERT INTO operators (organization_id, email, role, password_hash)
            VALUES (${input.organizationId}, ${email}, ${input.role}, ${passwordHash})
            RETURNING id, email, role, organization_id`.pipe(
            Effect.catchIf(
              (error) => error.reason._tag === "UniqueViolation",
              () => Effect.fail(new Rejected({ reason: `an operator with e-mail ${email} already exists` }))
            ),
            Effect.catchTag("SqlError", Effect.die),
            Effect.flatMap(([row]) => Effect.orDie(decodeOperator(row)))
          )
          return { ...view(row), password }
        }),
        resetPassword: Effect.fn("Operators.resetPassword")(function* (rawEmail) {
          const email = normalizeEmail(rawEmail)
          const password = generatePassword()
          const passwordHash = yield* hash(password)
          const now = new Date(yield* Clock.currentTimeMillis)
          const row = yield* sql
            .withTransaction(
              Effect.gen(function* () {
                const row = yield* sql`
                UPDATE operators SET password_hash = ${passwordHash} WHERE email = ${email}
                RETURNING id, email, role, organization_id`.pipe(decodeFirst(OperatorRecord))
                if (Option.isSome(row)) {
                  yield* sql`UPDATE operator_sessions SET revoked_at = ${now} WHERE operator_id = ${row.value.id} AND revoked_at IS NULL`
                }
                return row
              })
            )
            .pipe(Effect.orDie)
          if (Option.isNone(row)) return yield* new UnknownEntity({ entity: "operator", id: email })
          return { ...view(row.value), password }
        }),
        remove: Effect.fn("Operators.remove")(function* (rawEmail) {
          const email = normalizeEmail(rawEmail)
          const row = yield* sql`
            DELETE FROM operators WHERE email = ${email} RETURNING id, email, role, organization_id`.pipe(
            decodeFirst(OperatorRecord)
          )
          if (Option.isNone(row)) return yield* new UnknownEntity({ entity: "operator", id: email })
          return view(row.value)
        }),
        find: Effect.fn("Operators.find")(function* (rawEmail) {
          const row = yield* sql`
            SELECT id, email, role, organization_id FROM operators WHERE email = ${normalizeEmail(rawEmail)}`.pipe(
            decodeFirst(OperatorRecord)
          )
          return Option.map(row, view)
        }),
        authenticate: Effect.fn("Operators.authenticate")(function* (rawEmail, password) {
          const row = yield* sql`
            SELECT id, email, role, organization_id, password_hash FROM operators
            WHERE email = ${normalizeEmail(rawEmail)}`.pipe(decodeFirst(CredentialRecord))
          const matches = yield* verify(password, Option.getOrUndefined(row)?.password_hash)
          if (!matches || Option.isNone(row)) return Option.none()
          const stored = row.value.password_hash
          if (needsRehash(stored)) {
            const fresh = yield* hash(password)
            yield* sql`UPDATE operators SET password_hash = ${fresh} WHERE id = ${row.value.id} AND password_hash = ${stored}`.pipe(
              Effect.orDie
            )
          }
          return Option.some(view(row.value))
        })
      })
    })
  )
}
