import type { ProviderName } from '../directory/providers'
import type { ErrorFamily } from '../error-answers'
import type { CallerWireFormat } from './providers/provider'
import type { StreamProtocol } from './translate/errors'

/**
 * How a dispatch path's body is read: JSON (its `model` picks the provider), multipart (a `model` field
 * does), or Gemini's JSON, whose model and method are in the URL.
 */
export type BodyKind = 'json' | 'multipart' | 'gemini'
/**
 * How its answer is relayed: `provider` reads a whole answer (for its usage, and to translate it) or
 * relays a stream event by event; `raw` passes the bytes through as they come (audio, text).
 */
export type AnswerKind = 'provider' | 'raw'

/** How gw handles one dispatch path. */
export interface DispatchRoute {
  format: CallerWireFormat
  stream: StreamProtocol
  /** Estimated before the call and costed after it; false for what the provider does not charge for. */
  priced: boolean
  body: BodyKind
  answer: AnswerKind
  /** A conversation, which any provider's format can carry: translated when the formats differ. */
  conversation?: true
  /** The model when the body names none (OpenAI's moderations take it as optional). */
  defaultModel?: string
  /** What a unit-priced model bills by: the characters of the body's `input`, or the seconds of audio the answer reports. */
  measure?: 'input-characters' | 'audio-seconds'
  summary: string
}

const chatLike = { stream: 'openai-chunks', priced: true, body: 'json', answer: 'provider' } as const
/** Google's generateContent, as its SDK calls it (`v1` by default from 3.x, `v1beta` before): the model in the URL. */
const generateContent = {
  format: 'gemini',
  stream: 'gemini',
  priced: true,
  body: 'gemini',
  answer: 'provider',
  conversation: true,
  summary: "Generate content (Google's Gemini format: models/{model}:generateContent or :streamGenerateContent), on any provider",
} as const
const openaiModel = { format: 'openai', stream: 'openai-chunks', priced: true } as const

/**
 * The provider-style paths gw serves (spec 4.3), each with the wire format its callers speak (also
 * the shape of its errors: an SDK parses a refusal as it parses its provider's), the stream protocol
 * they read, and how its body and answer are handled. Every one is authenticated, limited, recorded
 * and answered with the Gw-* headers.
 */
export const DISPATCH_ROUTES = {
  '/v1/chat/completions': {
    format: 'openai',
    ...chatLike,
    conversation: true,
    summary: 'Chat completion (OpenAI format), on any provider',
  },
  '/v1/completions': { format: 'openai', ...chatLike, summary: 'Text completion (OpenAI format)' },
  '/v1/embeddings': { format: 'openai', ...chatLike, summary: 'Embeddings (OpenAI format)' },
  '/v1/responses': { format: 'openai', ...chatLike, stream: 'openai-responses', summary: 'Response (OpenAI Responses API)' },
  '/v1/messages': {
    format: 'anthropic',
    ...chatLike,
    stream: 'anthropic',
    conversation: true,
    summary: 'Message (Anthropic format), on any provider',
  },
  '/v1beta/models/*': generateContent,
  '/v1/models/*': generateContent,
  '/v1/messages/count_tokens': {
    format: 'anthropic',
    ...chatLike,
    stream: 'anthropic',
    // Anthropic does not charge for counting: no estimate is reserved against limits or credits.
    priced: false,
    summary: "The tokens a message would take, counted by an Anthropic model's provider (free); other models are a 400",
  },
  '/v1/images/generations': { ...openaiModel, body: 'json', answer: 'provider', summary: 'Images from a prompt (OpenAI)' },
  '/v1/moderations': {
    ...openaiModel,
    body: 'json',
    answer: 'provider',
    defaultModel: 'omni-moderation-latest',
    summary: 'Moderation of text or images (OpenAI)',
  },
  '/v1/audio/speech': {
    ...openaiModel,
    body: 'json',
    answer: 'raw',
    measure: 'input-characters',
    summary: 'Speech from text (OpenAI): the audio bytes',
  },
  '/v1/audio/transcriptions': {
    ...openaiModel,
    body: 'multipart',
    answer: 'raw',
    measure: 'audio-seconds',
    summary: 'Text from audio (OpenAI, multipart upload)',
  },
  '/v1/audio/translations': {
    ...openaiModel,
    body: 'multipart',
    answer: 'raw',
    measure: 'audio-seconds',
    summary: 'English text from audio (OpenAI, multipart upload)',
  },
} as const satisfies Record<string, DispatchRoute>

