/**
 * A caller speaks OpenAI Chat Completions; the provider speaks Anthropic Messages. The request goes
 * one way, the answer (whole or streamed) comes back the other. What Anthropic has no field for is
 * left out of the request and named in `dropped`, so the gateway can tell the caller.
 */
import type { SseEvent } from '../../util/sse'
import { eventPayload, type StreamTranslator } from './stream'
import {
  type AnthropicImageBlock,
  type AnthropicMessage,
  type AnthropicMessageParam,
  type AnthropicMessagesRequest,
  type AnthropicRequestBlock,
  type AnthropicStopReason,
  type AnthropicTextBlock,
  type AnthropicTool,
  type AnthropicToolChoice,
  type AnthropicToolResultBlock,
  type AnthropicToolUseBlock,
  finiteNumber,
  isRecord,
  isString,
  lookup,
  nameUntranslated,
  type OpenAIChatChunk,
  type OpenAIChatCompletion,
  type OpenAIChatRequest,
  type OpenAIChunkDelta,
  type OpenAIFinishReason,
  type OpenAIResponseMessage,
  type OpenAIToolCall,
  type OpenAIUsage,
  parseArguments,
  wireName,
} from './types'

/** Anthropic insists on `max_tokens`; OpenAI callers usually leave the limit to the server. */
const DEFAULT_MAX_TOKENS = 4096

const TRANSLATED_FIELDS = new Set([
  'model',
  'messages',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'stop',
  'stream',
  'user',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  // include_usage is honoured by the translated stream itself; its other options are named below.
  'stream_options',
])

/** What of `stream_options` a translated stream carries out. */
const STREAM_OPTION_FIELDS = new Set(['include_usage'])

/** Values that ask for no more than Anthropic does anyway: leaving them out loses nothing. */
const NEUTRAL_VALUES = new Map<string, unknown>([
  ['n', 1],
  ['logprobs', false],
  ['presence_penalty', 0],
  ['frequency_penalty', 0],
])

const MESSAGE_FIELDS = new Set(['role', 'content', 'tool_calls', 'tool_call_id', 'refusal'])
const TEXT_PART_FIELDS = new Set(['type', 'text'])
const IMAGE_PART_FIELDS = new Set(['type', 'image_url'])
const FUNCTION_FIELDS = new Set(['name', 'description', 'parameters', 'strict'])

/** Anthropic has one system prompt, so instructions anywhere in the conversation end up in it. */
interface Conversation {
  system: AnthropicTextBlock[]
  turns: Array<{ role: 'user' | 'assistant'; content: AnthropicRequestBlock[] }>
}

export function chatRequestToMessages(body: OpenAIChatRequest): { request: AnthropicMessagesRequest; dropped: string[] } {
  const dropped = new Set<string>()
  const meaningful = Object.fromEntries(Object.entries(body).filter(([field, value]) => NEUTRAL_VALUES.get(field) !== value))
  nameUntranslated(meaningful, TRANSLATED_FIELDS, '', dropped)
  if (isRecord(body.stream_options)) nameUntranslated(body.stream_options, STREAM_OPTION_FIELDS, 'stream_options.', dropped)
  else if (body.stream_options !== undefined && body.stream_options !== null) dropped.add('stream_options')

  const conversation: Conversation = { system: [], turns: [] }
  if (Array.isArray(body.messages)) for (const message of body.messages) addMessage(conversation, message, dropped)
  else if (body.messages !== undefined) dropped.add('messages')

  const request: AnthropicMessagesRequest = {
    model: body.model,
    max_tokens:
      readNumber(body, 'max_completion_tokens', dropped) ?? readNumber(body, 'max_tokens', dropped) ?? DEFAULT_MAX_TOKENS,
    messages: conversation.turns.map(toMessageParam),
  }
  const [onlyInstruction, ...moreInstructions] = conversation.system
  if (onlyInstruction) request.system = moreInstructions.length === 0 ? onlyInstruction.text : conversation.system
  const temperature = readNumber(body, 'temperature', dropped)
  if (temperature !== undefined) request.temperature = temperature
  const topP = readNumber(body, 'top_p', dropped)
  if (topP !== undefined) request.top_p = topP
  const stop = stopSequences(body.stop, dropped)
  if (stop.length > 0) request.stop_sequences = stop
  if (typeof body.stream === 'boolean') request.stream = body.stream
  if (isString(body.user)) request.metadata = { user_id: body.user }
  else if (body.user !== undefined && body.user !== null) dropped.add('user')
  const tools = toolsOf(body.tools, dropped)
  if (tools.length > 0) request.tools = tools
  const toolChoice = toolChoiceOf(body, tools.length > 0, dropped)
  if (toolChoice) request.tool_choice = toolChoice
  return { request, dropped: [...dropped].sort() }
}

