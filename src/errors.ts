/**
 * The one error type of our own code. Services throw it; `http/error-mapper.ts` turns it into the
 * response body of the route's family (management envelope, OpenAI or Anthropic error object).
 */
export type ErrorCode =
  | 'bad_request'
  | 'validation_failed'
  | 'unauthorized'
  | 'payment_required'
  | 'forbidden'
  | 'tier_required'
  | 'not_found'
  | 'conflict'
  | 'rate_limited'
  | 'not_implemented'
  | 'internal_error'
  | 'upstream_error'
  | 'upstream_unreachable'
  | 'upstream_timeout'

const STATUS: Record<ErrorCode, number> = {
  bad_request: 400,
  validation_failed: 400,
  unauthorized: 401,
  payment_required: 402,
  forbidden: 403,
  tier_required: 403,
  not_found: 404,
  conflict: 409,
  rate_limited: 429,
  not_implemented: 501,
  internal_error: 500,
  upstream_error: 502,
  upstream_unreachable: 502,
  upstream_timeout: 504,
}

export class ApiError extends Error {
  readonly status: number

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    /** Overrides the code's usual status: a provider's own error status is passed on as it was. */
    status?: number,
  ) {
    super(message)
    this.name = 'ApiError'
    this.status = status ?? STATUS[code]
  }
}

export const badRequest = (message: string, details?: Record<string, unknown>) => new ApiError('bad_request', message, details)
export const unauthorized = (message: string) => new ApiError('unauthorized', message)
export const forbidden = (message: string) => new ApiError('forbidden', message)
export const notFound = (what: string) => new ApiError('not_found', `${what} not found`)
export const conflict = (message: string) => new ApiError('conflict', message)
/** Our own fault: the caller learns nothing of it, the server log has the details. */
export const internalError = () => new ApiError('internal_error', 'internal error; the server log has the details')
