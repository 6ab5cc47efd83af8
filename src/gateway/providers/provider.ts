import type { ProviderCredentials, ProviderName } from '../../directory/providers'
import type { Usage } from '../../money/usage'
import type { SseEvent } from '../../util/sse'

/**
 * The wire formats callers speak (OpenAI's, Anthropic's and Google's SDKs): a caller's path picks its
 * format, and its answers and errors come back in it.
 */
export type CallerWireFormat = 'openai' | 'anthropic' | 'gemini'

/** The wire formats providers speak: the callers' formats, and Bedrock's Converse. */
export type WireFormat = CallerWireFormat | 'bedrock'

/**
 * How a wire format's answers are read: what a call used, which model served, why it stopped, and
 * where its stream ends. One per format; a provider speaks one or more (Vertex serves Gemini and Claude).
 */
export interface WireFamily {
  format: WireFormat
  /** Paths (as callers send them) served in this format as they come, untranslated. */
  paths: readonly string[]
  /** Where a translated conversation goes, as a path of the format's own API (the provider makes the URL). */
  chatPath: string
  /** Adjusts a streaming request so the usage comes back in the stream (OpenAI's `stream_options`). */
  requestUsageInStream(body: Record<string, unknown>): { body: Record<string, unknown>; callerAskedForUsage: boolean }
  usageOf(response: unknown): Usage | undefined
  /** Accumulates usage over stream events; returns the usage known so far. */
  streamUsage(): StreamUsage
  /** True for the format's "stream complete" event; a stream that ends without it failed. */
  isStreamEnd(event: SseEvent): boolean
  /** True for an event the caller did not ask for and must not see (the extra usage chunk). */
  isInjectedUsageEvent(event: SseEvent, callerAskedForUsage: boolean): boolean
  /** The model that served, from a response body or a stream event, when the provider says so. */
  servedModel(payload: unknown): string | undefined
  /** Why the model stopped (`stop`, `length`, `end_turn`, ...), from a response body, one per choice. */
  finishReasons(payload: unknown): string[]
  /** Reads a stream's bytes into its events: server-sent events unless the format frames them otherwise. */
  eventParser(): EventParser
  /**
   * Its streams carry the format's events in frames of the provider's own (Claude on Bedrock's
   * InvokeModel: Anthropic's events in AWS event streams): never relayed as raw bytes, each event is
   * written again as a server-sent event, unchanged, even when nothing is translated.
   */
  reframedStream?: true
  /**
   * Its provider refuses calls in a shape of its own, not the format's (Bedrock's `{message}`, Vertex's
   * Google errors for Claude): a failure is written in the caller's format even when nothing is translated.
   */
  foreignErrors?: true
}

/** Turns a stream's bytes into its events as they arrive; `end` gives those left when the bytes end. */
export interface EventParser {
  push(chunk: Uint8Array): SseEvent[]
  end(): SseEvent[]
}

/** One call as it leaves for its provider. */
export interface UpstreamCall {
  /** The path in the format's API: the caller's own for a call passed through, the format's chat path when translated. */
  path: string
  /** The model as the provider names it (some providers put it in the URL). */
  model: string
  stream: boolean
  credentials: ProviderCredentials
  callerHeaders: Headers
  /** The body as it will be sent, for providers that sign it. */
  body: string | Uint8Array | undefined
  /**
   * How the provider's own side requests go (a token for a service account): through the egress
   * policy when the credentials are an organisation's, which chose where they lead.
   */
  fetch: (url: string, init: RequestInit) => Promise<Response>
}

/** Where a call goes: its URL and headers, and its body when the provider wants it other than the format's (Claude on Vertex). */
export interface Upstream {
  url: string
  headers: Headers
  body?: string | Uint8Array
  /** Called when the provider refuses the call's authentication (401): what it held for them (a token) is stale. */
  unauthorized?: () => void
}

/**
 * What the gateway needs from a provider: the format each of its models speaks, and where a call goes
 * with which credentials. A new provider is one folder exporting one of these; the registry lists them
 * statically (the compiled binary cannot import by computed name).
 */
export interface ProviderAdapter {
  name: ProviderName
  /** The format a model is called in; a provider may call one model in the caller's own format when it can (Claude on Bedrock). */
  family(model: string, callerFormat: CallerWireFormat): WireFamily
  /** True when calls need an operator key (a vendor's API); a self-hosted server may need none. */
  requiresKey(credentials: ProviderCredentials): boolean
  /** The upstream URL and headers for a call: the provider's address, its authentication (a key, a token, a signature). */
  upstream(call: UpstreamCall): Promise<Upstream>
}

export interface StreamUsage {
  push(event: SseEvent): void
  result(): Usage | undefined
  servedModel(): string | undefined
  /** Why the model stopped, as the stream's events said so far. */
  finishReasons(): string[]
}

export const asRecord = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined

/**
 * The most tokens one reported count may hold. No model reads or writes this many in a call; the bound
 * keeps a provider's nonsense (a fraction, a negative, 1e20) out of the record's integer columns, where
 * it would be refused, and out of the price, where it would pass the largest exact integer. Three
 * counts summed and a total stay within a 32-bit column.
 */
const MAX_TOKEN_COUNT = 500_000_000

/** A token count a provider reported, as a whole number from 0 to MAX_TOKEN_COUNT; 0 when it is no number. */
export const asTokenCount = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) ? Math.min(MAX_TOKEN_COUNT, Math.max(0, Math.trunc(value))) : 0

export const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
