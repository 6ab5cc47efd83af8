/**
 * OpenAI's Chat Completions, as callers speak it and as OpenAI and every server that copies its API
 * answer: read into the canonical call and written from it, the answer and its stream both ways.
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
  type ResponseFormat,
  type StopReason,
  type StreamReader,
  type StreamWriter,
  settingName,
  type TextBlock,
  type ToolCallBlock,
  type ToolResultBlock,
  type ToolSpec,
  type Turn,
  toolSpec,
  type WrittenRequest,
} from './canonical'
import { eventPayload } from './stream'
import {
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
  type OpenAIFunctionTool,
  type OpenAIMessage,
  type OpenAIResponseMessage,
  type OpenAITextPart,
  type OpenAIToolCall,
  type OpenAIToolChoice,
  type OpenAIToolMessage,
  type OpenAIUsage,
  type OpenAIUserContentPart,
  parseArguments,
  saysSomething,
  wireName,
} from './types'

// ---------------------------------------------------------------------------------------------
// The request, as a caller sends it

const READ_FIELDS = new Set([
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
  'seed',
  'presence_penalty',
  'frequency_penalty',
  'response_format',
  // include_usage is honoured by the translated stream itself; its other options are named below.
  'stream_options',
])

/** What of `stream_options` a translated stream carries out. */
const STREAM_OPTION_FIELDS = new Set(['include_usage'])

/** Values that ask for no more than any provider does anyway: leaving them out loses nothing. */
const NEUTRAL_VALUES = new Map<string, unknown>([
  ['n', 1],
  ['logprobs', false],
  ['presence_penalty', 0],
  ['frequency_penalty', 0],
  ['parallel_tool_calls', true],
])

const MESSAGE_FIELDS = new Set(['role', 'content', 'tool_calls', 'tool_call_id', 'refusal'])
const TEXT_PART_FIELDS = new Set(['type', 'text'])
const IMAGE_PART_FIELDS = new Set(['type', 'image_url'])
const FUNCTION_FIELDS = new Set(['name', 'description', 'parameters', 'strict'])

/** The caller's name for each setting, for a provider that cannot carry it. */
const SETTING_NAMES = {
  maxTokens: 'max_completion_tokens',
  temperature: 'temperature',
  topP: 'top_p',
  stop: 'stop',
  user: 'user',
  toolChoice: 'tool_choice',
  parallelToolCalls: 'parallel_tool_calls',
  responseFormat: 'response_format',
  seed: 'seed',
  presencePenalty: 'presence_penalty',
  frequencyPenalty: 'frequency_penalty',
  image: 'messages[].content[].image_url',
  toolStrict: 'tools[].function.strict',
} as const

function readRequest(body: Record<string, unknown>): { call: ChatCall; dropped: string[] } {
  const dropped = new Set<string>()
  const meaningful = Object.fromEntries(Object.entries(body).filter(([field, value]) => NEUTRAL_VALUES.get(field) !== value))
  nameUntranslated(meaningful, READ_FIELDS, '', dropped)
  if (isRecord(body.stream_options)) nameUntranslated(body.stream_options, STREAM_OPTION_FIELDS, 'stream_options.', dropped)
  else if (body.stream_options !== undefined && body.stream_options !== null) dropped.add('stream_options')

  const call: ChatCall = {
    model: isString(body.model) ? body.model : '',
    system: [],
    turns: [],
    stream: typeof body.stream === 'boolean' ? body.stream : undefined,
    tools: toolsOf(body.tools, dropped),
    names: { ...SETTING_NAMES },
  }
  if (Array.isArray(body.messages)) for (const message of body.messages) addMessage(call, message, dropped)
  else if (body.messages !== undefined) dropped.add('messages')

  const max = readNumber(body, 'max_completion_tokens', dropped) ?? readNumber(body, 'max_tokens', dropped)
  if (max !== undefined) call.maxTokens = max
  setNumber(call, 'temperature', readNumber(body, 'temperature', dropped))
  setNumber(call, 'topP', readNumber(body, 'top_p', dropped))
  if (body.seed !== undefined && body.seed !== null) setNumber(call, 'seed', readNumber(body, 'seed', dropped))
  if (body.presence_penalty !== 0) setNumber(call, 'presencePenalty', readNumber(body, 'presence_penalty', dropped))
  if (body.frequency_penalty !== 0) setNumber(call, 'frequencyPenalty', readNumber(body, 'frequency_penalty', dropped))
  const stop = stopSequences(body.stop, dropped)
  if (stop.length > 0) call.stop = stop
  if (isString(body.user)) call.user = body.user
  else if (body.user !== undefined && body.user !== null) dropped.add('user')
  const format = responseFormatOf(body.response_format, dropped)
  if (format) call.responseFormat = format
  readToolChoice(call, body, dropped)
  return { call, dropped: [...dropped] }
}

