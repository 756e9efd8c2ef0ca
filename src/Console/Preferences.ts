import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { Language } from "../AdminApi/Locale.ts"
import { UnknownEntity } from "../Domain/Errors.ts"
import { defaultTimeZone } from "../Domain/Locale.ts"
import { availableOrFail, decodeFirst, type StoreUnavailable } from "../Platform/Sql/Sql.ts"
import { hashToken } from "./Sessions.ts"

export interface OrganizationSettings {
  readonly id: string
  readonly name: string
  readonly country: string
  /** The IANA zone the console shows the organization's times in: the one an admin set, else its country's. */
  readonly time_zone: string
}

export interface OperatorPreferences {
  /** The language the operator chose in the console; null until they choose. */
  readonly language: Language | null
  /** The operator's organization; null for a platform administrator. */
  readonly organization: OrganizationSettings | null
}

const LanguageColumn = Schema.NullOr(Schema.Literals(["es", "en"]))

const OrganizationRecord = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  country: Schema.String,
  time_zone: Schema.NullOr(Schema.String)
})

const PreferencesRecord = Schema.Struct({
  language: LanguageColumn,
  organization_id: Schema.NullOr(Schema.String),
  name: Schema.NullOr(Schema.String),
  country: Schema.NullOr(Schema.String),
  time_zone: Schema.NullOr(Schema.String)
})

const settingsOf = (row: typeof OrganizationRecord.Type): OrganizationSettings => ({
  id: row.id,
  name: row.name,
  country: row.country,
  time_zone: row.time_zone ?? defaultTimeZone(row.country)
})

/**
 * What the console shows each operator in (docs/contract.md#12-the-console-speaks-its-operators-language):
 * the language they chose, kept with their account, and their organization's time zone.
 */
export class Preferences extends Context.Service<
  Preferences,
  {
    ofOperator(operatorId: string): Effect.Effect<OperatorPreferences, StoreUnavailable>
    /**
     * The saved language and organization country behind a session cookie, for the page shell's
     * `<html lang>`: a hint only, read without extending the session (the API's own calls do that).
     */
    ofSessionToken(
      token: string
    ): Effect.Effect<
      Option.Option<{ readonly language: Language | null; readonly country: string | null }>,
      StoreUnavailable
    >
    setLanguage(operatorId: string, language: Language | null): Effect.Effect<void>
    organization(organizationId: string): Effect.Effect<OrganizationSettings, UnknownEntity>
    /** `timeZone` is a canonical IANA name (the contract checks it). */
    setTimeZone(organizationId: string, timeZone: string): Effect.Effect<OrganizationSettings, UnknownEntity>
  }
>()("lead-intake/Preferences") {
  static readonly layer = Layer.effect(
    Preferences,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const found = (organizationId: string) => (row: Option.Option<typeof OrganizationRecord.Type>) =>
        Option.isNone(row)
          ? Effect.fail(new UnknownEntity({ entity: "organization", id: organizationId }))
          : Effect.succeed(settingsOf(row.value))
      return Preferences.of({
        ofOperator: Effect.fn("Preferences.ofOperator")(function* (operatorId) {
          const row = yield* sql`
            SELECT o.language, g.id AS organization_id, g.name, g.country, g.time_zone
            FROM operators o LEFT JOIN organizations g ON g.id = o.organization_id
            WHERE o.id = ${operatorId}`.pipe(
            Effect.flatMap((rows) => Schema.decodeUnknownEffect(Schema.Array(PreferencesRecord))(rows)),
            availableOrFail("Preferences.ofOperator")
          )
          const [first] = row
          if (first === undefined) return { language: null, organization: null }
          return {
            language: first.language,
            organization:
              first.organization_id === null || first.name === null || first.country === null
                ? null
                : settingsOf({
                    id: first.organization_id,
                    name: first.name,
                    country: first.country,
                    time_zone: first.time_zone
                  })
          }
        }),
        ofSessionToken: Effect.fn("Preferences.ofSessionToken")(function* (token) {
          const rows = yield* sql`
            SELECT o.language, g.country
            FROM operator_sessions s
            JOIN operators o ON o.id = s.operator_id
            LEFT JOIN organizations g ON g.id = o.organization_id
            WHERE s.token_hash = ${hashToken(token)} AND s.revoked_at IS NULL`.pipe(
            Effect.flatMap((rows) =>
              Schema.decodeUnknownEffect(
                Schema.Array(
                  Schema.Struct({ language: LanguageColumn, country: Schema.NullOr(Schema.String) })
                )
              )(rows)
            ),
            availableOrFail("Preferences.ofSessionToken")
          )
          return Option.fromUndefinedOr(rows[0])
        }),
        setLanguage: Effect.fn("Preferences.setLanguage")(function* (operatorId, language) {
          yield* sql`UPDATE operators SET language = ${language} WHERE id = ${operatorId}`.pipe(Effect.orDie)
        }),
        organization: Effect.fn("Preferences.organization")(function* (organizationId) {
          return yield* sql`
            SELECT id, name, country, time_zone FROM organizations WHERE id = ${organizationId}`.pipe(
            decodeFirst(OrganizationRecord),
            Effect.flatMap(found(organizationId))
          )
        }),
        setTimeZone: Effect.fn("Preferences.setTimeZone")(function* (organizationId, timeZone) {
          return yield* sql`
            UPDATE organizations SET time_zone = ${timeZone} WHERE id = ${organizationId}
            RETURNING id, name, country, time_zone`.pipe(
            decodeFirst(OrganizationRecord),
            Effect.flatMap(found(organizationId))
          )
        })
      })
    })
  )
}
