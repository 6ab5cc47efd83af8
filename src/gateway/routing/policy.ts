import { DEFAULT_FALLBACK_STATUSES, type FallbackChain } from '../../directory/chains'
import { badRequest } from '../../errors'
import type { CallAttempt, ChainRetry, ChainStep, ChainTriggers } from '../../store/json-columns'
import { resolveModel } from '../providers/registry'
import { clientClosed } from '../steps/upstream'

/**
 * Why a provider call did not serve: the provider's answer, no answer in time, no connection, or a
 * destination the egress policy refused (an organisation's base URL), where no connection was tried.
 */
export type AttemptFailure =
  | { kind: 'status'; status: number; retryAfterMs?: number }
  | { kind: 'timeout' }
  | { kind: 'network' }
  | { kind: 'refused' }

/** How a call is served: the steps in order, when to move on, and how often to try one step again. */
export interface RoutePlan {
  /** The chain that serves the call, when its model is a chain's alias. */
  chain?: FallbackChain
  steps: readonly ChainStep[]
  triggers: Required<ChainTriggers>
  retry: ChainRetry
}

/**
 * Bounds of the per-request retry headers and of a chain's retries: however a caller asks, gw makes at
 * most six calls to one step, waits at most 30 s between two of them.
 */
export const RETRY_BOUNDS = { attempts: 5, delayMs: 30_000 } as const

/** No retries unless a chain or the caller asks: the SDKs retry by themselves, and two layers of retries multiply. */
const NO_RETRY: ChainRetry = { attempts: 0, minDelayMs: 0, maxDelayMs: 0 }
const DEFAULT_TRIGGERS = { timeout: true, networkError: true } as const
/** Between two tries of one step when the caller names attempts but no delays. */
const DEFAULT_DELAYS = { minDelayMs: 200, maxDelayMs: 5_000 } as const

/** What moves a call without a chain on: the defaults, the same for every call. */
const NO_CHAIN_TRIGGERS: Required<ChainTriggers> = { ...DEFAULT_TRIGGERS, statusCodes: [] }

/** The plan for a call naming `model`: its chain's steps, or the model alone. The caller's retry headers win. */
export function planFor(model: string, chain: FallbackChain | undefined, headers: Headers): RoutePlan {
  const asked = readRetryHeaders(headers)
  return {
    chain,
    steps: chain ? chain.steps : [{ model }],
    triggers: chain ? { ...NO_CHAIN_TRIGGERS, ...chain.triggers } : NO_CHAIN_TRIGGERS,
    retry: asked ?? chain?.retry ?? NO_RETRY,
  }
}

/**
 * Whether a failure moves the call on to the next step (or key). By default: a model the provider no
 * longer serves (404, 410), a request it could not take now (408, 409, 429), any 5xx and 529, no answer
 * in time and no connection. Never a request the caller got wrong (400, 401, 403, 422): every
 * provider would say the same.
 */
export function fallsThrough(failure: AttemptFailure, triggers: Required<ChainTriggers>): boolean {
  // Another step runs on other keys, whose addresses the policy may allow.
  if (failure.kind === 'refused') return true
  if (failure.kind === 'timeout') return triggers.timeout
  if (failure.kind === 'network') return triggers.networkError
  if (triggers.statusCodes.length > 0) return triggers.statusCodes.includes(failure.status)
  return DEFAULT_FALLBACK_STATUSES.includes(failure.status) || failure.status >= 500
}

/** Whether trying the same step again may help: not for a model that is gone (404, 410), whatever the triggers. */
export function retryable(failure: AttemptFailure): boolean {
  if (failure.kind === 'refused') return false
  if (failure.kind !== 'status') return true
  return failure.status === 408 || failure.status === 409 || failure.status === 429 || failure.status >= 500
}

/** Whether the key that answered should rest: it is the one being limited or failing, another may not be. */
export const keyFailing = (failure: AttemptFailure): boolean =>
  failure.kind === 'timeout' ||
  failure.kind === 'network' ||
  (failure.kind === 'status' && (failure.status === 429 || failure.status >= 500))

/**
 * How long to wait before try `retry` (from 1) of a step: exponential backoff from `minDelayMs` with
 * full jitter, at most `maxDelayMs`. A provider's Retry-After is honoured when it fits under the cap;
 * one asking for longer ends the step's retries (undefined), so the chain moves on instead of waiting.
 */
