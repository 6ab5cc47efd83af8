import type { ErrorFamily } from '../error-answers'
import type { WireFormat } from './providers/provider'
import type { StreamProtocol } from './translate/errors'

/**
 * The provider-style paths gw serves (spec 4.3), each with the wire format its callers speak, the
 * stream protocol they read, and whether a call is priced (estimated before, costed after). The format is also the shape of its errors: an SDK parses a refusal as
 * it parses its provider's.
 */
export const DISPATCH_ROUTES = {
  '/v1/chat/completions': {
    format: 'openai',
    stream: 'openai-chunks',
    priced: true,
    summary: 'Chat completion (OpenAI format), on any provider',
  },
  '/v1/completions': { format: 'openai', stream: 'openai-chunks', priced: true, summary: 'Text completion (OpenAI format)' },
  '/v1/embeddings': { format: 'openai', stream: 'openai-chunks', priced: true, summary: 'Embeddings (OpenAI format)' },
  '/v1/responses': {
    format: 'openai',
    stream: 'openai-responses',
    priced: true,
    summary: 'Response (OpenAI Responses API)',
  },
  '/v1/messages': {
    format: 'anthropic',
    stream: 'anthropic',
    priced: true,
    summary: 'Message (Anthropic format), on any provider',
  },
  '/v1/messages/count_tokens': {
    format: 'anthropic',
    stream: 'anthropic',
    // Anthropic does not charge for counting: no estimate is reserved against limits or credits.
    priced: false,
    summary: "The tokens a message would take, counted by an Anthropic model's provider (free); other models are a 400",
  },
} as const satisfies Record<string, { format: WireFormat; stream: StreamProtocol; priced: boolean; summary: string }>

export type DispatchPath = keyof typeof DISPATCH_ROUTES
export const DISPATCH_PATHS = Object.keys(DISPATCH_ROUTES) as DispatchPath[]

/** The gateway's routes besides dispatch, which OpenAI's SDKs call and whose errors they parse. */
const OPENAI_STYLE_ROUTES: ReadonlySet<string> = new Set(['/v1/models', '/v1/feedback'])

/** The shape of the errors of any path gw answers: a dispatch path's format, or the management envelope. */
export function errorFamily(pathname: string): ErrorFamily {
  if (Object.hasOwn(DISPATCH_ROUTES, pathname)) return DISPATCH_ROUTES[pathname as DispatchPath].format
  return OPENAI_STYLE_ROUTES.has(pathname) || pathname.startsWith('/v1/models/') ? 'openai' : 'management'
}
