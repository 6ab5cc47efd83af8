import { ApiError, payloadTooLarge, unavailable, unparsableBody } from '../errors'
import { bodyProblem } from './storable-text'

/** Management bodies are settings and filters: a megabyte is far beyond any of them. */
export const MANAGEMENT_BODY_BYTES = 1024 * 1024

/**
 * A request's body as bytes, refused with 413 past `limit` whether or not the caller announced its
 * length: an announced length over the limit is refused before a byte is read, and a body sent in
 * chunks is read only up to the limit, then dropped.
 */
export async function readBody(request: Request, limit: number): Promise<Uint8Array> {
  const announced = announcedLength(request)
  if (announced !== undefined && announced > limit) throw payloadTooLarge(limit)
  if (!request.body) return new Uint8Array(0)
  if (announced !== undefined) {
    // The server holds the client to its announced length: one read, one buffer.
    return new Uint8Array(await request.arrayBuffer())
  }
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { value, done } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => undefined)
      throw payloadTooLarge(limit)
    }
    chunks.push(value)
  }
  if (chunks.length === 1) return chunks[0] as Uint8Array
  const whole = new Uint8Array(size)
  let at = 0
  for (const chunk of chunks) {
    whole.set(chunk, at)
    at += chunk.byteLength
  }
  return whole
}

/** The Content-Length a request announces; `undefined` when it announces none (a chunked body). */
export function announcedLength(request: Request): number | undefined {
  const header = request.headers.get('content-length')
  if (header === null) return undefined
  const length = Number(header)
  return Number.isSafeInteger(length) && length >= 0 ? length : undefined
}

/**
 * How many body bytes the gateway holds at once, across all calls. A call's body is held whole while
 * it is read, decoded, parsed and sent on (about four times its size in memory), so without a bound twelve
 * 20 MB bodies took the process to gigabytes. A call whose body does not fit waits for room, in
 * arrival order, up to `maxWaitMs`, then is answered 503 with a Retry-After. A body larger than the
 * whole budget is let in alone, when nothing else is held.
 */
export class BodyBudget {
  private held = 0
  private readonly waiting: Array<{ bytes: number; admit: () => void }> = []

  constructor(
    readonly capacity: number,
    /** Long enough for a few maximum bodies ahead to be read and sent on, on a slow machine. */
    private readonly maxWaitMs = 30_000,
  ) {}

  /** Holds `bytes` of the budget, waiting for room; answers the function that gives them back (once). */
  async hold(bytes: number): Promise<() => void> {
    if (this.waiting.length > 0 || !this.fits(bytes)) await this.wait(bytes)
    else this.held += bytes
    let released = false
    return () => {
      if (released) return
      released = true
      this.held -= bytes
      this.admitWaiting()
    }
  }

  get inUse(): number {
    return this.held
  }

  private fits(bytes: number): boolean {
    return this.held === 0 || this.held + bytes <= this.capacity
  }

  private wait(bytes: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const entry = {
        bytes,
        admit: () => {
          clearTimeout(timer)
          this.held += bytes
          resolve()
        },
      }
      const timer = setTimeout(() => {
        const at = this.waiting.indexOf(entry)
        if (at >= 0) this.waiting.splice(at, 1)
        this.admitWaiting()
        reject(unavailable('the gateway is holding as many request bodies as it may', 1))
      }, this.maxWaitMs)
      this.waiting.push(entry)
    })
  }

  /** Lets in waiting calls in arrival order while they fit: a large body is not overtaken forever by small ones. */
  private admitWaiting(): void {
    while (this.waiting.length > 0 && this.fits((this.waiting[0] as { bytes: number }).bytes)) {
      ;(this.waiting.shift() as { admit: () => void }).admit()
    }
  }
}

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
  return body
}