function setNumber(
  call: ChatCall,
  setting: 'temperature' | 'topP' | 'seed' | 'presencePenalty' | 'frequencyPenalty',
  value: number | undefined,
) {
  if (value !== undefined) call[setting] = value
}

/** A number field's value; a value of another kind cannot be carried over, so it is named. */
function readNumber(body: Record<string, unknown>, field: string, dropped: Set<string>): number | undefined {
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

/** `json_object` and `json_schema` say what the text must be; `text` asks for nothing. */
function responseFormatOf(format: unknown, dropped: Set<string>): ResponseFormat | undefined {
  if (format === undefined || format === null) return undefined
  if (isRecord(format) && format.type === 'text') return undefined
  if (isRecord(format) && format.type === 'json_object') return { type: 'json' }
  const spec = isRecord(format) ? format.json_schema : undefined
  if (isRecord(format) && format.type === 'json_schema' && isRecord(spec) && isRecord(spec.schema))
    return { type: 'json_schema', schema: spec.schema, ...(isString(spec.name) ? { name: spec.name } : {}) }
  dropped.add('response_format')
  return undefined
}

function addMessage(call: ChatCall, message: unknown, dropped: Set<string>): void {
  if (!isRecord(message)) {
    dropped.add('messages[]')
    return
  }
  nameUntranslated(message, MESSAGE_FIELDS, 'messages[].', dropped)
  switch (message.role) {
    case 'system':
    case 'developer':
      call.system.push(...textBlocks(message.content, dropped))
      break
    case 'user':
      addTurn(call.turns, 'user', userBlocks(message.content, dropped))
      break
    case 'assistant':
      addTurn(call.turns, 'assistant', assistantBlocks(message, dropped))
      break
    case 'tool':
      addTurn(call.turns, 'user', [toolResultBlock(message, dropped)])
      break
    default:
      dropped.add(`messages[].role=${wireName(message.role)}`)
  }
}

/** Consecutive messages of one role are one turn: most formats want user and assistant to take turns. */
export function addTurn(turns: Turn[], role: Turn['role'], blocks: Block[]): void {
  if (blocks.length === 0) return
  const last = turns.at(-1)
  if (last?.role === role) last.content.push(...blocks)
  else turns.push({ role, content: blocks })
}

function textBlocks(content: unknown, dropped: Set<string>): TextBlock[] {
  if (isString(content)) return saysSomething(content) ? [{ type: 'text', text: content }] : []
  const blocks: TextBlock[] = []
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

function userBlocks(content: unknown, dropped: Set<string>): Block[] {
  if (isString(content)) return textBlocks(content, dropped)
  const blocks: Block[] = []
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

/** A data: URL is the image itself; an http(s) URL is the provider's to fetch. */
function imageBlock(imageUrl: unknown, dropped: Set<string>): ImageBlock | undefined {
  const url = isRecord(imageUrl) ? imageUrl.url : undefined
  if (isRecord(imageUrl) && imageUrl.detail !== undefined && imageUrl.detail !== 'auto')
    dropped.add('messages[].content[].image_url.detail')
  const inline = isString(url) ? /^data:([\w.+-]+\/[\w.+-]+);base64,(.+)$/s.exec(url) : null
  if (inline?.[1] && inline[2]) return { type: 'image', source: { kind: 'base64', mediaType: inline[1], data: inline[2] } }
  if (isString(url) && /^https?:\/\//i.test(url)) return { type: 'image', source: { kind: 'url', url } }
  dropped.add('messages[].content[].image_url')
  return undefined
}

function assistantBlocks(message: Record<string, unknown>, dropped: Set<string>): Block[] {
  const blocks: Block[] = []
  // A refusal the model gave earlier is part of what it said; other formats have no separate field for it.
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
    const toolCall = toolCallBlock(call, dropped)
    if (toolCall) blocks.push(toolCall)
  }
  return blocks
}

function toolCallBlock(call: unknown, dropped: Set<string>): ToolCallBlock | undefined {
  if (isRecord(call) && (call.type ?? 'function') !== 'function') {
    dropped.add(`messages[].tool_calls[].type=${wireName(call.type)}`)
    return undefined
  }
  const fn = isRecord(call) ? call.function : undefined
  if (!isRecord(call) || !isString(call.id) || !isRecord(fn) || !isString(fn.name)) {
    dropped.add('messages[].tool_calls[]')
    return undefined
  }
  // Other formats take the arguments as an object; arguments that are not one cannot be sent as written.
  const text = isString(fn.arguments) ? fn.arguments.trim() : ''
  const input = text === '' ? {} : parseArguments(text)
  if (!input) dropped.add('messages[].tool_calls[].function.arguments')
  return { type: 'tool_call', id: call.id, name: fn.name, arguments: input ?? {} }
}

function toolResultBlock(message: Record<string, unknown>, dropped: Set<string>): ToolResultBlock {
  const content = isString(message.content)
    ? message.content === ''
      ? []
      : [{ type: 'text' as const, text: message.content }]
    : textBlocks(message.content, dropped)
  return { type: 'tool_result', callId: isString(message.tool_call_id) ? message.tool_call_id : '', content }
}

function toolsOf(tools: unknown, dropped: Set<string>): ToolSpec[] {
  if (tools === undefined || tools === null) return []
  if (!Array.isArray(tools)) {
    dropped.add('tools')
    return []
  }
  const specs: ToolSpec[] = []
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
    specs.push(toolSpec(fn.name, fn.parameters, fn.description, fn.strict))
  }
  return specs
}

/**
 * Without tools, a choice has nothing to choose from: `auto` and `none` then change nothing, anything
 * else is named. `parallel_tool_calls: false` matters only with tools.
 */
function readToolChoice(call: ChatCall, body: Record<string, unknown>, dropped: Set<string>): void {
  const choice = body.tool_choice
  if (choice === 'auto') call.toolChoice = { type: 'auto' }
  else if (choice === 'none') call.toolChoice = { type: 'none' }
  else if (choice === 'required') call.toolChoice = { type: 'any' }
  else if (isRecord(choice) && choice.type === 'function' && isRecord(choice.function) && isString(choice.function.name))
    call.toolChoice = { type: 'tool', name: choice.function.name }
  else if (choice !== undefined && choice !== null) dropped.add('tool_choice')
  if (call.tools.length === 0) {
    if (call.toolChoice && call.toolChoice.type !== 'auto' && call.toolChoice.type !== 'none') dropped.add('tool_choice')
    call.toolChoice = undefined
    return
  }
  if (body.parallel_tool_calls === false) call.parallelToolCalls = false
}

// ---------------------------------------------------------------------------------------------
// The request, as a provider is sent it

function writeRequest(call: ChatCall): WrittenRequest {
  const dropped = new Set<string>()
  const messages: OpenAIMessage[] = []
  if (call.system.length > 0) messages.push({ role: 'system', content: textContent(call.system) })
  for (const turn of call.turns) messages.push(...chatMessages(call, turn, dropped))

  const request: OpenAIChatRequest = { model: call.model, messages }
  if (call.maxTokens !== undefined) request.max_completion_tokens = call.maxTokens
  if (call.temperature !== undefined) request.temperature = call.temperature
  if (call.topP !== undefined) request.top_p = call.topP
  if (call.stop) request.stop = call.stop
  if (call.user !== undefined) request.user = call.user
  if (call.seed !== undefined) request.seed = call.seed
  if (call.presencePenalty !== undefined) request.presence_penalty = call.presencePenalty
  if (call.frequencyPenalty !== undefined) request.frequency_penalty = call.frequencyPenalty
  if (call.responseFormat) request.response_format = responseFormatBody(call.responseFormat)
  if (call.stream === true) {
    // The usage must come back in the stream: gw prices the call by it.
    request.stream = true
    request.stream_options = { include_usage: true }
  } else if (call.stream === false) request.stream = false
  if (call.tools.length > 0) {
    request.tools = call.tools.map(functionTool)
    if (call.toolChoice) request.tool_choice = toolChoiceBody(call.toolChoice)
    if (call.parallelToolCalls === false && call.toolChoice?.type !== 'none') request.parallel_tool_calls = false
  }
  for (const setting of ['topK', 'thinkingBudget'] as const)
    if (call[setting] !== undefined) dropped.add(settingName(call, setting))
  return { request, dropped: [...dropped], maxTokens: call.maxTokens }
}

const responseFormatBody = (format: ResponseFormat): Record<string, unknown> =>
  format.type === 'json'
    ? { type: 'json_object' }
    : { type: 'json_schema', json_schema: { name: format.name ?? 'answer', schema: format.schema } }

const toolChoiceBody = (choice: NonNullable<ChatCall['toolChoice']>): OpenAIToolChoice =>
  choice.type === 'tool'
    ? { type: 'function', function: { name: choice.name } }
    : choice.type === 'any'
      ? 'required'
      : choice.type

function functionTool(tool: ToolSpec): OpenAIFunctionTool {
  const fn: OpenAIFunctionTool['function'] = { name: tool.name, parameters: tool.parameters }
  if (tool.description !== undefined) fn.description = tool.description
  if (tool.strict) fn.strict = true
  return { type: 'function', function: fn }
}

/** One text stays a plain string, which every OpenAI-compatible server understands. */
function textContent(parts: TextBlock[]): string | OpenAITextPart[] {
  const [first, ...rest] = parts
  return first && rest.length === 0 ? first.text : parts.map((part) => ({ type: 'text', text: part.text }))
}

const imageUrl = (image: ImageBlock): string =>
  image.source.kind === 'url' ? image.source.url : `data:${image.source.mediaType};base64,${image.source.data}`

function chatMessages(call: ChatCall, turn: Turn, dropped: Set<string>): OpenAIMessage[] {
  if (turn.role === 'assistant') {
    const reply = assistantMessage(call, turn.content, dropped)
    return reply ? [reply] : []
  }
  // Tool results are `tool` messages, which OpenAI wants right after the assistant's tool calls, so
  // they go before whatever else the user turn says.
  const results: OpenAIToolMessage[] = []
  const parts: OpenAIUserContentPart[] = []
  for (const block of turn.content) {
    if (block.type === 'text') parts.push({ type: 'text', text: block.text })
    else if (block.type === 'image') parts.push({ type: 'image_url', image_url: { url: imageUrl(block) } })
    else if (block.type === 'tool_result') results.push(toolMessage(call, block, dropped))
  }
  if (parts.length === 0) return results
  const [first, ...rest] = parts
  return [...results, { role: 'user', content: first?.type === 'text' && rest.length === 0 ? first.text : parts }]
}

/** OpenAI's tool messages hold text only, and have no way to say the tool failed. */
function toolMessage(call: ChatCall, block: ToolResultBlock, dropped: Set<string>): OpenAIToolMessage {
  if (block.isError) dropped.add(settingName(call, 'toolResultError'))
  const texts = block.content.filter((part): part is TextBlock => part.type === 'text')
  if (texts.length < block.content.length) dropped.add(settingName(call, 'toolResultImage'))
  return { role: 'tool', tool_call_id: block.callId, content: texts.length > 0 ? textContent(texts) : '' }
}

/** Text blocks are one reply, so they are joined; earlier thinking cannot be sent to OpenAI and is named. */
function assistantMessage(call: ChatCall, blocks: Block[], dropped: Set<string>): OpenAIMessage | undefined {
  let text = ''
  const toolCalls: OpenAIToolCall[] = []
  for (const block of blocks) {
    if (block.type === 'text') text += block.text
    else if (block.type === 'tool_call')
      toolCalls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: JSON.stringify(block.arguments) },
      })
    else if (block.type === 'thinking') dropped.add(settingName(call, 'thinking'))
    else if (block.type === 'redacted_thinking') dropped.add(settingName(call, 'redactedThinking'))
  }
  if (text === '' && toolCalls.length === 0) return undefined
  return { role: 'assistant', content: text === '' ? null : text, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) }
}

