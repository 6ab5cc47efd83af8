/**
 * The AWS event stream (`application/vnd.amazon.eventstream`) Bedrock streams its answers in: binary
 * frames, each with its length, typed headers, a payload and two CRC32 checksums. Decoded into the
 * same events an SSE stream gives, so the relay and the translation read Bedrock as they read the
 * others. The frame layout and checksums are left to AWS's own codec rather than written again.
 */
import type { EventStreamCodec, MessageHeaders } from '@smithy/eventstream-codec'
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

/**
 * AWS's codec is loaded with the first Bedrock stream, not at start-up: with the `@smithy/core` it
 * brings, evaluating it took about 5 ms of every start, on every server, Bedrock or not.
 */
let codec: { decode: EventStreamCodec['decode']; utf8: (bytes: Uint8Array) => string } | undefined
let loading: Promise<void> | undefined

/**
 * The codec reads every header's name and value through this: six short strings a frame. A shared
 * TextDecoder takes less than half the time of AWS's own `toUtf8` (a Buffer made for each string), and
 * in a stream's profile those reads had been most of the codec's time.
 */
const utf8Decoder = new TextDecoder()
const toUtf8 = (bytes: Uint8Array): string => utf8Decoder.decode(bytes)
/** The codec wants an encoder too; decoding never calls it. */
const utf8Encoder = new TextEncoder()
const fromUtf8 = (text: string): Uint8Array => utf8Encoder.encode(text)

/** Call (and await what it answers) before a decoder is made; answers nothing once the codec is in. */
export function eventStreamCodecReady(): Promise<void> | undefined {
  if (codec) return undefined
  loading ??= import('@smithy/eventstream-codec').then(({ EventStreamCodec }) => {
    const loaded = new EventStreamCodec(toUtf8, fromUtf8)
    codec = { decode: (frame) => loaded.decode(frame), utf8: toUtf8 }
  })
  return loading
}

/**
 * Feed it bytes as they arrive; it returns the events of the frames they complete. A frame is one
 * event named by its `:event-type`, its payload (JSON) as the data. An exception frame becomes an
 * `error` event in the shape gw's in-band failure detection reads. A frame that is broken (bad
 * checksum, impossible length, unknown message type) throws: nothing after it can be trusted.
 */
export class EventStreamDecoder {
  private readonly codec = loadedCodec()
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
      events.push(eventOf(this.codec, this.take(this.expected)))
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

/**
 * The frame's length from its prelude, checked before any more of it is waited for. The prelude's
 * own checksum is checked with the rest of the frame, by the codec; the bound keeps a corrupt
 * length from holding more than one largest frame meanwhile.
 */
function frameLength(prelude: Uint8Array): number {
  const view = new DataView(prelude.buffer, prelude.byteOffset, prelude.byteLength)
  const total = view.getUint32(0)
  const headers = view.getUint32(4)
  if (total < SMALLEST_FRAME || total > LARGEST_FRAME)
    throw new Error(`a malformed event-stream frame: it says it is ${total} bytes long`)
  if (headers > total - SMALLEST_FRAME)
    throw new Error(`a malformed event-stream frame: ${headers} bytes of headers in a frame of ${total}`)
  return total
}

function loadedCodec(): NonNullable<typeof codec> {
  if (!codec) throw new Error('the event-stream codec is not loaded: await eventStreamCodecReady() before decoding')
  return codec
}

function eventOf(loaded: NonNullable<typeof codec>, frame: Uint8Array): SseEvent {
  let message: ReturnType<EventStreamCodec['decode']>
  try {
    message = loaded.decode(frame)
  } catch (error) {
    throw new Error(`a malformed event-stream frame: ${(error as Error).message}`)
  }
  const header = (name: string) => stringHeader(message.headers, name)
  const payload = loaded.utf8(message.body)
  switch (header(':message-type')) {
    case 'event': {
      const type = header(':event-type')
      if (type === undefined) throw new Error('a malformed event-stream frame: an event without an :event-type')
      return { event: type, data: payload }
    }
    case 'exception': {
      const type = header(':exception-type') ?? 'exception'
      return failureEvent(ERROR_TYPE_OF_EXCEPTION[type] ?? 'api_error', type, messageOf(payload) ?? type)
    }
    case 'error': {
      // An error AWS's model does not name: its code and message are headers, not a payload.
      const code = header(':error-code') ?? 'error'
      return failureEvent('api_error', code, header(':error-message') ?? code)
    }
    default:
      throw new Error(`a malformed event-stream frame: message type ${JSON.stringify(header(':message-type') ?? null)}`)
  }
}

/** Bedrock sends only string headers; any other type (or none) is as good as absent. */
function stringHeader(headers: MessageHeaders, name: string): string | undefined {
  const header = headers[name]
  return header?.type === 'string' ? header.value : undefined
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
