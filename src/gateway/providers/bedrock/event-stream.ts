/**
 * The AWS event stream (`application/vnd.amazon.eventstream`) Bedrock streams its answers in: binary
 * frames, each with its length, typed headers, a payload and two CRC32 checksums. Decoded into the
 * same events an SSE stream gives, so the relay and the translation read Bedrock as they read the
 * others.
 *
 * The frames are read here rather than by AWS's codec (`@smithy/eventstream-codec`): its general
 * parse (a view and a decoded string for every header's name and value, a typed object for each)
 * took about 3.5 µs a frame, a dozen frames a stream, which made a Bedrock stream's first byte a
 * fifth slower than an Anthropic one's. What this reads is held to AWS's codec, not to our reading of
 * AWS's documents: a property test has AWS's codec encode random frames (every header type, any
 * text) for this decoder, split anywhere, and corrupts them to see both refuse.
 */
import { crc32 } from '../../../util/digest'
import type { SseEvent } from '../../../util/sse'
import { asRecord, parseJson } from '../provider'

/** Total length, headers length, prelude CRC: enough to know how long the frame is. */
const PRELUDE_BYTES = 12
/** The prelude and the message CRC around empty headers and an empty payload. */
const SMALLEST_FRAME = 16
/**
 * Bedrock's frames are one event each, a few hundred bytes; a length beyond this is a broken or
 * hostile stream, and waiting for it would hold that much memory.
 */
export const LARGEST_FRAME = 16 * 1024 * 1024

/**
 * AWS's exceptions as the error types gw's stream failure detection (`streamFailureOf`) reads:
 * Anthropic's names, so a throttled Bedrock call reaches every caller as a rate-limit error.
 */
const ERROR_TYPE_OF_EXCEPTION: Record<string, string> = {
  throttlingException: 'rate_limit_error',
  serviceUnavailableException: 'overloaded_error',
  validationException: 'invalid_request_error',
  modelTimeoutException: 'timeout_error',
}

/** Text as AWS's codec reads it for gw: UTF-8, any bytes that are not read as U+FFFD. */
const utf8 = new TextDecoder()

/**
 * Feed it bytes as they arrive; it returns the events of the frames they complete. A frame is one
 * event named by its `:event-type`, its payload (JSON) as the data. An exception frame becomes an
 * `error` event in the shape gw's in-band failure detection reads. A frame that is broken (bad
 * checksum, impossible length, unknown message or header type) throws: nothing after it can be trusted.
 */
export class EventStreamDecoder {
  private chunks: Uint8Array[] = []
  private buffered = 0
  /** The length of the frame being gathered, once its prelude is in. */
  private expected: number | undefined

  push(bytes: Uint8Array): SseEvent[] {
    if (bytes.byteLength > 0) {
      this.chunks.push(bytes)
      this.buffered += bytes.byteLength
    }
    const events: SseEvent[] = []
    while (this.buffered >= (this.expected ?? PRELUDE_BYTES)) {
      if (this.expected === undefined) {
        this.expected = frameLength(this.peek(PRELUDE_BYTES))
        continue
      }
      events.push(eventOf(this.take(this.expected)))
      this.expected = undefined
    }
    return events
  }

  /** A stream that ends inside a frame was cut short, which must not pass for a clean end. */
  end(): SseEvent[] {
    if (this.buffered > 0) throw new Error(`the event stream ended inside a frame (${this.buffered} bytes of it received)`)
    return []
  }

  /** The first `count` bytes, joined into one chunk when they span several. */
  private peek(count: number): Uint8Array {
    const first = this.chunks[0] as Uint8Array
    if (first.byteLength >= count) return first.subarray(0, count)
    const joined = this.joined()
    return joined.subarray(0, count)
  }

  private take(count: number): Uint8Array {
    const joined = this.joined()
    const rest = joined.subarray(count)
    this.chunks = rest.byteLength > 0 ? [rest] : []
    this.buffered = rest.byteLength
    return joined.subarray(0, count)
  }

  private joined(): Uint8Array {
    if (this.chunks.length === 1) return this.chunks[0] as Uint8Array
    const joined = new Uint8Array(this.buffered)
    let offset = 0
    for (const chunk of this.chunks) {
      joined.set(chunk, offset)
      offset += chunk.byteLength
    }
    this.chunks = [joined]
    return joined
  }
}

const malformed = (why: string) => new Error(`a malformed event-stream frame: ${why}`)

/** A big-endian 32-bit number at `at`, read without a view made for it. */
const uint32At = (bytes: Uint8Array, at: number): number =>
  (((bytes[at] as number) << 24) |
    ((bytes[at + 1] as number) << 16) |
    ((bytes[at + 2] as number) << 8) |
    (bytes[at + 3] as number)) >>>
  0

/**
 * The frame's length from its prelude, checked (its own checksum too) before any more of it is waited
 * for: a corrupt length is refused at once rather than waited on, and the bound keeps a length that
 * passes from holding more than one largest frame meanwhile.
 */
