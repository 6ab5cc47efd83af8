/**
 * Anthropic's Messages API, as callers speak it (the Anthropic SDK, Claude Code) and as Anthropic
 * answers: read into the canonical call and written from it, the answer and its stream both ways.
 */

import type { Usage } from '../../money/usage'
import type { SseEvent } from '../../util/sse'
import { asTokenCount } from '../providers/provider'
import {
  type Answer,
  type Block,
  type CallerFormat,
  type ChatCall,
  type Delta,
  type ImageBlock,
  type ProviderFormat,
  type StopReason,
  type StreamReader,
  type StreamWriter,
  settingName,
  type TextBlock,
  type ToolChoice,
  type ToolResultBlock,
  type ToolSpec,
  toolSpec,
  type WrittenRequest,
} from './canonical'
import { addTurn } from './openai-chat'
import { eventPayload } from './stream'
import {
  type AnthropicDeltaUsage,
  type AnthropicImageBlock,
  type AnthropicMessage,
  type AnthropicMessageParam,
  type AnthropicMessagesRequest,
  type AnthropicRequestBlock,
  type AnthropicResponseBlock,
  type AnthropicStopReason,
  type AnthropicStreamEvent,
  type AnthropicTextBlock,
  type AnthropicTool,
  type AnthropicToolChoice,
  type AnthropicUsage,
  finiteNumber,
  isRecord,
  isString,
  lookup,
  nameUntranslated,
  wireName,
} from './types'

// ---------------------------------------------------------------------------------------------
// The request, as a caller sends it

const READ_FIELDS = new Set([
  'model',
  'max_tokens',
  'messages',
  'system',
  'temperature',
  'top_p',
  'top_k',
  'stop_sequences',
  'stream',
  'metadata',
  'tools',
  'tool_choice',
  'thinking',
])

const MESSAGE_FIELDS = new Set(['role', 'content'])
const TEXT_FIELDS = new Set(['type', 'text'])
const IMAGE_FIELDS = new Set(['type', 'source'])
const TOOL_USE_FIELDS = new Set(['type', 'id', 'name', 'input'])
const TOOL_RESULT_FIELDS = new Set(['type', 'tool_use_id', 'content', 'is_error'])
const THINKING_FIELDS = new Set(['type', 'thinking', 'signature'])
const TOOL_FIELDS = new Set(['type', 'name', 'description', 'input_schema', 'strict'])
const METADATA_FIELDS = new Set(['user_id'])

/** The caller's name for each setting and part, for a provider that cannot carry it. */
const NAMES = {
  maxTokens: 'max_tokens',
  temperature: 'temperature',
  topP: 'top_p',
  topK: 'top_k',
  stop: 'stop_sequences',
  user: 'metadata.user_id',
  toolChoice: 'tool_choice',
  parallelToolCalls: 'tool_choice.disable_parallel_tool_use',
  thinkingBudget: 'thinking',
  thinking: 'messages[].content[].type=thinking',
  redactedThinking: 'messages[].content[].type=redacted_thinking',
  toolResultImage: 'messages[].content[].content[].type=image',
  toolResultError: 'messages[].content[].is_error',
  image: 'messages[].content[].source.type=url',
  toolStrict: 'tools[].strict',
} as const

function readRequest(body: Record<string, unknown>): { call: ChatCall; dropped: string[] } {
  const dropped = new Set<string>()
  nameUntranslated(body, READ_FIELDS, '', dropped)
  const call: ChatCall = {
    model: isString(body.model) ? body.model : '',
    system: systemBlocks(body.system, dropped),
    turns: [],
    stream: typeof body.stream === 'boolean' ? body.stream : undefined,
    tools: toolsOf(body.tools, dropped),
    names: { ...NAMES },
  }
  if (Array.isArray(body.messages)) for (const message of body.messages) addMessage(call, message, dropped)
  else if (body.messages !== undefined) dropped.add('messages')
  for (const [field, setting] of [
    ['max_tokens', 'maxTokens'],
    ['temperature', 'temperature'],
    ['top_p', 'topP'],
    ['top_k', 'topK'],
  ] as const) {
    const value = body[field]
    const number = finiteNumber(value)
    if (number !== undefined) call[setting] = number
    else if (value !== undefined && value !== null) dropped.add(field)
  }
  if (Array.isArray(body.stop_sequences) && body.stop_sequences.every(isString)) {
    if (body.stop_sequences.length > 0) call.stop = body.stop_sequences
  } else if (body.stop_sequences !== undefined) dropped.add('stop_sequences')
  if (isRecord(body.metadata)) {
    nameUntranslated(body.metadata, METADATA_FIELDS, 'metadata.', dropped)
    if (isString(body.metadata.user_id)) call.user = body.metadata.user_id
  }
  const budget = thinkingBudgetOf(body.thinking)
  if (budget !== undefined) call.thinkingBudget = budget
  else if (body.thinking !== undefined && body.thinking !== null) dropped.add('thinking')
  readToolChoice(call, body.tool_choice, dropped)
  return { call, dropped: [...dropped] }
}