// ---------------------------------------------------------------------------------------------
// The answer

const STOP_OF_FINISH: Record<OpenAIFinishReason, StopReason> = {
  stop: 'end',
  length: 'length',
  tool_calls: 'tool_calls',
  function_call: 'tool_calls',
  content_filter: 'content_filter',
}

const FINISH_OF_STOP: Record<StopReason, OpenAIFinishReason> = {
  end: 'stop',
  stop_sequence: 'stop',
  // A paused turn is one the caller may continue: finished, as far as OpenAI's callers can tell.
  pause: 'stop',
  length: 'length',
  tool_calls: 'tool_calls',
  refusal: 'content_filter',
  content_filter: 'content_filter',
}

/**
 * Some OpenAI-compatible servers finish a tool-calling answer with "stop"; callers of other formats
 * run their tools only when the answer says it called them, so tool calls decide it.
 */
function stopOf(finishReason: unknown, calledTools: boolean): StopReason | undefined {
  const reason = lookup(STOP_OF_FINISH, finishReason)
  return calledTools && (reason === 'end' || reason === undefined) ? 'tool_calls' : reason
}

/** `prompt_tokens` counts every input token, the cached ones (`cached_tokens`) among them. */
export function usageOfChat(usage: unknown): Usage {
  const counts = isRecord(usage) ? usage : {}
  const details = isRecord(counts.prompt_tokens_details) ? counts.prompt_tokens_details : {}
  return {
    promptTokens: asTokenCount(counts.prompt_tokens),
    completionTokens: asTokenCount(counts.completion_tokens),
    cacheReadTokens: asTokenCount(details.cached_tokens),
    cacheWriteTokens: 0,
  }
}

