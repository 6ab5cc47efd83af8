/**
 * Claude on Bedrock through InvokeModel, for callers that speak Anthropic's Messages: the body goes as
 * the caller wrote it (Bedrock's Anthropic version in it, the model in the URL), and the answer comes
 * back as Anthropic's, whole or as its events inside AWS event-stream frames. Nothing is translated, so
 * what Converse has no place for (cache breakpoints, thinking, citations, beta features) reaches Claude.
 */
import { Buffer } from 'node:buffer'
import type { SseEvent } from '../../../util/sse'
import { anthropicFamily } from '../anthropic'
import { asRecord, type EventParser, parseJson, type WireFamily } from '../provider'
import { EventStreamDecoder } from './event-stream'

/** The Messages version Claude on Bedrock reads from the body, where Anthropic's API reads a header. */
const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31'

/** What Bedrock's own metrics are called on the last event of a stream; no Anthropic SDK knows them. */
const INVOCATION_METRICS = 'amazon-bedrock-invocationMetrics'

/** A Claude model id as Bedrock names it: its own, a cross-region profile's, or an ARN ending in either. */
export const isBedrockClaude = (model: string) => /(^|[./])anthropic\.claude-/.test(model)

/**
 * InvokeModel's stream: each `chunk` frame holds one of Anthropic's events, base64 in its payload's
 * `bytes`. Each becomes that event as Anthropic's API sends it; an exception frame stays the error
 * event the frame decoder makes of it.
 */
class InvokeStreamDecoder implements EventParser {
  private readonly frames = new EventStreamDecoder()

  push(bytes: Uint8Array): SseEvent[] {
    return this.frames.push(bytes).map(anthropicEventOf)
  }

  end(): SseEvent[] {
    return this.frames.end().map(anthropicEventOf)
  }
}

function anthropicEventOf(frame: SseEvent): SseEvent {
  if (frame.event !== 'chunk') return frame
  const bytes = asRecord(parseJson(frame.data))?.bytes
  if (typeof bytes !== 'string') throw new Error('a malformed event-stream frame: a chunk without its bytes')
  const text = Buffer.from(bytes, 'base64').toString('utf8')
  const payload = asRecord(parseJson(text))
  if (typeof payload?.type !== 'string') throw new Error('a malformed event-stream frame: a chunk that holds no Anthropic event')
  if (!(INVOCATION_METRICS in payload)) return { event: payload.type, data: text }
  const { [INVOCATION_METRICS]: _metrics, ...anthropic } = payload
  return { event: payload.type, data: JSON.stringify(anthropic) }
}

/** Anthropic's Messages, in AWS's envelope: the caller's own format, passed through. */
export const invokeClaudeFamily: WireFamily = {
  ...anthropicFamily,
  paths: ['/v1/messages'],
  eventParser: () => new InvokeStreamDecoder(),
  reframedStream: true,
  foreignErrors: true,
}

/**
 * The body InvokeModel takes for Claude: the caller's, without what Bedrock refuses as extraneous
 * (`model`, in the URL; `stream`, the operation's), with Bedrock's version, and the caller's beta
 * features (the `anthropic-beta` header, which Claude Code sends) as the body's `anthropic_beta`.
 */
export function invokeBody(body: string | Uint8Array | undefined, callerHeaders: Headers): string {
  const text = typeof body === 'string' ? body : new TextDecoder().decode(body)
  const { model: _model, stream: _stream, ...rest } = asRecord(parseJson(text)) ?? {}
  const betas = (callerHeaders.get('anthropic-beta') ?? '')
    .split(',')
    .map((beta) => beta.trim())
    .filter((beta) => beta !== '')
  return JSON.stringify({
    ...rest,
    anthropic_version: BEDROCK_ANTHROPIC_VERSION,
    ...(betas.length > 0 ? { anthropic_beta: betas } : {}),
  })
}