/** `{type: "enabled", budget_tokens}` thinks within the budget; `{type: "disabled"}` is a budget of 0. */
function thinkingBudgetOf(thinking: unknown): number | undefined {
  if (!isRecord(thinking)) return undefined
  if (thinking.type === 'disabled') return 0
  return thinking.type === 'enabled' ? finiteNumber(thinking.budget_tokens) : undefined
}

function systemBlocks(system: unknown, dropped: Set<string>): TextBlock[] {
  if (system === undefined || system === null) return []
  if (isString(system)) return system === '' ? [] : [{ type: 'text', text: system }]
  if (!Array.isArray(system)) {
    dropped.add('system')
    return []
  }
  const blocks: TextBlock[] = []
  for (const block of system) {
    if (isRecord(block) && block.type === 'text' && isString(block.text)) {
      nameUntranslated(block, TEXT_FIELDS, 'system[].', dropped)
      blocks.push({ type: 'text', text: block.text })
    } else dropped.add(`system[].type=${wireName(isRecord(block) ? block.type : undefined)}`)
  }
  return blocks
}

function blocksOf(content: unknown, dropped: Set<string>, prefix = 'messages[].content'): Array<Record<string, unknown>> {
  if (!Array.isArray(content)) {
    dropped.add(prefix)
    return []
  }
  const blocks: Array<Record<string, unknown>> = []
  for (const block of content) {
    if (isRecord(block)) blocks.push(block)
    else dropped.add(`${prefix}[].type=unknown`)
  }
  return blocks
}

function addMessage(call: ChatCall, message: unknown, dropped: Set<string>): void {
  if (!isRecord(message)) {
    dropped.add('messages[]')
    return
  }
  nameUntranslated(message, MESSAGE_FIELDS, 'messages[].', dropped)
  if (message.role !== 'user' && message.role !== 'assistant') {
    dropped.add(`messages[].role=${wireName(message.role)}`)
    return
  }
  const role = message.role
  if (isString(message.content)) {
    addTurn(call.turns, role, [{ type: 'text', text: message.content }])
    return
  }
  const content: Block[] = []
  for (const block of blocksOf(message.content, dropped)) {
    const read = role === 'user' ? userBlock(block, dropped) : assistantBlock(block, dropped)
    if (read) content.push(read)
  }
  addTurn(call.turns, role, content)
}

function textBlock(block: Record<string, unknown>, prefix: string, dropped: Set<string>): TextBlock | undefined {
  if (!isString(block.text)) return undefined
  nameUntranslated(block, TEXT_FIELDS, prefix, dropped)
  return { type: 'text', text: block.text }
}

function imageBlock(block: Record<string, unknown>, prefix: string, dropped: Set<string>): ImageBlock | undefined {
  nameUntranslated(block, IMAGE_FIELDS, prefix, dropped)
  const source = block.source
  if (isRecord(source) && source.type === 'base64' && isString(source.media_type) && isString(source.data))
    return { type: 'image', source: { kind: 'base64', mediaType: source.media_type, data: source.data } }
  if (isRecord(source) && source.type === 'url' && isString(source.url))
    return { type: 'image', source: { kind: 'url', url: source.url } }
  // Anthropic's Files API ids (source type "file") mean nothing to another provider.
  dropped.add(`${prefix}source.type=${wireName(isRecord(source) ? source.type : undefined)}`)
  return undefined
}

function userBlock(block: Record<string, unknown>, dropped: Set<string>): Block | undefined {
  const prefix = 'messages[].content[].'
  if (block.type === 'text') {
    const text = textBlock(block, prefix, dropped)
    if (text) return text
  } else if (block.type === 'image') return imageBlock(block, prefix, dropped)
  else if (block.type === 'tool_result') return toolResult(block, dropped)
  dropped.add(`${prefix}type=${wireName(block.type)}`)
  return undefined
}

