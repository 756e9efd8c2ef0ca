import { DateTime, Effect, Ref, Stream } from "effect"
import { HttpApiSchema } from "effect/http-api"
import { SqlClient } from "effect/sql"
import type { AuditAction } from "../AdminApi/Audit.ts"
import { CurrentOperator } from "../AdminApi/Common.ts"
import type { LeadItem } from "../AdminApi/Leads.ts"
import type { RequestItem } from "../AdminApi/Requests.ts"
import { type CsvValue, csvLine, csvStart } from "../Domain/Csv.ts"
import { Audit } from "./AuditLog.ts"

/** Lines per chunk written: large enough that a big export is not a write per row. */
const linesPerChunk = 500

/** One column of an export: its header and what a row puts in it. */
export type CsvColumn<A> = readonly [header: string, cell: (row: A) => CsvValue]

export const requestColumns: ReadonlyArray<CsvColumn<typeof RequestItem.Type>> = [
  ["request_id", (r) => r.request_id],
  ["at", (r) => r.at],
  ["status", (r) => r.status],
  ["outcome", (r) => r.outcome],
  ["origin_id", (r) => r.origin_id],
  ["origin_label", (r) => r.origin_label],
  ["key_prefix", (r) => r.key_prefix],
  ["idempotency_key", (r) => r.idempotency_key],
  ["lead_id", (r) => r.lead_id],
  // To the microsecond: a timer's float (6.704203999999663) is noise in a spreadsheet.
  ["duration_ms", (r) => Math.round(r.duration_ms * 1000) / 1000],
  ["livemode", (r) => r.livemode],
  ["kept", (r) => r.kept],
  ["rescued_lead_id", (r) => r.rescued_lead_id]
]

export const leadColumns: ReadonlyArray<CsvColumn<typeof LeadItem.Type>> = [
  ["id", (l) => l.id],
  ["nombre", (l) => l.nombre],
  ["telefono", (l) => l.telefono],
  ["email", (l) => l.email],
  ["origin_id", (l) => l.origin.id],
  ["origin_label", (l) => l.origin.label],
  ["created_at", (l) => l.created_at]
]

/**
 * A CSV file of `rows` as text chunks (docs/operators.md#csv-export): the header first, then lines in
 * chunks as the rows arrive. Once the last row is written, `done` gets the count (the export's audit
 * row); an export that fails or is abandoned midway records nothing.
 */
export const csvFile = <A, E, R, E2, R2>(
  columns: ReadonlyArray<CsvColumn<A>>,
  rows: Stream.Stream<A, E, R>,
  done: (rowCount: number) => Effect.Effect<void, E2, R2>
): Stream.Stream<string, E | E2, R | R2> =>
  Stream.unwrap(
    Effect.map(Ref.make(0), (count) =>
      Stream.make(csvStart(columns.map(([header]) => header))).pipe(
        Stream.concat(
          rows.pipe(
            Stream.grouped(linesPerChunk),
            Stream.mapEffect((group) =>
              Effect.as(
                Ref.update(count, (n) => n + group.length),
                group.map((row) => csvLine(columns.map(([, cell]) => cell(row)))).join("")
              )
            )
          )
        ),
        Stream.concat(Stream.fromEffectDrain(Effect.flatMap(Ref.get(count), done)))
      )
    )
  )

/** What an export selected, as its audit row names it: the list, then each filter set (`name=value`). */
export const selectionOf = (list: string, filters: Readonly<Record<string, string | undefined>>) => {
  const set = Object.entries(filters).flatMap(([name, value]) =>
    value === undefined || value === "" ? [] : [`${name}=${value}`]
  )
  return set.length === 0 ? list : `${list} ${set.join(", ")}`
}

/** An export's audit target: what it selected (with its filters), and how many rows it wrote. */
export const exportTarget = (selected: string, rowCount: number) =>
  `${selected}: ${rowCount} ${rowCount === 1 ? "row" : "rows"}`

/**
 * A list exported from the console (docs/operators.md#csv-export): the `csvFile` of `rows` as the
 * response's body, streamed to the browser as PostgreSQL sends the rows, saved as `<name>-<UTC
 * date>.csv`; once the last row is sent, the operator's audit row (`action`, `selected`, the count),
 * under `organizationId` (null: the platform's, as the unattributed requests are no organization's).
 */
export const csvDownload = <A, E>(file: {
  readonly organizationId: string | null
  readonly action: AuditAction
  readonly selected: string
  readonly name: string
  readonly columns: ReadonlyArray<CsvColumn<A>>
  readonly rows: Stream.Stream<A, E, SqlClient.SqlClient>
}) =>
  Effect.gen(function* () {
    const operator = yield* CurrentOperator
    const audit = yield* Audit
    const sql = yield* SqlClient.SqlClient
    const day = DateTime.formatIsoDateUtc(yield* DateTime.now)
    const done = (rowCount: number) =>
      audit.record({
        organizationId: file.organizationId,
        operatorId: operator.id,
        operatorEmail: operator.email,
        action: file.action,
        target: exportTarget(file.selected, rowCount),
        ip: operator.ip
      })
    return HttpApiSchema.withHeaders({
      body: Stream.encodeText(csvFile(file.columns, file.rows, done)).pipe(
        Stream.provideService(SqlClient.SqlClient, sql)
      ),
      headers: { "content-disposition": `attachment; filename="${file.name}-${day}.csv"` }
    })
  })