function chatUsage(usage: Usage | undefined): OpenAIUsage {
  const promptTokens = usage?.promptTokens ?? 0
  const completionTokens = usage?.completionTokens ?? 0
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: usage?.cacheReadTokens ?? 0 },
  }
}

/** Only the first choice is read: the other formats have one answer. */
function readAnswer(body: unknown): Answer {
  const completion = isRecord(body) ? body : {}
  const choice = Array.isArray(completion.choices) ? completion.choices[0] : undefined
  const message: Record<string, unknown> = isRecord(choice) && isRecord(choice.message) ? choice.message : {}
  const id = isString(completion.id) ? completion.id : ''
  const content: Block[] = []
  if (isString(message.content) && message.content !== '') content.push({ type: 'text', text: message.content })
  // A refusal is what the model said instead of an answer, so the caller sees it as the text.
  if (isString(message.refusal) && message.refusal !== '') content.push({ type: 'text', text: message.refusal })
  for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
    const fn = isRecord(call) ? call.function : undefined
    if (!isRecord(call) || !isString(call.id) || !isRecord(fn) || !isString(fn.name)) continue
    content.push({ type: 'tool_call', id: call.id, name: fn.name, arguments: argumentsObject(fn.arguments) })
  }
  if (isRecord(message.function_call) && isString(message.function_call.name)) {
    // The pre-tools form has no call id; the completion's id makes one that is unique enough.
    const input = argumentsObject(message.function_call.arguments)
    content.push({ type: 'tool_call', id: `call_${id}`, name: message.function_call.name, arguments: input })
  }
  return {
    id,
    model: isString(completion.model) ? completion.model : '',
    content,
    stop: stopOf(
      isRecord(choice) ? choice.finish_reason : undefined,
      content.some((block) => block.type === 'tool_call'),
    ),
    usage: usageOfChat(completion.usage),
  }
}