function toolResult(block: Record<string, unknown>, dropped: Set<string>): ToolResultBlock {
  nameUntranslated(block, TOOL_RESULT_FIELDS, 'messages[].content[].', dropped)
  const result: ToolResultBlock = {
    type: 'tool_result',
    callId: isString(block.tool_use_id) ? block.tool_use_id : '',
    content: [],
  }
  if (block.is_error === true) result.isError = true
  if (isString(block.content)) {
    if (block.content !== '') result.content.push({ type: 'text', text: block.content })
  } else if (block.content !== undefined && block.content !== null) {
    const prefix = 'messages[].content[].content[].'
    for (const inner of blocksOf(block.content, dropped, 'messages[].content[].content')) {
      const read =
        inner.type === 'text'
          ? textBlock(inner, prefix, dropped)
          : inner.type === 'image'
            ? imageBlock(inner, prefix, new Set())
            : undefined
      if (read) result.content.push(read)
      else dropped.add(`${prefix}type=${wireName(inner.type)}`)
    }
  }
  return result
}

function assistantBlock(block: Record<string, unknown>, dropped: Set<string>): Block | undefined {
  const prefix = 'messages[].content[].'
  if (block.type === 'text') {
    const text = textBlock(block, prefix, dropped)
    if (text) return text
  } else if (block.type === 'tool_use' && isString(block.id) && isString(block.name)) {
    nameUntranslated(block, TOOL_USE_FIELDS, prefix, dropped)
    return { type: 'tool_call', id: block.id, name: block.name, arguments: isRecord(block.input) ? block.input : {} }
  } else if (block.type === 'thinking' && isString(block.thinking)) {
    nameUntranslated(block, THINKING_FIELDS, prefix, dropped)
    return { type: 'thinking', text: block.thinking, ...(isString(block.signature) ? { signature: block.signature } : {}) }
  } else if (block.type === 'redacted_thinking' && isString(block.data)) return { type: 'redacted_thinking', data: block.data }
  dropped.add(`${prefix}type=${wireName(block.type)}`)
  return undefined
}

/** Tools the caller runs; Anthropic's server tools (web search, bash, ...) run at Anthropic only. */
function toolsOf(tools: unknown, dropped: Set<string>): ToolSpec[] {
  if (tools === undefined || tools === null) return []
  if (!Array.isArray(tools)) {
    dropped.add('tools')
    return []
  }
  const specs: ToolSpec[] = []
  for (const tool of tools) {
    const custom = isRecord(tool) && (tool.type === undefined || tool.type === null || tool.type === 'custom')
    if (!custom || !isString(tool.name)) {
      dropped.add(`tools[].type=${wireName(isRecord(tool) ? tool.type : undefined)}`)
      continue
    }
    nameUntranslated(tool, TOOL_FIELDS, 'tools[].', dropped)
    specs.push(toolSpec(tool.name, tool.input_schema, tool.description, tool.strict))
  }
  return specs
}

/** Without tools a choice has nothing to choose from: `auto` and `none` then change nothing, anything else is named. */
function readToolChoice(call: ChatCall, choice: unknown, dropped: Set<string>): void {
  if (choice === undefined || choice === null) return
  let read: ToolChoice | undefined
  if (isRecord(choice) && (choice.type === 'auto' || choice.type === 'any' || choice.type === 'none'))
    read = { type: choice.type }
  else if (isRecord(choice) && choice.type === 'tool' && isString(choice.name)) read = { type: 'tool', name: choice.name }
  if (!read || (call.tools.length === 0 && read.type !== 'auto' && read.type !== 'none')) {
    dropped.add('tool_choice')
    return
  }
  if (call.tools.length === 0) return
  call.toolChoice = read
  if (isRecord(choice) && choice.disable_parallel_tool_use === true && read.type !== 'none') call.parallelToolCalls = false
}

// ---------------------------------------------------------------------------------------------
// The request, as a provider is sent it

/** Anthropic insists on `max_tokens`; callers of other formats usually leave the limit to the server. */
const DEFAULT_MAX_TOKENS = 4096

