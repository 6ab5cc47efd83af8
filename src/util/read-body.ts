/**
 * Request bodies read as bytes within a limit, and a budget on the bytes all requests in flight hold
 * together: what keeps a flood of large bodies from taking the process's memory.
 */
import { payloadTooLarge, unavailable } from '../errors'
import type { ValueOrPromise } from './value-or-promise'

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

/**
 * A request's body as text, within the same limit as `readBody`. A body of announced length is read
 * and decoded by the runtime in one step; one sent in chunks is read as bytes, then decoded.
 */
export async function readBodyText(request: Request, limit: number): Promise<string> {
  const announced = announcedLength(request)
  if (announced !== undefined && announced > limit) throw payloadTooLarge(limit)
  if (!request.body) return ''
  if (announced !== undefined) return await request.text()
  return decoder.decode(await readBody(request, limit))
}

const decoder = new TextDecoder()

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

  /**
   * Holds `bytes` of the budget, waiting for room; answers the function that gives them back (once).
   * With room, at once.
   */
  hold(bytes: number): ValueOrPromise<() => void> {
    if (this.waiting.length > 0 || !this.fits(bytes)) return this.wait(bytes).then(() => this.releaser(bytes))
    this.held += bytes
    return this.releaser(bytes)
  }

  private releaser(bytes: number): () => void {
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

/**
 * An answer's body as text, or undefined (the rest not read) once it passes `limit` bytes: the server
 * that sends it decides its size, not gw's memory.
 */
export async function boundedText(response: Response, limit: number): Promise<string | undefined> {
  const reader = response.body?.getReader()
  if (!reader) return ''
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => undefined)
      return undefined
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString('utf8')
}
