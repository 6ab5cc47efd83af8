/**
 * What a failed statement says about its cause, from the drivers' error codes:
 * - `unavailable`: the database cannot be reached or cannot work now (connection refused or lost,
 *   shutting down, out of connections, locked past our wait). Retrying later helps; the caller is not
 *   at fault, so the API answers 503 and the request log keeps its records for later.
 * - `rejected`: the database refused these values (a constraint, a value out of range, a character
 *   it cannot hold, a value the driver cannot send). Retrying the same values never helps.
 * Anything else is `undefined`: treated as a fault of ours.
 */
export type StoreFault = 'unavailable' | 'rejected'

/** Socket-level failures of postgres.js and Node's net layer, and postgres.js's own connection codes. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
])

/**
 * Postgres SQLSTATE classes: 08 connection exception, 53 insufficient resources, 57P admin shutdown or
 * cannot connect now; 22 data exception, 23 integrity constraint, 54 program limit (a row too large).
 */
const PG_UNAVAILABLE = /^(08|53|57P)/
const PG_REJECTED = /^(22|23|54)/

const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|CANTOPEN|IOERR|FULL|READONLY|PROTOCOL|NOLFS)/
const SQLITE_REJECTED = /^SQLITE_(CONSTRAINT|MISMATCH|TOOBIG|RANGE)/

/**
 * The fault an error reports, read through its causes: the query builder wraps the driver's error,
 * and the web framework wraps that again when it came from a hook.
 */
export function storeFault(error: unknown): StoreFault | undefined {
  let cause = error
  for (let depth = 0; depth < 4 && typeof cause === 'object' && cause !== null; depth++) {
    const fault = faultOf(cause)
    if (fault) return fault
    cause = (cause as { cause?: unknown }).cause
  }
  return undefined
}

function faultOf(error: object): StoreFault | undefined {
  if (error instanceof TypeError || error instanceof RangeError) return 'rejected'
  const code = (error as { code?: unknown }).code
  if (typeof code !== 'string') return undefined
  if (CONNECTION_CODES.has(code) || PG_UNAVAILABLE.test(code) || SQLITE_UNAVAILABLE.test(code)) return 'unavailable'
  if (PG_REJECTED.test(code) || SQLITE_REJECTED.test(code)) return 'rejected'
  return undefined
}

/**
 * Whether a statement failed on a unique index (Postgres 23505, SQLite's UNIQUE constraint): the row
 * it would write clashes with one that exists. Read through the causes, as `storeFault` reads them.
 */
export function isUniqueViolation(error: unknown): boolean {
  let cause = error
  for (let depth = 0; depth < 4 && typeof cause === 'object' && cause !== null; depth++) {
    const code = (cause as { code?: unknown }).code
    if (code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE') return true
    cause = (cause as { cause?: unknown }).cause
  }
  return false
}

/** The database could not serve a request now: the API's 503 `unavailable`, with a Retry-After. */
export class StoreUnavailableError extends Error {
  constructor(override readonly cause: unknown) {
    super('the database is unavailable')
    this.name = 'StoreUnavailableError'
  }
}

/**
 * What a failed statement says, without the statement: the query builder's own error repeats the
 * statement and every value bound to it (a prompt, a credential's hash), which must not reach a log
 * line or a stored reason; the driver's error under it says what went wrong. Other errors as they are.
 */
export function errorMessage(error: unknown): string {
  let current = error
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    if (!current.message.startsWith('Failed query:')) return current.message
    current = current.cause
  }
  return current instanceof Error ? current.message : String(current ?? error)
}