/**
 * The providers' APIs that name no model (files and batches): passed through to their one provider,
 * on the organisation's own key, as bytes both ways. `kind` stands for the model in the record and the
 * Gw-Model header. Paths are the router's (`:name` for a parameter).
 */
export const PROVIDER_APIS = [
  { method: 'POST', path: '/v1/files', provider: 'openai', kind: 'files', summary: 'Upload a file (OpenAI, multipart)' },
  { method: 'GET', path: '/v1/files', provider: 'openai', kind: 'files', summary: "The organisation's files (OpenAI)" },
  { method: 'GET', path: '/v1/files/:fileId', provider: 'openai', kind: 'files', summary: 'A file (OpenAI)' },
  {
    method: 'GET',
    path: '/v1/files/:fileId/content',
    provider: 'openai',
    kind: 'files',
    summary: "A file's content (OpenAI)",
  },
  { method: 'DELETE', path: '/v1/files/:fileId', provider: 'openai', kind: 'files', summary: 'Delete a file (OpenAI)' },
  { method: 'POST', path: '/v1/batches', provider: 'openai', kind: 'batches', summary: 'Create a batch (OpenAI)' },
  { method: 'GET', path: '/v1/batches', provider: 'openai', kind: 'batches', summary: "The organisation's batches (OpenAI)" },
  { method: 'GET', path: '/v1/batches/:batchId', provider: 'openai', kind: 'batches', summary: 'A batch (OpenAI)' },
  {
    method: 'POST',
    path: '/v1/batches/:batchId/cancel',
    provider: 'openai',
    kind: 'batches',
    summary: 'Cancel a batch (OpenAI)',
  },
  {
    method: 'POST',
    path: '/v1/messages/batches',
    provider: 'anthropic',
    kind: 'message_batches',
    summary: 'Create a message batch (Anthropic)',
  },
  {
    method: 'GET',
    path: '/v1/messages/batches',
    provider: 'anthropic',
    kind: 'message_batches',
    summary: "The organisation's message batches (Anthropic)",
  },
  {
    method: 'GET',
    path: '/v1/messages/batches/:batchId',
    provider: 'anthropic',
    kind: 'message_batches',
    summary: 'A message batch (Anthropic)',
  },
  {
    method: 'GET',
    path: '/v1/messages/batches/:batchId/results',
    provider: 'anthropic',
    kind: 'message_batches',
    summary: "A message batch's results, as JSON lines (Anthropic)",
  },
  {
    method: 'POST',
    path: '/v1/messages/batches/:batchId/cancel',
    provider: 'anthropic',
    kind: 'message_batches',
    summary: 'Cancel a message batch (Anthropic)',
  },
  {
    method: 'DELETE',
    path: '/v1/messages/batches/:batchId',
    provider: 'anthropic',
    kind: 'message_batches',
    summary: 'Delete a message batch (Anthropic)',
  },
] as const satisfies ReadonlyArray<{
  method: 'GET' | 'POST' | 'DELETE'
  path: string
  provider: ProviderName
  kind: string
  summary: string
}>

export type ProviderApi = (typeof PROVIDER_APIS)[number]

export type DispatchPath = keyof typeof DISPATCH_ROUTES
export const DISPATCH_PATHS = Object.keys(DISPATCH_ROUTES) as DispatchPath[]

/** The gateway's routes besides dispatch, which OpenAI's SDKs call and whose errors they parse. */
const OPENAI_STYLE_ROUTES: ReadonlySet<string> = new Set(['/v1/models', '/v1/feedback', '/v1/files', '/v1/batches'])
const OPENAI_STYLE_PREFIXES = ['/v1/models/', '/v1/files/', '/v1/batches/']

/**
 * The shape of the errors of any path gw answers: a dispatch path's format, or the management envelope.
 * Under `/v1/models/`, OpenAI's SDKs only read (GET) and Google's only post: the method tells them apart.
 */
export function errorFamily(pathname: string, method = 'GET'): ErrorFamily {
  // A route that takes the rest of the path (`/v1beta/models/*`) is Google's, whatever the rest holds.
  if (pathname.startsWith('/v1beta/models/') || (method === 'POST' && pathname.startsWith('/v1/models/'))) return 'gemini'
  if (Object.hasOwn(DISPATCH_ROUTES, pathname) && !pathname.endsWith('*')) return DISPATCH_ROUTES[pathname as DispatchPath].format
  if (pathname === '/v1/messages/batches' || pathname.startsWith('/v1/messages/batches/')) return 'anthropic'
  if (OPENAI_STYLE_ROUTES.has(pathname) || OPENAI_STYLE_PREFIXES.some((prefix) => pathname.startsWith(prefix))) return 'openai'
  return 'management'
}
