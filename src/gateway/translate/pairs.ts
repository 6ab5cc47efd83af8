import type { SseEvent } from '../../util/sse'
import type { CallerWireFormat, WireFormat } from '../providers/provider'
import { anthropicMessages } from './anthropic-messages'
import { bedrockConverse } from './bedrock-converse'
import type { CallerFormat, ProviderFormat } from './canonical'
import { gemini } from './gemini'
import { openaiChat } from './openai-chat'
import type { StreamTranslator } from './stream'

/** How a body crosses from the caller's format to the provider's and back, for one pair of formats. */
export interface Translation {
  /** The request in the provider's format (the model in it when the format takes it there), and the output bound it sets. */
  request(body: Record<string, unknown>): { request: Record<string, unknown>; dropped: string[]; maxTokens?: number }
  /** The answer in the caller's format, and what of it that format cannot carry. */
  response(body: unknown): { body: unknown; dropped: string[] }
  stream(callerAskedForUsage: boolean): StreamTranslator
}

/** The formats callers speak: each is read into the canonical call, and its answers written back. */
const CALLER_FORMATS: Record<CallerWireFormat, CallerFormat> = {
  openai: openaiChat,
  anthropic: anthropicMessages,
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
    request(body) {
      const read = caller.readRequest(body)
      const written = provider.writeRequest(read.call)
      return { request: written.request, dropped: named(read.dropped, written.dropped), maxTokens: written.maxTokens }
    },
    response: (body) => caller.writeAnswer(provider.readAnswer(body), { now }),
    stream(callerAskedForUsage) {
      const reader = provider.streamReader()
      const writer = caller.streamWriter({ includeUsage: callerAskedForUsage, now })
      return {
        push: (event: SseEvent) => reader.push(event).flatMap((delta) => writer.push(delta)),
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