function writeRequest(call: ChatCall): WrittenRequest {
  const dropped = new Set<string>()
  const request: AnthropicMessagesRequest = {
    model: call.model,
    max_tokens: call.maxTokens ?? DEFAULT_MAX_TOKENS,
    messages: call.turns.flatMap((turn) => {
      const content = turn.content.flatMap((block) => requestBlock(call, block, dropped))
      return content.length > 0 ? [messageParam(turn.role, content)] : []
    }),
  }
  const [onlyInstruction, ...moreInstructions] = call.system
  if (onlyInstruction) request.system = moreInstructions.length === 0 ? onlyInstruction.text : call.system.map(textOf)
  if (call.temperature !== undefined) request.temperature = call.temperature
  if (call.topP !== undefined) request.top_p = call.topP
  if (call.topK !== undefined) request.top_k = call.topK
  if (call.stop) request.stop_sequences = call.stop
  if (call.stream !== undefined) request.stream = call.stream
  if (call.user !== undefined) request.metadata = { user_id: call.user }
  if (call.thinkingBudget !== undefined)
    request.thinking = call.thinkingBudget > 0 ? { type: 'enabled', budget_tokens: call.thinkingBudget } : { type: 'disabled' }
  if (call.tools.length > 0) {
    request.tools = call.tools.map(anthropicTool)
    const choice = toolChoiceBody(call)
    if (choice) request.tool_choice = choice
  }
  for (const setting of ['seed', 'presencePenalty', 'frequencyPenalty', 'responseFormat'] as const)
    if (call[setting] !== undefined) dropped.add(settingName(call, setting))
  return { request, dropped: [...dropped], maxTokens: request.max_tokens }
}

const textOf = (block: TextBlock): AnthropicTextBlock => ({ type: 'text', text: block.text })

const imageOf = (image: ImageBlock): AnthropicImageBlock => ({
  type: 'image',
  source:
    image.source.kind === 'url'
      ? { type: 'url', url: image.source.url }
      : { type: 'base64', media_type: image.source.mediaType, data: image.source.data },
})

/** Thinking another provider wrote carries its signature, not Anthropic's, which Anthropic would refuse. */
function requestBlock(call: ChatCall, block: Block, dropped: Set<string>): AnthropicRequestBlock[] {
  switch (block.type) {
    case 'text':
      return [textOf(block)]
    case 'image':
      return [imageOf(block)]
    case 'tool_call':
      return [{ type: 'tool_use', id: block.id, name: block.name, input: block.arguments }]
    case 'tool_result': {
      const content = block.content.map((part) => (part.type === 'text' ? textOf(part) : imageOf(part)))
      const [first, ...rest] = content
      return [
        {
          type: 'tool_result',
          tool_use_id: block.callId,
          ...(first === undefined ? {} : { content: first.type === 'text' && rest.length === 0 ? first.text : content }),
          ...(block.isError ? { is_error: true } : {}),
        },
      ]
    }
    case 'thinking':
      dropped.add(settingName(call, 'thinking'))
      return []
    case 'redacted_thinking':
      dropped.add(settingName(call, 'redactedThinking'))
      return []
  }
}

/**
 * Tool results must open the user turn that answers the tool calls; text the caller put between them
 * (rare) moves after them rather than making Anthropic refuse the request.
 */
function messageParam(role: 'user' | 'assistant', blocks: AnthropicRequestBlock[]): AnthropicMessageParam {
  const content =
    role === 'user'
      ? [...blocks.filter((block) => block.type === 'tool_result'), ...blocks.filter((block) => block.type !== 'tool_result')]
      : blocks
  const [first, ...rest] = content
  return { role, content: first?.type === 'text' && rest.length === 0 ? first.text : content }
}

function anthropicTool(tool: ToolSpec): AnthropicTool {
  const entry: AnthropicTool = { name: tool.name, input_schema: tool.parameters }
  if (tool.description !== undefined) entry.description = tool.description
  if (tool.strict) entry.strict = true
  return entry
}

/** `parallel_tool_calls: false` lives inside Anthropic's tool choice. */
function toolChoiceBody(call: ChatCall): AnthropicToolChoice | undefined {
  const choice = call.toolChoice
  if (call.parallelToolCalls === false && choice?.type !== 'none')
    return { ...(choice ?? { type: 'auto' }), disable_parallel_tool_use: true } as AnthropicToolChoice
  return choice
}

