import { Elysia } from 'elysia'
import { ApiError } from '../errors'
import { errorResponse } from './error-mapper'

/**
 * Text gw stores must be text both databases hold: Postgres refuses the NUL character anywhere in a
 * text or JSON value (SQLite takes it), and a statement that failed on it answered 500 and lost the
 * attempt's audit entry. It is refused here, at the edge, for every route: in the URL (path
 * parameters and query) by `storableUrl`, and in a management body by `refuseUnstorable`. A gateway
 * body is stored as the caller's raw JSON, where a NUL is an escape sequence (or the body is not JSON
 * and is answered 400); the fields gw reads from it are checked where they are read.
 */
const NUL = '\u0000'
const ENCODED_NUL = /%00/i

const unstorable = (where: string) =>
  new ApiError('bad_request', `${where} holds the NUL character (\\u0000), which gw does not store; remove it`)

/** Where in a parsed body a NUL is, as a dotted path (`""` for the body itself); undefined when there is none. */
export function nulAt(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return value.includes(NUL) ? path : undefined
  if (typeof value !== 'object' || value === null) return undefined
  for (const [key, item] of Object.entries(value)) {
    const at = path === '' ? key : `${path}.${key}`
    if (key.includes(NUL)) return at
    const found = nulAt(item, at)
    if (found !== undefined) return found
  }
  return undefined
}

/** Throws the caller's 400 when a parsed body holds a NUL anywhere, naming where. */
export function refuseUnstorable(body: unknown): void {
  const at = nulAt(body)
  if (at !== undefined) throw unstorable(at === '' ? 'the body' : `the body at "${at}"`)
}

/** Refuses, before routing, a request whose path or query holds an encoded NUL (a raw one is no valid URL). */
export const storableUrl = new Elysia({ name: 'storable-url' }).onRequest(({ request }) => {
  const url = request.url
  if (!ENCODED_NUL.test(url)) return
  const { pathname } = new URL(url)
  return errorResponse(pathname, unstorable('the path or the query'))
})
