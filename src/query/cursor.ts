import { badRequest } from '../errors'

/** Where a page of keyset paging ended: the last row's time and id. */
export interface PagePosition {
  createdAt: Date
  id: string
}

/** The largest time a Date holds (ms since 1970): past it, `new Date` is invalid and no query can use it. */
const MAX_TIME = 8.64e15
/** What an id of ours is: printable ASCII. A NUL would reach Postgres, whose text cannot hold one. */
const ID = /^[!-~]{1,200}$/

const refused = () => badRequest('cursor is not one this API gave out; pass the nextCursor of the previous page')

/**
 * The one cursor of every list that pages by keyset: the last row's time and id, and a tag where the
 * route needs one (the sort direction), opaque to callers. A cursor comes back from the caller, so it
 * is checked as any input is: a forged one (a time no Date holds, an id with a NUL) is a 400, not a
 * query that fails in the database.
 */
export const encodeCursor = (position: PagePosition, tag?: string): string =>
  Buffer.from(JSON.stringify([position.createdAt.getTime(), position.id, ...(tag === undefined ? [] : [tag])])).toString(
    'base64url',
  )

export function decodeCursor(raw: string): PagePosition & { tag: string | undefined } {
  let parts: unknown
  try {
    parts = JSON.parse(Buffer.from(raw, 'base64url').toString())
  } catch {
    throw refused()
  }
  if (!Array.isArray(parts) || parts.length < 2 || parts.length > 3) throw refused()
  const [at, id, tag] = parts as unknown[]
  if (!Number.isSafeInteger(at) || (at as number) < 0 || (at as number) > MAX_TIME) throw refused()
  if (typeof id !== 'string' || !ID.test(id)) throw refused()
  if (tag !== undefined && typeof tag !== 'string') throw refused()
  return { createdAt: new Date(at as number), id, tag }
}

/**
 * A page read as `limit + 1` rows after the cursor: the first `limit` of them, and the cursor of the
 * next page when there was one more.
 */
export function keysetPage<R extends PagePosition>(rows: readonly R[], limit: number): { page: R[]; nextCursor: string | null } {
  const page = rows.slice(0, limit)
  const last = page.at(-1)
  return { page, nextCursor: rows.length > limit && last ? encodeCursor(last) : null }
}
