/**
 * The parts of OpenAI's Chat Completions and Anthropic's Messages wire formats that gw translates
 * between. Bodies arrive unchecked (the provider validates them, not gw), so the translators read
 * them defensively; these types say what a well-formed body holds. Request types keep an
 * `unknown` index signature because callers send fields gw does not translate, and those must be
 * seen to be named as dropped.
 */

// ---------------------------------------------------------------------------------------------
// OpenAI Chat Completions

export interface OpenAITextPart {
  type: 'text'
  text: string
}

export interface OpenAIImagePart {
  type: 'image_url'
  /** An http(s) URL or a `data:<media type>;base64,<data>` URL. */
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' }
}

/** How an assistant turn in the history says it declined. */
export interface OpenAIRefusalPart {
  type: 'refusal'
  refusal: string
}

export type OpenAIUserContentPart = OpenAITextPart | OpenAIImagePart

export interface OpenAIToolCall {
  id: string
  type: 'function'
  /** `arguments` is a JSON document as text, as the model wrote it (not guaranteed to parse). */
  function: { name: string; arguments: string }
}

export interface OpenAISystemMessage {
  /** `developer` is the newer name for `system`; both are instructions, not conversation. */
  role: 'system' | 'developer'
  content: string | OpenAITextPart[]
  name?: string
}

export interface OpenAIUserMessage {
  role: 'user'
  content: string | OpenAIUserContentPart[]
  name?: string
}

export interface OpenAIAssistantMessage {
  role: 'assistant'
  content?: string | Array<OpenAITextPart | OpenAIRefusalPart> | null
  refusal?: string | null
  tool_calls?: OpenAIToolCall[]
  name?: string
}

export interface OpenAIToolMessage {
  role: 'tool'
  tool_call_id: string
  content: string | OpenAITextPart[]
}

export type OpenAIMessage = OpenAISystemMessage | OpenAIUserMessage | OpenAIAssistantMessage | OpenAIToolMessage

export interface OpenAIFunctionTool {
  type: 'function'
  function: {
    name: string
    description?: string
    /** A JSON Schema for the arguments object. */
    parameters?: Record<string, unknown>
    strict?: boolean | null
  }
}

export type OpenAIToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } }

export interface OpenAIChatRequest {
  model: string
  messages: OpenAIMessage[]
  /** The older name of `max_completion_tokens`; still what most OpenAI-compatible servers read. */
  max_tokens?: number | null
  max_completion_tokens?: number | null
  temperature?: number | null
  top_p?: number | null
  stop?: string | string[] | null
  stream?: boolean | null
  stream_options?: { include_usage?: boolean } | null
  user?: string
  tools?: OpenAIFunctionTool[]
  tool_choice?: OpenAIToolChoice
  parallel_tool_calls?: boolean
  /** Everything else a caller may send (n, seed, logprobs, response_format, ...). */
  [field: string]: unknown
}

export type OpenAIFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call'

/** `prompt_tokens` counts every input token; `cached_tokens` is the part of it read from cache. */
export interface OpenAIUsage {
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
  prompt_tokens_details?: { cached_tokens?: number }
}

export interface OpenAIResponseMessage {
  role: 'assistant'
  content: string | null
  refusal: string | null
  tool_calls?: OpenAIToolCall[]
  /** The pre-tools way of calling one function; some OpenAI-compatible servers still answer with it. */
  function_call?: { name: string; arguments: string } | null
  /** The model's thinking, as OpenAI-compatible servers (DeepSeek, vLLM) and the clients that read them name it. */
  reasoning_content?: string
}

export interface OpenAIChatCompletion {
  id: string
  object: 'chat.completion'
  /** Unix time in seconds. */
  created: number
  model: string
  choices: Array<{
    index: number
    message: OpenAIResponseMessage
    finish_reason: OpenAIFinishReason
    logprobs: null
  }>
  usage?: OpenAIUsage
}

/** One tool call's piece of a chunk: the first piece has id, type and name; later ones only arguments. */
export interface OpenAIToolCallDelta {
  index: number
  id?: string
  type?: 'function'
  function?: { name?: string; arguments?: string }
}

export interface OpenAIChunkDelta {
  role?: 'assistant'
  content?: string | null
  refusal?: string | null
  tool_calls?: OpenAIToolCallDelta[]
  reasoning_content?: string
}

export interface OpenAIChatChunk {
  id: string
  object: 'chat.completion.chunk'
  created: number
  model: string
  /** Empty in the extra usage chunk that `stream_options.include_usage` asks for. */
  choices: Array<{ index: number; delta: OpenAIChunkDelta; finish_reason: OpenAIFinishReason | null }>
  /** Null on every chunk but the usage chunk when usage was asked for; absent otherwise. */
  usage?: OpenAIUsage | null
}

// ---------------------------------------------------------------------------------------------
// Anthropic Messages

export interface AnthropicCacheControl {
  type: 'ephemeral'
  ttl?: string
}

export interface AnthropicTextBlock {
  type: 'text'
  text: string
  cache_control?: AnthropicCacheControl | null
}

export type AnthropicImageSource = { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string }

export interface AnthropicImageBlock {
  type: 'image'
  source: AnthropicImageSource
  cache_control?: AnthropicCacheControl | null
}

export interface AnthropicToolUseBlock {
  type: 'tool_use'
  id: string
  name: string
  /** The arguments as a JSON object (never text, unlike OpenAI). */
  input: Record<string, unknown>
  cache_control?: AnthropicCacheControl | null
}

