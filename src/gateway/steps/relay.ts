import type { Usage } from '../../money/usage'
import { encodeSse, type SseEvent, SseParser } from '../../util/sse'
import type { GatewayMeta } from '../meta/store'
import type { ProviderAdapter } from '../providers/provider'
import type { BodyCapture } from '../request-log/body-capture'
import type { Translation } from '../translate/pairs'

export interface StreamOutcome {
  status: 'success' | 'error'
  httpStatus: number
  usage?: Usage
  servedModel?: string
  timeToFirstTokenMs?: number
  error?: string
}

export interface RelayOptions {
  upstream: Response
  provider: ProviderAdapter
  translation: Translation | undefined
  callerAskedForUsage: boolean
  now: () => number
  startedAt: number
  /** Keeps (a bounded part of) what the caller was sent, for the request log. */
  capture: BodyCapture
  /** Called once when the stream is over, however it ended; returns the metadata for the `gw` frame. */
  finish(outcome: StreamOutcome): Promise<GatewayMeta>
}

/**
 * Relays a provider's event stream to the caller as it arrives: each chunk is parsed for usage on
 * the way and passed on (translated, or with gw's extra usage chunk taken out) before the next is
 * read, so nothing is buffered beyond one chunk. After the provider's last frame comes one `gw`
 * frame with the metadata; a stream that breaks off before that last frame gets none. A caller that
 * goes away cancels the read, which aborts the provider call.
 */
export function relayStream(options: RelayOptions): Response {
  const { upstream, provider, translation, callerAskedForUsage, now, startedAt, capture } = options
  const send = (controller: ReadableStreamDefaultController<Uint8Array>, chunks: Uint8Array[]) => {
    for (const chunk of chunks) {
      capture.append(chunk)
      controller.enqueue(chunk)
    }
  }
  const body = upstream.body
  if (!body) throw new Error('provider stream has no body')
  const reader = body.getReader()
  const parser = new SseParser()
  const usage = provider.streamUsage()
  const stream = translation?.stream(callerAskedForUsage)
  // Raw bytes may go straight through only when no event must change or disappear.
  const rawPassThrough = translation === undefined && callerAskedForUsage
  let sawEnd = false
  let firstByteAt: number | undefined
  let finished = false

  const finish = (outcome: Omit<StreamOutcome, 'usage' | 'servedModel' | 'timeToFirstTokenMs'>) => {
    finished = true
    return options.finish({
      ...outcome,
      usage: usage.result(),
      servedModel: usage.servedModel(),
      timeToFirstTokenMs: firstByteAt === undefined ? undefined : firstByteAt - startedAt,
    })
  }

  const relay = (events: SseEvent[], out: Uint8Array[]) => {
    for (const event of events) {
      usage.push(event)
      if (provider.isStreamEnd(event)) sawEnd = true
      if (rawPassThrough) continue
      if (stream) for (const translated of stream.push(event)) out.push(encodeSse(translated))
      else if (!provider.isInjectedUsageEvent(event, callerAskedForUsage)) out.push(encodeSse(event))
    }
  }

  return new Response(
    new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { value, done } = await reader.read()
          if (!done) {
            firstByteAt ??= now()
            const out: Uint8Array[] = rawPassThrough ? [value] : []
            relay(parser.push(value), out)
            send(controller, out)
            return
          }
          const out: Uint8Array[] = []
          relay(parser.end(), out)
          if (sawEnd) {
            if (stream) for (const translated of stream.finish()) out.push(encodeSse(translated))
            send(controller, out)
            const meta = await finish({ status: 'success', httpStatus: upstream.status })
            controller.enqueue(encodeSse({ event: 'gw', data: JSON.stringify(meta) }))
          } else {
            send(controller, out)
            await finish({ status: 'error', httpStatus: 502, error: 'the provider ended the stream before its last frame' })
          }
          controller.close()
        } catch (error) {
          if (!finished)
            await finish({ status: 'error', httpStatus: 502, error: `the provider stream failed: ${(error as Error).message}` })
          // Closing (not erroring) lets SDKs end their iteration; the missing gw frame tells the caller to look up.
          controller.close()
        }
      },
      async cancel() {
        await reader.cancel().catch(() => undefined)
        if (!finished) await finish({ status: 'error', httpStatus: 499, error: 'the client disconnected' })
      },
    }),
    {
      status: upstream.status,
      headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' },
    },
  )
}
