/**
 * The arithmetic of both layers, on plain state, with the time passed in. The in-process store runs
 * these functions; the Redis store runs the same steps in Lua (redis-store.ts). Keeping them pure
 * is what lets the tests drive them with an injected clock instead of sleeping.
 */

export interface Decision {
  allowed: boolean
  limit: number
  /** What is left after this decision (never below 0 in what is reported). */
  remaining: number
  /** When refused: whole seconds until a retry can pass, at least 1. */
  retryAfterSeconds: number
}

/** Sliding window (layer 1): two fixed windows, the previous one weighted by how much of it still overlaps. */
export interface WindowState {
  windowStart: number
  current: number
  previous: number
}

export function slideWindow(
  state: WindowState | undefined,
  limit: number,
  windowMs: number,
  now: number,
): { state: WindowState; decision: Decision } {
  const start = Math.floor(now / windowMs) * windowMs
  let current = 0
  let previous = 0
  if (state) {
    if (state.windowStart === start) {
      current = state.current
      previous = state.previous
    } else if (state.windowStart === start - windowMs) {
      previous = state.current
    }
  }
  const overlap = 1 - (now - start) / windowMs
  const used = previous * overlap + current
  if (used + 1 <= limit) {
    current += 1
    return {
      state: { windowStart: start, current, previous },
      decision: { allowed: true, limit, remaining: Math.max(0, Math.floor(limit - used - 1)), retryAfterSeconds: 0 },
    }
  }
  return {
    state: { windowStart: start, current, previous },
    decision: {
      allowed: false,
      limit,
      remaining: 0,
      retryAfterSeconds: windowRetryAfter(current, previous, limit, windowMs, now - start),
    },
  }
}

/**
 * When one more will pass. With room left in this window, once the previous window's weight has faded
 * enough, at the latest when this window ends. With this window full, it becomes the previous one when
 * it ends and counts in full then: one more passes once its weight has faded enough in the next window.
 */
function windowRetryAfter(current: number, previous: number, limit: number, windowMs: number, elapsed: number): number {
  const toWindowEnd = windowMs - elapsed
  let waitMs = toWindowEnd
  if (current + 1 <= limit) {
    // previous * (1 - t / windowMs) + current + 1 <= limit  <=>  t >= windowMs * (1 - (limit - current - 1) / previous)
    if (previous > 0) waitMs = Math.min(waitMs, windowMs * (1 - (limit - current - 1) / previous) - elapsed)
  } else {
    // current * (1 - t' / windowMs) + 1 <= limit, t' into the next window  <=>  t' >= windowMs * (1 - (limit - 1) / current)
    waitMs = toWindowEnd + Math.max(0, windowMs * (1 - (limit - 1) / current))
  }
  return Math.max(1, Math.ceil(waitMs / 1000))
}

/** The least balance a bucket can lend from; the Lua script uses the same figure. */
const SMALLEST_BALANCE = 1e-9

/** Token bucket (layer 2): capacity = quota, refilled continuously at quota per window. */
export interface BucketState {
  tokens: number
  updatedAt: number
}

/**
 * Takes `take` tokens if at least `need` are there (for cents, `need` is the estimate and `take` is 0:
 * the real cost is taken after the call). The balance may go negative after a charge and then refuses
 * until refilled.
 */
export function drawBucket(
  state: BucketState | undefined,
  capacity: number,
  windowMs: number,
  need: number,
  take: number,
  now: number,
): { state: BucketState; decision: Decision } {
  const rate = capacity / windowMs
  const tokens = state ? Math.min(capacity, state.tokens + Math.max(0, now - state.updatedAt) * rate) : capacity
  if (tokens >= need && tokens > 0) {
    const left = tokens - take
    return {
      state: { tokens: left, updatedAt: now },
      decision: { allowed: true, limit: capacity, remaining: Math.max(0, Math.floor(left)), retryAfterSeconds: 0 },
    }
  }
  // A call needs a balance above zero: the smallest such balance is what a refused caller waits for
  // when it needs nothing (Number.MIN_VALUE would vanish in the subtraction and name the very instant
  // the balance is exactly zero, which is still refused).
  const missing = Math.max(need, SMALLEST_BALANCE) - tokens
  return {
    state: { tokens, updatedAt: now },
    decision: {
      allowed: false,
      limit: capacity,
      remaining: Math.max(0, Math.floor(tokens)),
      retryAfterSeconds: Math.max(1, Math.ceil(missing / rate / 1000)),
    },
  }
}

/** Charges an amount after the fact (cents of a finished call); the balance may go below zero. */
export function chargeBucket(
  state: BucketState | undefined,
  capacity: number,
  windowMs: number,
  amount: number,
  now: number,
): BucketState {
  const rate = capacity / windowMs
  const tokens = state ? Math.min(capacity, state.tokens + Math.max(0, now - state.updatedAt) * rate) : capacity
  return { tokens: tokens - amount, updatedAt: now }
}