export function retryDelayMs(
  retry: ChainRetry,
  tryNumber: number,
  failure: AttemptFailure,
  random: () => number = Math.random,
): number | undefined {
  const ceiling = Math.min(retry.maxDelayMs, retry.minDelayMs * 2 ** Math.min(tryNumber - 1, 20))
  const jittered = retry.minDelayMs + random() * Math.max(0, ceiling - retry.minDelayMs)
  const asked = failure.kind === 'status' ? failure.retryAfterMs : undefined
  if (asked === undefined) return Math.round(jittered)
  return asked > retry.maxDelayMs ? undefined : Math.max(asked, Math.round(jittered))
}

/** A provider's wait, from `retry-after-ms` or `retry-after` (seconds or an HTTP date). */
export function retryAfterMs(headers: Headers, now: number): number | undefined {
  const ms = Number(headers.get('retry-after-ms'))
  if (headers.has('retry-after-ms') && Number.isFinite(ms) && ms >= 0) return ms
  const value = headers.get('retry-after')
  if (value === null || value.trim() === '') return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

const RETRY_HEADERS = {
  attempts: { name: 'gw-retry-attempts', max: RETRY_BOUNDS.attempts },
  minDelayMs: { name: 'gw-retry-min-delay-ms', max: RETRY_BOUNDS.delayMs },
  maxDelayMs: { name: 'gw-retry-max-delay-ms', max: RETRY_BOUNDS.delayMs },
} as const

/**
 * The caller's own retry policy (`Gw-Retry-Attempts`, `Gw-Retry-Min-Delay-Ms`, `Gw-Retry-Max-Delay-Ms`),
 * bounded so no caller can make gw hammer a provider; undefined when it sets none. A value out of
 * bounds is the caller's 400, not silently clamped.
 */
export function readRetryHeaders(headers: Headers): ChainRetry | undefined {
  const read = (field: keyof typeof RETRY_HEADERS): number | undefined => {
    const { name, max } = RETRY_HEADERS[field]
    const raw = headers.get(name)
    if (raw === null) return undefined
    const value = raw.trim()
    if (!/^\d{1,6}$/.test(value) || Number(value) > max)
      throw badRequest(`header ${name} must be a whole number from 0 to ${max}; it was ${JSON.stringify(raw.slice(0, 40))}`)
    return Number(value)
  }
  const attempts = read('attempts')
  const minDelayMs = read('minDelayMs')
  const maxDelayMs = read('maxDelayMs')
  if (attempts === undefined && minDelayMs === undefined && maxDelayMs === undefined) return undefined
  const min = minDelayMs ?? Math.min(DEFAULT_DELAYS.minDelayMs, maxDelayMs ?? DEFAULT_DELAYS.minDelayMs)
  const max = maxDelayMs ?? Math.max(DEFAULT_DELAYS.maxDelayMs, min)
  if (max < min) throw badRequest(`header gw-retry-max-delay-ms (${max}) must not be below gw-retry-min-delay-ms (${min})`)
  return { attempts: attempts ?? 1, minDelayMs: min, maxDelayMs: max }
}

/**
 * How long a key rests after failing: what its provider asked for (up to a minute), else a few
 * seconds; long enough to spare it a burst, short enough that a lone failure costs little.
 */
export function coolDownMs(failure: AttemptFailure): number {
  if (failure.kind === 'status' && failure.retryAfterMs !== undefined)
    return Math.min(60_000, Math.max(1_000, failure.retryAfterMs))
  return failure.kind === 'status' && failure.status === 429 ? 10_000 : 5_000
}

/** A step passed over before any call (the caller's key may not reach it, it has no key): an attempt with no status. */
export function skippedStep(step: ChainStep, error: unknown): CallAttempt {
  let provider: string = step.provider ?? 'gw'
  try {
    provider = resolveModel(step.provider ? `${step.provider}/${step.model}` : step.model).provider.name
  } catch {
    // A model no provider serves keeps `gw`: the error says why it was skipped.
  }
  return { provider, model: step.model, error: `skipped: ${(error as Error).message}`, latencyMs: 0 }
}

/** Waits between two tries; a caller that leaves ends the wait (and the call). */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(clientClosed())
  return new Promise((resolve, reject) => {
    const done = () => {
      signal.removeEventListener('abort', gone)
      resolve()
    }
    const timer = setTimeout(done, ms)
    const gone = () => {
      clearTimeout(timer)
      reject(clientClosed())
    }
    signal.addEventListener('abort', gone, { once: true })
  })
}
