/**
 * AWS Bedrock's Converse API (`POST /model/{modelId}/converse` and `/converse-stream`), as gw calls
 * it: the canonical call written in it, and its answer and stream read back. No caller speaks it, so
 * there is no reader of requests nor writer of answers. The model and streaming are in the path, not
 * the body. The stream arrives as an AWS event stream, which `providers/bedrock/event-stream.ts`
 * decodes into one event per frame before it reaches the reader here.
 */
import type { Usage } from '../../money/usage'
import { usageOfMessages } from './anthropic-messages'
import {
  type Answer,
  type Block,
  type ChatCall,
  type Delta,
  type ImageBlock,
  type ProviderFormat,
  type StopReason,
  type StreamReader,
  settingName,
  type ToolResultBlock,
  type ToolSpec,
  type Turn,
  type WrittenRequest,
} from './canonical'
import { eventPayload } from './stream'
import { isRecord, isString, lookup, saysSomething } from './types'

// ---------------------------------------------------------------------------------------------
// The wire format: the parts of it gw writes and reads

type ConverseImageFormat = 'png' | 'jpeg' | 'gif' | 'webp'

/** Bedrock takes images as base64 bytes (or from S3), never by URL. */
interface ConverseImage {
  format: ConverseImageFormat
  source: { bytes: string }
}

type ConverseToolResultContent = { text: string } | { image: ConverseImage }

/** Each block is a union: exactly one key. */
type ConverseContentBlock =
  | { text: string }
  | { image: ConverseImage }
  | { toolUse: { toolUseId: string; name: string; input: Record<string, unknown> } }
  | { toolResult: { toolUseId: string; content: ConverseToolResultContent[]; status?: 'success' | 'error' } }
  | { reasoningContent: { reasoningText: { text: string; signature?: string } } | { redactedContent: string } }

interface ConverseMessage {
  role: 'user' | 'assistant'
  content: ConverseContentBlock[]
}

interface ConverseTool {
  toolSpec: { name: string; description?: string; inputSchema: { json: Record<string, unknown> }; strict?: boolean }
}

type ConverseToolChoice = { auto: Record<string, never> } | { any: Record<string, never> } | { tool: { name: string } }

interface ConverseRequest {
  messages: ConverseMessage[]
  system?: Array<{ text: string }>
  inferenceConfig?: { maxTokens?: number; temperature?: number; topP?: number; stopSequences?: string[] }
  toolConfig?: { tools: ConverseTool[]; toolChoice?: ConverseToolChoice }
  /** Passed to the model as it is: the model family's own knobs (Claude's `top_k`, `thinking`). */
  additionalModelRequestFields?: Record<string, unknown>
  [field: string]: unknown
}

type ConverseStopReason =
  | 'end_turn'
  | 'tool_use'
  | 'max_tokens'
  | 'stop_sequence'
  | 'guardrail_intervened'
  | 'content_filtered'
  | 'malformed_model_output'
  | 'malformed_tool_use'
  | 'model_context_window_exceeded'

// ---------------------------------------------------------------------------------------------
// The request

const FORMAT_OF_MEDIA_TYPE: Record<string, ConverseImageFormat> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
}

/**
 * Claude on Bedrock, by base model id, cross-region profile (`us.`, `global.`, ...) or an ARN naming
 * either. Its own knobs (`top_k`, `thinking`) go in `additionalModelRequestFields`, which Bedrock
 * passes through to the model; other families name theirs differently or have none, and an
 * application inference profile's ARN does not say its family, so for those the knobs are named.
 */
const isClaude = (model: string): boolean => /(?:^|[./])anthropic\.claude/.test(model)

/**
 * Bedrock checks tool-use ids against `[a-zA-Z0-9_.:-]{1,64}`; other providers' ids may not fit.
 * The same id always becomes the same text, so a call and its result still pair up.
 */
const toolUseId = (id: string): string => id.replace(/[^a-zA-Z0-9_.:-]/g, '_').slice(0, 64) || '_'

