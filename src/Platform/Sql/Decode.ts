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
