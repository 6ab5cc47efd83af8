import { Elysia } from 'elysia'
import { ApiError, type ErrorCode, internalError } from '../errors'
import type { Fields, Logger } from '../log'

/** Which body shape a route's errors take: the one its callers' SDKs parse. */
export type ErrorFamily = 'management' | 'openai' | 'anthropic'

const OPENAI_STYLE_PATHS = new Set([
  '/v1/chat/completions',
  '/v1/completions',
  '/v1/embeddings',
  '/v1/responses',
  '/v1/models',
  '/v1/feedback',
])

export function errorFamily(pathname: string): ErrorFamily {
  if (pathname === '/v1/messages') return 'anthropic'
  if (OPENAI_STYLE_PATHS.has(pathname)) return 'openai'
  return 'management'
}

/** OpenAI and Anthropic name their error types alike; anything else is an invalid request to both. */
const SDK_ERROR_TYPES: Partial<Record<ErrorCode, string>> = {
  unauthorized: 'authentication_error',
  payment_required: 'billing_error',
  forbidden: 'permission_error',
  tier_required: 'permission_error',
  not_found: 'not_found_error',
  rate_limited: 'rate_limit_error',
  internal_error: 'api_error',
  upstream_error: 'api_error',
  upstream_unreachable: 'api_error',
  upstream_timeout: 'timeout_error',
}

export function errorBody(family: ErrorFamily, error: ApiError): unknown {
  switch (family) {
    case 'openai':
      return {
        error: {
          message: error.message,
          type: SDK_ERROR_TYPES[error.code] ?? 'invalid_request_error',
          code: error.code,
          param: null,
        },
      }
    case 'anthropic':
      return { type: 'error', error: { type: SDK_ERROR_TYPES[error.code] ?? 'invalid_request_error', message: error.message } }
    case 'management':
      return {
        data: null,
        error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) },
      }
  }
}

export const errorResponse = (pathname: string, error: ApiError): Response =>
  Response.json(errorBody(errorFamily(pathname), error), { status: error.status })

/** Our own fault: the detail goes to the log, the caller gets `internal_error` in the path's format. */
export function ownFault(log: Logger, pathname: string, error: unknown, fields: Fields = {}): Response {
  log.error('unhandled error', { ...fields, path: pathname, error: error instanceof Error ? error.message : String(error) })
  return errorResponse(pathname, internalError())
}

interface ValidationLike {
  all?: Array<{ path?: string; summary?: string; message?: string }>
  message: string
}

function describeValidation(error: ValidationLike, where: string): string {
  const first = error.all?.[0]
  if (!first) return `invalid ${where}`
  const path = first.path && first.path.length > 0 ? first.path.slice(1).replaceAll('/', '.') : ''
  return `invalid ${where}${path ? ` at "${path}"` : ''}: ${first.summary ?? first.message ?? 'does not match the schema'}`
}

/** The one place where thrown errors become responses. Our own faults are logged and never detailed. */
export const errorMapper = (log: Logger) =>
  new Elysia({ name: 'error-mapper' }).onError({ as: 'global' }, ({ code, error, request, path }) => {
    // Hooks that run while the body is parsed (authentication) reach here wrapped in a parse error.
    const cause = (error as { cause?: unknown }).cause
    const own = error instanceof ApiError ? error : cause instanceof ApiError ? cause : undefined
    if (own) return errorResponse(path, own)
    switch (code) {
      case 'VALIDATION': {
        const where = (error as { type?: string }).type ?? 'request'
        // An answer that does not match its own documented schema is our fault, not the caller's.
        if (where === 'response') {
          log.error('answer does not match its response schema', { method: request.method, path, error: error.message })
          return errorResponse(path, internalError())
        }
        return errorResponse(path, new ApiError('validation_failed', describeValidation(error as ValidationLike, where)))
      }
      case 'PARSE':
        return errorResponse(
          path,
          new ApiError('bad_request', 'the request body could not be parsed; send JSON with Content-Type: application/json'),
        )
      case 'NOT_FOUND':
        return errorResponse(path, new ApiError('not_found', `no route ${request.method} ${path}`))
      default:
        return ownFault(log, path, error, { method: request.method })
    }
  })
