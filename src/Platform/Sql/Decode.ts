import { Array as Arr, Effect, Option, Schema } from "effect"
import type { SqlClient, SqlError } from "effect/sql"
import { UnknownEntity } from "../../Domain/Errors.ts"

/**
 * Operator statements: the rows decoded with `row`. Any failure, a row that does not decode
 * included, is a defect: operator commands have no outage to report but the error itself.
 */
export const decodeRows =
  <T, E>(row: Schema.Codec<T, E>) =>
  <R>(
    self: Effect.Effect<ReadonlyArray<unknown>, SqlError.SqlError, R>
  ): Effect.Effect<ReadonlyArray<T>, never, R> =>
    self.pipe(Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(row))), Effect.orDie)

/** The first row decoded with `row`, if there is one. */
export const decodeFirst =
  <T, E>(row: Schema.Codec<T, E>) =>
  <R>(
    self: Effect.Effect<ReadonlyArray<unknown>, SqlError.SqlError, R>
  ): Effect.Effect<Option.Option<T>, never, R> =>
    self.pipe(decodeRows(row), Effect.map(Arr.head))

/** The one row a statement always returns (`INSERT … RETURNING`), decoded with `row`. */
export const decodeSingle =
  <T, E>(row: Schema.Codec<T, E>) =>
  <R>(self: Effect.Effect<ReadonlyArray<unknown>, SqlError.SqlError, R>): Effect.Effect<T, never, R> =>
    self.pipe(
      Effect.flatMap(([first]) => Schema.decodeUnknownEffect(row)(first)),
      Effect.orDie
    )

export const IdRow = Schema.Struct({ id: Schema.String })

const decodeCountRow = Schema.decodeUnknownEffect(Schema.Struct({ n: Schema.Number }))

/** The `n` of a `SELECT count(*)::int AS n` statement; a row that does not decode is a defect. */
export const countOf = <E, R>(
  self: Effect.Effect<ReadonlyArray<unknown>, E, R>
): Effect.Effect<number, E, R> =>
  Effect.flatMap(self, ([row]) => Effect.orDie(Effect.map(decodeCountRow(row), (decoded) => decoded.n)))

const tables = { organization: "organizations", origin: "origins" } as const

/** Fails with `UnknownEntity` when no organization (or origin) has this id. */
export const requireExisting = (sql: SqlClient.SqlClient, entity: keyof typeof tables, id: string) =>
  Effect.flatMap(
    sql`SELECT id FROM ${sql(tables[entity])} WHERE id = ${id}`.pipe(decodeFirst(IdRow)),
    (row) => (Option.isNone(row) ? Effect.fail(new UnknownEntity({ entity, id })) : Effect.void)
  )

/** An HTTP API shows instants as ISO-8601 text; PostgreSQL hands them over as dates. */
const instantsAsText = (value: unknown): unknown =>
  value instanceof Date
    ? value.toISOString()
    : Array.isArray(value)
      ? value.map(instantsAsText)
      : value !== null && typeof value === "object"
        ? Object.fromEntries(Object.entries(value).map(([key, field]) => [key, instantsAsText(field)]))
        : value

/** Rows decoded with the schema an API contract declares for them, so a row type is declared once. */
export const decodeItems =
  <S extends Schema.Top & { readonly DecodingServices: never }>(item: S) =>
  <R>(
    self: Effect.Effect<ReadonlyArray<unknown>, SqlError.SqlError, R>
  ): Effect.Effect<ReadonlyArray<S["Type"]>, never, R> =>
    self.pipe(
      Effect.flatMap((rows) => Schema.decodeUnknownEffect(Schema.Array(item))(instantsAsText(rows))),
      Effect.orDie
    )

/** A value assembled from several statements, decoded with the schema the contract declares for it. */
export const decodeAs = <S extends Schema.Top & { readonly DecodingServices: never }>(
  schema: S,
  value: unknown
) => Schema.decodeUnknownEffect(schema)(instantsAsText(value)).pipe(Effect.orDie) as Effect.Effect<S["Type"]>

export const decodeItem =
  <S extends Schema.Top & { readonly DecodingServices: never }>(item: S) =>
  <R>(
    self: Effect.Effect<ReadonlyArray<unknown>, SqlError.SqlError, R>
  ): Effect.Effect<Option.Option<S["Type"]>, never, R> =>
    self.pipe(
      decodeItems(item),
      Effect.map((rows) => Option.fromNullishOr(rows[0]))
    )
