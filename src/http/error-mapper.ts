import { Elysia } from 'elysia'
import { ApiError, callerFacing, type ErrorCode, internalError, unparsableBody } from '../errors'
import type { Fields, Logger } from '../log'
import { errorMessage } from '../store/faults'

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
  unavailable: 'api_error',
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
          // The field at fault, when one is: OpenAI's SDKs show it beside the message.
          param: typeof error.details?.param === 'string' ? error.details.param : null,
        },
      }
    case 'anthropic': {
      // Anthropic names its 413 apart; OpenAI's is an invalid request like any other.
      const type =
        error.code === 'payload_too_large' ? 'request_too_large' : (SDK_ERROR_TYPES[error.code] ?? 'invalid_request_error')
      return { type: 'error', error: { type, message: error.message } }
    }
    case 'management':
      return {
        data: null,
        error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) },
      }
  }
}

export const errorResponse = (pathname: string, error: ApiError): Response =>
  Response.json(errorBody(errorFamily(pathname), error), {
    status: error.status,
    headers: error.retryAfterSeconds === undefined ? undefined : { 'retry-after': String(error.retryAfterSeconds) },
  })

/** Outages answer thousands of calls: the log says so once every few seconds per logger, with the count. */
const outageNotes = new WeakMap<Logger, { last: number; answers: number }>()

function noteOutage(log: Logger, message: string): void {
  const note = outageNotes.get(log) ?? { last: 0, answers: 0 }
  outageNotes.set(log, note)
  note.answers += 1
  const now = Date.now()
  if (now - note.last < 5_000) return
  log.error('database unavailable; answering 503', { error: message, answers: note.answers })
  note.last = now
  note.answers = 0
}

/**
 * Answers any thrown error in the path's format: an ApiError as it says; a database that cannot be
 * reached as a 503 `unavailable` with a Retry-After; anything else is our own fault, detailed in the
 * log and answered `internal_error`, never detailed to the caller.
 */
export function answerFailure(log: Logger, pathname: string, error: unknown, fields: Fields = {}): Response {
  const facing = callerFacing(error)
  const message = errorMessage(error)
  if (facing?.code === 'unavailable') noteOutage(log, message)
  if (facing) return errorResponse(pathname, facing)
  log.error('unhandled error', { ...fields, path: pathname, error: message })
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
    if (callerFacing(error)) return answerFailure(log, path, error)
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
        return errorResponse(path, unparsableBody())
      case 'NOT_FOUND':
        return errorResponse(path, new ApiError('not_found', `no route ${request.method} ${path}`))
      default:
        return answerFailure(log, path, error, { method: request.method })
    }
  })
