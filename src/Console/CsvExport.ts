import { Effect, Ref, Stream } from "effect"
import type { LeadItem } from "../AdminApi/Leads.ts"
import type { RequestItem } from "../AdminApi/Requests.ts"
import { type CsvValue, csvLine, csvStart } from "../Domain/Csv.ts"

/** Lines per chunk written: large enough that a big export is not a write per row. */
const linesPerChunk = 500

/** One column of an export: its header and what a row puts in it. */
type CsvColumn<A> = readonly [header: string, cell: (row: A) => CsvValue]

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
  ["duration_ms", (r) => r.duration_ms],
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
