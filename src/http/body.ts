import { ApiError, unparsableBody } from '../errors'
import { readBody } from '../util/read-body'
import { bodyProblem } from './storable-text'

/** Management bodies are settings and filters: a megabyte is far beyond any of them. */
export const MANAGEMENT_BODY_BYTES = 1024 * 1024

const decoder = new TextDecoder()

const mediaType = (contentType: string) => contentType.split(';')[0]?.trim().toLowerCase() ?? ''
const isJson = (contentType: string) => {
  const type = mediaType(contentType)
  return type === 'application/json' || type.endsWith('+json')
}

/**
 * A management body, from bytes already read within the limit: JSON for JSON (refused with 400 when
 * it does not parse), fields for a form, and the text otherwise (then refused for not being an object).
 */
async function parseBody(bytes: Uint8Array, contentType: string): Promise<unknown> {
  const type = mediaType(contentType)
  if (type === 'multipart/form-data') return new Response(bytes, { headers: { 'content-type': contentType } }).formData()
  const text = decoder.decode(bytes)
  if (isJson(contentType)) {
    try {
      return JSON.parse(text)
    } catch {
      throw unparsableBody()
    }
  }
  if (type === 'application/x-www-form-urlencoded') return Object.fromEntries(new URLSearchParams(text))
  return text
}

/** The text any object has; given to the objects that cannot make it themselves. */
function objectText(this: object): string {
  return Object.prototype.toString.call(this)
}

/**
 * A JSON object with a field named `toString` cannot be turned into text: `${value}` throws a TypeError,
 * the field not being a function. Elysia's validator does just that to describe a value of the wrong type
 * (`{"name": {"toString": "x"}}`), and the caller's mistake was answered 500. Such an object gets the
 * text every object has (`[object Object]`) through `Symbol.toPrimitive`, a key that no schema, no
 * JSON and no spread sees. The body is at most MAX_BODY_DEPTH deep by now.
 */
function printable(value: unknown): void {
  if (typeof value !== 'object' || value === null) return
  if (Object.hasOwn(value, 'toString')) Object.defineProperty(value, Symbol.toPrimitive, { value: objectText })
  for (const item of Object.values(value)) printable(item)
}

/**
 * An Elysia `parse` hook: the body read within the management limit and parsed by its content type.
 * Every management body is an object; one that is not, that nests too deep, or that holds text the
 * store cannot hold is refused here with a 400 saying so, before the route's schema sees it (a schema
 * failing on a huge string or a deep array took seconds to describe).
 */
export const parseManagementBody = async ({ request, contentType }: { request: Request; contentType: string }) => {
  const bytes = await readBody(request, MANAGEMENT_BODY_BYTES)
  // No body at all (a DELETE, say): the route's schema decides whether it needed one.
  if (bytes.length === 0 && !isJson(contentType)) return undefined
  const body = await parseBody(bytes, contentType)
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new ApiError('bad_request', 'the request body must be a JSON object')
  const problem = bodyProblem(body)
  if (problem !== undefined) throw new ApiError('bad_request', problem)
  printable(body)
  return body
}