function frameLength(prelude: Uint8Array): number {
  if (crc32(prelude.subarray(0, 8)) !== uint32At(prelude, 8)) throw malformed('the prelude checksum does not match')
  const total = uint32At(prelude, 0)
  const headers = uint32At(prelude, 4)
  if (total < SMALLEST_FRAME || total > LARGEST_FRAME) throw malformed(`it says it is ${total} bytes long`)
  if (headers > total - SMALLEST_FRAME) throw malformed(`${headers} bytes of headers in a frame of ${total}`)
  return total
}

/**
 * The bytes a header's value takes after its type tag, by tag: true, false, byte, short, integer,
 * long, bytes and string (a 2-byte length first), timestamp, UUID. -1 for a length-prefixed value.
 */
const VALUE_BYTES = [0, 0, 1, 2, 4, 8, -1, -1, 8, 16]
const STRING_TAG = 7

/** The headers gw reads, all strings; a frame's others (`:content-type`, say) are read past without being decoded. */
const READ_HEADERS = [':message-type', ':event-type', ':exception-type', ':error-code', ':error-message'] as const
type ReadHeader = (typeof READ_HEADERS)[number]
const READ_NAMES = READ_HEADERS.map((name) => new TextEncoder().encode(name))

/** Which of `READ_HEADERS` the name at `start` is, by its bytes, or -1. */
function readHeaderAt(frame: Uint8Array, start: number, length: number): number {
  for (let which = 0; which < READ_NAMES.length; which++) {
    const name = READ_NAMES[which] as Uint8Array
    if (name.length !== length) continue
    let i = 0
    while (i < length && frame[start + i] === name[i]) i++
    if (i === length) return which
  }
  return -1
}

interface Frame {
  headers: Partial<Record<ReadHeader, string>>
  payload: string
}

/**
 * A whole frame's headers gw reads and its payload, its checksum checked first (the prelude's was,
 * when it came in). Bedrock sends only string headers; one of another type is read past (no string
 * gw needs), as good as absent.
 */
function readFrame(frame: Uint8Array): Frame {
  const total = frame.byteLength
  if (crc32(frame.subarray(0, total - 4)) !== uint32At(frame, total - 4)) throw malformed('the message checksum does not match')
  const headersEnd = PRELUDE_BYTES + uint32At(frame, 4)
  const headers: Frame['headers'] = {}
  let at = PRELUDE_BYTES
  while (at < headersEnd) {
    const nameLength = frame[at] as number
    const nameAt = at + 1
    at = nameAt + nameLength
    if (at >= headersEnd) throw malformed('a header runs past the headers')
    const tag = frame[at++] as number
    const fixed = VALUE_BYTES[tag]
    if (fixed === undefined) throw malformed(`a header has an unknown type (${tag})`)
    let length = fixed
    if (fixed < 0) {
      if (at + 2 > headersEnd) throw malformed('a header runs past the headers')
      length = ((frame[at] as number) << 8) | (frame[at + 1] as number)
      at += 2
    }
    if (at + length > headersEnd) throw malformed('a header runs past the headers')
    const which = readHeaderAt(frame, nameAt, nameLength)
    if (which >= 0) {
      // As in AWS's codec, a name given twice is its last value, and a value that is not a string is none.
      const name = READ_HEADERS[which] as ReadHeader
      if (tag === STRING_TAG) headers[name] = utf8.decode(frame.subarray(at, at + length))
      else delete headers[name]
    }
    at += length
  }
  return { headers, payload: utf8.decode(frame.subarray(headersEnd, total - 4)) }
}

function eventOf(bytes: Uint8Array): SseEvent {
  const { headers, payload } = readFrame(bytes)
  const messageType = headers[':message-type']
  switch (messageType) {
    case 'event': {
      const type = headers[':event-type']
      if (type === undefined) throw malformed('an event without an :event-type')
      return { event: type, data: payload }
    }
    case 'exception': {
      const type = headers[':exception-type'] ?? 'exception'
      return failureEvent(ERROR_TYPE_OF_EXCEPTION[type] ?? 'api_error', type, messageOf(payload) ?? type)
    }
    case 'error': {
      // An error AWS's model does not name: its code and message are headers, not a payload.
      const code = headers[':error-code'] ?? 'error'
      return failureEvent('api_error', code, headers[':error-message'] ?? code)
    }
    default:
      throw malformed(`message type ${JSON.stringify(messageType ?? null)}`)
  }
}

/** The exception's message; AWS spells the field `message`, a few services `Message`. */
function messageOf(payload: string): string | undefined {
  const body = asRecord(parseJson(payload))
  const text = typeof body?.message === 'string' ? body.message : body?.Message
  return typeof text === 'string' && text !== '' ? text : undefined
}

/**
 * Anthropic's error event (an InvokeModel stream passes it to the caller as it is). The exception's own
 * name stays in the message: `throttlingException: Too many tokens` says what happened.
 */
const failureEvent = (type: string, name: string, message: string): SseEvent => ({
  event: 'error',
  data: JSON.stringify({ type: 'error', error: { type, message: message === name ? name : `${name}: ${message}` } }),
})
