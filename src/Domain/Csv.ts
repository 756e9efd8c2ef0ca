/**
 * CSV as a spreadsheet opens it (docs/operators.md#csv-export): UTF-8 with a byte-order mark (Excel
 * reads the file as UTF-8 only with it), CRLF line ends, a field quoted when it holds a comma, a
 * quote, or a line break, and a cell that a spreadsheet would run as a formula (it starts with
 * = + - @, a tab or a carriage return) prefixed with an apostrophe, so a partner's "=HYPERLINK(…)"
 * stays text. RFC 4180 and the guard fit in these few lines, so no CSV library is needed.
 */

export const byteOrderMark = "\uFEFF"

const formulaStart = /^[=+\-@\t\r]/
const needsQuotes = /[",\r\n]/

export type CsvValue = string | number | boolean | null | undefined

/** One cell: `null` and `undefined` are empty; numbers and booleans as written. */
export const csvCell = (value: CsvValue): string => {
  if (value === null || value === undefined) return ""
  if (typeof value !== "string") return String(value)
  const text = formulaStart.test(value) ? `'${value}` : value
  return needsQuotes.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/** One line, with its CRLF. */
export const csvLine = (cells: ReadonlyArray<CsvValue>): string => `${cells.map(csvCell).join(",")}\r\n`

/** The first chunk of a file: the byte-order mark and the header line. */
export const csvStart = (header: ReadonlyArray<string>): string => `${byteOrderMark}${csvLine(header)}`
