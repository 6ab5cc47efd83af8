import type { Usage } from '../../money/usage'
import { encodeSse, type SseEvent } from '../../util/sse'
import type { GatewayMeta } from '../meta/store'
import type { WireFamily } from '../providers/provider'
import type { BodyCapture } from '../request-log/body-capture'
import { failureFrame, type ProviderFailure, type StreamProtocol, streamFailureOf } from '../translate/errors'
import type { Translation } from '../translate/pairs'
import type { AnswerReader } from './upstream'

export interface StreamOutcome {
  status: 'success' | 'error'
  httpStatus: number
  usage?: Usage
  servedModel?: string
  /** Why the model stopped, as the provider said. */
  finishReasons?: string[]
  timeToFirstTokenMs?: number
  error?: string
  /** What the answer held that the caller's format cannot carry, found while translating it. */
  dropped?: string[]
  /** For a model billed by the character or the second: how many. */
  units?: number
}

export interface RelayOptions {
  upstream: Response
  /** The stream's reader, its first bytes already read: until they came, another step could still serve. */
  reader: AnswerReader
  first: Uint8Array
  /** The provider's format: how its events are framed, what they say of usage, and which one ends the stream. */
  family: WireFamily
  translation: Translation | undefined
  /** The model called, for a translated stream whose provider does not name it. */
  model?: string
  /** The stream protocol the caller reads: its in-band errors are written in it. */
  protocol: StreamProtocol
  /** The caller's request signal: a stream that breaks because the caller left is theirs (499), not the provider's. */
  clientSignal: AbortSignal
  /** Whether the caller asked for the closing `gw` frame (Gw-Stream-Meta: frame, or its organisation's setting). */
  metaFrame: boolean
  callerAskedForUsage: boolean
  now: () => number
  startedAt: number
  /** Keeps (a bounded part of) what the caller was sent, for the request log. */
  capture: BodyCapture
  /** Sees every byte the caller is sent but the `gw` frame (the response cache keeps them). */
  keep?: (chunk: Uint8Array) => void
  /** Called once when the stream is over, however it ended; returns the metadata for the `gw` frame. */
  finish(outcome: StreamOutcome): Promise<GatewayMeta>
}

/** Only events that may be an error are parsed for one: the rest pass without a second parse. */
const MAY_BE_FAILURE = /^\s*\{\s*"(?:error|type"\s*:\s*"error)"/
const mayBeFailure = (event: SseEvent): boolean =>
  event.event === 'error' || event.event === 'response.failed' || MAY_BE_FAILURE.test(event.data)

/**
 * Relays a provider's event stream to the caller as it arrives: each chunk is parsed for usage on
 * the way and passed on (translated, or with gw's extra usage chunk taken out) before the next is
 * read, so nothing is buffered beyond one chunk. When the caller asked for it, one `gw` frame with
 * the metadata follows the provider's last frame.
 *
 * A stream that fails is never a clean end: a provider's own error event reaches the caller in the
 * caller's protocol (as it is, or translated), and a stream that breaks off or ends before its last
 * frame gets an in-band error of gw's, so every SDK raises. A caller that goes away cancels the read,
 * which aborts the provider call, and is recorded as 499.
 */
export function relayStream(options: RelayOptions): Response {
  const { upstream, reader, family, translation, protocol, clientSignal, callerAskedForUsage, now, startedAt, capture, keep } =
    options
  const send = (controller: ReadableStreamDefaultController<Uint8Array>, chunks: Uint8Array[]) => {
    for (const chunk of chunks) {
      capture.append(chunk)
      keep?.(chunk)
      controller.enqueue(chunk)
    }
  }
  let first: Uint8Array | undefined = options.first
  const parser = family.eventParser()
  const usage = family.streamUsage()
  const stream = translation?.stream(callerAskedForUsage, options.model)
  // Raw bytes may go straight through only when no event must change or disappear, and they are the caller's.
  const rawPassThrough = translation === undefined && callerAskedForUsage && !family.reframedStream
  let sawEnd = false
  let failure: ProviderFailure | undefined
  /** Events seen: the Responses API numbers its events from 0, and gw's own error event comes next. */
  let events = 0
  let firstByteAt: number | undefined
  let finished = false

  const finish = (outcome: Omit<StreamOutcome, 'usage' | 'servedModel' | 'finishReasons' | 'timeToFirstTokenMs' | 'dropped'>) => {
    finished = true
    return options.finish({
      ...outcome,
      dropped: stream?.dropped(),
      usage: usage.result(),
      servedModel: usage.servedModel(),
      finishReasons: usage.finishReasons(),
      timeToFirstTokenMs: firstByteAt === undefined ? undefined : firstByteAt - startedAt,
    })
  }

  /**
   * A caller that stops reading once the protocol's last event came (the openai SDK does at [DONE])
   * was served the whole answer; only one that left before it was not (499).
   */
  const callerLeft = () =>
    sawEnd && !failure
      ? finish({ status: 'success', httpStatus: upstream.status })
      : finish({ status: 'error', httpStatus: 499, error: 'the client disconnected' })

  const gwFailure = (message: string): Uint8Array => encodeSse(failureFrame(protocol, { kind: 'api_error', message }, events))

  const relay = (parsed: SseEvent[], out: Uint8Array[]) => {
    for (const event of parsed) {
      events += 1
      usage.push(event)
      if (family.isStreamEnd(event)) sawEnd = true
      const failed = mayBeFailure(event) ? streamFailureOf(event) : undefined
      if (failed) {
        failure ??= failed
        // Passed through, the provider's error is already in the caller's protocol; translated, it is rewritten.
        if (rawPassThrough) continue
        out.push(encodeSse(translation ? failureFrame(protocol, failed, events - 1) : event))
        continue
      }
      if (rawPassThrough) continue
      if (stream) for (const translated of stream.push(event)) out.push(encodeSse(translated))
      else if (!family.isInjectedUsageEvent(event, callerAskedForUsage)) out.push(encodeSse(event))
    }
  }

  return new Response(
    new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          let read = first ? { value: first, done: false as const } : await reader.read()
          first = undefined
          // A pull that enqueues nothing is never called again: bytes that complete no event (a frame
          // cut by the network, an event the caller must not see) are followed by more reading.
          while (!read.done) {
            firstByteAt ??= now()
            const out: Uint8Array[] = rawPassThrough ? [read.value] : []
            relay(parser.push(read.value), out)
            if (out.length > 0) {
              send(controller, out)
              return
            }
            read = await reader.read()
          }
          const out: Uint8Array[] = []
          relay(parser.end(), out)
          if (sawEnd && !failure) {
            if (stream) for (const translated of stream.finish()) out.push(encodeSse(translated))
            send(controller, out)
            const meta = await finish({ status: 'success', httpStatus: upstream.status })
            if (options.metaFrame) controller.enqueue(encodeSse({ event: 'gw', data: JSON.stringify(meta) }))
          } else {
            const error = failure?.message ?? 'the provider ended the stream before its last frame'
            if (!failure) out.push(gwFailure(error))
            send(controller, out)
            await finish({ status: 'error', httpStatus: 502, error })
          }
          controller.close()
        } catch (error) {
          if (!finished) {
            if (clientSignal.aborted) await callerLeft()
            else {
              const message = `the provider stream failed: ${(error as Error).message}`
              send(controller, [gwFailure(message)])
              await finish({ status: 'error', httpStatus: 502, error: message })
            }
          }
          // Closing after the in-band error lets every SDK raise it, rather than a transport error of its own.
          controller.close()
        }
      },
      async cancel() {
        await reader.cancel().catch(() => undefined)
        if (!finished) await callerLeft()
      },
    }),
    {
      status: upstream.status,
      headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' },
    },
  )
}