/** A number field's value; a value of another kind cannot be carried over, so it is named. */
function readNumber(body: OpenAIChatRequest, field: string, dropped: Set<string>): number | undefined {
  const value = body[field]
  const number = finiteNumber(value)
  if (number === undefined && value !== undefined && value !== null) dropped.add(field)
  return number
}

function stopSequences(stop: unknown, dropped: Set<string>): string[] {
  if (stop === undefined || stop === null) return []
  const sequences = Array.isArray(stop) ? stop : [stop]
  if (!sequences.every(isString)) {
    dropped.add('stop')
    return []
  }
  return sequences
}

function addMessage(conversation: Conversation, message: unknown, dropped: Set<string>): void {
  if (!isRecord(message)) {
    dropped.add('messages[]')
    return
  }
  nameUntranslated(message, MESSAGE_FIELDS, 'messages[].', dropped)
  switch (message.role) {
    case 'system':
    case 'developer':
      conversation.system.push(...textBlocks(message.content, dropped))
      break
    case 'user':
      addTurn(conversation, 'user', userBlocks(message.content, dropped))
      break
    case 'assistant':
      addTurn(conversation, 'assistant', assistantBlocks(message, dropped))
      break
    case 'tool':
      addTurn(conversation, 'user', [toolResultBlock(message, dropped)])
      break
    default:
      dropped.add(`messages[].role=${wireName(message.role)}`)
  }
}

/** Anthropic wants user and assistant to take turns, so consecutive messages of one role become one. */
function addTurn(conversation: Conversation, role: 'user' | 'assistant', blocks: AnthropicRequestBlock[]): void {
  if (blocks.length === 0) return
  const last = conversation.turns.at(-1)
  if (last?.role === role) last.content.push(...blocks)
  else conversation.turns.push({ role, content: blocks })
}

function toMessageParam(turn: Conversation['turns'][number]): AnthropicMessageParam {
  // Tool results must open the user turn that answers the tool calls; text the caller put between
  // them (rare) moves after them rather than making Anthropic refuse the request.
  const content =
    turn.role === 'user'
      ? [
          ...turn.content.filter((block) => block.type === 'tool_result'),
          ...turn.content.filter((block) => block.type !== 'tool_result'),
        ]
      : turn.content
  const [first, ...rest] = content
  return { role: turn.role, content: first?.type === 'text' && rest.length === 0 ? first.text : content }
}

/** Anthropic rejects text blocks with nothing but whitespace in them; such text says nothing and is left out. */
const saysSomething = (text: string): boolean => text.trim() !== ''

function textBlocks(content: unknown, dropped: Set<string>): AnthropicTextBlock[] {
  if (isString(content)) return saysSomething(content) ? [{ type: 'text', text: content }] : []
  const blocks: AnthropicTextBlock[] = []
  for (const part of contentParts(content, dropped)) {
    if (part.type === 'text' && isString(part.text)) {
      nameUntranslated(part, TEXT_PART_FIELDS, 'messages[].content[].', dropped)
      if (saysSomething(part.text)) blocks.push({ type: 'text', text: part.text })
    } else {
      dropped.add(`messages[].content[].type=${wireName(part.type)}`)
    }
  }
  return blocks
}

function contentParts(content: unknown, dropped: Set<string>): Array<Record<string, unknown>> {
  if (content === undefined || content === null) return []
  if (!Array.isArray(content)) {
    dropped.add('messages[].content')
    return []
  }
  const parts: Array<Record<string, unknown>> = []
  for (const part of content) {
    if (isRecord(part)) parts.push(part)
    else dropped.add('messages[].content[].type=unknown')
  }
  return parts
}

function userBlocks(content: unknown, dropped: Set<string>): AnthropicRequestBlock[] {
  if (isString(content)) return textBlocks(content, dropped)
  const blocks: AnthropicRequestBlock[] = []
  for (const part of contentParts(content, dropped)) {
    if (part.type === 'image_url') {
      nameUntranslated(part, IMAGE_PART_FIELDS, 'messages[].content[].', dropped)
      const image = imageBlock(part.image_url, dropped)
      if (image) blocks.push(image)
    } else {
      blocks.push(...textBlocks([part], dropped))
    }
  }
  return blocks
}

