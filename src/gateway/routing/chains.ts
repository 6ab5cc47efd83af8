import type { ChainRetry, ChainStep, ChainTriggers } from '../../store/json-columns'

/** A fallback chain as the gateway follows it: calls naming `matchModel` go to its steps in order. */
export interface FallbackChain {
  id: string
  name: string
  matchModel: string
  steps: readonly ChainStep[]
  triggers: ChainTriggers | null
  retry: ChainRetry | null
}

/** Where the gateway finds an organisation's chains; the fallback-chains module implements it (cached). */
export interface ChainSource {
  /** The chain whose alias is `model`, if the organisation has one. */
  chainFor(orgId: string, model: string): Promise<FallbackChain | undefined>
}

/**
 * The statuses a chain moves on after when it names none (any 5xx does too): a model the provider no
 * longer serves, a request it could not take now, and the providers' overloaded answers.
 */
export const DEFAULT_FALLBACK_STATUSES: readonly number[] = [404, 408, 409, 410, 429, 500, 502, 503, 504, 529]

/** Statuses a chain never moves on after: the caller's request is wrong, and every provider will say so. */
export const NEVER_FALLBACK_STATUSES: readonly number[] = [400, 401, 403, 422]
