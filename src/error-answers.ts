/**
 * Failures as answers, in the body shape each caller's SDK parses: the management API's envelope,
 * OpenAI's `{error}` or Anthropic's `{type: 'error', error}`. The HTTP error mapper and the gateway
 * both answer through here, so an error reads the same whichever way it reached the caller.
 */
import { type ApiError, callerFacing, type ErrorCode, internalError } from './errors'
import type { Fields, Logger } from './log'
import { errorMessage } from './store/faults'

/** Which body shape a route's errors take: the one its callers' SDKs parse. */
export type ErrorFamily = 'management' | 'openai' | 'anthropic' | 'gemini'

/** OpenAI and Anthropic name their error types alike; anything else is an invalid request to both. */
const SDK_ERROR_TYPES: Partial<Record<ErrorCode, string>> = {
  unauthorized: 'authentication_error',
  payment_required: 'billing_error',
  forbidden: 'permission_error',
  access_denied: 'permission_error',
  tier_required: 'permission_error',
  egress_refused: 'permission_error',
  not_found: 'not_found_error',
  rate_limited: 'rate_limit_error',
  budget_exceeded: 'rate_limit_error',
  internal_error: 'api_error',
  unavailable: 'api_error',
  upstream_error: 'api_error',
  upstream_unreachable: 'api_error',
  upstream_timeout: 'timeout_error',
}

/** Google's canonical status for an HTTP status, as its APIs write it beside the code. */
export function googleStatus(httpStatus: number): string {
  const named: Record<number, string> = {
    400: 'INVALID_ARGUMENT',
    401: 'UNAUTHENTICATED',
    402: 'FAILED_PRECONDITION',
    403: 'PERMISSION_DENIED',
    404: 'NOT_FOUND',
    409: 'ABORTED',
    413: 'INVALID_ARGUMENT',
    429: 'RESOURCE_EXHAUSTED',
    499: 'CANCELLED',
    501: 'UNIMPLEMENTED',
    503: 'UNAVAILABLE',
    504: 'DEADLINE_EXCEEDED',
  }
  return named[httpStatus] ?? (httpStatus < 500 ? 'INVALID_ARGUMENT' : 'INTERNAL')
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
    case 'gemini':
      // Google's status carries the code of gw's error, which its SDK shows inside the message.
      return { error: { code: error.status, message: `${error.code}: ${error.message}`, status: googleStatus(error.status) } }
    case 'management':
      return {
        data: null,
        error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) },
      }
  }
}

export const errorResponse = (family: ErrorFamily, error: ApiError): Response =>
  Response.json(errorBody(family, error), {
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
export function answerFailure(log: Logger, family: ErrorFamily, error: unknown, fields: Fields = {}): Response {
  const facing = callerFacing(error)
  const message = errorMessage(error)
  if (facing?.code === 'unavailable') noteOutage(log, message)
  if (facing) return errorResponse(family, facing)
  log.error('unhandled error', { ...fields, error: message })
  return errorResponse(family, internalError())
}
