/**
 * Provider failures across formats. A provider's error (a whole error answer, or an error event in a
 * stream) is read into one neutral failure, then written in the caller's format with the type the
 * caller's SDK expects for it: a 429 from Anthropic reaches an OpenAI SDK as a rate-limit error, not
 * as a generic one, and an overloaded OpenAI-compatible server reaches an Anthropic SDK as
 * `overloaded_error`.
 */
import type { SseEvent } from '../../util/sse'
import { asRecord, type CallerWireFormat, parseJson } from '../providers/provider'

export type FailureKind =
  | 'invalid_request'
  | 'authentication'
  | 'permission'
  | 'not_found'
  | 'request_too_large'
  | 'rate_limit'
  | 'overloaded'
  | 'timeout'
  | 'api_error'

export interface ProviderFailure {
  kind: FailureKind
  message: string
  /** How long the provider asked to be left alone, when it says so in its body (Google's RetryInfo). */
  retryAfterMs?: number
}

/** What each format calls each kind: Anthropic's documented error types, OpenAI's, and Google's canonical statuses. */
const TYPE_NAMES: Record<CallerWireFormat, Record<FailureKind, string>> = {
  anthropic: {
    invalid_request: 'invalid_request_error',
    authentication: 'authentication_error',
    permission: 'permission_error',
    not_found: 'not_found_error',
    request_too_large: 'request_too_large',
    rate_limit: 'rate_limit_error',
    overloaded: 'overloaded_error',
    timeout: 'timeout_error',
    api_error: 'api_error',
  },
  openai: {
    invalid_request: 'invalid_request_error',
    authentication: 'authentication_error',
    permission: 'permission_error',
    not_found: 'not_found_error',
    request_too_large: 'invalid_request_error',
    rate_limit: 'rate_limit_error',
    overloaded: 'server_error',
    timeout: 'timeout_error',
    api_error: 'api_error',
  },
  gemini: {
    invalid_request: 'INVALID_ARGUMENT',
    authentication: 'UNAUTHENTICATED',
    permission: 'PERMISSION_DENIED',
    not_found: 'NOT_FOUND',
    request_too_large: 'INVALID_ARGUMENT',
    rate_limit: 'RESOURCE_EXHAUSTED',
    overloaded: 'UNAVAILABLE',
    timeout: 'DEADLINE_EXCEEDED',
    api_error: 'INTERNAL',
  },
}

/** The HTTP status Google's errors carry as their `code`, by kind. */
const GOOGLE_CODES: Record<FailureKind, number> = {
  invalid_request: 400,
  authentication: 401,
  permission: 403,
  not_found: 404,
  request_too_large: 400,
  rate_limit: 429,
  overloaded: 503,
  timeout: 504,
  api_error: 500,
}

/** OpenAI's error codes for the kinds that have one. */
const OPENAI_CODES: Partial<Record<FailureKind, string>> = {
  rate_limit: 'rate_limit_exceeded',
  overloaded: 'overloaded',
  not_found: 'not_found',
  request_too_large: 'request_too_large',
}

/** Provider type names (either format's, and OpenAI's 429 types) that say more than the status does. */
const KIND_OF_TYPE: Record<string, FailureKind> = {
  invalid_request_error: 'invalid_request',
  authentication_error: 'authentication',
  permission_error: 'permission',
  not_found_error: 'not_found',
  request_too_large: 'request_too_large',
  rate_limit_error: 'rate_limit',
  requests: 'rate_limit',
  tokens: 'rate_limit',
  insufficient_quota: 'rate_limit',
  overloaded_error: 'overloaded',
  timeout_error: 'timeout',
  // Google's canonical statuses, which its errors carry beside the code.
  INVALID_ARGUMENT: 'invalid_request',
  UNAUTHENTICATED: 'authentication',
  PERMISSION_DENIED: 'permission',
  NOT_FOUND: 'not_found',
  RESOURCE_EXHAUSTED: 'rate_limit',
  UNAVAILABLE: 'overloaded',
  DEADLINE_EXCEEDED: 'timeout',
}

/**
 * A status that names its kind wins (OpenAI answers a 401 with type `invalid_request_error`); the
 * provider's type refines only a status that does not (400, 500, and an error inside a stream).
 */
export function failureKindOf(status: number, providerType?: string): FailureKind {
  const byStatus = kindOfStatus(status)
  if (byStatus !== 'invalid_request' && byStatus !== 'api_error') return byStatus
  // A provider's type is its text: `constructor` must not find Object's own.
  return providerType !== undefined && Object.hasOwn(KIND_OF_TYPE, providerType)
    ? (KIND_OF_TYPE[providerType] as FailureKind)
    : byStatus
}