/** Other formats take tool input as an object; arguments that do not parse to one become `{}`. */
const argumentsObject = (text: unknown): Record<string, unknown> => (isString(text) ? parseArguments(text) : undefined) ?? {}

const unixSeconds = (now: () => number): number => Math.floor(now() / 1000)

/**
 * Text blocks are joined into one answer; thinking becomes `reasoning_content`, as OpenAI-compatible
 * servers name it. Redacted thinking is encrypted and cannot be carried, so it is named.
 */
function writeAnswer(answer: Answer, options: { now: () => number }): { body: OpenAIChatCompletion; dropped: string[] } {
  let text = ''
  let reasoning = ''
  const dropped = new Set<string>()
  const toolCalls: OpenAIToolCall[] = []
  for (const block of answer.content) {
    if (block.type === 'text') text += block.text
    else if (block.type === 'thinking') reasoning += block.text
    else if (block.type === 'redacted_thinking') dropped.add('redacted_thinking')
    else if (block.type === 'tool_call')
      toolCalls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: JSON.stringify(block.arguments) },
      })
  }
  // OpenAI says "no text" with null when the answer is only tool calls.
  const message: OpenAIResponseMessage = {
    role: 'assistant',
    content: text === '' && toolCalls.length > 0 ? null : text,
    refusal: null,
  }
  if (toolCalls.length > 0) message.tool_calls = toolCalls
  if (reasoning !== '') message.reasoning_content = reasoning
  const body: OpenAIChatCompletion = {
    id: `chatcmpl-${answer.id}`,
    object: 'chat.completion',
    created: unixSeconds(options.now),
    model: answer.model,
    choices: [{ index: 0, message, finish_reason: answer.stop ? FINISH_OF_STOP[answer.stop] : 'stop', logprobs: null }],
    usage: chatUsage(answer.usage),
  }
  return { body, dropped: [...dropped] }
}