// ---------------------------------------------------------------------------------------------
// The answer

const STOP_OF_REASON: Record<AnthropicStopReason, StopReason> = {
  end_turn: 'end',
  stop_sequence: 'stop_sequence',
  pause_turn: 'pause',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'refusal',
}

const REASON_OF_STOP: Record<StopReason, AnthropicStopReason> = {
  end: 'end_turn',
  stop_sequence: 'stop_sequence',
  pause: 'pause_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  refusal: 'refusal',
  // Anthropic has no filtered stop: the caller sees a finished turn.
  content_filter: 'end_turn',
}

/** Anthropic's `input_tokens` leaves out the cached parts; the canonical prompt count has them in. */
export function usageOfMessages(usage: unknown): Usage {
  const counts = isRecord(usage) ? usage : {}
  const cacheReadTokens = asTokenCount(counts.cache_read_input_tokens)
  const cacheWriteTokens = asTokenCount(counts.cache_creation_input_tokens)
  return {
    promptTokens: asTokenCount(counts.input_tokens) + cacheReadTokens + cacheWriteTokens,
    completionTokens: asTokenCount(counts.output_tokens),
    cacheReadTokens,
    cacheWriteTokens,
  }
}

function messagesUsage(usage: Usage | undefined): AnthropicUsage {
  const cacheRead = usage?.cacheReadTokens ?? 0
  const cacheWrite = usage?.cacheWriteTokens ?? 0
  return {
    input_tokens: Math.max(0, (usage?.promptTokens ?? 0) - cacheRead - cacheWrite),
    output_tokens: usage?.completionTokens ?? 0,
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
  }
}

function readAnswer(body: unknown): Answer {
  const message = isRecord(body) ? body : {}
  const content: Block[] = []
  for (const block of Array.isArray(message.content) ? message.content : []) {
    if (!isRecord(block)) continue
    if (block.type === 'text' && isString(block.text)) content.push({ type: 'text', text: block.text })
    else if (block.type === 'thinking' && isString(block.thinking))
      content.push({
        type: 'thinking',
        text: block.thinking,
        ...(isString(block.signature) ? { signature: block.signature } : {}),
      })
    else if (block.type === 'redacted_thinking' && isString(block.data))
      content.push({ type: 'redacted_thinking', data: block.data })
    else if (block.type === 'tool_use' && isString(block.id) && isString(block.name))
      content.push({ type: 'tool_call', id: block.id, name: block.name, arguments: isRecord(block.input) ? block.input : {} })
  }
  return {
    id: isString(message.id) ? message.id : '',
    model: isString(message.model) ? message.model : '',
    content,
    stop: lookup(STOP_OF_REASON, message.stop_reason),
    usage: usageOfMessages(message.usage),
  }
}

function responseBlock(block: Block): AnthropicResponseBlock[] {
  switch (block.type) {
    case 'text':
      return block.text === '' ? [] : [{ type: 'text', text: block.text }]
    case 'tool_call':
      return [{ type: 'tool_use', id: block.id, name: block.name, input: block.arguments }]
    case 'thinking':
      return [{ type: 'thinking', thinking: block.text, signature: block.signature ?? '' }]
    case 'redacted_thinking':
      return [{ type: 'redacted_thinking', data: block.data }]
    default:
      return []
  }
}

/**
 * An Anthropic caller runs its tools only on `tool_use`, so tool calls decide the stop reason; an
 * answer whose provider said nothing ended its turn.
 */
function stopReasonOf(stop: StopReason | undefined, calledTools: boolean): AnthropicStopReason {
  const reason = stop === undefined ? 'end_turn' : REASON_OF_STOP[stop]
  return calledTools && reason === 'end_turn' ? 'tool_use' : reason
}

function writeAnswer(answer: Answer): { body: AnthropicMessage; dropped: string[] } {
  const content = answer.content.flatMap(responseBlock)
  const body: AnthropicMessage = {
    id: `msg_${answer.id}`,
    type: 'message',
    role: 'assistant',
    model: answer.model,
    content,
    stop_reason: stopReasonOf(
      answer.stop,
      content.some((block) => block.type === 'tool_use'),
    ),
    stop_sequence: null,
    usage: messagesUsage(answer.usage),
  }
  return { body, dropped: [] }
}

// ---------------------------------------------------------------------------------------------
// The stream