/** A data: URL becomes inline base64; an http(s) URL is fetched by Anthropic itself. */
function imageBlock(imageUrl: unknown, dropped: Set<string>): AnthropicImageBlock | undefined {
  const url = isRecord(imageUrl) ? imageUrl.url : undefined
  if (isRecord(imageUrl) && imageUrl.detail !== undefined && imageUrl.detail !== 'auto')
    dropped.add('messages[].content[].image_url.detail')
  const inline = isString(url) ? /^data:([\w.+-]+\/[\w.+-]+);base64,(.+)$/s.exec(url) : null
  if (inline?.[1] && inline[2]) return { type: 'image', source: { type: 'base64', media_type: inline[1], data: inline[2] } }
  if (isString(url) && /^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url } }
  dropped.add('messages[].content[].image_url')
  return undefined
}

function assistantBlocks(message: Record<string, unknown>, dropped: Set<string>): AnthropicRequestBlock[] {
  const blocks: AnthropicRequestBlock[] = []
  // A refusal the model gave earlier is part of what it said; Anthropic has no separate field for it.
  const parts = isString(message.content) ? [{ type: 'text', text: message.content }] : contentParts(message.content, dropped)
  const asText = parts.map((part) => (part.type === 'refusal' ? { type: 'text', text: part.refusal } : part))
  blocks.push(...textBlocks(asText, dropped))
  if (isString(message.refusal)) blocks.push(...textBlocks(message.refusal, dropped))
  if (message.tool_calls === undefined || message.tool_calls === null) return blocks
  if (!Array.isArray(message.tool_calls)) {
    dropped.add('messages[].tool_calls')
    return blocks
  }
  for (const call of message.tool_calls) {
    const toolUse = toolUseBlock(call, dropped)
    if (toolUse) blocks.push(toolUse)
  }
  return blocks
}

function toolUseBlock(call: unknown, dropped: Set<string>): AnthropicToolUseBlock | undefined {
  if (isRecord(call) && (call.type ?? 'function') !== 'function') {
    dropped.add(`messages[].tool_calls[].type=${wireName(call.type)}`)
    return undefined
  }
  const fn = isRecord(call) ? call.function : undefined
  if (!isRecord(call) || !isString(call.id) || !isRecord(fn) || !isString(fn.name)) {
    dropped.add('messages[].tool_calls[]')
    return undefined
  }
  // Anthropic takes the arguments as an object; arguments that are not one cannot be sent as written.
  const text = isString(fn.arguments) ? fn.arguments.trim() : ''
  const input = text === '' ? {} : parseArguments(text)
  if (!input) dropped.add('messages[].tool_calls[].function.arguments')
  return { type: 'tool_use', id: call.id, name: fn.name, input: input ?? {} }
}

function toolResultBlock(message: Record<string, unknown>, dropped: Set<string>): AnthropicToolResultBlock {
  const block: AnthropicToolResultBlock = {
    type: 'tool_result',
    tool_use_id: isString(message.tool_call_id) ? message.tool_call_id : '',
  }
  if (isString(message.content)) {
    if (message.content !== '') block.content = message.content
  } else {
    const texts = textBlocks(message.content, dropped)
    if (texts.length > 0) block.content = texts
  }
  return block
}

function toolsOf(tools: unknown, dropped: Set<string>): AnthropicTool[] {
  if (tools === undefined || tools === null) return []
  if (!Array.isArray(tools)) {
    dropped.add('tools')
    return []
  }
  const translated: AnthropicTool[] = []
  for (const tool of tools) {
    if (isRecord(tool) && tool.type !== 'function') {
      dropped.add(`tools[].type=${wireName(tool.type)}`)
      continue
    }
    const fn = isRecord(tool) ? tool.function : undefined
    if (!isRecord(tool) || !isRecord(fn) || !isString(fn.name)) {
      dropped.add('tools[]')
      continue
    }
    nameUntranslated(fn, FUNCTION_FIELDS, 'tools[].function.', dropped)
    // A function without parameters takes none; Anthropic still wants a schema that says so.
    const schema = isRecord(fn.parameters) ? fn.parameters : { type: 'object', properties: {} }
    const entry: AnthropicTool = { name: fn.name, input_schema: schema }
    if (isString(fn.description)) entry.description = fn.description
    if (fn.strict === true) entry.strict = true
    translated.push(entry)
  }
  return translated
}

