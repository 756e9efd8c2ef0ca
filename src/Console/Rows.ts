import { Option } from "effect"

export { decodeAs, decodeItem, decodeItems } from "../Platform/Sql/Sql.ts"

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** An id that is not a UUID names nothing: the same 404 as an id of another organization. */
export const isUuid = (id: string) => uuidPattern.test(id)

export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly next_cursor: string | null
}

type CursorKind = "request" | "lead"

const cursorIdPatterns: Record<CursorKind, RegExp> = { request: /^[0-9]{1,18}$/, lead: uuidPattern }

/** Keyset cursors: the last row's sort key, opaque to the client. */
export const encodeCursor = (at: string, id: string) =>
  Buffer.from(JSON.stringify([at, id])).toString("base64url")

export const decodeCursor = (
  cursor: string | undefined,
  kind: CursorKind
): Option.Option<readonly [Date, string]> => {
  if (cursor === undefined) return Option.none()
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as [unknown, unknown]
    const date = typeof at === "string" ? new Date(at) : new Date(Number.NaN)
    return Number.isNaN(date.getTime()) || typeof id !== "string" || !cursorIdPatterns[kind].test(id)
      ? Option.none()
      : Option.some([date, id] as const)
  } catch {
    return Option.none()
  }
}

export const isValidCursor = (cursor: string | undefined, kind: CursorKind) =>
  cursor === undefined || Option.isSome(decodeCursor(cursor, kind))

/** `text` as a literal inside an ILIKE pattern. */
export const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

/** The page of `limit` rows out of `limit + 1` read, and the cursor after its last row when more remain. */
export const pageOf = <A>(rows: ReadonlyArray<A>, limit: number, cursorOf: (last: A) => string): Page<A> => {
  const items = rows.slice(0, limit)
  const last = items.at(-1)
  return { items, next_cursor: rows.length > limit && last !== undefined ? cursorOf(last) : null }
}