export interface RawRelayOptions {
  upstream: Response
  clientSignal: AbortSignal
  now: () => number
  startedAt: number
  /** Keeps what was sent: text as it is (bounded), audio and other bytes as a note of their type and size. */
  capture: BodyCapture
  /** How many billed units the answer stands for, read from its text (a transcript's duration), or known before. */
  unitsOf?: (answerText: string) => number | undefined
  finish(outcome: StreamOutcome): Promise<GatewayMeta>
}

/** Answers whose bytes are text the request log can keep (and a transcript's duration can be read from). */
const TEXT_ANSWER = /^(application\/json|text\/)/

/**
 * Passes a provider's answer through as its bytes arrive (speech, transcripts in any format), never
 * parsed. A transfer that breaks is broken for the caller too (the stream errors, it does not end
 * cleanly); a caller that leaves is recorded as 499.
 */
export function relayRaw(options: RawRelayOptions): Response {
  const { upstream, clientSignal, now, startedAt, capture } = options
  const reader = upstream.body?.getReader()
  const contentType = upstream.headers.get('content-type') ?? 'application/octet-stream'
  let bytes = 0
  let firstByteAt: number | undefined
  let finished = false
  const keepsText = TEXT_ANSWER.test(contentType)
  const finish = (outcome: Omit<StreamOutcome, 'timeToFirstTokenMs'>) => {
    finished = true
    const text = keepsText ? capture.text() : ''
    if (!keepsText) capture.set(`[${contentType}, ${bytes} bytes]`)
    const units = outcome.status === 'success' ? options.unitsOf?.(text) : undefined
    return options.finish({
      ...outcome,
      ...(units !== undefined ? { units } : {}),
      timeToFirstTokenMs: firstByteAt === undefined ? undefined : firstByteAt - startedAt,
    })
  }
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const read = reader ? await reader.read() : { done: true as const, value: undefined }
        if (!read.done) {
          firstByteAt ??= now()
          bytes += read.value.byteLength
          if (keepsText) capture.append(read.value)
          controller.enqueue(read.value)
          return
        }
        await finish({ status: 'success', httpStatus: upstream.status })
        controller.close()
      } catch (error) {
        if (!finished) {
          if (clientSignal.aborted) await finish({ status: 'error', httpStatus: 499, error: 'the client disconnected' })
          else
            await finish({
              status: 'error',
              httpStatus: 502,
              error: `the provider's answer broke off: ${(error as Error).message}`,
            })
        }
        controller.error(error)
      }
    },
    async cancel() {
      await reader?.cancel().catch(() => undefined)
      if (!finished) await finish({ status: 'error', httpStatus: 499, error: 'the client disconnected' })
    },
  })
  return new Response(body, { status: upstream.status, headers: { 'content-type': contentType } })
}
