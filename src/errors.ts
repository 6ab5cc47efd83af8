import { storeFault } from './store/faults'

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
  | 'access_denied'
  | 'tier_required'
  | 'not_found'
  | 'conflict'
  | 'egress_disabled'
  | 'egress_refused'
  | 'payload_too_large'
  | 'rate_limited'
  | 'budget_exceeded'
  | 'price_unknown'
  | 'not_implemented'
  | 'internal_error'
  | 'unavailable'
  | 'upstream_error'
  | 'upstream_unreachable'
  | 'upstream_timeout'
  | 'client_closed'

const STATUS: Record<ErrorCode, number> = {
  bad_request: 400,
  validation_failed: 400,
  unauthorized: 401,
  payment_required: 402,
  forbidden: 403,
  access_denied: 403,
  tier_required: 403,
  not_found: 404,
  conflict: 409,
  egress_disabled: 409,
  // The organisation's own configuration names a destination the operator's policy forbids.
  egress_refused: 403,
  payload_too_large: 413,
  rate_limited: 429,
  budget_exceeded: 429,
  price_unknown: 409,
  not_implemented: 501,
  internal_error: 500,
  unavailable: 503,
  upstream_error: 502,
  upstream_unreachable: 502,
  upstream_timeout: 504,
  // nginx's "client closed request": the caller left before its answer; nobody reads the body.
  client_closed: 499,
}

/** What an ApiError may carry beyond its code and message. */
export interface ApiErrorOptions {
  /** Shown to the caller beside the message (the offending parameter, the limit that refused). */
  details?: Record<string, unknown>
  /** Overrides the code's usual status: a provider's own error status is passed on as it was. */
  status?: number
  /** Sent as `Retry-After`: when the caller may try again (a limit, a database that is away). */
  retryAfterSeconds?: number
}

export class ApiError extends Error {
  readonly status: number
  readonly details: Record<string, unknown> | undefined
  readonly retryAfterSeconds: number | undefined

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: ApiErrorOptions = {},
  ) {
    super(message)
    this.name = 'ApiError'
    this.status = options.status ?? STATUS[code]
    this.details = options.details
    this.retryAfterSeconds = options.retryAfterSeconds
  }
}

export const badRequest = (message: string, details?: Record<string, unknown>) =>
  new ApiError('bad_request', message, { details })
export const unauthorized = (message: string) => new ApiError('unauthorized', message)
export const forbidden = (message: string) => new ApiError('forbidden', message)
export const notFound = (what: string) => new ApiError('not_found', `${what} not found`)
export const conflict = (message: string) => new ApiError('conflict', message)
/** The operator switched outgoing calls off (GW_EGRESS=off, air-gapped): no destination can be used. */
export const egressDisabled = () =>
  new ApiError(
    'egress_disabled',
    'outgoing calls are switched off in this deployment (GW_EGRESS=off): no destination can be used',
  )
/** An update that names nothing to change: the caller's mistake, said plainly, never a database error. */
export const nothingToChange = (fields: string) =>
  new ApiError('bad_request', `nothing to change: send at least one of ${fields}`)
export const unparsableBody = () =>
  new ApiError('bad_request', 'the request body could not be parsed; send JSON with Content-Type: application/json')
export const payloadTooLarge = (limit: number) =>
  new ApiError('payload_too_large', `the request body is larger than this route's limit of ${limit} bytes`, {
    details: { limit },
  })
/** Seconds a caller is told to wait when the database is away: about how long a failover takes. */
export const UNAVAILABLE_RETRY_SECONDS = 5
export const unavailable = (what: string, retryAfterSeconds = UNAVAILABLE_RETRY_SECONDS) =>
  new ApiError('unavailable', `${what}; try again shortly`, { retryAfterSeconds })
/** Our own fault: the caller learns nothing of it, the server log has the details. */
export const internalError = () => new ApiError('internal_error', 'internal error; the server log has the details')

/**
 * What an error means to the caller: an ApiError as it is; a database that cannot be reached (the
 * error itself or its cause, as a hook's error arrives wrapped), a 503 `unavailable` the caller can
 * retry; anything else `undefined`: a fault of ours, for the log and never for the caller.
 */
export function callerFacing(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error
  const cause = (error as { cause?: unknown } | null)?.cause
  if (cause instanceof ApiError) return cause
  if (storeFault(error) === 'unavailable') return unavailable('the database is unavailable')
  return undefined
}