// ---------------------------------------------------------------------------------------------
// The stream

/**
 * OpenAI's chunks carry deltas of the first choice: text, refusals and tool-call pieces. Tool calls are
 * numbered in the order they start; a new id at a known index is a new call from a server that does
 * not number its calls. A chunk carrying `error` yields nothing: the relay reports the failure.
 */
function streamReader(): StreamReader {
  let started = false
  let id = ''
  let calls = 0
  let calledTools = false
  /** OpenAI's tool-call index -> the call's number and id. */
  const known = new Map<number, { call: number; id: string }>()
  return {
    push(event) {
      if (event.data === '[DONE]') return [{ type: 'end' }]
      const chunk = eventPayload(event)
      if (!isRecord(chunk) || chunk.error !== undefined) return []
      // Azure's first chunk holds only the prompt's filter results, with an empty id and model: the
      // answer starts with the chunk after it.
      if (!started && chunk.id === '' && Array.isArray(chunk.choices) && chunk.choices.length === 0) return []
      const out: Delta[] = []
      if (!started) {
        started = true
        id = isString(chunk.id) ? chunk.id : ''
        out.push({ type: 'start', id, model: isString(chunk.model) ? chunk.model : '' })
      }
      if (isRecord(chunk.usage)) out.push({ type: 'usage', usage: usageOfChat(chunk.usage) })
      const choices = Array.isArray(chunk.choices) ? chunk.choices : []
      const choice = choices.find((candidate) => isRecord(candidate) && (candidate.index ?? 0) === 0)
      if (!isRecord(choice)) return out
      const delta = isRecord(choice.delta) ? choice.delta : {}
      for (const piece of [delta.content, delta.refusal])
        if (isString(piece) && piece !== '') out.push({ type: 'text', text: piece })
      for (const toolCall of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
        if (!isRecord(toolCall)) continue
        const position = finiteNumber(toolCall.index) ?? 0
        const fn = isRecord(toolCall.function) ? toolCall.function : {}
        const fragment = isString(fn.arguments) ? fn.arguments : ''
        const seen = known.get(position)
        if (!seen || (isString(toolCall.id) && toolCall.id !== seen.id)) {
          calledTools = true
          const opened = { call: calls++, id: isString(toolCall.id) ? toolCall.id : `call_msg_${id}_${position}` }
          known.set(position, opened)
          out.push({
            type: 'tool_call',
            call: opened.call,
            id: opened.id,
            name: isString(fn.name) ? fn.name : '',
            arguments: fragment,
          })
        } else if (fragment !== '') out.push({ type: 'tool_arguments', call: seen.call, fragment })
      }
      if (isString(choice.finish_reason)) out.push({ type: 'stop', reason: stopOf(choice.finish_reason, calledTools) ?? 'end' })
      return out
    },
  }
}