function writeRequest(call: ChatCall): WrittenRequest {
  const dropped = new Set<string>()
  const messages: ConverseMessage[] = []
  for (const turn of call.turns) addMessage(messages, turn.role, converseBlocks(call, turn, dropped))
  const request: ConverseRequest = { messages }
  // Bedrock refuses a text block that is blank, in the system prompt as in messages.
  const system = call.system.filter((block) => saysSomething(block.text)).map((block) => ({ text: block.text }))
  if (system.length > 0) request.system = system

  const inference: NonNullable<ConverseRequest['inferenceConfig']> = {}
  if (call.maxTokens !== undefined) inference.maxTokens = call.maxTokens
  if (call.temperature !== undefined) inference.temperature = call.temperature
  if (call.topP !== undefined) inference.topP = call.topP
  if (call.stop) inference.stopSequences = call.stop
  if (Object.keys(inference).length > 0) request.inferenceConfig = inference

  const modelFields: Record<string, unknown> = {}
  if (isClaude(call.model)) {
    if (call.topK !== undefined) modelFields.top_k = call.topK
    if (call.thinkingBudget !== undefined)
      modelFields.thinking =
        call.thinkingBudget > 0 ? { type: 'enabled', budget_tokens: call.thinkingBudget } : { type: 'disabled' }
  } else {
    for (const setting of ['topK', 'thinkingBudget'] as const)
      if (call[setting] !== undefined) dropped.add(settingName(call, setting))
  }
  if (Object.keys(modelFields).length > 0) request.additionalModelRequestFields = modelFields

  writeTools(call, request, dropped)
  // `requestMetadata` is for the account's own invocation logs, not the abuse monitoring `user` is for.
  for (const setting of ['seed', 'presencePenalty', 'frequencyPenalty', 'responseFormat', 'user'] as const)
    if (call[setting] !== undefined) dropped.add(settingName(call, setting))
  return { request, dropped: [...dropped], maxTokens: call.maxTokens }
}

/**
 * Bedrock wants user and assistant to take turns: a turn left empty by what it could not carry
 * would put two of one role side by side, so they become one message.
 */
function addMessage(messages: ConverseMessage[], role: Turn['role'], content: ConverseContentBlock[]): void {
  if (content.length === 0) return
  const last = messages.at(-1)
  if (last?.role === role) last.content.push(...content)
  else messages.push({ role, content })
}

/** Tool results open the user turn that answers the calls, as Claude insists; text after them keeps its order. */
function converseBlocks(call: ChatCall, turn: Turn, dropped: Set<string>): ConverseContentBlock[] {
  const blocks = turn.content.flatMap((block) => converseBlock(call, block, dropped))
  if (turn.role === 'assistant') return blocks
  return [...blocks.filter((block) => 'toolResult' in block), ...blocks.filter((block) => !('toolResult' in block))]
}

function converseBlock(call: ChatCall, block: Block, dropped: Set<string>): ConverseContentBlock[] {
  switch (block.type) {
    case 'text':
      return saysSomething(block.text) ? [{ text: block.text }] : []
    case 'image': {
      const image = converseImage(block)
      if (!image) dropped.add(settingName(call, 'image'))
      return image ? [{ image }] : []
    }
    case 'tool_call':
      // A provider's own token for the call (Gemini's) means nothing to Bedrock, and is not sent.
      return [{ toolUse: { toolUseId: toolUseId(block.id), name: block.name, input: block.arguments } }]
    case 'tool_result':
      return [{ toolResult: toolResult(call, block, dropped) }]
    case 'thinking':
      // Claude checks the signature of thinking sent back; thinking without one would be refused.
      if (block.signature === undefined) {
        dropped.add(settingName(call, 'thinking'))
        return []
      }
      return [{ reasoningContent: { reasoningText: { text: block.text, signature: block.signature } } }]
    case 'redacted_thinking':
      return [{ reasoningContent: { redactedContent: block.data } }]
  }
}

function converseImage(image: ImageBlock): ConverseImage | undefined {
  if (image.source.kind === 'url') return undefined
  const format = lookup(FORMAT_OF_MEDIA_TYPE, image.source.mediaType.toLowerCase())
  return format ? { format, source: { bytes: image.source.data } } : undefined
}

/** `status` says the tool failed; Bedrock takes it from Claude and Nova models. */
function toolResult(
  call: ChatCall,
  block: ToolResultBlock,
  dropped: Set<string>,
): { toolUseId: string; content: ConverseToolResultContent[]; status?: 'error' } {
  const content: ConverseToolResultContent[] = []
  for (const part of block.content) {
    if (part.type === 'text') {
      if (saysSomething(part.text)) content.push({ text: part.text })
      continue
    }
    const image = converseImage(part)
    if (image) content.push({ image })
    else dropped.add(settingName(call, 'toolResultImage'))
  }
  return { toolUseId: toolUseId(block.callId), content, ...(block.isError ? { status: 'error' as const } : {}) }
}

