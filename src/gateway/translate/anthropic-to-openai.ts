/**
 * A caller speaks Anthropic Messages; the provider speaks OpenAI Chat Completions (OpenAI itself or
 * any server that copies its API). The reverse of `openai-to-anthropic.ts`: what OpenAI has no
 * field for is left out of the request and named in `dropped`.
 */
import type { SseEvent } from '../../util/sse'
import { eventPayload, type StreamTranslator } from './stream'
import {
  type AnthropicDeltaUsage,
  type AnthropicMessage,
  type AnthropicMessagesRequest,
  type AnthropicResponseBlock,
  type AnthropicStopReason,
  type AnthropicStreamEvent,
  type AnthropicUsage,
  finiteNumber,
  isRecord,
  isString,
  lookup,
  nameUntranslated,
  type OpenAIAssistantMessage,
  type OpenAIChatCompletion,
  type OpenAIChatRequest,
  type OpenAIFinishReason,
  type OpenAIFunctionTool,
  type OpenAIImagePart,
  type OpenAIMessage,
  type OpenAITextPart,
  type OpenAIToolCall,
  type OpenAIToolChoice,
  type OpenAIToolMessage,
  type OpenAIUserContentPart,
  parseArguments,
  wireName,
} from './types'

const TRANSLATED_FIELDS = new Set([
  'model',
  'max_tokens',
  'messages',
  'system',
  'temperature',
  'top_p',
  'stop_sequences',
  'stream',
  'metadata',
  'tools',
  'tool_choice',
])

const MESSAGE_FIELDS = new Set(['role', 'content'])
const TEXT_FIELDS = new Set(['type', 'text'])
const IMAGE_FIELDS = new Set(['type', 'source'])
const TOOL_USE_FIELDS = new Set(['type', 'id', 'name', 'input'])
const TOOL_RESULT_FIELDS = new Set(['type', 'tool_use_id', 'content', 'is_error'])
const TOOL_FIELDS = new Set(['type', 'name', 'description', 'input_schema', 'strict'])
const METADATA_FIELDS = new Set(['user_id'])

export function messagesRequestToChat(body: AnthropicMessagesRequest): { request: OpenAIChatRequest; dropped: string[] } {
  const dropped = new Set<string>()
  nameUntranslated(body, TRANSLATED_FIELDS, '', dropped)

  const messages: OpenAIMessage[] = []
  const system = systemContent(body.system, dropped)
  if (system !== undefined) messages.push({ role: 'system', content: system })
  if (Array.isArray(body.messages)) for (const message of body.messages) messages.push(...chatMessages(message, dropped))
  else if (body.messages !== undefined) dropped.add('messages')

  const request: OpenAIChatRequest = { model: body.model, messages }
  const maxTokens = readNumber(body, 'max_tokens', dropped)
  if (maxTokens !== undefined) request.max_completion_tokens = maxTokens
  const temperature = readNumber(body, 'temperature', dropped)
  if (temperature !== undefined) request.temperature = temperature
  const topP = readNumber(body, 'top_p', dropped)
  if (topP !== undefined) request.top_p = topP
  if (Array.isArray(body.stop_sequences) && body.stop_sequences.every(isString)) {
    if (body.stop_sequences.length > 0) request.stop = body.stop_sequences
  } else if (body.stop_sequences !== undefined) dropped.add('stop_sequences')
  if (body.stream === true) {
    // An Anthropic stream always ends with the usage; OpenAI sends it only when asked.
    request.stream = true
    request.stream_options = { include_usage: true }
  } else if (body.stream === false) request.stream = false
  if (isRecord(body.metadata)) {
    nameUntranslated(body.metadata, METADATA_FIELDS, 'metadata.', dropped)
    if (isString(body.metadata.user_id)) request.user = body.metadata.user_id
  }
  const tools = toolsOf(body.tools, dropped)
  if (tools.length > 0) request.tools = tools
  applyToolChoice(request, body.tool_choice, tools.length > 0, dropped)
  return { request, dropped: [...dropped].sort() }
}

function readNumber(body: AnthropicMessagesRequest, field: string, dropped: Set<string>): number | undefined {
  const value = body[field]
  const number = finiteNumber(value)
  if (number === undefined && value !== undefined && value !== null) dropped.add(field)
  return number
}