/**
 * Anthropic's stream names every step: text and thinking deltas pass as they are, each tool_use block
 * is a tool call numbered in order of appearance, `message_delta` carries the stop reason and the
 * usage so far. `ping` and `content_block_stop` say nothing a delta needs. An `error` event yields
 * nothing: the provider's stream then ends without `message_stop`, and the relay reports the failure.
 */
function streamReader(): StreamReader {
  let usage: Record<string, unknown> = {}
  const callOfBlock = new Map<number, number>()
  return {
    push(event) {
      const payload = eventPayload(event)
      if (!isRecord(payload)) return []
      switch (event.event ?? payload.type) {
        case 'message_start': {
          const message = isRecord(payload.message) ? payload.message : {}
          usage = isRecord(message.usage) ? message.usage : {}
          return [
            {
              type: 'start',
              id: isString(message.id) ? message.id : '',
              model: isString(message.model) ? message.model : '',
              usage: usageOfMessages(usage),
            },
          ]
        }
        case 'content_block_start':
          return blockStart(payload.index, payload.content_block, callOfBlock)
        case 'content_block_delta':
          return blockDelta(payload.index, payload.delta, callOfBlock)
        case 'message_delta': {
          // The delta's counts are totals so far; newer servers repeat the input side in it too.
          const out: Delta[] = []
          if (isRecord(payload.usage)) {
            usage = { ...usage, ...withoutNulls(payload.usage) }
            out.push({ type: 'usage', usage: usageOfMessages(usage) })
          }
          const reason = isRecord(payload.delta) ? lookup(STOP_OF_REASON, payload.delta.stop_reason) : undefined
          if (reason !== undefined) out.push({ type: 'stop', reason })
          else if (isRecord(payload.delta) && isString(payload.delta.stop_reason)) out.push({ type: 'stop', reason: 'end' })
          return out
        }
        case 'message_stop':
          return [{ type: 'end' }]
        default:
          return []
      }
    },
  }
}

function blockStart(index: unknown, block: unknown, callOfBlock: Map<number, number>): Delta[] {
  if (!isRecord(block)) return []
  if (block.type === 'text') return isString(block.text) && block.text !== '' ? [{ type: 'text', text: block.text }] : []
  if (block.type === 'thinking')
    return isString(block.thinking) && block.thinking !== '' ? [{ type: 'thinking', text: block.thinking }] : []
  if (block.type === 'redacted_thinking') return [{ type: 'redacted_thinking', data: isString(block.data) ? block.data : '' }]
  if (block.type !== 'tool_use' || typeof index !== 'number') return []
  const call = callOfBlock.size
  callOfBlock.set(index, call)
  // Anthropic starts a tool_use with an empty input and streams it; some relays send it whole here.
  const input = isRecord(block.input) && Object.keys(block.input).length > 0 ? JSON.stringify(block.input) : ''
  return [
    {
      type: 'tool_call',
      call,
      id: isString(block.id) ? block.id : '',
      name: isString(block.name) ? block.name : '',
      arguments: input,
    },
  ]
}

function blockDelta(index: unknown, change: unknown, callOfBlock: Map<number, number>): Delta[] {
  if (!isRecord(change)) return []
  if (change.type === 'text_delta' && isString(change.text) && change.text !== '') return [{ type: 'text', text: change.text }]
  if (change.type === 'thinking_delta' && isString(change.thinking) && change.thinking !== '')
    return [{ type: 'thinking', text: change.thinking }]
  if (change.type === 'signature_delta' && isString(change.signature))
    return [{ type: 'thinking_signature', signature: change.signature }]
  const call = typeof index === 'number' ? callOfBlock.get(index) : undefined
  if (change.type !== 'input_json_delta' || call === undefined) return []
  if (!isString(change.partial_json) || change.partial_json === '') return []
  return [{ type: 'tool_arguments', call, fragment: change.partial_json }]
}

const withoutNulls = (record: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(record).filter(([, value]) => value !== null && value !== undefined))

const emit = (event: AnthropicStreamEvent): SseEvent => ({ event: event.type, data: JSON.stringify(event) })

type OpenBlock = { index: number; kind: 'text' | 'thinking' | 'tool' }

/**
 * Deltas as Anthropic's events: a block opened and closed around each piece of content, text and
 * thinking and each tool call in the order they appear; `message_delta` and `message_stop` wait for
 * the provider's end, because usage may come after the stop reason.
 */
