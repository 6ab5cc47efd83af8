import type { WireFormat } from '../providers/provider'
import { chatResponseToMessages, createChatToMessagesStream, messagesRequestToChat } from './anthropic-to-openai'
import {
  chatRequestToMessages,
  createMessagesToChatStream,
  messagesResponseToChat,
  untranslatedBlocks,
} from './openai-to-anthropic'
import type { StreamTranslator } from './stream'
import type { AnthropicMessage, AnthropicMessagesRequest, OpenAIChatCompletion, OpenAIChatRequest } from './types'

/** How a body crosses from the caller's format to the provider's and back, for one pair of formats. */
export interface Translation {
  request(body: Record<string, unknown>): { request: Record<string, unknown>; dropped: string[] }
  /** The answer in the caller's format, and what of it that format cannot carry. */
  response(body: unknown): { body: unknown; dropped: string[] }
  stream(callerAskedForUsage: boolean): StreamTranslator
}

// The wire types are checked by the provider, not by gw: bodies are handed over as the caller sent them.
const TRANSLATIONS: Partial<Record<`${WireFormat}->${WireFormat}`, Translation>> = {
  'openai->anthropic': {
    request: (body) => {
      const { request, dropped } = chatRequestToMessages(body as unknown as OpenAIChatRequest)
      return { request: request as unknown as Record<string, unknown>, dropped }
    },
    response: (body) => ({ body: messagesResponseToChat(body as AnthropicMessage), dropped: untranslatedBlocks(body) }),
    stream: (includeUsage) => createMessagesToChatStream({ includeUsage }),
  },
  'anthropic->openai': {
    request: (body) => {
      const { request, dropped } = messagesRequestToChat(body as unknown as AnthropicMessagesRequest)
      return { request: request as unknown as Record<string, unknown>, dropped }
    },
    response: (body) => ({ body: chatResponseToMessages(body as OpenAIChatCompletion), dropped: [] }),
    stream: () => createChatToMessagesStream({}),
  },
}

/** The translation between two formats, or undefined when they are the same (passthrough) or none exists. */
export const translationBetween = (caller: WireFormat, provider: WireFormat): Translation | undefined =>
  caller === provider ? undefined : TRANSLATIONS[`${caller}->${provider}`]

/** A translation warning with more names in it: `dropped: a, b`, sorted, each once. */
export function warningWith(warning: string | undefined, more: readonly string[]): string | undefined {
  if (more.length === 0) return warning
  const names = new Set([...(warning?.replace(/^dropped: /, '').split(', ') ?? []), ...more])
  return `dropped: ${[...names].sort().join(', ')}`
}