/** One text stays a plain string, which every OpenAI-compatible server understands. */
function textContent(parts: OpenAITextPart[]): string | OpenAITextPart[] {
  const [first, ...rest] = parts
  return first && rest.length === 0 ? first.text : parts
}

function systemContent(system: unknown, dropped: Set<string>): string | OpenAITextPart[] | undefined {
  if (system === undefined || system === null) return undefined
  if (isString(system)) return system === '' ? undefined : system
  if (!Array.isArray(system)) {
    dropped.add('system')
    return undefined
  }
  const parts: OpenAITextPart[] = []
  for (const block of system) {
    if (isRecord(block) && block.type === 'text' && isString(block.text)) {
      nameUntranslated(block, TEXT_FIELDS, 'system[].', dropped)
      parts.push({ type: 'text', text: block.text })
    } else dropped.add(`system[].type=${wireName(isRecord(block) ? block.type : undefined)}`)
  }
  return parts.length > 0 ? textContent(parts) : undefined
}

function blocksOf(content: unknown, dropped: Set<string>): Array<Record<string, unknown>> {
  if (!Array.isArray(content)) {
    dropped.add('messages[].content')
    return []
  }
  const blocks: Array<Record<string, unknown>> = []
  for (const block of content) {
    if (isRecord(block)) blocks.push(block)
    else dropped.add('messages[].content[].type=unknown')
  }
  return blocks
}

function chatMessages(message: unknown, dropped: Set<string>): OpenAIMessage[] {
  if (!isRecord(message)) {
    dropped.add('messages[]')
    return []
  }
  nameUntranslated(message, MESSAGE_FIELDS, 'messages[].', dropped)
  if (message.role === 'user') {
    if (isString(message.content)) return [{ role: 'user', content: message.content }]
    return userMessages(blocksOf(message.content, dropped), dropped)
  }
  if (message.role === 'assistant') {
    if (isString(message.content)) return [{ role: 'assistant', content: message.content }]
    const reply = assistantMessage(blocksOf(message.content, dropped), dropped)
    return reply ? [reply] : []
  }
  dropped.add(`messages[].role=${wireName(message.role)}`)
  return []
}

/**
 * Tool results become `tool` messages, which OpenAI wants right after the assistant's tool calls,
 * so they go before whatever else the user turn says.
 */
function userMessages(blocks: Array<Record<string, unknown>>, dropped: Set<string>): OpenAIMessage[] {
  const results: OpenAIToolMessage[] = []
  const parts: OpenAIUserContentPart[] = []
  for (const block of blocks) {
    if (block.type === 'text' && isString(block.text)) {
      nameUntranslated(block, TEXT_FIELDS, 'messages[].content[].', dropped)
      parts.push({ type: 'text', text: block.text })
    } else if (block.type === 'image') {
      nameUntranslated(block, IMAGE_FIELDS, 'messages[].content[].', dropped)
      const image = imagePart(block.source, dropped)
      if (image) parts.push(image)
    } else if (block.type === 'tool_result') {
      results.push(toolMessage(block, dropped))
    } else {
      dropped.add(`messages[].content[].type=${wireName(block.type)}`)
    }
  }
  if (parts.length === 0) return results
  const [first, ...rest] = parts
  const content = first?.type === 'text' && rest.length === 0 ? first.text : parts
  return [...results, { role: 'user', content }]
}