/**
 * Bedrock's tool choice has no `none`: without tools to see the model calls none, so they are
 * withheld. A conversation that already holds tool calls or results must declare its tools
 * (Bedrock refuses it otherwise), so there the tools go and `none` is named as dropped.
 */
function writeTools(call: ChatCall, request: ConverseRequest, dropped: Set<string>): void {
  if (call.tools.length === 0) return
  const choice = call.toolChoice
  if (call.parallelToolCalls === false && choice?.type !== 'none') dropped.add(settingName(call, 'parallelToolCalls'))
  const tools = call.tools.map(converseTool)
  if (choice?.type === 'none') {
    if (!call.turns.some(holdsToolBlocks)) return
    dropped.add(settingName(call, 'toolChoice'))
    request.toolConfig = { tools }
    return
  }
  request.toolConfig = { tools, ...(choice ? { toolChoice: toolChoiceBody(choice) } : {}) }
}

const holdsToolBlocks = (turn: Turn): boolean =>
  turn.content.some((block) => block.type === 'tool_call' || block.type === 'tool_result')

function toolChoiceBody(choice: Exclude<NonNullable<ChatCall['toolChoice']>, { type: 'none' }>): ConverseToolChoice {
  if (choice.type === 'tool') return { tool: { name: choice.name } }
  return choice.type === 'any' ? { any: {} } : { auto: {} }
}

/** Bedrock refuses an empty description. */
function converseTool(tool: ToolSpec): ConverseTool {
  const spec: ConverseTool['toolSpec'] = { name: tool.name, inputSchema: { json: tool.parameters } }
  if (tool.description !== undefined && tool.description !== '') spec.description = tool.description
  if (tool.strict) spec.strict = true
  return { toolSpec: spec }
}

// ---------------------------------------------------------------------------------------------
// The answer

const STOP_OF_REASON: Record<ConverseStopReason, StopReason> = {
  end_turn: 'end',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  stop_sequence: 'stop_sequence',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
  // The model's output could not be read as text or a tool call: what there is, is the answer.
  malformed_model_output: 'end',
  malformed_tool_use: 'end',
}

/** A stop reason newer than this list still ended the answer. */
const stopOf = (reason: unknown): StopReason | undefined =>
  lookup(STOP_OF_REASON, reason) ?? (isString(reason) ? 'end' : undefined)

/**
 * Bedrock counts as Anthropic does (AWS's prompt-caching guide): `inputTokens` is only the input read
 * fresh, the cached parts are in `cacheReadInputTokens` and `cacheWriteInputTokens`, and the whole
 * input is the sum of the three. So Anthropic's reading of its own counts serves, under Bedrock's names.
 */
export const usageOfConverse = (usage: Record<string, unknown>): Usage =>
  usageOfMessages({
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cache_read_input_tokens: usage.cacheReadInputTokens,
    cache_creation_input_tokens: usage.cacheWriteInputTokens,
  })

/**
 * Converse answers carry no id (only the `x-amzn-RequestId` header, which a body reader does not
 * see), and callers' formats want one, so each answer is given one: this process's random prefix and
 * a count, unique across instances without drawing randomness for every answer.
 */
let answerIdPrefix: string | undefined
let answersNamed = 0
const answerId = (): string => {
  answerIdPrefix ??= crypto.randomUUID().replaceAll('-', '').slice(0, 20)
  return `${answerIdPrefix}${(++answersNamed).toString(16).padStart(12, '0')}`
}

/** Bedrock sends its tool input as a JSON value; other formats take an object. */
const inputObject = (input: unknown): Record<string, unknown> => (isRecord(input) ? input : {})

function readAnswer(body: unknown): Answer {
  const response = isRecord(body) ? body : {}
  const output = isRecord(response.output) ? response.output : {}
  const message = isRecord(output.message) ? output.message : {}
  const content: Block[] = []
  for (const block of Array.isArray(message.content) ? message.content : []) {
    if (!isRecord(block)) continue
    if (isString(block.text)) content.push({ type: 'text', text: block.text })
    else if (isRecord(block.toolUse) && isString(block.toolUse.toolUseId) && isString(block.toolUse.name))
      content.push({
        type: 'tool_call',
        id: block.toolUse.toolUseId,
        name: block.toolUse.name,
        arguments: inputObject(block.toolUse.input),
      })
    else if (isRecord(block.reasoningContent)) content.push(...reasoningBlocks(block.reasoningContent))
  }
  return {
    id: answerId(),
    // The model is in the request's path, not the answer: the gateway knows which it called.
    model: '',
    content,
    stop: stopOf(response.stopReason),
    usage: isRecord(response.usage) ? usageOfConverse(response.usage) : undefined,
  }
}