function kindOfStatus(status: number): FailureKind {
  if (status === 401) return 'authentication'
  if (status === 403) return 'permission'
  if (status === 404) return 'not_found'
  if (status === 408 || status === 504) return 'timeout'
  if (status === 413) return 'request_too_large'
  if (status === 429) return 'rate_limit'
  if (status === 503 || status === 529) return 'overloaded'
  if (status >= 400 && status < 500) return 'invalid_request'
  return 'api_error'
}

/**
 * A provider's error body: `{error: {type, message}}` (OpenAI's), `{type: 'error', error: {...}}`
 * (Anthropic's), or AWS's `{message}` (some of its services spell it `Message`), whose type is in a
 * header and whose status says as much.
 */
export function readFailure(payload: unknown, status: number, fallback: string): ProviderFailure {
  const record = asRecord(payload)
  const error = asRecord(record?.error)
  const type = [error?.type, error?.code, error?.status].find((name): name is string => typeof name === 'string')
  const message = [error?.message, record?.message, record?.Message].find((text) => typeof text === 'string' && text !== '')
  const retryAfterMs = retryDelayOf(error?.details)
  return {
    kind: failureKindOf(status, type),
    message: typeof message === 'string' ? message : fallback,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  }
}

/** A protobuf Duration as JSON: decimal seconds with an `s` (`"7s"`, `"0.5s"`). */
const DURATION = /^(\d{1,9})(\.\d{1,9})?s$/

/**
 * Google says when to retry in its error's details (`google.rpc.RetryInfo`), not in a Retry-After
 * header; read, it is honoured as a header would be and passed on to callers as one.
 */
function retryDelayOf(details: unknown): number | undefined {
  if (!Array.isArray(details)) return undefined
  for (const detail of details) {
    const info = asRecord(detail)
    if (info?.['@type'] !== 'type.googleapis.com/google.rpc.RetryInfo' || typeof info.retryDelay !== 'string') continue
    const match = DURATION.exec(info.retryDelay)
    if (match) return Math.round(Number(`${match[1]}${match[2] ?? ''}`) * 1000)
  }
  return undefined
}

/** The whole error answer in the caller's format. */
export function failureBody(format: CallerWireFormat, failure: ProviderFailure): unknown {
  const type = TYPE_NAMES[format][failure.kind]
  if (format === 'anthropic') return { type: 'error', error: { type, message: failure.message } }
  if (format === 'gemini') return { error: { code: GOOGLE_CODES[failure.kind], message: failure.message, status: type } }
  return { error: { message: failure.message, type, param: null, code: OPENAI_CODES[failure.kind] ?? null } }
}

/** The stream protocol a caller reads: OpenAI's chunks (chat and completions), OpenAI's Responses events, Anthropic's, or Gemini's. */
export type StreamProtocol = 'openai-chunks' | 'openai-responses' | 'anthropic' | 'gemini'

/**
 * A provider's in-band error, in either format, or undefined for any other event: Anthropic's
 * `event: error`, OpenAI's `data: {"error": ...}` chunk, and the Responses API's `error` and
 * `response.failed` events.
 */
export function streamFailureOf(event: SseEvent): ProviderFailure | undefined {
  const payload = asRecord(parseJson(event.data))
  if (!payload) return undefined
  const name = event.event ?? payload.type
  if (name === 'response.failed') {
    const error = asRecord(asRecord(payload.response)?.error)
    return readFailure({ error }, 502, 'the provider failed the response')
  }
  if (name === 'error' && payload.error === undefined) {
    // The Responses API's error event carries its code and message at the top.
    return readFailure({ error: payload }, 502, 'the provider reported an error')
  }
  if (name === 'error' || asRecord(payload.error) !== undefined)
    return readFailure(payload, 502, 'the provider reported an error')
  return undefined
}

/** The in-band error event of a stream protocol, which every SDK of that protocol raises on. */
export function failureFrame(protocol: StreamProtocol, failure: ProviderFailure, sequenceNumber = 0): SseEvent {
  if (protocol === 'anthropic') return { event: 'error', data: JSON.stringify(failureBody('anthropic', failure)) }
  // Google's SDK reads only data lines, and raises on one that holds an error with its code.
  if (protocol === 'gemini') return { data: JSON.stringify(failureBody('gemini', failure)) }
  const body = asRecord(failureBody('openai', failure))?.error as Record<string, unknown>
  if (protocol === 'openai-responses') {
    const { code, message, param } = body
    return { event: 'error', data: JSON.stringify({ type: 'error', sequence_number: sequenceNumber, code, message, param }) }
  }
  return { data: JSON.stringify({ error: body }) }
}