function imagePart(source: unknown, dropped: Set<string>): OpenAIImagePart | undefined {
  if (isRecord(source) && source.type === 'base64' && isString(source.media_type) && isString(source.data)) {
    return { type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` } }
  }
  if (isRecord(source) && source.type === 'url' && isString(source.url))
    return { type: 'image_url', image_url: { url: source.url } }
  // Anthropic's Files API ids (source type "file") mean nothing to an OpenAI-compatible server.
  dropped.add(`messages[].content[].source.type=${wireName(isRecord(source) ? source.type : undefined)}`)
  return undefined
}

/** OpenAI's tool messages hold text only, and have no way to say the tool failed. */
function toolMessage(block: Record<string, unknown>, dropped: Set<string>): OpenAIToolMessage {
  nameUntranslated(block, TOOL_RESULT_FIELDS, 'messages[].content[].', dropped)
  if (block.is_error === true) dropped.add('messages[].content[].is_error')
  const toolCallId = isString(block.tool_use_id) ? block.tool_use_id : ''
  if (isString(block.content) || block.content === undefined || block.content === null) {
    return { role: 'tool', tool_call_id: toolCallId, content: isString(block.content) ? block.content : '' }
  }
  const parts: OpenAITextPart[] = []
  for (const inner of blocksOf(block.content, dropped)) {
    if (inner.type === 'text' && isString(inner.text)) parts.push({ type: 'text', text: inner.text })
    else dropped.add(`messages[].content[].content[].type=${wireName(inner.type)}`)
  }
  return { role: 'tool', tool_call_id: toolCallId, content: parts.length > 0 ? textContent(parts) : '' }
}

/** Text blocks are one reply, so they are joined; earlier thinking cannot be sent to OpenAI and is named. */
function assistantMessage(blocks: Array<Record<string, unknown>>, dropped: Set<string>): OpenAIAssistantMessage | undefined {
  let text = ''
  const toolCalls: OpenAIToolCall[] = []
  for (const block of blocks) {
    if (block.type === 'text' && isString(block.text)) {
      nameUntranslated(block, TEXT_FIELDS, 'messages[].content[].', dropped)
      text += block.text
    } else if (block.type === 'tool_use' && isString(block.id) && isString(block.name)) {
      nameUntranslated(block, TOOL_USE_FIELDS, 'messages[].content[].', dropped)
      toolCalls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) },
      })
    } else {
      dropped.add(`messages[].content[].type=${wireName(block.type)}`)
    }
  }
  if (text === '' && toolCalls.length === 0) return undefined
  const reply: OpenAIAssistantMessage = { role: 'assistant', content: text === '' ? null : text }
  if (toolCalls.length > 0) reply.tool_calls = toolCalls
  return reply
}

/** Tools the caller runs become functions; Anthropic's server tools (web search, bash, ...) have no OpenAI twin. */
function toolsOf(tools: unknown, dropped: Set<string>): OpenAIFunctionTool[] {
  if (tools === undefined || tools === null) return []
  if (!Array.isArray(tools)) {
    dropped.add('tools')
    return []
  }
  const translated: OpenAIFunctionTool[] = []
  for (const tool of tools) {
    const custom = isRecord(tool) && (tool.type === undefined || tool.type === null || tool.type === 'custom')
    if (!custom || !isString(tool.name)) {
      dropped.add(`tools[].type=${wireName(isRecord(tool) ? tool.type : undefined)}`)
      continue
    }
    nameUntranslated(tool, TOOL_FIELDS, 'tools[].', dropped)
    const fn: OpenAIFunctionTool['function'] = {
      name: tool.name,
      parameters: isRecord(tool.input_schema) ? tool.input_schema : { type: 'object', properties: {} },
    }
    if (isString(tool.description)) fn.description = tool.description
    if (tool.strict === true) fn.strict = true
    translated.push({ type: 'function', function: fn })
  }
  return translated
}

/**
 * Anthropic's `disable_parallel_tool_use` is OpenAI's `parallel_tool_calls: false`. Without tools a
 * choice has nothing to choose from: `auto` and `none` then change nothing, anything else is named.
 */
function applyToolChoice(request: OpenAIChatRequest, choice: unknown, hasTools: boolean, dropped: Set<string>): void {
  if (choice === undefined || choice === null) return
  let translated: OpenAIToolChoice | undefined
  if (isRecord(choice) && choice.type === 'auto') translated = 'auto'
  else if (isRecord(choice) && choice.type === 'any') translated = 'required'
  else if (isRecord(choice) && choice.type === 'none') translated = 'none'
  else if (isRecord(choice) && choice.type === 'tool' && isString(choice.name)) {
    translated = { type: 'function', function: { name: choice.name } }
  }
  if (!translated || (!hasTools && translated !== 'auto' && translated !== 'none')) {
    dropped.add('tool_choice')
    return
  }
  if (!hasTools) return
  request.tool_choice = translated
  if (isRecord(choice) && choice.disable_parallel_tool_use === true && translated !== 'none') request.parallel_tool_calls = false
}

// ---------------------------------------------------------------------------------------------
// The answer

const STOP_REASONS: Record<OpenAIFinishReason, AnthropicStopReason> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'end_turn',
}

/**
 * Some OpenAI-compatible servers finish a tool-calling answer with "stop"; an Anthropic caller only
 * runs its tools on `tool_use`, so tool calls decide it.
 */
function stopReasonOf(finishReason: unknown, calledTools: boolean): AnthropicStopReason {
  const reason = lookup(STOP_REASONS, finishReason) ?? 'end_turn'
  return calledTools && reason === 'end_turn' ? 'tool_use' : reason
}

/** OpenAI's prompt count includes the cached tokens; Anthropic's input count leaves them out. */
function messagesUsage(usage: unknown): AnthropicUsage {
  const counts = isRecord(usage) ? usage : {}
  const details = isRecord(counts.prompt_tokens_details) ? counts.prompt_tokens_details : {}
  const cached = finiteNumber(details.cached_tokens) ?? 0
  return {
    input_tokens: Math.max(0, (finiteNumber(counts.prompt_tokens) ?? 0) - cached),
    output_tokens: finiteNumber(counts.completion_tokens) ?? 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cached,
  }
}

/** Only the first choice is read: an Anthropic message has one answer. */
export function chatResponseToMessages(completion: OpenAIChatCompletion): AnthropicMessage {
  const choice = Array.isArray(completion.choices) ? completion.choices[0] : undefined
  const message: Record<string, unknown> = isRecord(choice) && isRecord(choice.message) ? choice.message : {}
  const content: AnthropicResponseBlock[] = []
  if (isString(message.content) && message.content !== '') content.push({ type: 'text', text: message.content })
  // A refusal is what the model said instead of an answer, so the caller sees it as the text.
  if (isString(message.refusal) && message.refusal !== '') content.push({ type: 'text', text: message.refusal })
  for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
    const fn = isRecord(call) ? call.function : undefined
    if (!isRecord(call) || !isString(call.id) || !isRecord(fn) || !isString(fn.name)) continue
    content.push({ type: 'tool_use', id: call.id, name: fn.name, input: argumentsObject(fn.arguments) })
  }
  if (isRecord(message.function_call) && isString(message.function_call.name)) {
    // The pre-tools form has no call id; the completion's id makes one that is unique enough.
    const input = argumentsObject(message.function_call.arguments)
    content.push({ type: 'tool_use', id: `call_${completion.id}`, name: message.function_call.name, input })
  }
  return {
    id: `msg_${completion.id}`,
    type: 'message',
    role: 'assistant',
    model: completion.model,
    content,
    stop_reason: stopReasonOf(
      isRecord(choice) ? choice.finish_reason : undefined,
      content.some((block) => block.type === 'tool_use'),
    ),
    stop_sequence: null,
    usage: messagesUsage(completion.usage),
  }
}

/** Anthropic takes tool input as an object; arguments that do not parse to one become `{}`. */
const argumentsObject = (text: unknown): Record<string, unknown> => (isString(text) ? parseArguments(text) : undefined) ?? {}

const emit = (event: AnthropicStreamEvent): SseEvent => ({ event: event.type, data: JSON.stringify(event) })

type OpenBlock = { index: number; kind: 'text' | 'tool' }

/**
 * OpenAI's chunks only carry deltas; an Anthropic stream opens and closes a block around each piece
 * of content. Text and each tool call become blocks in the order they appear; `message_delta` and
 * `message_stop` wait for `[DONE]` because the usage chunk comes after the finish reason. Only the
 * first choice is followed. A chunk carrying `error` produces nothing: the relay reports the failure.
 */
export function createChatToMessagesStream(options: { now?: () => number } = {}): StreamTranslator {
  const now = options.now ?? Date.now
  let started = false
  let done = false
  let messageId = ''
  let nextIndex = 0
  let open: OpenBlock | undefined
  let finishReason: unknown
  let calledTools = false
  let usage: unknown
  /** OpenAI's tool-call index -> the Anthropic block that carries that call. */
  const toolBlocks = new Map<number, { index: number; callId: string }>()

  const start = (chunk: Record<string, unknown>): SseEvent => {
    started = true
    messageId = `msg_${isString(chunk.id) ? chunk.id : now()}`
    const message: AnthropicMessage = {
      id: messageId,
      type: 'message',
      role: 'assistant',
      model: isString(chunk.model) ? chunk.model : '',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      // OpenAI reports usage at the end; message_delta carries it then.
      usage: messagesUsage(chunk.usage),
    }
    return emit({ type: 'message_start', message })
  }

  const closeOpen = (): SseEvent[] => {
    if (!open) return []
    const stop = emit({ type: 'content_block_stop', index: open.index })
    open = undefined
    return [stop]
  }

  const text = (piece: string): SseEvent[] => {
    const out: SseEvent[] = []
    if (open?.kind !== 'text') {
      out.push(...closeOpen())
      open = { index: nextIndex++, kind: 'text' }
      out.push(emit({ type: 'content_block_start', index: open.index, content_block: { type: 'text', text: '' } }))
    }
    out.push(emit({ type: 'content_block_delta', index: open.index, delta: { type: 'text_delta', text: piece } }))
    return out
  }

  const toolCall = (call: unknown): SseEvent[] => {
    if (!isRecord(call)) return []
    const out: SseEvent[] = []
    const position = finiteNumber(call.index) ?? 0
    const fn = isRecord(call.function) ? call.function : {}
    let block = toolBlocks.get(position)
    // A new id at a known index is a new call from a server that does not number its calls.
    if (!block || (isString(call.id) && call.id !== block.callId)) {
      calledTools = true
      out.push(...closeOpen())
      block = { index: nextIndex++, callId: isString(call.id) ? call.id : `call_${messageId}_${position}` }
      toolBlocks.set(position, block)
      open = { index: block.index, kind: 'tool' }
      const name = isString(fn.name) ? fn.name : ''
      out.push(
        emit({
          type: 'content_block_start',
          index: block.index,
          content_block: { type: 'tool_use', id: block.callId, name, input: {} },
        }),
      )
    }
    // Pieces of an earlier call, sent after another block opened, still go to that call's own index.
    if (isString(fn.arguments) && fn.arguments !== '') {
      out.push(
        emit({
          type: 'content_block_delta',
          index: block.index,
          delta: { type: 'input_json_delta', partial_json: fn.arguments },
        }),
      )
    }
    return out
  }

  const end = (): SseEvent[] => {
    done = true
    const counts = messagesUsage(usage)
    const deltaUsage: AnthropicDeltaUsage = {
      output_tokens: counts.output_tokens,
      ...(usage === undefined
        ? {}
        : { input_tokens: counts.input_tokens, cache_read_input_tokens: counts.cache_read_input_tokens }),
    }
    // No finish reason from the provider means none is claimed here either.
    const stopReason = finishReason === undefined ? null : stopReasonOf(finishReason, calledTools)
    return [
      ...closeOpen(),
      emit({ type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: deltaUsage }),
      emit({ type: 'message_stop' }),
    ]
  }

  return {
    push(event) {
      if (done) return []
      if (event.data === '[DONE]') return [...(started ? [] : [start({})]), ...end()]
      const chunk = eventPayload(event)
      if (!isRecord(chunk) || chunk.error !== undefined) return []
      const out: SseEvent[] = started ? [] : [start(chunk)]
      if (isRecord(chunk.usage)) usage = chunk.usage
      const choices = Array.isArray(chunk.choices) ? chunk.choices : []
      const choice = choices.find((candidate) => isRecord(candidate) && (candidate.index ?? 0) === 0)
      if (!isRecord(choice)) return out
      const delta = isRecord(choice.delta) ? choice.delta : {}
      for (const piece of [delta.content, delta.refusal]) if (isString(piece) && piece !== '') out.push(...text(piece))
      if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls) out.push(...toolCall(call))
      if (isString(choice.finish_reason)) {
        finishReason = choice.finish_reason
        out.push(...closeOpen())
      }
      return out
    },
    // Everything is sent at [DONE]; without it, only a finish reason already seen justifies an end.
    finish: () => (done || finishReason === undefined ? [] : end()),
    dropped: () => [],
  }
}