function streamWriter(options: { now: () => number }): StreamWriter {
  let started = false
  let done = false
  let messageId = ''
  let nextIndex = 0
  let open: OpenBlock | undefined
  let stop: StopReason | undefined
  let stopped = false
  let calledTools = false
  let usage: Usage | undefined
  /** The canonical call number -> the block that carries that call. */
  const toolBlocks = new Map<number, number>()

  const start = (id: string, model: string): SseEvent => {
    started = true
    messageId = `msg_${id === '' ? options.now() : id}`
    const message: AnthropicMessage = {
      id: messageId,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: messagesUsage(usage),
    }
    return emit({ type: 'message_start', message })
  }
  const ensureStarted = (): SseEvent[] => (started ? [] : [start('', '')])

  const closeOpen = (): SseEvent[] => {
    if (!open) return []
    const closed = emit({ type: 'content_block_stop', index: open.index })
    open = undefined
    return [closed]
  }

  const openBlock = (kind: OpenBlock['kind'], block: AnthropicResponseBlock): SseEvent[] => {
    const out = closeOpen()
    open = { index: nextIndex++, kind }
    out.push(emit({ type: 'content_block_start', index: open.index, content_block: block }))
    return out
  }

  const text = (piece: string): SseEvent[] => {
    const out = open?.kind === 'text' ? [] : openBlock('text', { type: 'text', text: '' })
    out.push(emit({ type: 'content_block_delta', index: (open as OpenBlock).index, delta: { type: 'text_delta', text: piece } }))
    return out
  }

  const thinking = (delta: { type: 'thinking_delta'; thinking: string } | { type: 'signature_delta'; signature: string }) => {
    const out = open?.kind === 'thinking' ? [] : openBlock('thinking', { type: 'thinking', thinking: '', signature: '' })
    out.push(emit({ type: 'content_block_delta', index: (open as OpenBlock).index, delta }))
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
    // No stop reason from the provider means none is claimed here either.
    const stopReason = stopped ? stopReasonOf(stop, calledTools) : null
    return [
      ...ensureStarted(),
      ...closeOpen(),
      emit({ type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: deltaUsage }),
      emit({ type: 'message_stop' }),
    ]
  }

  return {
    push(change) {
      if (done) return []
      switch (change.type) {
        case 'start':
          if (started) return []
          usage = change.usage ?? usage
          return [start(change.id, change.model)]
        case 'text':
          return change.text === '' ? [] : [...ensureStarted(), ...text(change.text)]
        case 'thinking':
          return change.text === '' ? [] : [...ensureStarted(), ...thinking({ type: 'thinking_delta', thinking: change.text })]
        case 'thinking_signature':
          return [...ensureStarted(), ...thinking({ type: 'signature_delta', signature: change.signature })]
        case 'redacted_thinking':
          return [...ensureStarted(), ...openBlock('thinking', { type: 'redacted_thinking', data: change.data }), ...closeOpen()]
        case 'tool_call': {
          calledTools = true
          const out = [
            ...ensureStarted(),
            ...openBlock('tool', { type: 'tool_use', id: change.id, name: change.name, input: {} }),
          ]
          toolBlocks.set(change.call, (open as OpenBlock).index)
          if (change.arguments !== '')
            out.push(
              emit({
                type: 'content_block_delta',
                index: (open as OpenBlock).index,
                delta: { type: 'input_json_delta', partial_json: change.arguments },
              }),
            )
          return out
        }
        case 'tool_arguments': {
          // Pieces of an earlier call, sent after another block opened, still go to that call's own block.
          const index = toolBlocks.get(change.call)
          if (index === undefined || change.fragment === '') return []
          return [
            emit({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: change.fragment } }),
          ]
        }
        case 'usage':
          usage = change.usage
          return []
        case 'stop':
          stop = change.reason
          stopped = true
          return [...ensureStarted(), ...closeOpen()]
        case 'end':
          return end()
        default:
          return []
      }
    },
    // Everything is sent at the end; without it, only a stop reason already seen justifies one.
    finish: () => (done || !stopped ? [] : end()),
    dropped: () => [],
  }
}

export const anthropicMessages: CallerFormat & ProviderFormat = {
  readRequest,
  writeRequest,
  readAnswer,
  writeAnswer,
  streamReader,
  streamWriter,
}
