import { Elysia } from 'elysia'
import { errorResponse } from '../error-answers'
import { ApiError } from '../errors'
import { errorFamily } from '../gateway/dispatch-routes'

/**
 * Text gw stores must be text both databases hold. Postgres refuses the NUL character anywhere in a
 * text or JSON value, and an unpaired UTF-16 surrogate (`"\ud800"` in JSON) in a JSON value (SQLite
 * takes both): a statement that failed on one answered 500 and lost the attempt's audit entry. Such
 * text is refused here, at the edge, for every route: in the URL (path parameters and query) by
 * `storableUrl`, in a management body by `bodyProblem`. A gateway body is stored as the caller's raw
 * text, where both can only be escape sequences; the fields gw reads from it are checked where they
 * are read (`gateway/steps/read-call.ts`).
 */
const NUL = '\u0000'
const ENCODED_NUL = /%00/i

const unstorable = (text: string) => text.includes(NUL) || !text.isWellFormed()

const UNSTORABLE = 'holds a NUL character or an unpaired surrogate, which gw does not store; remove it'

/**
 * How deep a management body may nest. The deepest real one (a saved filter's tree of conditions) is
 * far shallower; a body thousands of levels deep cost seconds of the event loop to describe when it
 * failed its schema.
 */
export const MAX_BODY_DEPTH = 64

/** Why a parsed management body cannot be taken, naming where; undefined when it can. */
export function bodyProblem(value: unknown, path = '', depth = 0): string | undefined {
  const where = path === '' ? 'the body' : `the body at "${path}"`
  if (typeof value === 'string') return unstorable(value) ? `${where} ${UNSTORABLE}` : undefined
  if (typeof value !== 'object' || value === null) return undefined
  if (depth >= MAX_BODY_DEPTH) return `the body is nested deeper than ${MAX_BODY_DEPTH} levels`
  for (const [key, item] of Object.entries(value)) {
    const at = path === '' ? key : `${path}.${key}`
    if (unstorable(key)) return `the body has a field name that ${UNSTORABLE}`
    const found = bodyProblem(item, at, depth + 1)
    if (found !== undefined) return found
  }
  return undefined
}

/** Refuses, before routing, a request whose path or query holds an encoded NUL (a raw one is no valid URL). */
export const storableUrl = new Elysia({ name: 'storable-url' }).onRequest(({ request }) => {
  const url = request.url
  if (!ENCODED_NUL.test(url)) return
  const { pathname } = new URL(url)
  return errorResponse(errorFamily(pathname, request.method), new ApiError('bad_request', `the path or the query ${UNSTORABLE}`))
})