/**
 * Deltas as OpenAI chunks of one choice: a role chunk first, content and tool-call pieces, a finish
 * chunk, then, with usage asked for, one usage chunk, and `[DONE]`.
 */
function streamWriter(options: { includeUsage: boolean; now: () => number }): StreamWriter {
  let id = ''
  let model = ''
  let created = 0
  let usage: Usage | undefined
  let finishReason: OpenAIFinishReason | undefined
  let done = false
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

  return {
    push(change) {
      if (done) return []
      switch (change.type) {
        case 'start':
          id = `chatcmpl-${change.id}`
          model = change.model
          created = unixSeconds(options.now)
          usage = change.usage ?? usage
          return delta({ role: 'assistant', content: '' })
        case 'text':
          return change.text === '' ? [] : delta({ content: change.text })
        case 'thinking':
          return change.text === '' ? [] : delta({ reasoning_content: change.text })
        case 'redacted_thinking':
          dropped.add('redacted_thinking')
          return []
        case 'tool_call':
          return delta({
            tool_calls: [
              {
                index: change.call,
                id: change.id,
                type: 'function',
                function: { name: change.name, arguments: change.arguments },
              },
            ],
          })
        case 'tool_arguments':
          return change.fragment === ''
            ? []
            : delta({ tool_calls: [{ index: change.call, function: { arguments: change.fragment } }] })
        case 'usage':
          usage = change.usage
          return []
        case 'stop':
          finishReason = FINISH_OF_STOP[change.reason]
          return delta({}, finishReason)
        case 'end':
          return end()
        default:
          return []
      }
    },
    // Everything is sent at the end; without it, only a finish reason already seen justifies one.
    finish: () => (done || finishReason === undefined ? [] : end()),
    dropped: () => [...dropped],
  }
}

export const openaiChat: CallerFormat & ProviderFormat = {
  readRequest,
  writeRequest,
  readAnswer,
  writeAnswer,
  streamReader,
  streamWriter,
}
