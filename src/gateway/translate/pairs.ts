import type { SseEvent } from '../../util/sse'
import type { CallerWireFormat, WireFormat } from '../providers/provider'
import { anthropicMessages } from './anthropic-messages'
import { bedrockConverse } from './bedrock-converse'
import type { CallerFormat, Delta, ProviderFormat } from './canonical'
import { gemini, withoutCarriedSignatures } from './gemini'
import { openaiChat } from './openai-chat'
import type { StreamTranslator } from './stream'

/** How a body crosses from the caller's format to the provider's and back, for one pair of formats. */
export interface Translation {
  /**
   * The request in the provider's format (the model in it when the format takes it there), and the
   * output bound it sets. The model and the stream flag may be given apart (Gemini's callers say them
   * in the URL); otherwise the body's own serve.
   */
  request(
    body: Record<string, unknown>,
    call?: { model: string; stream: boolean },
  ): { request: Record<string, unknown>; dropped: string[]; maxTokens?: number }
  /**
   * The answer in the caller's format, and what of it that format cannot carry. `model` is the one
   * called: an answer that names none (Converse's never do) is given it, never an empty name.
   */
  response(body: unknown, model?: string): { body: unknown; dropped: string[] }
  stream(callerAskedForUsage: boolean, model?: string): StreamTranslator
}

/** The formats callers speak: each is read into the canonical call, and its answers written back. */
const CALLER_FORMATS: Record<CallerWireFormat, CallerFormat> = {
  openai: openaiChat,
  anthropic: anthropicMessages,
  gemini,
}

/** The formats providers speak: each is written from the canonical call, and its answers read. */
const PROVIDER_FORMATS: Partial<Record<WireFormat, ProviderFormat>> = {
  openai: openaiChat,
  anthropic: anthropicMessages,
  bedrock: bedrockConverse,
  gemini,
}

/** The names of both sides, sorted, each once. */
const named = (...lists: string[][]): string[] => [...new Set(lists.flat())].sort()

/** A translation through the canonical call: the caller's format read, the provider's written, and back. */
function through(caller: CallerFormat, provider: ProviderFormat, now: () => number): Translation {
  return {
    request(body, call) {
      const read = caller.readRequest(body)
      const given = call && { model: call.model, stream: read.call.stream ?? (call.stream || undefined) }
      // Gemini's thought signatures ride in call ids (see gemini.ts); no other provider wants them.
      const asked = { ...read.call, ...given }
      const written = provider.writeRequest(provider === gemini ? asked : withoutCarriedSignatures(asked))
      return { request: written.request, dropped: named(read.dropped, written.dropped), maxTokens: written.maxTokens }
    },
    response(body, model) {
      const answer = provider.readAnswer(body)
      return caller.writeAnswer(answer.model === '' && model ? { ...answer, model } : answer, { now })
    },
    stream(callerAskedForUsage, model) {
      const reader = provider.streamReader()
      const writer = caller.streamWriter({ includeUsage: callerAskedForUsage, now })
      const withModel = (delta: Delta): Delta =>
        delta.type === 'start' && delta.model === '' && model ? { ...delta, model } : delta
      return {
        push: (event: SseEvent) => reader.push(event).flatMap((delta) => writer.push(withModel(delta))),
        finish: () => writer.finish(),
        dropped: () => writer.dropped(),
      }
    },
  }
}

/**
 * The translation between two formats, or undefined when they are the same (passthrough) or either
 * side is one gw does not translate.
 */
export function translationBetween(
  caller: CallerWireFormat,
  provider: WireFormat,
  now: () => number = Date.now,
): Translation | undefined {
  if (caller === provider) return undefined
  const reads = CALLER_FORMATS[caller]
  const writes = PROVIDER_FORMATS[provider]
  if (!writes) return undefined
  if (now !== Date.now) return through(reads, writes, now)
  const pair = `${caller}->${provider}` as const
  let translation = PAIRS.get(pair)
  if (!translation) {
    translation = through(reads, writes, now)
    PAIRS.set(pair, translation)
  }
  return translation
}

/** Each pair's translation, made once: a call only asks for the one it needs. */
const PAIRS = new Map<`${CallerWireFormat}->${WireFormat}`, Translation>()

/** A translation warning with more names in it: `dropped: a, b`, sorted, each once. */
export function warningWith(warning: string | undefined, more: readonly string[]): string | undefined {
  if (more.length === 0) return warning
  const names = new Set([...(warning?.replace(/^dropped: /, '').split(', ') ?? []), ...more])
  return `dropped: ${[...names].sort().join(', ')}`
}