export interface AnthropicToolResultBlock {
  type: 'tool_result'
  tool_use_id: string
  content?: string | Array<AnthropicTextBlock | AnthropicImageBlock>
  is_error?: boolean
  cache_control?: AnthropicCacheControl | null
}

/** Extended thinking, as it appears in responses and in the history sent back. */
export interface AnthropicThinkingBlock {
  type: 'thinking'
  thinking: string
  signature: string
}

export interface AnthropicRedactedThinkingBlock {
  type: 'redacted_thinking'
  data: string
}

export type AnthropicRequestBlock =
  | AnthropicTextBlock
  | AnthropicImageBlock
  | AnthropicToolUseBlock
  | AnthropicToolResultBlock
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock

export interface AnthropicMessageParam {
  role: 'user' | 'assistant'
  content: string | AnthropicRequestBlock[]
}

export interface AnthropicTool {
  /** Absent or `custom` for a tool the caller runs; Anthropic's own server tools carry a dated type. */
  type?: 'custom' | null
  name: string
  description?: string
  input_schema: Record<string, unknown>
  strict?: boolean
  cache_control?: AnthropicCacheControl | null
}

export type AnthropicToolChoice =
  | { type: 'auto' | 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' }

export interface AnthropicMessagesRequest {
  model: string
  max_tokens: number
  messages: AnthropicMessageParam[]
  system?: string | AnthropicTextBlock[]
  temperature?: number
  top_p?: number
  stop_sequences?: string[]
  stream?: boolean
  metadata?: { user_id?: string | null }
  tools?: AnthropicTool[]
  tool_choice?: AnthropicToolChoice
  /** Everything else a caller may send (top_k, thinking, service_tier, ...). */
  [field: string]: unknown
}

export type AnthropicStopReason =
  | 'end_turn'
  | 'max_tokens'
  | 'stop_sequence'
  | 'tool_use'
  | 'pause_turn'
  | 'refusal'
  | 'model_context_window_exceeded'

/** `input_tokens` leaves out the cached parts, which are counted in the two cache fields. */
export interface AnthropicUsage {
  input_tokens: number
  output_tokens: number
  cache_creation_input_tokens?: number | null
  cache_read_input_tokens?: number | null
}

export type AnthropicResponseBlock =
  | AnthropicTextBlock
  | AnthropicToolUseBlock
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock

export interface AnthropicMessage {
  id: string
  type: 'message'
  role: 'assistant'
  model: string
  content: AnthropicResponseBlock[]
  stop_reason: AnthropicStopReason | null
  stop_sequence: string | null
  usage: AnthropicUsage
}

export type AnthropicContentDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'input_json_delta'; partial_json: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'signature_delta'; signature: string }

/** The usage in `message_delta`: output so far, and (from newer servers) the input side again. */
export interface AnthropicDeltaUsage {
  output_tokens: number
  input_tokens?: number | null
  cache_creation_input_tokens?: number | null
  cache_read_input_tokens?: number | null
}

/** One event of a Messages stream; the SSE `event:` name repeats `type`. */
export type AnthropicStreamEvent =
  | { type: 'message_start'; message: AnthropicMessage }
  | { type: 'content_block_start'; index: number; content_block: AnthropicResponseBlock }
  | { type: 'content_block_delta'; index: number; delta: AnthropicContentDelta }
  | { type: 'content_block_stop'; index: number }
  | {
      type: 'message_delta'
      delta: { stop_reason: AnthropicStopReason | null; stop_sequence: string | null }
      usage: AnthropicDeltaUsage
    }
  | { type: 'message_stop' }
  | { type: 'ping' }
  | { type: 'error'; error: { type: string; message: string } }

// ---------------------------------------------------------------------------------------------
// Reading bodies that arrive unchecked

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

export const isString = (value: unknown): value is string => typeof value === 'string'

export const finiteNumber = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined

/**
 * A caller-supplied `type` or `role` as it may appear in a dropped-field name. The names end up in
 * a response header, so anything outside a safe alphabet, or too long, becomes `unknown`.
 */
export const wireName = (value: unknown): string =>
  typeof value === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(value) ? value : 'unknown'

/** `table[key]` for a key that arrived unchecked; undefined for anything the table does not list. */
export const lookup = <K extends string, V>(table: Record<K, V>, key: unknown): V | undefined =>
  typeof key === 'string' && Object.hasOwn(table, key) ? table[key as K] : undefined

/**
 * Names (as `prefix.field`) the fields of `record` that the translation does not carry over. Null
 * and absent values ask for nothing, so they are not named.
 */
export function nameUntranslated(
  record: Record<string, unknown>,
  translated: ReadonlySet<string>,
  prefix: string,
  dropped: Set<string>,
): void {
  for (const [field, value] of Object.entries(record)) {
    if (!translated.has(field) && value !== null && value !== undefined) dropped.add(`${prefix}${wireName(field)}`)
  }
}

/** Text with nothing but whitespace says nothing (and Anthropic refuses it): it is left out. */
export const saysSomething = (text: string): boolean => text.trim() !== ''

/** A tool call's arguments as an object, or undefined when the text is not a JSON object. */
export function parseArguments(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text)
    return isRecord(value) ? value : undefined
  } catch {
    return undefined
  }
}