function reasoningBlocks(reasoning: Record<string, unknown>): Block[] {
  const text = reasoning.reasoningText
  if (isRecord(text) && isString(text.text))
    return [{ type: 'thinking', text: text.text, ...(isString(text.signature) ? { signature: text.signature } : {}) }]
  return isString(reasoning.redactedContent) ? [{ type: 'redacted_thinking', data: reasoning.redactedContent }] : []
}

// ---------------------------------------------------------------------------------------------
// The stream

/** The ConverseStream events the reader knows; exceptions never reach it (the relay reports them). */
const STREAM_EVENTS = new Set([
  'messageStart',
  'contentBlockStart',
  'contentBlockDelta',
  'contentBlockStop',
  'messageStop',
  'metadata',
])

/**
 * ConverseStream's events as deltas: text and reasoning arrive as deltas of blocks that were never
 * started; a tool use opens with `contentBlockStart` and streams its input as JSON text. The stop
 * reason (`messageStop`) comes before the usage (`metadata`, the last event), so the stream ends on
 * `metadata`; one that lost it after its stop is still closed by the caller's writer. Events carry a
 * random `p` padding field, which nothing reads.
 */
function streamReader(): StreamReader {
  let started = false
  /** Bedrock's content block index -> the canonical call number. */
  const callOfBlock = new Map<number, number>()
  return {
    push(event) {
      if (event.event === undefined || !STREAM_EVENTS.has(event.event)) return []
      const payload = eventPayload(event)
      if (!isRecord(payload)) return []
      const out: Delta[] = []
      if (!started) {
        started = true
        out.push({ type: 'start', id: answerId(), model: '' })
      }
      switch (event.event) {
        case 'contentBlockStart':
          out.push(...blockStart(payload.contentBlockIndex, payload.start, callOfBlock))
          break
        case 'contentBlockDelta':
          out.push(...blockDelta(payload.contentBlockIndex, payload.delta, callOfBlock))
          break
        case 'messageStop':
          out.push({ type: 'stop', reason: stopOf(payload.stopReason) ?? 'end' })
          break
        case 'metadata':
          if (isRecord(payload.usage)) out.push({ type: 'usage', usage: usageOfConverse(payload.usage) })
          out.push({ type: 'end' })
          break
      }
      return out
    },
  }
}

function blockStart(index: unknown, start: unknown, callOfBlock: Map<number, number>): Delta[] {
  const toolUse = isRecord(start) ? start.toolUse : undefined
  if (!isRecord(toolUse) || typeof index !== 'number') return []
  const call = callOfBlock.size
  callOfBlock.set(index, call)
  return [
    {
      type: 'tool_call',
      call,
      id: isString(toolUse.toolUseId) ? toolUse.toolUseId : '',
      name: isString(toolUse.name) ? toolUse.name : '',
      arguments: '',
    },
  ]
}

function blockDelta(index: unknown, change: unknown, callOfBlock: Map<number, number>): Delta[] {
  if (!isRecord(change)) return []
  if (isString(change.text)) return change.text === '' ? [] : [{ type: 'text', text: change.text }]
  if (isRecord(change.reasoningContent)) {
    const reasoning = change.reasoningContent
    if (isString(reasoning.text)) return reasoning.text === '' ? [] : [{ type: 'thinking', text: reasoning.text }]
    if (isString(reasoning.signature)) return [{ type: 'thinking_signature', signature: reasoning.signature }]
    if (isString(reasoning.redactedContent)) return [{ type: 'redacted_thinking', data: reasoning.redactedContent }]
    return []
  }
  const call = typeof index === 'number' ? callOfBlock.get(index) : undefined
  const fragment = isRecord(change.toolUse) ? change.toolUse.input : undefined
  // An empty input streams as "" (the call takes no arguments): nothing to add.
  if (call === undefined || !isString(fragment) || fragment === '') return []
  return [{ type: 'tool_arguments', call, fragment }]
}

export const bedrockConverse: ProviderFormat = {
  writeRequest,
  readAnswer,
  streamReader,
}
