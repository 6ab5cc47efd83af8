/**
 * One conversation call in no provider's format: what every wire format gw translates can say, and
 * nothing only one of them can. A caller's format is read into it and the provider's written from
 * it (and the answer the other way), so a new format is one reader and one writer, not a pair per
 * other format. What a format cannot carry is named in `dropped`, in the caller's own field names.
 */
import type { Usage } from '../../money/usage'
import type { SseEvent } from '../../util/sse'

export interface TextBlock {
  type: 'text'
  text: string
}

export type ImageSource = { kind: 'base64'; mediaType: string; data: string } | { kind: 'url'; url: string }

export interface ImageBlock {
  type: 'image'
  source: ImageSource
}

export interface ToolCallBlock {
  type: 'tool_call'
  id: string
  name: string
  /** The arguments as an object; text that did not parse to one was named as dropped when read. */
  arguments: Record<string, unknown>
  /** A provider's opaque token for the call (Gemini's thought signature), sent back with it. */
  signature?: string
}

export interface ToolResultBlock {
  type: 'tool_result'
  callId: string
  /** The tool's name, where the caller's format says it (formats that pair results by name need it). */
  name?: string
  content: Array<TextBlock | ImageBlock>
  isError?: boolean
}

export interface ThinkingBlock {
  type: 'thinking'
  text: string
  /** The provider's signature over the thinking, which it checks when the thinking is sent back. */
  signature?: string
}

/** Thinking the provider encrypted: only its own format can carry it back. */
export interface RedactedThinkingBlock {
  type: 'redacted_thinking'
  data: string
}

export type Block = TextBlock | ImageBlock | ToolCallBlock | ToolResultBlock | ThinkingBlock | RedactedThinkingBlock

export interface Turn {
  role: 'user' | 'assistant'
  content: Block[]
}

export interface ToolSpec {
  name: string
  description?: string
  /** A JSON Schema for the arguments object. */
  parameters: Record<string, unknown>
  strict?: boolean
}

/** A tool as a caller declared it; one without a schema takes no arguments, which other formats want said. */
export function toolSpec(name: string, schema: unknown, description: unknown, strict: unknown): ToolSpec {
  const isObject = typeof schema === 'object' && schema !== null && !Array.isArray(schema)
  const spec: ToolSpec = { name, parameters: isObject ? (schema as Record<string, unknown>) : { type: 'object', properties: {} } }
  if (typeof description === 'string') spec.description = description
  if (strict === true) spec.strict = true
  return spec
}

export type ToolChoice = { type: 'auto' } | { type: 'none' } | { type: 'any' } | { type: 'tool'; name: string }

/** What the caller wants the answer's text to be: JSON, or JSON matching a schema. */
export type ResponseFormat = { type: 'json' } | { type: 'json_schema'; name?: string; schema: Record<string, unknown> }

/**
 * The optional settings a format may be unable to carry, and the parts of a conversation some formats
 * cannot send back: each named in the caller's own terms when the provider's format drops it (`top_k`
 * for an Anthropic caller, `generationConfig.topK` for Gemini's). `image` is an image the provider
 * cannot take as it was sent: by URL (Bedrock reads only inline bytes), or of a type it does not read.
 * `toolStrict` is a tool's `strict` schema adherence, which some providers cannot promise.
 */
export type Feature = 'thinking' | 'redactedThinking' | 'image' | 'toolResultImage' | 'toolResultError' | 'toolStrict' | Setting

export type Setting =
  | 'maxTokens'
  | 'temperature'
  | 'topP'
  | 'topK'
  | 'stop'
  | 'user'
  | 'toolChoice'
  | 'parallelToolCalls'
  | 'responseFormat'
  | 'seed'
  | 'presencePenalty'
  | 'frequencyPenalty'
  | 'thinkingBudget'

export interface ChatCall {
  model: string
  /** The instructions: the caller's system prompt, and its system and developer messages. */
  system: TextBlock[]
  /** The conversation, user and assistant taking turns as the caller sent them (merged where a format needs it). */
  turns: Turn[]
  stream: boolean | undefined
  maxTokens?: number
  temperature?: number
  topP?: number
  topK?: number
  stop?: string[]
  /** The caller's end user, as a provider's abuse monitoring knows them. */
  user?: string
  tools: ToolSpec[]
  toolChoice?: ToolChoice
  /** False: at most one tool call per answer. */
  parallelToolCalls?: boolean
  responseFormat?: ResponseFormat
  seed?: number
  presencePenalty?: number
  frequencyPenalty?: number
  /** Tokens the model may think for before it answers (extended thinking); 0 turns thinking off. */
  thinkingBudget?: number
  /** The caller's name for each setting and part it sent, for naming the ones a provider's format drops. */
  names: Partial<Record<Feature, string>>
}

/** Why the model stopped, in no format's words. */
export type StopReason = 'end' | 'length' | 'tool_calls' | 'stop_sequence' | 'content_filter' | 'refusal' | 'pause'

export interface Answer {
  id: string
  model: string
  content: Block[]
  /** Undefined when the provider did not say (a stream cut short). */
  stop: StopReason | undefined
  usage: Usage | undefined
}

/** A piece of a streamed answer, in no format's words. Tool calls are numbered from 0 in the order they start. */
export type Delta =
  | { type: 'start'; id: string; model: string; usage?: Usage }
  | { type: 'text'; text: string }
  | { type: 'thinking'; text: string }
  | { type: 'thinking_signature'; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_call'; call: number; id: string; name: string; arguments: string; signature?: string }
  | { type: 'tool_arguments'; call: number; fragment: string }
  /** The usage so far: each replaces the one before. */
  | { type: 'usage'; usage: Usage }
  | { type: 'stop'; reason: StopReason }
  /** The provider's last event: what is still owed the caller goes out now. */
  | { type: 'end' }

/**
 * The request in a provider's format, what it could not carry, and the output bound it holds the call
 * to (a format that insists on one sets a default: the cost estimate must know it).
 */
export interface WrittenRequest {
  request: Record<string, unknown>
  dropped: string[]
  maxTokens?: number
}

/** A caller's format: its request read into the canonical call, the canonical answer written back in it. */
export interface CallerFormat {
  readRequest(body: Record<string, unknown>): { call: ChatCall; dropped: string[] }
  writeAnswer(answer: Answer, options: WriteOptions): { body: unknown; dropped: string[] }
  streamWriter(options: WriteOptions & { includeUsage: boolean }): StreamWriter
}

/** A provider's format: the canonical call written in it, and its answer read back. */
export interface ProviderFormat {
  writeRequest(call: ChatCall): WrittenRequest
  readAnswer(body: unknown): Answer
  streamReader(): StreamReader
}

export interface WriteOptions {
  now: () => number
}

/** Turns a provider's stream events into deltas. */
export interface StreamReader {
  push(event: SseEvent): Delta[]
}

/** Turns deltas into a caller's stream events. */
export interface StreamWriter {
  push(delta: Delta): SseEvent[]
  /**
   * What must still go out once the provider's stream has ended cleanly without its last event. It
   * never invents a stop: when the provider said nothing about how the answer ended, it returns [].
   */
  finish(): SseEvent[]
  /** What the provider sent that the caller's format cannot carry, named for the translation warning. */
  dropped(): string[]
}

/** A feature's name in the caller's terms, for a format that cannot carry it. */
export const settingName = (call: ChatCall, feature: Feature): string => call.names[feature] ?? feature