/**
 * `parallel_tool_calls: false` lives inside Anthropic's tool choice. Without tools, a choice has
 * nothing to choose from: `auto` and `none` then change nothing, anything else is named.
 */
function toolChoiceOf(body: OpenAIChatRequest, hasTools: boolean, dropped: Set<string>): AnthropicToolChoice | undefined {
  const choice = body.tool_choice
  let translated: AnthropicToolChoice | undefined
  if (choice === 'auto') translated = { type: 'auto' }
  else if (choice === 'none') translated = { type: 'none' }
  else if (choice === 'required') translated = { type: 'any' }
  else if (isRecord(choice) && choice.type === 'function' && isRecord(choice.function) && isString(choice.function.name)) {
    translated = { type: 'tool', name: choice.function.name }
  } else if (choice !== undefined && choice !== null) dropped.add('tool_choice')

  if (!hasTools) {
    if (translated && translated.type !== 'auto' && translated.type !== 'none') dropped.add('tool_choice')
    return undefined
  }
  if (body.parallel_tool_calls === false && translated?.type !== 'none') {
    return { ...(translated ?? { type: 'auto' }), disable_parallel_tool_use: true }
  }
  return translated
}

// ---------------------------------------------------------------------------------------------
// The answer

const FINISH_REASONS: Record<AnthropicStopReason, OpenAIFinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  // Anthropic pauses a long server-tool turn; the caller sees a finished turn it may continue.
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
}

/** Anthropic's input count leaves the cached parts out; OpenAI's prompt count has them in. */
function chatUsage(usage: unknown): OpenAIUsage {
  const counts = isRecord(usage) ? usage : {}
  const cacheRead = finiteNumber(counts.cache_read_input_tokens) ?? 0
  const cacheWrite = finiteNumber(counts.cache_creation_input_tokens) ?? 0
  const promptTokens = (finiteNumber(counts.input_tokens) ?? 0) + cacheRead + cacheWrite
  const completionTokens = finiteNumber(counts.output_tokens) ?? 0
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: cacheRead },
  }
}

const unixSeconds = (now: () => number): number => Math.floor(now() / 1000)

/**
 * Text blocks are joined into one answer; thinking becomes `reasoning_content`, as OpenAI-compatible
 * servers name it. Redacted thinking is encrypted and cannot be carried (`untranslatedBlocks` names it).
 */
export function messagesResponseToChat(message: AnthropicMessage, options: { now?: () => number } = {}): OpenAIChatCompletion {
  let text = ''
  let reasoning = ''
  const toolCalls: OpenAIToolCall[] = []
  for (const block of Array.isArray(message.content) ? message.content : []) {
    if (!isRecord(block)) continue
    if (block.type === 'text' && isString(block.text)) text += block.text
    else if (block.type === 'thinking' && isString(block.thinking)) reasoning += block.thinking
    else if (block.type === 'tool_use' && isString(block.id) && isString(block.name)) {
      toolCalls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) },
      })
    }
  }
  // OpenAI says "no text" with null when the answer is only tool calls.
  const answer: OpenAIResponseMessage = {
    role: 'assistant',
    content: text === '' && toolCalls.length > 0 ? null : text,
    refusal: null,
  }
  if (toolCalls.length > 0) answer.tool_calls = toolCalls
  if (reasoning !== '') answer.reasoning_content = reasoning
  return {
    id: `chatcmpl-${message.id}`,
    object: 'chat.completion',
    created: unixSeconds(options.now ?? Date.now),
    model: message.model,
    choices: [
      { index: 0, message: answer, finish_reason: lookup(FINISH_REASONS, message.stop_reason) ?? 'stop', logprobs: null },
    ],
    usage: chatUsage(message.usage),
  }
}

/** What of an Anthropic answer a chat completion cannot carry: redacted (encrypted) thinking. */
export function untranslatedBlocks(message: unknown): string[] {
  const content = isRecord(message) && Array.isArray(message.content) ? message.content : []
  return content.some((block) => isRecord(block) && block.type === 'redacted_thinking') ? ['redacted_thinking'] : []
}

/**
 * Anthropic's stream names every step; OpenAI's only sends deltas. Blocks map onto one choice:
 * text deltas become content, each tool_use block one tool call numbered in order of appearance.
 * `ping` and `content_block_stop` have no counterpart. An `error` event produces nothing: the
 * provider's stream then ends without `message_stop`, and the relay reports the failure (OpenAI
 * has no in-stream error event that callers' SDKs agree on).
 */
