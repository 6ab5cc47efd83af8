/**
 * gw reads Bedrock's event streams with a decoder of its own (src/gateway/providers/bedrock/event-stream.ts);
 * AWS's codec is the oracle it is held to: every frame here is written by AWS's codec, and what gw
 * makes of it must be what AWS's codec reads in it.
 */
import { describe, expect, test } from 'bun:test'
import { crc32 } from 'node:zlib'
import { EventStreamCodec, Int64, type MessageHeaders } from '@smithy/eventstream-codec'
import { fromUtf8, toUtf8 } from '@smithy/util-utf8'
import fc from 'fast-check'
import { EventStreamDecoder } from '../src/gateway/providers/bedrock/event-stream'
import type { SseEvent } from '../src/util/sse'
import { FUZZ_SEEDS } from './support/fuzz-seeds'

const codec = new EventStreamCodec(toUtf8, fromUtf8)

type HeaderValue = MessageHeaders[string]

/** A header value of each of the event stream's types. */
const headerValue: fc.Arbitrary<HeaderValue> = fc.oneof(
  fc.boolean().map((value) => ({ type: 'boolean' as const, value })),
  fc.integer({ min: -128, max: 127 }).map((value) => ({ type: 'byte' as const, value })),
  fc.integer({ min: -32768, max: 32767 }).map((value) => ({ type: 'short' as const, value })),
  fc.integer().map((value) => ({ type: 'integer' as const, value })),
  fc.maxSafeInteger().map((value) => ({ type: 'long' as const, value: Int64.fromNumber(value) })),
  fc.uint8Array({ maxLength: 40 }).map((value) => ({ type: 'binary' as const, value })),
  fc.string({ unit: 'grapheme', maxLength: 40 }).map((value) => ({ type: 'string' as const, value })),
  fc.date({ noInvalidDate: true }).map((value) => ({ type: 'timestamp' as const, value })),
  fc.uuid().map((value) => ({ type: 'uuid' as const, value })),
)

const READ = [':message-type', ':event-type', ':exception-type', ':error-code', ':error-message']
/** Any name AWS's codec can write (a plain object holds them, so not `__proto__`), the ones gw reads often. */
const headerName = fc.oneof(
  fc.constantFrom(...READ, ':content-type'),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }).filter((name) => name !== '__proto__'),
)
const messageType = fc.oneof(
  fc.constantFrom('event', 'exception', 'error').map((value) => ({ type: 'string' as const, value })),
  headerValue,
)

const frames = fc
  .record({
    messageType: fc.option(messageType, { nil: undefined }),
    eventType: fc.option(fc.oneof(fc.constantFrom('contentBlockDelta', 'metadata').map(stringValue), headerValue), {
      nil: undefined,
    }),
    others: fc.array(fc.tuple(headerName, headerValue), { maxLength: 6 }),
    payload: fc.oneof(
      fc.json().map((json) => fromUtf8(json)),
      fc.uint8Array({ maxLength: 300 }),
    ),
  })
  .map(({ messageType, eventType, others, payload }) => {
    const headers: MessageHeaders = {}
    if (messageType) headers[':message-type'] = messageType
    if (eventType) headers[':event-type'] = eventType
    for (const [name, value] of others) headers[name] = value
    return codec.encode({ headers, body: payload })
  })

function stringValue(value: string): HeaderValue {
  return { type: 'string', value }
}

/** The frame as AWS's codec reads it: the string headers gw reads, and the payload as text. */
function awsReading(frame: Uint8Array): { headers: Record<string, string>; payload: string } {
  const message = codec.decode(frame)
  const headers: Record<string, string> = {}
  for (const name of READ) {
    const header = message.headers[name]
    if (header?.type === 'string') headers[name] = header.value
  }
  return { headers, payload: toUtf8(message.body) }
}

/** What gw must make of a frame AWS's codec read so: an event, an error event, or a refusal. */
function expectedEvent({ headers, payload }: ReturnType<typeof awsReading>): ((event: SseEvent) => void) | 'refused' {
  const type = headers[':message-type']
  if (type === 'event') {
    const name = headers[':event-type']
    return name === undefined ? 'refused' : (event) => expect(event).toEqual({ event: name, data: payload })
  }
  if (type === 'exception' || type === 'error')
    return (event) => {
      expect(event.event).toBe('error')
      const named = type === 'exception' ? (headers[':exception-type'] ?? 'exception') : (headers[':error-code'] ?? 'error')
      expect((JSON.parse(event.data) as { error: { message: string } }).error.message.startsWith(named)).toBe(true)
    }
  return 'refused'
}

