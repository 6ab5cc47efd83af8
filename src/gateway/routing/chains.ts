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
