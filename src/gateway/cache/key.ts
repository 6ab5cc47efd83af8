/** What names a cached answer: whose it is, which of its variants, and the call that made it. */
export interface CacheKeyInput {
  orgId: string
  /** The caller's cache seed, to keep apart answers to the same call; absent is the same as ''. */
  seed?: string | undefined
  /** The dispatch path called (`/v1/chat/completions`, ...). */
  path: string
  /** The call's body as parsed from JSON. */
  body: Record<string, unknown>
}

/**
 * Changing the encoding below must change this, so that keys written by an older gw are never read as
 * the new encoding's keys.
 */
const VERSION = 'gw-cache-key-1'
/** How much canonical text is gathered before it goes to the hash: a few large updates, not one per value. */
const FLUSH_AT = 64 * 1024

/**
 * The key of a call in the response cache: a hex SHA-256 of its organisation, seed, path and body. The
 * first three go in as one JSON array, which closes before the body starts, so no two of them can trade
 * characters (`org "a", seed "bc"` is not `org "ab", seed "c"`). The body goes in canonical form: the
 * same JSON text for the same value whatever order its keys came in.
 */
export function cacheKey({ orgId, seed, path, body }: CacheKeyInput): string {
  const hasher = new Bun.CryptoHasher('sha256')
  hasher.update(`${VERSION}\n${JSON.stringify([orgId, seed ?? '', path])}\n`)
  writeCanonical(body, (text) => hasher.update(text))
  return hasher.digest('hex')
}

type Frame =
  | { kind: 'array'; value: object; items: readonly unknown[]; next: number }
  | { kind: 'object'; value: object; entries: Record<string, unknown>; keys: string[]; next: number; wrote: boolean }

/** What JSON.stringify leaves out of an object (and writes as null in an array). */
const omitted = (value: unknown) =>
  value === undefined || typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint'

/**
 * Writes `root` as JSON with every object's keys sorted (by UTF-16 code units, as Array.prototype.sort
 * does), arrays in order, and strings, numbers, booleans and null as JSON.stringify writes them. A
 * parsed body can nest as deep as its size allows, far beyond the call stack, so this walks it with a
 * stack of its own instead of recursing. A cycle, which no parsed body has, is refused as
 * JSON.stringify refuses it, instead of running on.
 */
export function writeCanonical(root: unknown, write: (text: string) => void): void {
  let pending = ''
  const out = (text: string) => {
    pending += text
    if (pending.length >= FLUSH_AT) {
      write(pending)
      pending = ''
    }
  }
  const stack: Frame[] = []
  const open = new Set<object>()

  const begin = (value: unknown) => {
    if (value === null || typeof value !== 'object') {
      // Non-finite numbers come out as null, as in JSON; what JSON cannot hold reaches here only inside
      // an array, where JSON writes null too.
      out(omitted(value) ? 'null' : (JSON.stringify(value) ?? 'null'))
      return
    }
    if (open.has(value)) throw new TypeError('a cache key cannot be made of a body that contains itself')
    open.add(value)
    if (Array.isArray(value)) {
      stack.push({ kind: 'array', value, items: value, next: 0 })
      out('[')
    } else {
      const entries = value as Record<string, unknown>
      stack.push({ kind: 'object', value, entries, keys: Object.keys(entries).sort(), next: 0, wrote: false })
      out('{')
    }
  }

  begin(root)
  for (let frame = stack.at(-1); frame !== undefined; frame = stack.at(-1)) {
    if (frame.kind === 'array') {
      if (frame.next === frame.items.length) {
        out(']')
        open.delete(frame.value)
        stack.pop()
        continue
      }
      if (frame.next > 0) out(',')
      const item = frame.items[frame.next]
      frame.next += 1
      begin(item)
      continue
    }
    let key: string | undefined
    while (frame.next < frame.keys.length && key === undefined) {
      const candidate = frame.keys[frame.next] as string
      frame.next += 1
      if (!omitted(frame.entries[candidate])) key = candidate
    }
    if (key === undefined) {
      out('}')
      open.delete(frame.value)
      stack.pop()
      continue
    }
    out(`${frame.wrote ? ',' : ''}${JSON.stringify(key)}:`)
    frame.wrote = true
    begin(frame.entries[key])
  }
  if (pending.length > 0) write(pending)
}

/** The most a delta-seconds value can say (RFC 9111, 1.2.2): larger ones are read as this. */
const MAX_DELTA_SECONDS = 2 ** 31

/**
 * The lifetime a caller asks of a cached answer through its Cache-Control header, in seconds:
 * `max-age` (the first one, as RFC 9111 allows), or 0 for `no-store`, which wins over any max-age.
 * Directive names are case-insensitive and may come among others, in any order; a quoted argument is
 * read whole, so a comma or a `max-age=` inside another directive's quotes is not taken for one.
 * Undefined when there is no header, no max-age, or one that is not a whole number of seconds.
 */
export function readCacheControl(header: string | null): number | undefined {
  if (header === null) return undefined
  let maxAge: string | undefined
  let seenMaxAge = false
  for (const { name, argument } of directives(header)) {
    if (name === 'no-store') return 0
    if (name === 'max-age' && !seenMaxAge) {
      seenMaxAge = true
      maxAge = argument
    }
  }
  if (maxAge === undefined || !/^\d+$/.test(maxAge)) return undefined
  return Math.min(Number(maxAge), MAX_DELTA_SECONDS)
}

/** The directives of a Cache-Control value, names lower-cased, quoted arguments unquoted. */
function* directives(header: string): Generator<{ name: string; argument: string | undefined }> {
  let at = 0
  while (at < header.length) {
    let end = at
    while (end < header.length && header[end] !== ',' && header[end] !== '=') end += 1
    const name = header.slice(at, end).trim().toLowerCase()
    let argument: string | undefined
    if (header[end] === '=') {
      let start = end + 1
      while (header[start] === ' ' || header[start] === '\t') start += 1
      if (header[start] === '"') {
        let value = ''
        end = start + 1
        while (end < header.length && header[end] !== '"') {
          if (header[end] === '\\' && end + 1 < header.length) end += 1
          value += header[end]
          end += 1
        }
        const closed = end < header.length
        const rest = end + 1
        while (end < header.length && header[end] !== ',') end += 1
        // An unclosed quote, or text after the closing one, leaves the argument unreadable.
        argument = closed && header.slice(rest, end).trim() === '' ? value : undefined
      } else {
        end = start
        while (end < header.length && header[end] !== ',') end += 1
        argument = header.slice(start, end).trim()
      }
    }
    if (name !== '') yield { name, argument }
    at = end + 1
  }
}