/** Everything the decoder makes of `bytes` fed in the given pieces, or the error it throws. */
function decodeInPieces(bytes: Uint8Array, cuts: number[]): SseEvent[] | Error {
  const decoder = new EventStreamDecoder()
  const events: SseEvent[] = []
  let from = 0
  try {
    for (const cut of [...cuts.filter((at) => at < bytes.byteLength).sort((a, b) => a - b), bytes.byteLength]) {
      events.push(...decoder.push(bytes.subarray(from, cut)))
      from = cut
    }
    return [...events, ...decoder.end()]
  } catch (error) {
    return error as Error
  }
}

describe("gw's event-stream decoder reads what AWS's codec writes", () => {
  test('random frames (every header type, any names, any payload) give the events AWS’s reading of them means, however the bytes are split', () => {
    for (const seed of FUZZ_SEEDS)
      fc.assert(
        fc.property(fc.array(frames, { minLength: 1, maxLength: 4 }), fc.array(fc.nat(2000), { maxLength: 5 }), (drawn, cuts) => {
          const bytes = new Uint8Array(Buffer.concat(drawn))
          const decoded = decodeInPieces(bytes, cuts)
          const expected = drawn.map((frame) => expectedEvent(awsReading(frame)))
          const refusedAt = expected.indexOf('refused')
          if (refusedAt >= 0) {
            expect(decoded).toBeInstanceOf(Error)
            expect((decoded as Error).message).toStartWith('a malformed event-stream frame')
            return
          }
          expect(decoded).not.toBeInstanceOf(Error)
          expect(decoded as SseEvent[]).toHaveLength(drawn.length)
          for (const [i, check] of expected.entries())
            (check as (event: SseEvent) => void)((decoded as SseEvent[])[i] as SseEvent)
        }),
        { numRuns: 300, seed },
      )
  })

  test('a frame with any one byte changed is refused, as AWS’s codec refuses it', () => {
    for (const seed of FUZZ_SEEDS)
      fc.assert(
        fc.property(frames, fc.nat(), fc.integer({ min: 1, max: 255 }), (frame, at, change) => {
          const broken = frame.slice()
          const index = at % broken.byteLength
          broken[index] = (broken[index] as number) ^ change
          expect(() => codec.decode(broken)).toThrow()
          const decoded = decodeInPieces(broken, [])
          expect(decoded).toBeInstanceOf(Error)
        }),
        { numRuns: 300, seed },
      )
  })

  test('a header named twice is its last value, and a last value that is not a string is none, as AWS’s codec reads it', () => {
    const twice = (first: HeaderValue, last: HeaderValue) =>
      frameOf(
        [
          codec.formatHeaders({ ':message-type': stringValue('event') }),
          codec.formatHeaders({ ':event-type': first }),
          codec.formatHeaders({ ':event-type': last }),
        ],
        '{}',
      )
    const lastString = twice(stringValue('first'), stringValue('last'))
    expect(awsReading(lastString).headers[':event-type']).toBe('last')
    expect(decodeInPieces(lastString, [])).toEqual([{ event: 'last', data: '{}' }])
    const lastNumber = twice(stringValue('first'), { type: 'integer', value: 7 })
    expect(awsReading(lastNumber).headers[':event-type']).toBeUndefined()
    expect(decodeInPieces(lastNumber, [])).toBeInstanceOf(Error)
  })
})

/** A frame around headers written by AWS's codec, one piece after another: the codec itself writes no name twice. */
function frameOf(headers: Uint8Array[], payload: string): Uint8Array {
  const headerBytes = Buffer.concat(headers)
  const body = fromUtf8(payload)
  const frame = new Uint8Array(16 + headerBytes.byteLength + body.byteLength)
  const view = new DataView(frame.buffer)
  view.setUint32(0, frame.byteLength)
  view.setUint32(4, headerBytes.byteLength)
  view.setUint32(8, crc32(frame.subarray(0, 8)))
  frame.set(headerBytes, 12)
  frame.set(body, 12 + headerBytes.byteLength)
  view.setUint32(frame.byteLength - 4, crc32(frame.subarray(0, frame.byteLength - 4)))
  return frame
}