export function createMessagesToChatStream(options: { includeUsage: boolean; now?: () => number }): StreamTranslator {
  const now = options.now ?? Date.now
  let id = ''
  let model = ''
  let created = 0
  let usage: Record<string, unknown> = {}
  let finishReason: OpenAIFinishReason | undefined
  let done = false
  const toolCallIndexOfBlock = new Map<number, number>()
  const dropped = new Set<string>()

  const chunk = (choices: OpenAIChatChunk['choices'], extra: Partial<OpenAIChatChunk> = {}): SseEvent => {
    // With usage asked for, OpenAI marks every chunk but the last with `usage: null`.
    const body: OpenAIChatChunk = {
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices,
      ...(options.includeUsage ? { usage: null } : {}),
      ...extra,
    }
    return { data: JSON.stringify(body) }
  }
  const delta = (change: OpenAIChunkDelta, finish: OpenAIFinishReason | null = null): SseEvent[] => [
    chunk([{ index: 0, delta: change, finish_reason: finish }]),
  ]
  const end = (): SseEvent[] => {
    done = true
    const usageChunk = options.includeUsage ? [chunk([], { usage: chatUsage(usage) })] : []
    return [...usageChunk, { data: '[DONE]' }]
  }

  const blockStart = (index: unknown, block: unknown): SseEvent[] => {
    if (!isRecord(block)) return []
    if (block.type === 'text') return isString(block.text) && block.text !== '' ? delta({ content: block.text }) : []
    if (block.type === 'thinking')
      return isString(block.thinking) && block.thinking !== '' ? delta({ reasoning_content: block.thinking }) : []
    if (block.type === 'redacted_thinking') dropped.add('redacted_thinking')
    if (block.type !== 'tool_use' || typeof index !== 'number') return []
    const toolIndex = toolCallIndexOfBlock.size
    toolCallIndexOfBlock.set(index, toolIndex)
    // Anthropic starts a tool_use with an empty input and streams it; some relays send it whole here.
    const input = isRecord(block.input) && Object.keys(block.input).length > 0 ? JSON.stringify(block.input) : ''
    const name = isString(block.name) ? block.name : ''
    return delta({
      tool_calls: [
        { index: toolIndex, id: isString(block.id) ? block.id : '', type: 'function', function: { name, arguments: input } },
      ],
    })
  }

  const blockDelta = (index: unknown, change: unknown): SseEvent[] => {
    if (!isRecord(change)) return []
    if (change.type === 'text_delta' && isString(change.text) && change.text !== '') return delta({ content: change.text })
    if (change.type === 'thinking_delta' && isString(change.thinking) && change.thinking !== '')
      return delta({ reasoning_content: change.thinking })
    const toolIndex = typeof index === 'number' ? toolCallIndexOfBlock.get(index) : undefined
    if (change.type !== 'input_json_delta' || toolIndex === undefined) return []
    if (!isString(change.partial_json) || change.partial_json === '') return []
    return delta({ tool_calls: [{ index: toolIndex, function: { arguments: change.partial_json } }] })
  }

  return {
    push(event) {
      const payload = eventPayload(event)
      if (done || !isRecord(payload)) return []
      switch (event.event ?? payload.type) {
        case 'message_start': {
          const message = isRecord(payload.message) ? payload.message : {}
          id = `chatcmpl-${isString(message.id) ? message.id : ''}`
          model = isString(message.model) ? message.model : ''
          created = unixSeconds(now)
          usage = isRecord(message.usage) ? message.usage : {}
          return delta({ role: 'assistant', content: '' })
        }
        case 'content_block_start':
          return blockStart(payload.index, payload.content_block)
        case 'content_block_delta':
          return blockDelta(payload.index, payload.delta)
        case 'message_delta': {
          // The delta's counts are totals so far; newer servers repeat the input side in it too.
          if (isRecord(payload.usage)) usage = { ...usage, ...withoutNulls(payload.usage) }
          const reason = isRecord(payload.delta) ? payload.delta.stop_reason : undefined
          if (reason === undefined || reason === null) return []
          finishReason = lookup(FINISH_REASONS, reason) ?? 'stop'
          return delta({}, finishReason)
        }
        case 'message_stop':
          return end()
        default:
          return []
      }
    },
    // Everything is sent by message_stop; without it, only a stop reason already seen justifies an end.
    finish: () => (done || finishReason === undefined ? [] : end()),
    dropped: () => [...dropped],
  }
}

const withoutNulls = (record: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(record).filter(([, value]) => value !== null && value !== undefined))
